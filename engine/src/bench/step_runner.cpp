// One step of the measurement loop (step_runner.h): the phase bodies, a step of every phase
// of the mode, and a cuda_graphs run's capture and replays.

#include "bench/step_runner.h"

#include "bench/autocast_scope.h"
#include "bench/device_peaks.h"
#include "lmprof/engine/op_profile.h"
#include "nvtx/region.h"

#include <c10/util/Exception.h>

namespace lmprof::engine::bench {

using Clock = std::chrono::steady_clock;

bool cancelled(const StepEnv& env) {
    return env.cancel && env.cancel->load(std::memory_order_relaxed);
}

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
// One step: every phase of the mode, timed and metered.

void sample(StepEnv& env, Phase phase, int step) {
    env.position.set(step, phase);
    env.sampler.boundary();
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

// What a step's phases leave for its record: the loss and gradient norms, read once the step
// is timed, and each phase's host time and allocation peak.
struct PhaseOutputs {
    at::Tensor loss; // carries the graph from forward to backward
    at::Tensor lossValue;
    at::Tensor norms;
    std::vector<double> hostMs;
    PeakBytes peaks;
};

// The phases of step `index`, on the current stream, each timed, metered and sampled at its
// boundaries; false when cancelled between two.
bool runPhases(StepEnv& env, int index, std::optional<Phase>& currentPhase, StepRecord& rec,
               PhaseOutputs& out) {
    const auto phases = phasesOf(env.config.mode);
    for (size_t i = 0; i < phases.size(); ++i) {
        const Phase phase = phases[i];
        if (i > 0 && cancelled(env)) {
            return false;
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
            runPhase(phase, env.ctx, out.loss);
            if (env.target.cuda) {
                env.eventTimers[i]->stop();
            }
        }
        out.hostMs[i] = msBetween(t0, Clock::now());
        const int64_t peakAlloc = env.meter.peakAllocated();
        rec.peakAllocatedBytes = std::max(rec.peakAllocatedBytes, peakAlloc);
        rec.peakReservedBytes = std::max(rec.peakReservedBytes, env.meter.peakReserved());
        out.peaks.of(phase) = peakAlloc;
        sample(env, phase, index);
        if (phase == Phase::Forward) {
            out.lossValue = out.loss.detach();
        } else if (phase == Phase::Backward) {
            if (env.hooks) {
                env.hooks->afterBackward(index);
            }
            if (!env.ctx.gradNormGroups.empty()) {
                out.norms = bench::gradNorms(env.ctx.gradNormGroups);
            }
        }
    }
    out.loss = at::Tensor(); // forward mode: release the graph inside the step
    return true;
}

} // namespace

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
    PhaseOutputs out;
    out.hostMs.assign(phases.size(), 0.0);
    const uint64_t k0 = env.kernels ? env.kernels->now() : 0;
    const auto stepStart = Clock::now();
    {
        nvtx::Region stepRange(rec.warmup ? kWarmupStepRange : kStepRange);
        bool ran = false;
        const auto run = [&] { ran = runPhases(env, index, currentPhase, rec, out); };
        // cuda_graphs runs its last warmup step on the graph's stream (StepGraph::onItsStream),
        // so that the libraries' per-stream setup is done before the capture.
        if (env.config.cudaGraphs && index == env.config.warmupSteps - 1) {
            env.graph = std::make_unique<cuda::StepGraph>(env.target.index);
            env.graph->onItsStream(run);
        } else {
            run();
        }
        if (!ran) {
            return false;
        }
        if (env.target.cuda) {
            cuda::synchronize(env.target.index);
        }
    }
    const uint64_t k1 = endStep(env, stepStart, rec);
    for (size_t i = 0; i < phases.size(); ++i) {
        phaseMs(rec, phases[i]) = env.target.cuda ? env.eventTimers[i]->elapsedMs() : out.hostMs[i];
    }
    rec.phasePeakBytes = out.peaks;
    if (env.kernels) {
        rec.kernelMs = std::min(env.kernels->busyMs(k0, k1), rec.totalMs);
    }
    readStepOutputs(env, out.lossValue, out.norms, rec);
    return true;
}

} // namespace lmprof::engine::bench
