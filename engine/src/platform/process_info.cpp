// /proc readers behind process_info.h.

#include "platform/process_info.h"

#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace lmprof::engine::platform {

int64_t residentBytes() {
    // Read at up to 100 Hz by the sampler: one descriptor kept open, read with pread (no
    // shared offset, so any thread may call this).
    static const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    static const int64_t pageSize = sysconf(_SC_PAGESIZE);
    char buf[128];
    const ssize_t n = fd >= 0 ? ::pread(fd, buf, sizeof(buf) - 1, 0) : -1;
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    long long sizePages = 0;
    long long residentPages = 0;
    if (std::sscanf(buf, "%lld %lld", &sizePages, &residentPages) != 2) {
        return 0;
    }
    return residentPages * pageSize;
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
