// The bounded, thread-safe event list behind memory snapshots.

#include "bench/alloc_recorder.h"

namespace lmprof::engine::bench {

AllocationRecorder::AllocationRecorder(int64_t maxEntries, Clock::time_point runStart,
                                       const RunPosition& position)
    : m_maxEntries(maxEntries), m_runStart(runStart), m_position(position) {
    m_trace.maxEntries = maxEntries;
}

void AllocationRecorder::record(uint64_t address, int64_t bytes) {
    const double tMs = std::chrono::duration<double, std::milli>(Clock::now() - m_runStart).count();
    std::lock_guard lock(m_mutex);
    if (static_cast<int64_t>(m_trace.events.size()) >= m_maxEntries) {
        m_trace.truncated = true;
        return;
    }
    m_trace.events.push_back({tMs, bytes, address, m_position.phase(), m_position.step()});
}

AllocationTrace AllocationRecorder::take() {
    std::lock_guard lock(m_mutex);
    AllocationTrace out = std::move(m_trace);
    m_trace = AllocationTrace{};
    m_trace.maxEntries = m_maxEntries;
    return out;
}

} // namespace lmprof::engine::bench
