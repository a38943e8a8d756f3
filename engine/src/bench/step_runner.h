// One step of the measurement loop (docs/MEASUREMENT.md): every phase of the mode, timed
// (CUDA events or the monotonic clock) and metered, or one replay of the step captured in a
// CUDA graph. runner.cpp runs the steps of a run through it.
#pragma once

#include "bench/memory_sampler.h"
#include "bench/run_position.h"
#include "bench/step_context.h"
#include "bench/step_hooks.h"
#include "lmprof/engine/records.h"
#include "platform/cuda_backend.h"
#include "platform/kernel_clock.h"

#include <ATen/ATen.h>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace lmprof::engine::bench {

// What every step of a run shares: the run's configuration and device, its model and
// optimizer, its meters and sampler, and a cuda_graphs run's captured step.
struct StepEnv {
    const RunConfig& config;
    DeviceTarget target;
    StepContext& ctx;
    MemoryMeter& meter;
    const std::atomic<bool>* cancel;
    std::chrono::steady_clock::time_point runStart;
    RunPosition& position;
    MemorySampler& sampler;
    std::vector<std::unique_ptr<cuda::EventTimer>> eventTimers; // one per phase on CUDA
    StepHooks* hooks = nullptr;
    bool faultFired = false;
    cupti::KernelClock* kernels = nullptr; // CUDA: kernel time per step, when CUPTI is there
    // cuda_graphs: the captured step, what it reports, and the outputs the replays refill.
    std::unique_ptr<cuda::StepGraph> graph{};
    std::optional<GraphCapture>* capture = nullptr; // the run's result.graph
    at::Tensor graphLoss{};
    at::Tensor graphNorms{};
    PeakBytes graphPeaks{}; // each phase's peak during the capture
};

// Whether the run was asked to stop.
bool cancelled(const StepEnv& env);

// Step `index` of the run into `rec` (its phases' times and peaks, its loss, its gradient
// norms); `currentPhase` says which phase a failure came from. False when cancelled between
// phases (the partial step is discarded).
bool runStep(StepEnv& env, int index, std::optional<Phase>& currentPhase, StepRecord& rec);

} // namespace lmprof::engine::bench
