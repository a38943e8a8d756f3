// Facts about this process and machine read from /proc and libc: resident set size,
// CPU model, host name, total memory. Torch-free.
#pragma once

#include <cstdint>
#include <string>

namespace lmprof::engine::platform {

int64_t residentBytes(); // current RSS of this process, 0 if unknown
std::string cpuModel();  // "model name" of /proc/cpuinfo, or "unknown"
std::string hostName();
int64_t totalMemoryBytes(); // MemTotal of /proc/meminfo, 0 if unknown
// User + system CPU time of the whole process (all threads) in seconds.
double processCpuSeconds();

} // namespace lmprof::engine::platform
