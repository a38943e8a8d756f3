// The measurement loop: warmup and measured steps through one code path (step_runner.h),
// the run's instruments around them (memory sampler, snapshot, op profiler, kernel clock),
// and failures turned into data (oom / error / cancelled) with the run's memory released.

#include "lmprof/engine/runner.h"

#include "bench/device_peaks.h"
#include "bench/execution_scope.h"
#include "bench/memory_sampler.h"
#include "bench/op_profiler.h"
#include "bench/snapshot.h"
#include "bench/step_context.h"
#include "bench/step_hooks.h"
#include "bench/step_runner.h"
#include "platform/cuda_backend.h"
#include "platform/kernel_clock.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <chrono>
#include <exception>

namespace lmprof::engine {

using bench::MemoryMeter;
using bench::StepContext;
using bench::StepEnv;
using Clock = std::chrono::steady_clock;

namespace {

// LibTorch's intra-op thread count belongs to the process: a run that asks for a count has
// it until it ends, and the next run asking for none (0) gets the default back, not the
// last run's count (a sweep over threads 0,4 would otherwise run its second seed's 0 on 4).
class IntraOpThreads {
public:
    explicit IntraOpThreads(int threads) : m_before(at::get_num_threads()) {
        if (threads > 0) {
            at::set_num_threads(threads);
        }
    }
    ~IntraOpThreads() {
        if (at::get_num_threads() != m_before) {
            at::set_num_threads(m_before);
        }
    }
    IntraOpThreads(const IntraOpThreads&) = delete;
    IntraOpThreads& operator=(const IntraOpThreads&) = delete;

private:
    int m_before;
};

void releaseDeviceMemory(const DeviceTarget& target) {
    if (target.cuda) {
        cuda::synchronize(target.index);
        cuda::emptyCache();
    }
}

// One run of runBenchmarkWith, from its model's construction to its summary. Members are
// declared in the order a run needs them; teardown() and collect() release them in the
// order that keeps a failed run's timeline and snapshot.
struct BenchmarkRun {
    BenchmarkRun(const RunConfig& config, const std::string& runId, RunObserver* observer,
                 const std::atomic<bool>* cancel, bench::StepHooks* hooks, RunResult& result,
                 const DeviceTarget& target)
        : config(config), runId(runId), observer(observer), cancel(cancel), hooks(hooks),
          result(result), target(target) {}

    const RunConfig& config;
    const std::string& runId;
    RunObserver* observer;
    const std::atomic<bool>* cancel;
    bench::StepHooks* hooks;
    RunResult& result;
    DeviceTarget target;

    std::shared_ptr<bench::CpuMemoryReporter> cpuReporter =
        std::make_shared<bench::CpuMemoryReporter>();
    MemoryMeter meter{target, cpuReporter};
    bench::RunPosition position;
    // Kept past a failure, so that a failed run still keeps its timeline and writes its
    // snapshot (the moments before an OOM are what a user wants to see).
    std::optional<bench::MemorySampler> sampler;
    std::optional<bench::SnapshotSession> snapshot;
    std::optional<StepContext> ctx; // the model and optimizer; released after the snapshot
    std::optional<Phase> currentPhase;
    std::optional<bench::OpProfiler> opProfiler;
    std::vector<StepRecord> profiledSteps; // held back until their peaks are replayed
    // Every CPU allocation of this thread is reported to cpuReporter while this is set. The
    // op profiler needs the same slot: it is taken out while the profiler is on.
    std::optional<c10::DebugInfoGuard> reporting;
    // What only the steps use: released when they end, before the run is torn down.
    std::unique_ptr<cupti::KernelClock> kernels;
    std::unique_ptr<StepEnv> env;

    void report() {
        if (!reporting) {
            reporting.emplace(c10::DebugInfoKind::PROFILER_STATE, cpuReporter);
        }
    }
    void measure();
    void start();
    void startKernelClock();
    bool beforeStep(int i);
    void keep(const StepRecord& rec);
    void endProfile();
    void teardown();
    void collect();
};

// The model and the run's instruments, then every step; a failure becomes the result's
// status with the phase it came from.
void BenchmarkRun::measure() {
    report();
    try {
        start();
        const int totalSteps = config.warmupSteps + config.measureSteps;
        for (int i = 0; i < totalSteps; ++i) {
            if (!beforeStep(i)) {
                break;
            }
            StepRecord rec;
            if (!bench::runStep(*env, i, currentPhase, rec)) {
                result.status = RunStatus::Cancelled;
                break;
            }
            currentPhase.reset();
            keep(rec);
        }
    } catch (const c10::OutOfMemoryError& e) {
        result.status = RunStatus::Oom;
        result.failedPhase = currentPhase;
        result.error = currentPhase
                           ? e.what_without_backtrace()
                           : std::string("while building the model: ") + e.what_without_backtrace();
    } catch (const c10::Error& e) {
        result.status = RunStatus::Error;
        result.failedPhase = currentPhase;
        result.error = e.what_without_backtrace();
    } catch (const std::exception& e) {
        result.status = RunStatus::Error;
        result.failedPhase = currentPhase;
        result.error = e.what();
    }
    env.reset();
    kernels.reset();
    teardown();
}

void BenchmarkRun::start() {
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
        snapshot.emplace(*config.memorySnapshot, runId, target, *cpuReporter, position, runStart);
    }
    if (config.opProfile) {
        opProfiler.emplace(*config.opProfile, target, config);
    }
    env.reset(
        new StepEnv{config, target, *ctx, meter, cancel, runStart, position, *sampler, {}, hooks});
    env->capture = &result.graph;
    startKernelClock();
    env->kernels = kernels.get();
    if (target.cuda) {
        for (size_t i = 0; i < phasesOf(config.mode).size(); ++i) {
            env->eventTimers.push_back(std::make_unique<cuda::EventTimer>());
        }
    }
}

// Kernel time for the busy share; an op-profiled run has LibTorch's profiler on CUPTI
// instead (docs/MEASUREMENT.md).
void BenchmarkRun::startKernelClock() {
    if (target.cuda && !config.opProfile) {
        std::string whyNot;
        kernels = cupti::KernelClock::start(whyNot);
        if (!kernels) {
            result.busyNote = "no kernel time: " + whyNot;
        }
    } else if (target.cuda) {
        result.busyNote = "no kernel time: the op profiler holds CUPTI during this run";
    }
}

// Before step i: the hooks, a cancel, the snapshot's step tag, the op profiler's start.
// False when the run is cancelled.
bool BenchmarkRun::beforeStep(int i) {
    if (hooks) {
        hooks->beforeStep(i);
    }
    if (bench::cancelled(*env)) {
        result.status = RunStatus::Cancelled;
        return false;
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
            report();
            throw;
        }
    }
    return true;
}

// A finished step: to the result and the observer, or held back while it is profiled.
void BenchmarkRun::keep(const StepRecord& finished) {
    StepRecord rec = finished;
    if (hooks) {
        hooks->stepFinished(rec);
    }
    if (snapshot) {
        rec.memorySnapshot = snapshot->covers(rec.index);
        snapshot->afterStep(rec.index);
    }
    if (opProfiler && opProfiler->covers(rec.index)) {
        rec.opProfiled = true;
        profiledSteps.push_back(rec);
        if (opProfiler->endsAt(rec.index)) {
            endProfile();
        }
        return;
    }
    result.steps.push_back(rec);
    if (observer) {
        observer->onStepFinished(rec);
    }
}

// Ends the profile: the reporter back in its slot, then the profiled steps' records, with
// the peaks replayed from the profiler's allocation records, released. A failure to stop
// still restores the reporter and keeps the records (unreplayed).
void BenchmarkRun::endProfile() {
    std::exception_ptr failure;
    try {
        opProfiler->stop(static_cast<int>(profiledSteps.size()));
    } catch (...) {
        failure = std::current_exception();
    }
    report();
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
}

// After the last step, or a failure: the profile ends (a run that ended inside the profiled
// steps keeps what they recorded), the sampler stops before anything is torn down, the
// snapshot is finished while the run's tensors still exist (so a failed run's file shows the
// moment it failed rather than the teardown after it), then the hooks and the model go.
void BenchmarkRun::teardown() {
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
    report(); // the profiler's start failed
    if (sampler) {
        sampler->stop();
    }
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
    reporting.reset();
}

// The sampler's series, the device's cached blocks handed back (the model, optimizer state
// and activations are gone), and the summary of the steps.
void BenchmarkRun::collect() {
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
    const IntraOpThreads threads(config.threads);
    const ExecutionScope execution(config); // SDPA backends, TF32: until the run ends
    BenchmarkRun run(config, runId, observer, cancel, hooks, result, target);
    run.measure();
    run.collect();
    return result;
}

} // namespace lmprof::engine
