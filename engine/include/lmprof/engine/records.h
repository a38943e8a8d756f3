// What a benchmark run produces: per-step records, memory samples, the summary and the
// result set that is saved as JSON (SPEC §4). Plain structs, no LibTorch types.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/stats.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::engine {

struct PeakBytes {
    int64_t forward = 0;
    int64_t backward = 0;
    int64_t optimizer = 0;
    int64_t max() const { return std::max({forward, backward, optimizer}); }
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
    PeakBytes phasePeakBytes;        // peak allocated bytes of each phase of this step
    std::optional<double> lossScale; // fp16 only: the dynamic loss scale used by this step
    bool skippedUpdate = false;      // fp16 only: gradients overflowed, the update was skipped
};

struct MemorySample {
    double tMs = 0.0; // since the run started
    int64_t allocated = 0;
    int64_t reserved = 0;
    int64_t rss = 0;
    Phase phase = Phase::Forward;
    int step = 0;
};

struct RunSummary {
    PhaseStats forwardMs;
    PhaseStats backwardMs;
    PhaseStats optimizerMs;
    PhaseStats totalMs;
    double tokensPerS = 0.0;
    double tflops = 0.0;       // achieved, from the analytic FLOPs and the mean step time
    std::optional<double> mfu; // null when the device's peak is unknown (CPU)
    PeakBytes peakBytes;
};

// Skipped: never started (a sweep skips configurations larger than one that ran out of memory).
enum class RunStatus { Ok, Oom, Error, Cancelled, Skipped };
std::string_view toString(RunStatus s);
std::optional<RunStatus> parseRunStatus(std::string_view s);

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
};

struct DeviceInfo {
    std::string type = "cpu"; // "cpu" or "cuda"
    std::string name;
    int64_t memoryBytes = 0;
};

struct Environment {
    std::string torch;
    std::string cuda; // CUDA version LibTorch was built with, empty for CPU-only builds
    DeviceInfo device;
    std::string cpuModel;
    int cpuThreads = 0;
    std::string host;
};

struct ToolInfo {
    std::string name = "lmprof";
    std::string version;
    std::string git;
};

struct ResultSet {
    std::string created; // ISO 8601 UTC
    ToolInfo tool;
    Environment environment;
    std::vector<RunResult> runs;
};

// Recomputes the summary from the measured (non-warmup) steps of a run.
RunSummary summarize(const RunConfig& config, const std::vector<StepRecord>& steps,
                     std::optional<double> devicePeakFlops);

} // namespace lmprof::engine
