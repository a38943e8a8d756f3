// The bounded, thread-safe event list behind memory snapshots.

#include "bench/alloc_recorder.h"

namespace lmprof::engine::bench {

AllocationRecorder::AllocationRecorder(int64_t maxEntries, Clock::time_point runStart,
                                       const RunPosition& position)
    : m_maxEntries(maxEntries), m_runStart(runStart), m_position(position) {}

void AllocationRecorder::record(uint64_t address, int64_t bytes) noexcept {
    const double tMs = std::chrono::duration<double, std::milli>(Clock::now() - m_runStart).count();
    const auto [step, phase] = m_position.get();
    std::lock_guard lock(m_mutex);
    if (static_cast<int64_t>(m_events.size()) >= m_maxEntries) {
        m_truncated = true;
        return;
    }
    try {
        m_events.push_back({tMs, bytes, address, phase, step});
    } catch (const std::bad_alloc&) {
        m_truncated = true; // called from allocator callbacks: drop the event, never throw
    }
}

AllocationTrace AllocationRecorder::take() {
    std::lock_guard lock(m_mutex);
    AllocationTrace out;
    out.maxEntries = m_maxEntries;
    out.truncated = m_truncated;
    out.events.assign(m_events.begin(), m_events.end());
    m_events.clear();
    m_truncated = false;
    return out;
}

} // namespace lmprof::engine::bench
