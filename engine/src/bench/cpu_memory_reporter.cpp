// Bookkeeping of the CPU memory-reporting hook (see the header for why blocks are tracked).

#include "bench/cpu_memory_reporter.h"

namespace lmprof::engine::bench {

void CpuMemoryReporter::reportMemoryUsage(void* ptr, int64_t allocSize, size_t, size_t,
                                          c10::Device device) {
    if (!device.is_cpu() || allocSize == 0) {
        return;
    }
    std::lock_guard lock(m_mutex);
    int64_t now = m_current.load(std::memory_order_relaxed);
    if (allocSize > 0) {
        m_live[ptr] = allocSize;
        now += allocSize;
    } else {
        const auto it = m_live.find(ptr);
        if (it == m_live.end()) {
            return; // allocated before we were installed
        }
        now -= it->second;
        m_live.erase(it);
    }
    if (m_recorder) {
        m_recorder->record(reinterpret_cast<uint64_t>(ptr), allocSize);
    }
    m_current.store(now, std::memory_order_relaxed);
    if (now > m_peak.load(std::memory_order_relaxed)) {
        m_peak.store(now, std::memory_order_relaxed);
    }
}

void CpuMemoryReporter::setRecorder(AllocationRecorder* recorder) {
    std::lock_guard lock(m_mutex);
    m_recorder = recorder;
}

void CpuMemoryReporter::resetPeak() {
    std::lock_guard lock(m_mutex);
    m_peak.store(m_current.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

} // namespace lmprof::engine::bench
