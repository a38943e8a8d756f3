// The CUDA-facing parts of the engine behind a torch-free interface: device discovery,
// caching-allocator statistics, event timing. cuda_backend.cpp implements it against
// LibTorch's CUDA API when LibTorch has CUDA; cuda_backend_absent.cpp answers "no CUDA"
// for CPU-only LibTorch builds.
#pragma once

#include "lmprof/engine/records.h"

#include <cstdint>
#include <memory>
#include <string>

namespace lmprof::engine::cuda {

// True when this build of the engine contains the CUDA code path.
bool built();
// CUDA version LibTorch was built with ("13.2"), empty without CUDA.
std::string runtimeVersion();
// Number of usable GPUs; 0 without a driver or device.
int deviceCount();
DeviceInfo deviceInfo(int index);

struct AllocatorStats {
    int64_t allocated = 0;
    int64_t allocatedPeak = 0;
    int64_t reserved = 0;
    int64_t reservedPeak = 0;
};
AllocatorStats allocatorStats(int index);
void resetPeakStats(int index);
// Returns cached blocks to the driver (after an OOM, between runs).
void emptyCache();
void synchronize(int index);
void setDevice(int index);

// A pair of timing events recorded on the current stream of the current device.
class EventTimer {
public:
    EventTimer();
    ~EventTimer();
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;
    void start();
    void stop();
    // Milliseconds between start and stop; blocks until stop has completed.
    double elapsedMs() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace lmprof::engine::cuda
