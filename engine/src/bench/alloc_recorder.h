// Records allocations and frees for a memory snapshot, tagged with the run's position and
// time, up to a fixed number of events (later ones are counted as dropped). Fed by the CPU
// memory-reporting hook or the CUDA allocator's trace tracker, from any thread.
#pragma once

#include "bench/run_position.h"
#include "lmprof/engine/alloc_trace.h"

#include <chrono>
#include <mutex>

namespace lmprof::engine::bench {

class AllocationRecorder {
public:
    using Clock = std::chrono::steady_clock;
    AllocationRecorder(int64_t maxEntries, Clock::time_point runStart, const RunPosition& position);

    void record(uint64_t address, int64_t bytes); // thread-safe
    // The events so far; the recorder is left empty.
    AllocationTrace take();

private:
    int64_t m_maxEntries;
    Clock::time_point m_runStart;
    const RunPosition& m_position;
    std::mutex m_mutex;
    AllocationTrace m_trace;
};

} // namespace lmprof::engine::bench
