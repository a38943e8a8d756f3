// Records allocations and frees for a memory snapshot, tagged with the run's position and
// time, up to a fixed number of events (later ones are counted as dropped). Fed by the CPU
// memory-reporting hook or the CUDA allocator's trace tracker, from any thread.
#pragma once

#include "bench/run_position.h"
#include "lmprof/engine/alloc_trace.h"

#include <chrono>
#include <deque>
#include <mutex>

namespace lmprof::engine::bench {

class AllocationRecorder {
public:
    using Clock = std::chrono::steady_clock;
    AllocationRecorder(int64_t maxEntries, Clock::time_point runStart, const RunPosition& position);

    void record(uint64_t address, int64_t bytes) noexcept; // thread-safe; drops on failure
    // The events so far; the recorder is left empty.
    AllocationTrace take();

private:
    int64_t m_maxEntries;
    Clock::time_point m_runStart;
    const RunPosition& m_position;
    std::mutex m_mutex;
    // A deque grows in chunks: no multi-megabyte copy while the CUDA allocator's lock is
    // held (record() runs inside its trace callback).
    std::deque<AllocationEvent> m_events;
    bool m_truncated = false;
};

} // namespace lmprof::engine::bench
