// A result set: the runs of one sweep, study or session with where they ran (the machine,
// LibTorch, the GPU) and the precision lab's experiments when it has any (docs/RESULTS.md).
// Apart from records.h, so that a run record does not pull in the lab.
#pragma once

#include "lmprof/engine/precision_lab.h"
#include "lmprof/engine/records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::engine {

struct DeviceInfo {
    std::string type = "cpu"; // "cpu" or "cuda"
    std::string name;
    int64_t memoryBytes = 0;
};

struct Environment {
    std::string torch;
    std::string cuda; // CUDA version LibTorch was built with, empty for CPU-only builds
    DeviceInfo device;
    std::optional<std::string> driver; // the GPU driver's version (NVML), for a CUDA device
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
    PrecisionLab precisionLab; // the lab's experiments, when the set holds any
    // The verdicts about several runs together ("verdicts", docs/VERDICTS.md: a straggler
    // among a watched script's ranks). As read; nullopt on a set made here, whose writer
    // judges its runs (judgeRuns). A set read without them is judged as it is read.
    std::optional<std::vector<RunVerdict>> verdicts;
};

} // namespace lmprof::engine
