// /proc readers behind process_info.h.

#include "platform/process_info.h"

#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace lmprof::engine::platform {

int64_t residentBytes() {
    std::ifstream statm("/proc/self/statm");
    int64_t sizePages = 0;
    int64_t residentPages = 0;
    if (!(statm >> sizePages >> residentPages)) {
        return 0;
    }
    return residentPages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

std::string cpuModel() {
    std::ifstream info("/proc/cpuinfo");
    std::string line;
    while (std::getline(info, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos && colon + 2 <= line.size()) {
                return line.substr(colon + 2);
            }
        }
    }
    return "unknown";
}

std::string hostName() {
    char buf[256] = {};
    if (gethostname(buf, sizeof(buf) - 1) != 0) {
        return "unknown";
    }
    return buf;
}

int64_t totalMemoryBytes() {
    std::ifstream info("/proc/meminfo");
    std::string key;
    int64_t kib = 0;
    std::string unit;
    while (info >> key >> kib >> unit) {
        if (key == "MemTotal:") {
            return kib * 1024;
        }
    }
    return 0;
}

double processCpuSeconds() {
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) != 0) {
        return 0.0;
    }
    auto seconds = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

} // namespace lmprof::engine::platform
