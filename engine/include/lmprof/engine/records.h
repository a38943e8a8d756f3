// What a benchmark run produces: per-step records, memory samples, the summary and the
// result set that is saved as JSON (docs/RESULTS.md). Plain structs, no LibTorch types.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/module_times.h"
#include "lmprof/engine/run_verdict.h"
#include "lmprof/engine/stats.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

struct OpProfile; // op_profile.h

using PeakBytes = PerPhase<int64_t>;

// A watched script's evaluation pass (docs/WATCH.md, "Evaluation passes"): gradient-free
// forwards of its model between two steps, from the earlier step's end to the end of the
// last forward.
struct Evaluation {
    double ms = 0.0;
    int forwards = 0;
};

struct StepRecord {
    int index = 0;
    bool warmup = false;
    double forwardMs = 0.0;
    double backwardMs = 0.0;  // 0 when the mode has no backward phase
    double optimizerMs = 0.0; // 0 when the mode has no optimizer phase
    double totalMs = 0.0;     // wall time of the whole step, harness included
    int64_t peakAllocatedBytes = 0;
    int64_t peakReservedBytes = 0;
    PeakBytes phasePeakBytes; // peak allocated bytes of each phase of this step
    // The training loss of this step's forward (the same fixed batch every step, so runs
    // that differ only in precision can be overlaid). NaN or ±inf when it overflowed.
    std::optional<double> loss;
    // RunConfig::gradNorms: the L2 norm of each group's gradients (gradNormNames), unscaled
    // for fp16; empty otherwise.
    std::vector<double> gradNorms;
    std::optional<double> lossScale; // fp16 only: the dynamic loss scale used by this step
    bool skippedUpdate = false;      // fp16 only: gradients overflowed, the update was skipped
    double endMs = 0.0;              // when the step ended, ms since the run started
    // Allocator history was recorded during this step (memory snapshot): its timing is
    // perturbed, so it is left out of the summary.
    bool memorySnapshot = false;
    // Every op of this step was recorded by the op profiler: also perturbed, also left out.
    bool opProfiled = false;
    // CUDA: how long kernels ran during the step (CUPTI; overlapping kernels once), for the
    // GPU's busy share. Absent on the CPU or without CUPTI.
    std::optional<double> kernelMs;
    // A replay of the run's CUDA graph (RunConfig::cudaGraphs), not an eager step.
    bool graphReplay = false;
    // A step watched in a PyTorch script (RunResult::source, docs/WATCH.md): the loader's
    // time before it and the time outside forward, backward and the optimizer (zero_grad,
    // clipping, logging), both inside totalMs and absent from the engine's steps; the
    // micro-batches it accumulated; whether torch.compile compiled during it (such a step
    // is flagged warmup as well).
    std::optional<double> dataMs;
    std::optional<double> restMs;
    int microBatches = 0;
    bool compiled = false;
    // The watched script's evaluation pass between the previous step and this one
    // (Evaluation): outside the step, and not in its dataMs.
    std::optional<Evaluation> evaluation;
    // What else the script logged for the step (run.log(lr=..., grad_norm=...)), by name;
    // `loss` has a field of its own.
    std::map<std::string, double> scalars;
};

// One reading of the memory sampler: periodic (default 100 Hz) or at a phase boundary.
struct MemorySample {
    double tMs = 0.0; // since the run started
    int64_t allocated = 0;
    int64_t reserved = 0;
    int64_t rss = 0;
    int64_t deviceUsed = 0;  // whole-device used bytes (cudaMemGetInfo); 0 on CPU
    int64_t deviceTotal = 0; // whole-device capacity; 0 on CPU
    Phase phase = Phase::Forward;
    int step = 0;
    bool boundary = false; // taken at the start or end of a phase
};

// Device and process telemetry (up to 10 Hz). GPU fields come from NVML and are empty
// when NVML is not loaded (no driver, CPU runs).
struct TelemetrySample {
    double tMs = 0.0;
    double cpuPercent = 0.0; // process CPU time over wall time, 100 = one core busy
    int64_t rss = 0;
    std::optional<double> gpuUtilPercent;
    std::optional<double> memUtilPercent;
    std::optional<double> powerW;
    std::optional<double> smClockMHz;
    std::optional<double> memClockMHz;
    std::optional<double> temperatureC;
    std::optional<uint64_t> throttleReasons; // NVML clocks-event reason bits
};

// NVML clocks-event (throttle) reason bits by name: "sw power cap", "hw thermal slowdown",
// ... Idle and the application-clock setting are not slowdowns and are left out unless
// includeBenign. Unknown bits are reported as "0x...".
std::vector<std::string> throttleReasonNames(uint64_t bits, bool includeBenign = false);

// One allocation seen while a memory snapshot was recording.
struct AllocationRecord {
    int64_t bytes = 0;
    double tMs = 0.0;       // when it was allocated
    double lifetimeMs = -1; // until it was freed; -1 if still alive when recording stopped
    Phase phase = Phase::Forward;
    int step = 0;
};

// The memory snapshot of a run: where the file went and the largest allocations in it.
struct MemorySnapshotInfo {
    std::string path;
    std::string format; // "cuda-pickle" (pytorch.org/memory_viz) or "lmprof.alloc-trace/1"
    int firstStep = 0;
    int stepCount = 0;
    int64_t entries = 0;
    bool truncated = false;                // the entry limit was reached
    std::optional<std::string> error;      // the file could not be written
    std::vector<AllocationRecord> largest; // largest first
};

// Tokens a step of `config` processes per second when it takes stepMs (0 for no time):
// the summary's tokens/s (from the mean step time) and the window's per-step throughput.
double tokensPerSecond(const RunConfig& config, double stepMs);
// The same for a run as it was recorded: a watched run's own tokens per step.
struct RunResult;
double tokensPerSecond(const RunResult& run, double stepMs);

// A scalar a run logged with its steps (StepRecord::scalars, and its loss as "loss"): the
// statistics of its finite values over the measured steps that logged it (isMeasured), and
// the last value logged by any step (a learning rate's current value, where a loss stands).
struct ScalarSummary {
    PhaseStats measured;
    double last = 0.0;
};

struct RunSummary {
    PhaseStats forwardMs;
    PhaseStats backwardMs;
    PhaseStats optimizerMs;
    PhaseStats totalMs;
    // A watched run's data and rest phases (StepRecord::dataMs, restMs), over the same steps;
    // absent when its steps have none (the engine's own runs).
    std::optional<PhaseStats> dataMs;
    std::optional<PhaseStats> restMs;
    double tokensPerS = 0.0;
    double tflops = 0.0;       // achieved, from the analytic FLOPs and the mean step time
    std::optional<double> mfu; // null when the device's peak is unknown (CPU)
    PeakBytes peakBytes;
    // Where the GPU waits (docs/MEASUREMENT.md): kernel time over step time of the measured
    // steps (CUPTI), and NVML's utilisation over the same steps; null on the CPU or when the
    // source was missing.
    std::optional<double> gpuBusy;
    std::optional<double> gpuBusyNvml;
    // The logged scalars by name (summarizeScalars). Derived from the steps, never written:
    // summarize() fills it, and so does reading a result set (docs/RESULTS.md, "Logged
    // scalars").
    std::map<std::string, ScalarSummary> scalars;
};

// Below this busy share the GPU waits for the host more than a fifth of each step: the run
// measures the host (launches, Python-free as it is), not the GPU (docs/MEASUREMENT.md).
inline constexpr double kHostBoundBelow = 0.8;
// The busy share a run is judged by (CUPTI's, else NVML's) and whether it is host-bound;
// nullopt when the run has neither.
std::optional<double> busyShare(const RunSummary& s);
std::optional<bool> hostBound(const RunSummary& s);

// A run's CUDA graph (RunConfig::cudaGraphs): captured once after the warmup, replayed for
// every measured step.
struct GraphCapture {
    double captureMs = 0.0; // capture and instantiation, wall time
    int64_t poolBytes = 0;  // what the graph's private memory pool reserved
};

// Skipped: never started (a sweep skips configurations larger than one that ran out of memory).
enum class RunStatus { Ok, Oom, Error, Cancelled, Skipped };
inline constexpr std::array kRunStatuses{RunStatus::Ok, RunStatus::Oom, RunStatus::Error,
                                         RunStatus::Cancelled, RunStatus::Skipped};
std::string_view toString(RunStatus s);
std::optional<RunStatus> parseRunStatus(std::string_view s);

// Where a run came from when the engine did not run it: a PyTorch training script watched
// by the lmprof Python package (docs/WATCH.md). Its config holds the precision, the mode and
// the step counts, not a model of the engine's.
// A watched model's CS336 dimensions (docs/WATCH.md, "Against the reference"): found by the
// Python package from its parameters and first batch, or stated by the script.
struct WatchedModel {
    ModelConfig model; // preset "custom"
    int64_t contextLength = 0;
    int64_t batchSize = 0;
    bool stated = false; // the script stated them (watch(config=...))
};

struct RunSource {
    std::string kind = "watched";
    std::string script;
    std::string modelClass;
    std::string device;
    std::optional<std::string> autocast;  // the dtype autocast ran forward in
    std::optional<std::string> optimizer; // the optimizer's class
    std::optional<int64_t> tokensPerStep; // as the script gave it
    bool torchCompile = false;            // some step compiled
    int64_t pid = 0;
    std::optional<WatchedModel> model;    // its CS336 dimensions, when it has them
    std::optional<std::string> modelNote; // else why not
};

// A watched run longer than its watcher keeps whole (docs/RESULTS.md, "thinned"): `steps`
// holds its warmup and perturbed steps and every `every`-th one; its step counts and summary
// cover all `recordedSteps`.
struct Thinning {
    int every = 1;
    int recordedSteps = 0;
};

struct RunResult {
    std::string id;
    RunConfig config;
    std::string resolvedDevice; // "cpu" or "cuda:0": what "auto" became
    RunStatus status = RunStatus::Ok;
    std::optional<std::string> error;
    std::optional<Phase> failedPhase;
    int64_t parameterCount = 0;
    std::vector<StepRecord> steps;
    RunSummary summary;
    std::vector<MemorySample> memoryTimeline;
    std::vector<TelemetrySample> telemetry;
    std::optional<std::string> telemetryNote; // why GPU telemetry is missing, if it is
    double samplerCpuMs = 0.0;                // CPU time of the sampler thread over the whole run
    std::optional<std::string> samplerError;  // why periodic sampling stopped early, if it did
    std::optional<MemorySnapshotInfo> memorySnapshot;
    // When op profiling was asked for and started; shared and never changed once made, so a
    // run record needs no op profile header (op_profile.h) to be copied or kept.
    std::shared_ptr<const OpProfile> opProfile;
    std::optional<DdpReport> ddp;      // a data-parallel run (config.ddp): every rank's steps
    std::optional<GraphCapture> graph; // cuda_graphs: the capture, once it succeeded
    // Why a CUDA run has no kernel time (CUPTI missing or taken), if it has none.
    std::optional<std::string> busyNote;
    std::optional<RunSource> source;           // a watched script's run, not the engine's
    std::optional<Evaluation> finalEvaluation; // a watched run's evaluation after its last step
    std::optional<ModuleTimes> moduleTimes;    // a watched run's time per module, when asked
    std::optional<Thinning> thinned;           // a watched run past its watcher's ring
    // What bounds its steps (docs/VERDICTS.md): judgeRun's, as written or read back; empty
    // until the run is written or read.
    std::vector<RunVerdict> verdicts;
};

// The model a run measured, for people: the engine's model label, or a watched run's
// model class ("MyGPT (watched)").
std::string runModelLabel(const RunResult& run);
// The run for a file name: runLabel of its configuration ("tiny-ctx16-fp32-train"), or a
// watched run's id with "-watched" ("MyGPT-watched"), anything but letters, digits, '.',
// '_' and '-' replaced by '-'.
std::string runFileLabel(const RunResult& run);
// Tokens a step of the run processes: batch × context for the engine's runs, the script's
// tokens_per_step for a watched one (0 when it gave none).
int64_t tokensPerStep(const RunResult& run);

// A watched run's evaluation passes (Evaluation) in all: how many, their forwards and
// time, and their share of the time from the run's first step to its last evaluation
// (steps plus passes; the data phases are left out, since they hold no evaluation).
struct EvaluationTotals {
    int passes = 0;
    int64_t forwards = 0;
    double ms = 0.0;
    double share = 0.0;
};
EvaluationTotals evaluationTotals(const RunResult& run);
// "3 evaluation passes (9 forwards): 61.2 ms, 12% of the steps' and passes' time; not in
// any step's data phase", or "" for a run with none. A thinned run counts the passes its
// kept steps carry, and says so.
std::string evaluationLine(const RunResult& run);

// "7817 of 1000000 steps kept (the warmup, any profiled step, and 1 in 128 of the others);
// the summary covers all of them", or "" for a run whose steps are all there.
std::string thinnedLine(const RunResult& run);

// NVML's mean GPU utilisation (0..1) over the run's measured, unperturbed steps, from the
// telemetry samples taken while they ran; nullopt without such samples.
std::optional<double> nvmlBusyShare(const RunResult& run);

// A run that never ran a step (skipped by a sweep, cancelled before it started, refused):
// its id, configuration and parameter count, with the status and why.
RunResult unstartedRun(std::string id, const RunConfig& config, RunStatus status, std::string why);

// "oom (backward)": the run's status and, if it failed in one, the phase. The one text the
// reports and the window show for a run's outcome.
std::string statusText(const RunResult& run);

// The one rule for which steps count in timing statistics: the summary, Compare's ratio
// and verdict, the histogram and the running mean ± std band all use it. A step counts
// unless it is a warmup step, was recorded under a memory snapshot (recording the
// allocator's history perturbs its timing) or was op-profiled (so is every op's timing).
bool isMeasured(const StepRecord& step);

// One per-step time (total_ms by default) of every measured step, in step order.
std::vector<double> measuredStepTimes(const std::vector<StepRecord>& steps,
                                      double StepRecord::*field = &StepRecord::totalMs);
// The same into `out` (cleared first), for callers that reuse a buffer every frame.
void measuredStepTimes(const std::vector<StepRecord>& steps, std::vector<double>& out,
                       double StepRecord::*field = &StepRecord::totalMs);

// Calls f(name, value) for each scalar a step logged: its loss as "loss" (a field of its own,
// and the scalar every training step logs), then its `scalars`.
template <typename F>
void forEachScalar(const StepRecord& step, F&& f) {
    if (step.loss) {
        f(std::string_view("loss"), *step.loss);
    }
    for (const auto& [name, value] : step.scalars) {
        f(std::string_view(name), value);
    }
}

// Every scalar the steps logged, by name (ScalarSummary).
std::map<std::string, ScalarSummary> summarizeScalars(const std::vector<StepRecord>& steps);

// Replaces a summary's phase statistics (data and rest included), peaks and logged scalars
// with those of the steps (summarize()): where a summary read from a file is not to be
// believed, such as the study report's.
void takeStepFigures(RunSummary& summary, const RunConfig& config,
                     const std::vector<StepRecord>& steps);

// What a run read from a file takes from its steps rather than from its summary: its logged
// scalars; for a watched run, whatever wrote the file, its phase statistics, peaks and
// tokens/s too, unless it is thinned, since its summary covers steps the file lacks
// (docs/RESULTS.md, on watched runs).
void summarizeOnRead(RunResult& run);

// Recomputes the summary from the measured steps of a run (isMeasured). Peaks come from the
// non-warmup steps, or from the warmup steps of a run that failed before any other.
RunSummary summarize(const RunConfig& config, const std::vector<StepRecord>& steps,
                     std::optional<double> devicePeakFlops);

} // namespace lmprof::engine
