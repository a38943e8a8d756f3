// A memory snapshot of chosen steps: allocator history on CUDA (saved as the pickle that
// pytorch.org/memory_viz opens), our own allocation trace on CPU (lmprof.alloc-trace/1).
// Both kinds also feed an AllocationRecorder, which yields the largest allocations with
// the phase and step they were made in.
#pragma once

#include "bench/alloc_recorder.h"
#include "bench/cpu_memory_reporter.h"
#include "bench/step_context.h"

#include <optional>

namespace lmprof::engine::bench {

class SnapshotSession {
public:
    using Clock = std::chrono::steady_clock;
    SnapshotSession(const SnapshotRequest& request, std::string runId, DeviceTarget target,
                    CpuMemoryReporter& cpu, const RunPosition& position,
                    Clock::time_point runStart);
    ~SnapshotSession(); // detaches from the allocators if finish() was never called
    SnapshotSession(const SnapshotSession&) = delete;
    SnapshotSession& operator=(const SnapshotSession&) = delete;

    bool covers(int step) const;
    void beforeStep(int step); // starts recording at the first chosen step
    void afterStep(int step);  // writes the file after the last chosen step
    // Writes what was recorded if the run ended inside the chosen steps (an OOM, a cancel).
    // Returns the snapshot's description once recording has started, else nullopt. Never
    // throws: a failure is reported in the description's `error`.
    std::optional<MemorySnapshotInfo> finish();

private:
    std::optional<MemorySnapshotInfo> finishRecording();
    MemorySnapshotInfo describeRequest() const; // path, format and steps, nothing recorded
    void detach();

    SnapshotRequest m_request;
    std::string m_runId;
    DeviceTarget m_target;
    CpuMemoryReporter& m_cpu;
    AllocationRecorder m_recorder;
    bool m_recording = false;
    std::optional<MemorySnapshotInfo> m_info;
};

} // namespace lmprof::engine::bench
