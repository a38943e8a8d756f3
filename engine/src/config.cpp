// Presets, enum names, validation and the analytic counts (parameters, FLOPs) of docs/MODEL.md.

#include "lmprof/engine/config.h"

#include "enum_names.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <functional>

namespace lmprof::engine {

namespace {

struct Preset {
    const char* name;
    int64_t dModel, dFf, numLayers, numHeads;
};

constexpr std::array kPresets{
    Preset{"tiny", 128, 512, 2, 4},       Preset{"small", 768, 3072, 12, 12},
    Preset{"medium", 1024, 4096, 24, 16}, Preset{"large", 1280, 5120, 36, 20},
    Preset{"xl", 1600, 6400, 48, 25},     Preset{"2.7B", 2560, 10240, 32, 32},
};

// Upper bounds that catch typos (an extra zero) long before an allocation would.
constexpr int64_t kMaxDim = 1 << 16;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxVocab = 1 << 22;
constexpr int64_t kMaxContext = 1 << 17;
constexpr int64_t kMaxBatch = 1 << 16;
constexpr int kMaxSteps = 1000000;

void requireRange(std::vector<ConfigError>& errors, const char* field, int64_t value, int64_t lo,
                  int64_t hi) {
    if (value < lo || value > hi) {
        errors.push_back({field, "must be between " + std::to_string(lo) + " and " +
                                     std::to_string(hi) + ", got " + std::to_string(value)});
    }
}

// The plain fields of one section outside their ranges (ValueField, config.h); by section,
// so that the errors keep the order the configuration lists them in.
void rangeErrors(std::vector<ConfigError>& errors, const RunConfig& c,
                 ValueField::Section section) {
    for (const ValueField& f : valueFields()) {
        if (f.section == section) {
            if (auto why = f.rangeError(c)) {
                errors.push_back({f.key, *why});
            }
        }
    }
}

// A span of steps [first, first + count) that must lie within a run of `total` steps.
void requireStepSpan(std::vector<ConfigError>& errors, const std::string& prefix, int first,
                     int count, int total) {
    if (first < 0 || first >= total) {
        errors.push_back({prefix + ".first_step", "step " + std::to_string(first) +
                                                      " is outside the run's steps 0.." +
                                                      std::to_string(total - 1)});
    }
    if (count < 1 || static_cast<int64_t>(first) + count > total) {
        errors.push_back({prefix + ".step_count", "must be at least 1 and end within the run's " +
                                                      std::to_string(total) + " steps"});
    }
}

} // namespace

std::vector<std::string> gradNormNames(const ModelConfig& model) {
    std::vector<std::string> names{"token_embeddings"};
    for (int64_t i = 0; i < model.numLayers; ++i) {
        names.push_back("layers." + std::to_string(i));
    }
    names.emplace_back("ln_final");
    names.emplace_back("lm_head");
    return names;
}

std::optional<ConfigError> deviceError(const std::string& device) {
    if (device == "auto" || device == "cpu" || parseCudaIndex(device)) {
        return std::nullopt;
    }
    return ConfigError{"device", "'" + device + "' is not one of auto, cpu, cuda, cuda:N"};
}

constexpr EnumNames<AttentionKind, 6> kAttentionNames{{
    {AttentionKind::Naive, "naive"},
    {AttentionKind::Sdpa, "sdpa"},
    {AttentionKind::SdpaFlash, "sdpa-flash"},
    {AttentionKind::SdpaEfficient, "sdpa-efficient"},
    {AttentionKind::SdpaMath, "sdpa-math"},
    {AttentionKind::SdpaCudnn, "sdpa-cudnn"},
}};

constexpr EnumNames<Mode, 3> kModeNames{{
    {Mode::Forward, "forward"},
    {Mode::ForwardBackward, "forward-backward"},
    {Mode::Train, "train"},
}};
constexpr EnumNames<Phase, 3> kPhaseNames{{
    {Phase::Forward, "forward"},
    {Phase::Backward, "backward"},
    {Phase::Optimizer, "optimizer"},
}};

std::string_view toString(Mode m) {
    return nameIn(kModeNames, m);
}

std::string_view toString(Phase p) {
    return nameIn(kPhaseNames, p);
}

std::string_view toString(AttentionKind a) {
    return nameIn(kAttentionNames, a);
}

std::optional<int> parseCudaIndex(std::string_view d) {
    if (d == "cuda") {
        return 0;
    }
    if (d.rfind("cuda:", 0) != 0 || d.size() == 5) {
        return std::nullopt;
    }
    int index = -1;
    auto [ptr, ec] = std::from_chars(d.data() + 5, d.data() + d.size(), index);
    if (ec != std::errc() || ptr != d.data() + d.size() || index < 0) {
        return std::nullopt;
    }
    return index;
}

SnapshotRequest defaultSnapshotRequest(std::string path, int warmupSteps) {
    SnapshotRequest r;
    r.path = std::move(path);
    r.firstStep = std::max(0, warmupSteps - 1);
    return r;
}

OpProfileRequest defaultOpProfileRequest(int warmupSteps, std::string tracePath) {
    OpProfileRequest r;
    r.firstStep = std::max(0, warmupSteps);
    r.tracePath = std::move(tracePath);
    return r;
}

std::optional<Mode> parseMode(std::string_view s) {
    return parseByName(s, kModes);
}

std::optional<Phase> parsePhase(std::string_view s) {
    return parseByName(s, kPhases);
}

std::optional<AttentionKind> parseAttention(std::string_view s) {
    return parseByName(s, kAttentionKinds);
}

std::vector<Phase> phasesOf(Mode m) {
    switch (m) {
    case Mode::Forward:
        return {Phase::Forward};
    case Mode::ForwardBackward:
        return {Phase::Forward, Phase::Backward};
    case Mode::Train:
        return {Phase::Forward, Phase::Backward, Phase::Optimizer};
    }
    return {};
}

const std::vector<std::string>& presetNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& p : kPresets) {
            v.emplace_back(p.name);
        }
        return v;
    }();
    return names;
}

std::optional<ModelConfig> presetModel(std::string_view name) {
    for (const auto& p : kPresets) {
        if (name == p.name) {
            ModelConfig m;
            m.preset = p.name;
            m.dModel = p.dModel;
            m.dFf = p.dFf;
            m.numLayers = p.numLayers;
            m.numHeads = p.numHeads;
            return m;
        }
    }
    return std::nullopt;
}

std::vector<ConfigError> validate(const ModelConfig& m) {
    std::vector<ConfigError> errors;
    if (m.preset != "custom" && !presetModel(m.preset)) {
        std::string known;
        for (const auto& n : presetNames()) {
            known += n + ", ";
        }
        errors.push_back(
            {"model.preset", "unknown preset '" + m.preset + "' (known: " + known + "custom)"});
    }
    requireRange(errors, "model.d_model", m.dModel, 1, kMaxDim);
    requireRange(errors, "model.d_ff", m.dFf, 1, 4 * kMaxDim);
    requireRange(errors, "model.num_layers", m.numLayers, 1, kMaxLayers);
    requireRange(errors, "model.num_heads", m.numHeads, 1, kMaxDim);
    requireRange(errors, "model.vocab_size", m.vocabSize, 2, kMaxVocab);
    if (m.dModel > 0 && m.numHeads > 0) {
        if (m.dModel % m.numHeads != 0) {
            errors.push_back({"model.num_heads", "d_model " + std::to_string(m.dModel) +
                                                     " is not divisible by num_heads " +
                                                     std::to_string(m.numHeads)});
        } else if ((m.dModel / m.numHeads) % 2 != 0) {
            errors.push_back({"model.num_heads", "head dimension d_model/num_heads = " +
                                                     std::to_string(m.dModel / m.numHeads) +
                                                     " must be even for RoPE's (even, odd) pairs"});
        }
    }
    if (!(m.ropeTheta > 1.0) || m.ropeTheta > 1e12) {
        errors.push_back({"model.rope_theta", "must be a number above 1"});
    }
    return errors;
}

namespace {

// What a captured step cannot do (docs/MEASUREMENT.md, "CUDA graphs"): the measured steps
// are replays, which neither the allocator's history nor the profiler sees step by step.
void validateGraphs(const RunConfig& c, std::vector<ConfigError>& errors) {
    if (c.warmupSteps < kGraphWarmupSteps) {
        errors.push_back(
            {"warmup_steps", "cuda_graphs captures after the warmup: it needs at least " +
                                 std::to_string(kGraphWarmupSteps) +
                                 " warmup steps, so that lazy initialisation and the optimizer's "
                                 "first allocations happen before the capture"});
    }
    if (c.memorySnapshot &&
        c.memorySnapshot->firstStep + c.memorySnapshot->stepCount > c.warmupSteps) {
        errors.push_back({"memory_snapshot", "cuda_graphs replays the measured steps, which "
                                             "allocate nothing the snapshot could record; "
                                             "snapshot warmup steps only, or cuda_graphs off"});
    }
    if (c.opProfile && c.opProfile->firstStep + c.opProfile->stepCount > c.warmupSteps) {
        errors.push_back({"op_profile", "cuda_graphs replays the measured steps as one graph "
                                        "launch, with no ops to attribute; profile warmup "
                                        "steps only, or cuda_graphs off"});
    }
    if (c.ddp) {
        errors.push_back({"ddp", "cuda_graphs does not capture data-parallel steps (their "
                                 "all-reduces run from hooks on the host)"});
    }
}

} // namespace

std::vector<ConfigError> validate(const RunConfig& c) {
    std::vector<ConfigError> errors = validate(c.model);
    requireRange(errors, "context_length", c.contextLength, 1, kMaxContext);
    requireRange(errors, "batch_size", c.batchSize, 1, kMaxBatch);
    requireRange(errors, "warmup_steps", c.warmupSteps, 0, kMaxSteps);
    requireRange(errors, "measure_steps", c.measureSteps, 1, kMaxSteps);
    rangeErrors(errors, c, ValueField::Section::Run);
    if (auto e = deviceError(c.device)) {
        errors.push_back(*e);
    }
    // A variant the named device cannot run ("auto" is checked once resolved: checkRunnable).
    if (c.device != "auto" && !deviceError(c.device)) {
        for (auto& e : choiceRefusals(c, c.device != "cpu")) {
            errors.push_back(std::move(e));
        }
    }
    if (c.gradNorms && c.mode == Mode::Forward) {
        errors.push_back({"grad_norms", "needs a backward pass (mode forward has none)"});
    }
    rangeErrors(errors, c, ValueField::Section::Sampling);
    rangeErrors(errors, c, ValueField::Section::Instruments);
    if (const auto& snap = c.memorySnapshot) {
        if (snap->path.empty()) {
            errors.push_back({"memory_snapshot.path", "must name the file to write"});
        }
        requireStepSpan(errors, "memory_snapshot", snap->firstStep, snap->stepCount,
                        c.warmupSteps + c.measureSteps);
        // 40 bytes an event: the limit keeps a snapshot's own memory under 400 MB.
        if (snap->maxEntries < 1 || snap->maxEntries > 10'000'000) {
            errors.push_back({"memory_snapshot.max_entries", "must be between 1 and 10000000"});
        }
    }
    if (const auto& ops = c.opProfile) {
        requireStepSpan(errors, "op_profile", ops->firstStep, ops->stepCount,
                        c.warmupSteps + c.measureSteps);
        // Both use LibTorch's one profiler slot of the thread (docs/OP_PROFILE.md).
        const auto end = [](int first, int count) { return int64_t{first} + count; };
        if (const auto& snap = c.memorySnapshot;
            snap && ops->firstStep < end(snap->firstStep, snap->stepCount) &&
            snap->firstStep < end(ops->firstStep, ops->stepCount)) {
            errors.push_back({"op_profile.first_step",
                              "the profiled steps overlap the memory snapshot's steps " +
                                  std::to_string(snap->firstStep) + ".." +
                                  std::to_string(end(snap->firstStep, snap->stepCount) - 1) +
                                  "; profile other steps"});
        }
    }
    if (c.ddp) {
        auto more = validate(*c.ddp);
        errors.insert(errors.end(), more.begin(), more.end());
        if (c.mode == Mode::Forward) {
            errors.push_back({"ddp", "data-parallel needs gradients to all-reduce (mode forward "
                                     "has no backward)"});
        }
        if (c.ddp->backend == DdpBackend::Nccl && c.device == "cpu") {
            errors.push_back({"ddp.backend", "nccl all-reduces CUDA tensors; use gloo on the CPU"});
        }
    }
    if (c.cudaGraphs) {
        validateGraphs(c, errors);
    }
    if (c.faultOomPhase) {
        auto phases = phasesOf(c.mode);
        if (std::find(phases.begin(), phases.end(), *c.faultOomPhase) == phases.end()) {
            errors.push_back(
                {"fault_oom_phase", "mode " + std::string(toString(c.mode)) + " has no " +
                                        std::string(toString(*c.faultOomPhase)) + " phase"});
        }
    }
    return errors;
}

std::vector<ConfigError> validate(const DdpRequest& r) {
    std::vector<ConfigError> errors;
    requireRange(errors, "ddp.world_size", r.worldSize, 1, kMaxWorldSize);
    if (!(r.bucketMb > 0.0 && r.bucketMb <= 65536.0)) {
        errors.push_back({"ddp.bucket_mb", "must be more than 0 and at most 65536 MiB"});
    }
    if (!(r.timeoutS >= 1.0 && r.timeoutS <= 86400.0)) {
        errors.push_back({"ddp.timeout_s", "must be between 1 and 86400 seconds"});
    }
    return errors;
}

int64_t parameterCount(const ModelConfig& m) {
    const int64_t d = m.dModel;
    return 2 * m.vocabSize * d + m.numLayers * (4 * d * d + 3 * d * m.dFf + 2 * d) + d;
}

double forwardFlops(const RunConfig& c) {
    const double n = static_cast<double>(parameterCount(c.model));
    const double b = static_cast<double>(c.batchSize);
    const double t = static_cast<double>(c.contextLength);
    const double d = static_cast<double>(c.model.dModel);
    return 2.0 * n * b * t + static_cast<double>(c.model.numLayers) * 4.0 * b * t * t * d;
}

double stepFlops(const RunConfig& c) {
    const double fwd = forwardFlops(c);
    switch (c.mode) {
    case Mode::Forward:
        return fwd;
    case Mode::ForwardBackward:
    case Mode::Train:
        return 3.0 * fwd;
    }
    return fwd;
}

std::optional<ModelConfig> pickPreset(const ModelConfig& current, std::string_view name) {
    auto m = presetModel(name);
    if (m) {
        m->vocabSize = current.vocabSize;
    }
    return m;
}

std::string modelLabel(const ModelConfig& m) {
    if (m.preset != "custom") {
        return m.preset;
    }
    return "custom d" + std::to_string(m.dModel) + " L" + std::to_string(m.numLayers) + " h" +
           std::to_string(m.numHeads);
}

std::string runLabel(const RunConfig& c) {
    std::string label = c.model.preset + "-ctx" + std::to_string(c.contextLength) + "-" +
                        std::string(toString(c.precision)) + "-" + std::string(toString(c.mode));
    if (c.ddp) {
        label += "-ddp" + std::to_string(c.ddp->worldSize) + "-" +
                 std::string(toString(c.ddp->strategy));
    }
    for (const auto& f : choiceFields()) {
        if (!f.isDefault(c)) { // "-sdpa-flash", "-tf32"
            std::string name = f.shortName(c);
            std::replace(name.begin(), name.end(), ' ', '-');
            label += "-" + name;
        }
    }
    return label;
}

std::string describe(const std::vector<ConfigError>& errors) {
    std::string out;
    for (const auto& e : errors) {
        out += (out.empty() ? "" : "; ") + e.message();
    }
    return out;
}

} // namespace lmprof::engine
