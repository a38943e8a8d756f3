// The op profiler of chosen steps: LibTorch's Kineto profiler (CPU ops always, CUDA kernels
// through CUPTI on a GPU) around steps [first, first + count), its events handed to
// profile::analyze, its Chrome trace saved (docs/OP_PROFILE.md).
//
// Kineto keeps its state in the thread's PROFILER_STATE debug-info slot, where the CPU
// memory reporter lives otherwise. The runner takes the reporter out while the profiler is
// on; replayAllocations() then feeds the profiler's own allocation records to the reporter,
// so the profiled steps' CPU peaks are the ones the reporter would have seen.
#pragma once

#include "bench/cpu_memory_reporter.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/op_profile.h"
#include "lmprof/engine/records.h"
#include "profile/op_analysis.h"

#include <memory>
#include <span>

namespace torch::autograd::profiler {
struct ProfilerResult;
}

namespace lmprof::engine::bench {

// Kineto logs each start and stop to stderr, and on a machine without a GPU that it found
// none: on the CPU none of it is news. Sets KINETO_LOG_LEVEL (unless the user did) where no
// GPU is present. Call before other threads run (setenv is not thread-safe): the Session's
// constructor does.
void quietKinetoWithoutGpu(bool anyGpu);

class OpProfiler {
public:
    OpProfiler(const OpProfileRequest& request, DeviceTarget target, const RunConfig& config);
    ~OpProfiler(); // turns the profiler off if finish() was never reached
    OpProfiler(const OpProfiler&) = delete;
    OpProfiler& operator=(const OpProfiler&) = delete;

    bool covers(int step) const;
    bool startsAt(int step) const { return step == m_request.firstStep; }
    bool endsAt(int step) const { return step == m_request.firstStep + m_request.stepCount - 1; }
    bool active() const { return m_active; }

    void start(); // the thread's PROFILER_STATE slot must be free
    // Turns the profiler off and analyzes what it recorded (also after a failed step); steps
    // after the first `completedSteps` profiled ones were cut short and are left out.
    void stop(int completedSteps);
    // The profiled steps' allocations, in order, into `reporter`; on the CPU the steps'
    // phase peaks are replaced by the replayed ones. After stop().
    void replayAllocations(CpuMemoryReporter& reporter, std::span<StepRecord> steps) const;
    // The profile once stopped, as a run record keeps it; null if it never started.
    std::shared_ptr<const OpProfile> take();

private:
    struct Allocation {
        int64_t tNs;
        void* ptr;
        int64_t bytes;
        bool cpu;
    };
    OpProfileRequest m_request;
    DeviceTarget m_target;
    const RunConfig& m_config;
    bool m_active = false;
    std::optional<OpProfile> m_profile;
    std::vector<Allocation> m_allocations; // by time
    profile::StepFrame m_frame;            // the profiled steps' phases, for the replay
};

} // namespace lmprof::engine::bench
