// The measurement loop: warmup and measured steps through one code path, per-phase timing
// (CUDA events or the monotonic clock), per-phase memory peaks, and failures turned into
// data (oom / error / cancelled) with the run's memory released.
//
// Sections: phase bodies · one step · runBenchmark.

#include "lmprof/engine/runner.h"

#include "bench/autocast_scope.h"
#include "bench/device_peaks.h"
#include "bench/execution_scope.h"
#include "bench/memory_sampler.h"
#include "bench/op_profiler.h"
#include "bench/snapshot.h"
#include "bench/step_context.h"
#include "bench/step_hooks.h"
#include "nvtx/region.h"
#include "platform/cuda_backend.h"
#include "platform/kernel_clock.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <chrono>
#include <exception>

namespace lmprof::engine {

using bench::AutocastScope;
using bench::MemoryMeter;
using bench::StepContext;
using Clock = std::chrono::steady_clock;

namespace {

double msBetween(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// ---------------------------------------------------------------------------------------
// Phase bodies. `loss` carries the graph from forward to backward.

// The test-only OOM switch. On CUDA it is a real out-of-memory: one allocation larger than
// the whole card, refused by the caching allocator like an oversized activation would be
// (the allocator frees its cache and retries first). On the CPU a real one would meet the
// kernel's OOM killer rather than an exception, so the error is raised directly.
void injectFault(const RunConfig& config, const DeviceTarget& target, Phase phase,
                 bool& faultFired) {
    if (config.faultOomPhase != phase || faultFired) {
        return;
    }
    faultFired = true;
    if (target.cuda) {
        const int64_t bytes = cuda::deviceInfo(target.index).memoryBytes + (int64_t{1} << 30);
        (void)at::empty({bytes},
                        at::TensorOptions().dtype(at::kByte).device(bench::torchDevice(target)));
    }
    TORCH_CHECK_WITH(OutOfMemoryError, false,
                     "lmprof fault injection: simulated out of memory in the ", toString(phase),
                     " phase");
}

void runPhase(Phase phase, StepContext& ctx, at::Tensor& loss) {
    switch (phase) {
    case Phase::Forward: {
        AutocastScope autocast(ctx.inputs.device().type(), ctx.autocastDtype);
        loss = model::lmLoss(ctx.model->forward(ctx.inputs), ctx.targets);
        break;
    }
    case Phase::Backward:
        if (ctx.scaler) {
            at::Tensor scaled;
            {
                nvtx::Region range(region::kLoss);
                scaled = loss * ctx.scaler->scale;
            }
            scaled.backward();
        } else {
            loss.backward();
        }
        loss = at::Tensor();
        break;
    case Phase::Optimizer: {
        if (ctx.scaler) {
            std::vector<at::Tensor> grads;
            for (const auto& p : ctx.optimizer->params()) {
                if (p.grad().defined()) {
                    grads.push_back(p.grad());
                }
            }
            {
                nvtx::Region range(region::kGradScaler);
                ctx.scaler->unscale(grads);
            }
            {
                nvtx::Region range(region::kAdamW);
                ctx.optimizer->step(std::nullopt, ctx.scaler->foundInf);
            }
            nvtx::Region range(region::kGradScaler);
            ctx.scaler->update();
        } else {
            nvtx::Region range(region::kAdamW);
            ctx.optimizer->step();
        }
        nvtx::Region range(region::kZeroGrad);
        ctx.optimizer->zeroGrad();
        break;
    }
    }
}

// ---------------------------------------------------------------------------------------
// One step: every phase of the mode, timed and metered. Returns false if cancelled
// between phases (the partial step is discarded).

struct StepEnv {
    const RunConfig& config;
    DeviceTarget target;
    StepContext& ctx;
    MemoryMeter& meter;
    const std::atomic<bool>* cancel;
    Clock::time_point runStart;
    bench::RunPosition& position;
    bench::MemorySampler& sampler;
    std::vector<std::unique_ptr<cuda::EventTimer>> eventTimers; // one per phase on CUDA
    bench::StepHooks* hooks = nullptr;
    bool faultFired = false;
    cupti::KernelClock* kernels = nullptr; // CUDA: kernel time per step, when CUPTI is there
    // cuda_graphs: the captured step, what it reports, and the outputs the replays refill.
    std::unique_ptr<cuda::StepGraph> graph{};
    std::optional<GraphCapture>* capture = nullptr; // the run's result.graph
    at::Tensor graphLoss{};
    at::Tensor graphNorms{};
    PeakBytes graphPeaks{}; // each phase's peak during the capture
};

void sample(StepEnv& env, Phase phase, int step) {
    env.position.set(step, phase);
    env.sampler.boundary();
}

bool cancelled(const StepEnv& env) {
    return env.cancel && env.cancel->load(std::memory_order_relaxed);
}

// The record's time of a phase.
double& phaseMs(StepRecord& rec, Phase phase) {
    return phase == Phase::Forward    ? rec.forwardMs
           : phase == Phase::Backward ? rec.backwardMs
                                      : rec.optimizerMs;
}

// The step's end, once its work has finished: its wall time, when it ended in the run, and
// the end of its kernel-time window (CUPTI's clock; 0 without one).
uint64_t endStep(const StepEnv& env, Clock::time_point start, StepRecord& rec) {
    const auto end = Clock::now();
    const uint64_t kernelsEnd = env.kernels ? env.kernels->now() : 0;
    rec.totalMs = msBetween(start, end);
    rec.endMs = msBetween(env.runStart, end);
    return kernelsEnd;
}

// The figures a finished step reads from the device after its timing: the loss, the
// gradient norms, whether fp16 skipped the update.
void readStepOutputs(const StepEnv& env, const at::Tensor& lossValue, const at::Tensor& norms,
                     StepRecord& rec) {
    if (lossValue.defined()) {
        rec.loss = lossValue.item<double>();
    }
    if (norms.defined()) {
        const at::Tensor host = norms.to(at::kCPU).to(at::kDouble);
        const double scale = rec.lossScale.value_or(1.0); // the scale the backward used
        for (int64_t g = 0; g < host.size(0); ++g) {
            rec.gradNorms.push_back(host[g].item<double>() / scale);
        }
    }
    if (env.ctx.scaler && env.config.mode == Mode::Train) {
        rec.skippedUpdate = env.ctx.scaler->foundInf.item<double>() != 0.0;
    }
}

// cuda_graphs: the whole step of the mode captured once, on the first measured step, before
// its replay (docs/MEASUREMENT.md, "CUDA graphs"). The phase timers are recorded inside the
// capture, so every replay times its phases. Nothing runs while capturing: the parameters
// are where the warmup left them.
void captureStep(StepEnv& env, std::optional<Phase>& currentPhase) {
    const auto phases = phasesOf(env.config.mode);
    cuda::synchronize(env.target.index);
    const int64_t reservedBefore = env.meter.reserved();
    const auto t0 = Clock::now();
    if (!env.graph) { // made by the last warmup step (runStep)
        env.graph = std::make_unique<cuda::StepGraph>(env.target.index);
    }
    try {
        env.graph->capture([&] {
            if (env.config.mode == Mode::ForwardBackward) {
                for (auto& p : env.ctx.model->parameters()) {
                    p.mutable_grad() = at::Tensor();
                }
            }
            at::Tensor loss;
            for (size_t i = 0; i < phases.size(); ++i) {
                currentPhase = phases[i];
                // The allocator's statistics follow the capture's allocations in the pool
                // (host-side bookkeeping): each phase's peak is what a replay reaches.
                env.meter.resetPeak();
                env.eventTimers[i]->start();
                runPhase(phases[i], env.ctx, loss);
                env.eventTimers[i]->stop();
                env.graphPeaks.of(phases[i]) = env.meter.peakAllocated();
                if (phases[i] == Phase::Forward) {
                    env.graphLoss = loss.detach();
                } else if (phases[i] == Phase::Backward && !env.ctx.gradNormGroups.empty()) {
                    env.graphNorms = bench::gradNorms(env.ctx.gradNormGroups);
                }
            }
        });
    } catch (const c10::OutOfMemoryError&) {
        throw;
    } catch (const std::exception& e) {
        env.graph.reset();
        throw std::runtime_error(std::string("capturing the step in a CUDA graph failed: ") +
                                 e.what());
    }
    cuda::synchronize(env.target.index);
    *env.capture = GraphCapture{msBetween(t0, Clock::now()),
                                std::max<int64_t>(0, env.meter.reserved() - reservedBefore)};
}

// A measured step of a cuda_graphs run: one replay of the captured step, timed as a whole on
// the host and by phase with the events inside it. The allocator sees no allocation in a
// replay: each phase's peak is the one measured while capturing (the same blocks of the
// pool, at the same moments), the reserved peak includes the graph's pool.
void replayStep(StepEnv& env, int index, std::optional<Phase>& currentPhase, StepRecord& rec) {
    const auto phases = phasesOf(env.config.mode);
    if (!env.capture->has_value()) {
        captureStep(env, currentPhase);
    }
    rec.graphReplay = true;
    if (env.ctx.scaler) {
        rec.lossScale = env.ctx.scaler->scale.item<double>();
    }
    currentPhase = phases.front();
    sample(env, phases.front(), index);
    env.meter.resetPeak();
    const uint64_t k0 = env.kernels ? env.kernels->now() : 0;
    const auto stepStart = Clock::now();
    {
        nvtx::Region stepRange(kStepRange);
        env.graph->replay();
        cuda::synchronize(env.target.index);
    }
    const uint64_t k1 = endStep(env, stepStart, rec);
    for (size_t i = 0; i < phases.size(); ++i) {
        phaseMs(rec, phases[i]) = env.eventTimers[i]->elapsedMs();
    }
    rec.phasePeakBytes = env.graphPeaks;
    rec.peakAllocatedBytes = env.graphPeaks.max();
    rec.peakReservedBytes = env.meter.peakReserved();
    sample(env, phases.back(), index);
    if (env.kernels) {
        rec.kernelMs = std::min(env.kernels->busyMs(k0, k1), rec.totalMs);
    }
    readStepOutputs(env, env.graphLoss, env.graphNorms, rec);
}

bool runStep(StepEnv& env, int index, std::optional<Phase>& currentPhase, StepRecord& rec) {
    const auto phases = phasesOf(env.config.mode);
    rec.index = index;
    rec.warmup = index < env.config.warmupSteps;
    if (env.config.cudaGraphs && !rec.warmup) {
        replayStep(env, index, currentPhase, rec);
        return true;
    }
    if (env.ctx.scaler) {
        rec.lossScale = env.ctx.scaler->scale.item<double>();
    }
    if (env.config.mode == Mode::ForwardBackward) {
        // Without an optimizer nobody clears the gradients; drop them so steps do not
        // accumulate into each other.
        for (auto& p : env.ctx.model->parameters()) {
            p.mutable_grad() = at::Tensor();
        }
    }
    at::Tensor loss;
    at::Tensor lossValue; // read once the step is timed
    at::Tensor norms;     // the same
    std::vector<double> hostMs(phases.size(), 0.0);
    PeakBytes phasePeaks;
    const uint64_t k0 = env.kernels ? env.kernels->now() : 0;
    const auto stepStart = Clock::now();
    bool stopped = false;
    // The phases, on the current stream; cuda_graphs runs its last warmup step on the
    // graph's stream (StepGraph::onItsStream), so that the libraries' per-stream setup is
    // done before the capture.
    const auto runPhases = [&] {
        for (size_t i = 0; i < phases.size(); ++i) {
            const Phase phase = phases[i];
            if (i > 0 && cancelled(env)) {
                stopped = true;
                return;
            }
            currentPhase = phase;
            sample(env, phase, index);
            env.meter.resetPeak();
            const auto t0 = Clock::now();
            {
                nvtx::Region phaseRange(toString(phase).data());
                if (env.target.cuda) {
                    env.eventTimers[i]->start();
                }
                injectFault(env.config, env.target, phase, env.faultFired);
                runPhase(phase, env.ctx, loss);
                if (env.target.cuda) {
                    env.eventTimers[i]->stop();
                }
            }
            hostMs[i] = msBetween(t0, Clock::now());
            const int64_t peakAlloc = env.meter.peakAllocated();
            rec.peakAllocatedBytes = std::max(rec.peakAllocatedBytes, peakAlloc);
            rec.peakReservedBytes = std::max(rec.peakReservedBytes, env.meter.peakReserved());
            phasePeaks.of(phase) = peakAlloc;
            sample(env, phase, index);
            if (phase == Phase::Forward) {
                lossValue = loss.detach();
            } else if (phase == Phase::Backward) {
                if (env.hooks) {
                    env.hooks->afterBackward(index);
                }
                if (!env.ctx.gradNormGroups.empty()) {
                    norms = bench::gradNorms(env.ctx.gradNormGroups);
                }
            }
        }
        loss = at::Tensor(); // forward mode: release the graph inside the step
    };
    {
        nvtx::Region stepRange(rec.warmup ? kWarmupStepRange : kStepRange);
        if (env.config.cudaGraphs && index == env.config.warmupSteps - 1) {
            env.graph = std::make_unique<cuda::StepGraph>(env.target.index);
            env.graph->onItsStream(runPhases);
        } else {
            runPhases();
        }
        if (stopped) {
            return false;
        }
        if (env.target.cuda) {
            cuda::synchronize(env.target.index);
        }
    }
    const uint64_t k1 = endStep(env, stepStart, rec);
    for (size_t i = 0; i < phases.size(); ++i) {
        phaseMs(rec, phases[i]) = env.target.cuda ? env.eventTimers[i]->elapsedMs() : hostMs[i];
    }
    rec.phasePeakBytes = phasePeaks;
    if (env.kernels) {
        rec.kernelMs = std::min(env.kernels->busyMs(k0, k1), rec.totalMs);
    }
    readStepOutputs(env, lossValue, norms, rec);
    return true;
}

void releaseDeviceMemory(const DeviceTarget& target) {
    if (target.cuda) {
        cuda::synchronize(target.index);
        cuda::emptyCache();
    }
}

} // namespace

// ---------------------------------------------------------------------------------------
// runBenchmark

RunResult runBenchmark(const RunConfig& config, const std::string& runId, RunObserver* observer,
                       const std::atomic<bool>* cancel) {
    return bench::runBenchmarkWith(config, runId, observer, cancel, nullptr);
}

RunResult bench::runBenchmarkWith(const RunConfig& config, const std::string& runId,
                                  RunObserver* observer, const std::atomic<bool>* cancel,
                                  StepHooks* hooks) {
    RunResult result;
    result.id = runId;
    result.config = config;
    result.parameterCount = parameterCount(config.model);
    if (auto errors = validate(config); !errors.empty()) {
        result.status = RunStatus::Error;
        result.error = "invalid configuration: " + describe(errors);
        return result;
    }
    const DeviceTarget target = resolveDevice(config.device); // parsed once, passed down
    if (auto refusal = checkRunnable(config, target)) {
        result.status = RunStatus::Error;
        result.error = refusal->message();
        return result;
    }
    result.resolvedDevice = target.name();
    if (config.threads > 0) {
        at::set_num_threads(config.threads);
    }

    const bench::ExecutionScope execution(config); // SDPA backends, TF32: until the run ends
    auto cpuReporter = std::make_shared<bench::CpuMemoryReporter>();
    MemoryMeter meter(target, cpuReporter);
    bench::RunPosition position;
    // Declared outside the try so that a failed run still keeps its timeline and writes
    // its snapshot (the moments before an OOM are what a user wants to see).
    std::optional<bench::MemorySampler> sampler;
    std::optional<bench::SnapshotSession> snapshot;
    std::optional<StepContext> ctx; // the model and optimizer; released after the snapshot
    std::optional<Phase> currentPhase;
    std::optional<bench::OpProfiler> opProfiler;
    std::vector<StepRecord> profiledSteps; // held back until their peaks are replayed
    {
        // Every CPU allocation of this thread is reported to cpuReporter while this lives.
        // The op profiler needs the same slot: it is taken out while the profiler is on.
        std::optional<c10::DebugInfoGuard> reporting;
        reporting.emplace(c10::DebugInfoKind::PROFILER_STATE, cpuReporter);
        // Ends the profile: the reporter back in its slot, then the profiled steps' records,
        // with the peaks replayed from the profiler's allocation records, released. A
        // failure to stop still restores the reporter and keeps the records (unreplayed).
        auto endProfile = [&] {
            std::exception_ptr failure;
            try {
                opProfiler->stop(static_cast<int>(profiledSteps.size()));
            } catch (...) {
                failure = std::current_exception();
            }
            if (!reporting) {
                reporting.emplace(c10::DebugInfoKind::PROFILER_STATE, cpuReporter);
            }
            if (!failure) {
                opProfiler->replayAllocations(*cpuReporter, profiledSteps);
            }
            for (const auto& rec : profiledSteps) {
                result.steps.push_back(rec);
                if (observer) {
                    observer->onStepFinished(rec);
                }
            }
            profiledSteps.clear();
            if (failure) {
                std::rethrow_exception(failure);
            }
        };
        try {
            if (target.cuda) {
                cuda::setDevice(target.index);
            }
            ctx.emplace(config, target);
            if (hooks) {
                hooks->attach(*ctx);
            }
            if (observer) {
                observer->onRunStarted(result);
            }
            const auto runStart = Clock::now();
            sampler.emplace(config, target, meter, position, runStart, observer);
            if (config.memorySnapshot) {
                snapshot.emplace(*config.memorySnapshot, runId, target, *cpuReporter, position,
                                 runStart);
            }
            if (config.opProfile) {
                opProfiler.emplace(*config.opProfile, target, config);
            }
            StepEnv env{config,   target,   *ctx,     meter, cancel,
                        runStart, position, *sampler, {},    hooks};
            env.capture = &result.graph;
            // Kernel time for the busy share; an op-profiled run has LibTorch's profiler on
            // CUPTI instead (docs/MEASUREMENT.md).
            std::unique_ptr<cupti::KernelClock> kernels;
            if (target.cuda && !config.opProfile) {
                std::string whyNot;
                kernels = cupti::KernelClock::start(whyNot);
                if (!kernels) {
                    result.busyNote = "no kernel time: " + whyNot;
                }
            } else if (target.cuda) {
                result.busyNote = "no kernel time: the op profiler holds CUPTI during this run";
            }
            env.kernels = kernels.get();
            if (target.cuda) {
                for (size_t i = 0; i < phasesOf(config.mode).size(); ++i) {
                    env.eventTimers.push_back(std::make_unique<cuda::EventTimer>());
                }
            }
            const int totalSteps = config.warmupSteps + config.measureSteps;
            for (int i = 0; i < totalSteps; ++i) {
                if (hooks) {
                    hooks->beforeStep(i);
                }
                if (cancelled(env)) {
                    result.status = RunStatus::Cancelled;
                    break;
                }
                if (snapshot) {
                    // Tag the events before the first phase boundary with this step.
                    position.set(i, phasesOf(config.mode).front());
                    snapshot->beforeStep(i);
                }
                if (opProfiler && opProfiler->startsAt(i)) {
                    reporting.reset();
                    try {
                        opProfiler->start();
                    } catch (...) {
                        reporting.emplace(c10::DebugInfoKind::PROFILER_STATE, cpuReporter);
                        throw;
                    }
                }
                StepRecord rec;
                if (!runStep(env, i, currentPhase, rec)) {
                    result.status = RunStatus::Cancelled;
                    break;
                }
                currentPhase.reset();
                if (hooks) {
                    hooks->stepFinished(rec);
                }
                if (snapshot) {
                    rec.memorySnapshot = snapshot->covers(i);
                    snapshot->afterStep(i);
                }
                if (opProfiler && opProfiler->covers(i)) {
                    rec.opProfiled = true;
                    profiledSteps.push_back(rec);
                    if (opProfiler->endsAt(i)) {
                        endProfile();
                    }
                    continue;
                }
                result.steps.push_back(rec);
                if (observer) {
                    observer->onStepFinished(rec);
                }
            }
        } catch (const c10::OutOfMemoryError& e) {
            result.status = RunStatus::Oom;
            result.failedPhase = currentPhase;
            result.error = currentPhase ? e.what_without_backtrace()
                                        : std::string("while building the model: ") +
                                              e.what_without_backtrace();
        } catch (const c10::Error& e) {
            result.status = RunStatus::Error;
            result.failedPhase = currentPhase;
            result.error = e.what_without_backtrace();
        } catch (const std::exception& e) {
            result.status = RunStatus::Error;
            result.failedPhase = currentPhase;
            result.error = e.what();
        }
        // A run that ended inside the profiled steps keeps what they recorded.
        if (opProfiler) {
            try {
                if (opProfiler->active() || !profiledSteps.empty()) {
                    endProfile();
                }
            } catch (const std::exception& e) {
                if (result.status == RunStatus::Ok) {
                    result.status = RunStatus::Error;
                    result.error = std::string("the op profiler failed: ") + e.what();
                }
            }
            result.opProfile = opProfiler->take();
        }
        if (!reporting) { // the profiler's start failed
            reporting.emplace(c10::DebugInfoKind::PROFILER_STATE, cpuReporter);
        }
        // The timeline ends with the last step: stop sampling before anything is torn down.
        if (sampler) {
            sampler->stop();
        }
        // The snapshot is finished while the run's tensors still exist, so a failed run's
        // file shows the moment it failed rather than the teardown after it.
        if (snapshot) {
            result.memorySnapshot = snapshot->finish(); // reports its own failures
            snapshot.reset();
        }
        if (hooks && ctx) {
            try {
                hooks->runEnding(*ctx);
            } catch (const std::exception& e) {
                if (result.status == RunStatus::Ok) {
                    result.status = RunStatus::Error;
                    result.error = e.what();
                }
            }
        }
        ctx.reset();
    }
    if (sampler) {
        result.memoryTimeline = sampler->takeTimeline();
        result.telemetry = sampler->takeTelemetry();
        result.samplerCpuMs = sampler->threadCpuMs();
        if (!sampler->telemetryNote().empty()) {
            result.telemetryNote = sampler->telemetryNote();
        }
        if (!sampler->samplerError().empty()) {
            result.samplerError = sampler->samplerError();
        }
        sampler.reset();
    }
    // The context (model, optimizer state, activations) is gone; hand cached blocks back.
    try {
        releaseDeviceMemory(target);
    } catch (const std::exception& e) {
        if (result.status == RunStatus::Ok) {
            result.status = RunStatus::Error;
            result.error = std::string("releasing device memory failed: ") + e.what();
        }
    }
    const std::optional<DeviceInfo> info =
        target.cuda ? std::optional(cuda::deviceInfo(target.index)) : std::nullopt;
    result.summary =
        summarize(config, result.steps,
                  info ? bench::peakFlops(*info, config.precision, config.tf32) : std::nullopt);
    result.summary.gpuBusyNvml = nvmlBusyShare(result);
    return result;
}

} // namespace lmprof::engine
