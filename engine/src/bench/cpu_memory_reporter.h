// Exact CPU tensor bytes through LibTorch's memory-reporting hook: while installed on a
// thread (as the PROFILER_STATE debug info), the CPU allocator reports every allocation
// and free made on that thread. We keep the live blocks we saw allocated so frees of
// blocks from before the hook (or from another run) cannot skew the count.
#pragma once

#include "bench/alloc_recorder.h"

#include <atomic>
#include <c10/core/Allocator.h>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace lmprof::engine::bench {

class CpuMemoryReporter : public c10::MemoryReportingInfoBase {
public:
    void reportMemoryUsage(void* ptr, int64_t allocSize, size_t totalAllocated,
                           size_t totalReserved, c10::Device device) override;
    bool memoryProfilingEnabled() const override { return true; }

    int64_t current() const { return m_current.load(std::memory_order_relaxed); }
    int64_t peak() const { return m_peak.load(std::memory_order_relaxed); }
    // Starts a new peak window at the current level (at each phase start).
    void resetPeak();
    // Also passes every allocation and free to `recorder` while set (nullptr stops).
    void setRecorder(AllocationRecorder* recorder);

private:
    std::mutex m_mutex; // allocations may come from intra-op worker threads
    std::unordered_map<void*, int64_t> m_live;
    std::atomic<int64_t> m_current{0};
    std::atomic<int64_t> m_peak{0};
    AllocationRecorder* m_recorder = nullptr; // guarded by m_mutex
};

} // namespace lmprof::engine::bench
