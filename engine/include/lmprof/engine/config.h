// What a benchmark run is asked to do: model dimensions, input shape, precision, mode.
// Plain data with validation at the boundary; no LibTorch types (the GUI and CLI include it).
#pragma once

#include "lmprof/engine/ddp.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lmprof::engine {

enum class Precision { Fp32, Bf16, Fp16, Bf16Pure };
enum class Mode { Forward, ForwardBackward, Train };
enum class Phase { Forward, Backward, Optimizer };
// How attention is computed (docs/MEASUREMENT.md, "Execution variants"): the CS336 math
// (scores, masked softmax, PV), or at::scaled_dot_product_attention, causal, letting
// LibTorch choose its backend or, on CUDA, forcing one.
enum class AttentionKind { Naive, Sdpa, SdpaFlash, SdpaEfficient, SdpaMath, SdpaCudnn };

// Every value of each enum, in order: the one list that combo boxes, sweeps, parsers and
// help texts iterate. A precision's traits are in precision.h.
inline constexpr std::array kPrecisions{Precision::Fp32, Precision::Bf16, Precision::Fp16,
                                        Precision::Bf16Pure};
inline constexpr std::array kModes{Mode::Forward, Mode::ForwardBackward, Mode::Train};
inline constexpr std::array kPhases{Phase::Forward, Phase::Backward, Phase::Optimizer};
// Warmup steps a run with cuda_graphs needs before its capture.
inline constexpr int kGraphWarmupSteps = 2;
inline constexpr std::array kAttentionKinds{AttentionKind::Naive,     AttentionKind::Sdpa,
                                            AttentionKind::SdpaFlash, AttentionKind::SdpaEfficient,
                                            AttentionKind::SdpaMath,  AttentionKind::SdpaCudnn};

std::string_view toString(Precision p);
std::string_view toString(Mode m);
std::string_view toString(Phase p);
std::string_view toString(AttentionKind a); // "naive", "sdpa", "sdpa-flash", ...
std::optional<Precision> parsePrecision(std::string_view s);
std::optional<Mode> parseMode(std::string_view s);
std::optional<Phase> parsePhase(std::string_view s);
std::optional<AttentionKind> parseAttention(std::string_view s);

// "fp32, bf16, fp16, bf16-pure": the names of every value, for help texts and errors.
template <typename Enum, size_t N>
std::string joinNames(const std::array<Enum, N>& values, std::string_view separator = ", ") {
    std::string out;
    for (Enum v : values) {
        out += (out.empty() ? "" : std::string(separator)) + std::string(toString(v));
    }
    return out;
}

// The CUDA device a device string names: 0 for "cuda", i for "cuda:<i>" (i >= 0), nullopt
// for anything else ("auto", "cpu", or a malformed string). The one parser of that syntax,
// for validate() and resolveDevice() (devices.h).
std::optional<int> parseCudaIndex(std::string_view device);

// Phases a mode runs, in order.
std::vector<Phase> phasesOf(Mode m);

// One value per phase (peak bytes, milliseconds, ...), addressed by Phase.
template <typename T>
struct PerPhase {
    T forward{};
    T backward{};
    T optimizer{};
    T& of(Phase p) {
        return p == Phase::Forward ? forward : p == Phase::Backward ? backward : optimizer;
    }
    const T& of(Phase p) const {
        return p == Phase::Forward ? forward : p == Phase::Backward ? backward : optimizer;
    }
    T max() const { return std::max({forward, backward, optimizer}); }
    T sum() const { return forward + backward + optimizer; }
};

struct ModelConfig {
    std::string preset = "tiny"; // one of presetNames(), or "custom"
    int64_t dModel = 128;
    int64_t dFf = 512;
    int64_t numLayers = 2;
    int64_t numHeads = 4;
    int64_t vocabSize = 10000;
    double ropeTheta = 10000.0;
};

// Record every allocation of steps [firstStep, firstStep + stepCount) and save it: on CUDA
// the caching allocator's history as a pickle for pytorch.org/memory_viz, on CPU a JSON
// allocation trace (lmprof.alloc-trace/1). At most maxEntries events are kept.
struct SnapshotRequest {
    std::string path;
    int firstStep = 0;
    int stepCount = 1;
    int64_t maxEntries = 100000;
};

// The request the CLI and the window make unless told otherwise: one step, the last warmup
// step (steady state, and not a measured step; step 0 without warmup).
SnapshotRequest defaultSnapshotRequest(std::string path, int warmupSteps);

// Profile every op (CPU) and kernel (GPU) of steps [firstStep, firstStep + stepCount) with
// LibTorch's Kineto profiler and attribute them to regions (docs/OP_PROFILE.md). The Chrome
// trace goes to tracePath (none when empty).
struct OpProfileRequest {
    int firstStep = 0;
    int stepCount = 1;
    std::string tracePath;
};

// The request the CLI and the window make unless told otherwise: one step, the first after
// the warmup (steady state; step 0 without warmup).
OpProfileRequest defaultOpProfileRequest(int warmupSteps, std::string tracePath = {});

struct RunConfig {
    ModelConfig model;
    int64_t contextLength = 128;
    int64_t batchSize = 4;
    Precision precision = Precision::Fp32;
    Mode mode = Mode::Train;
    int warmupSteps = 5;
    int measureSteps = 10;
    std::string device = "auto"; // "auto", "cpu", "cuda" or "cuda:<index>"
    uint64_t seed = 0;
    int threads = 0; // intra-op CPU threads; 0 keeps LibTorch's default

    // Memory sampler rate in Hz (samples are also taken at every phase boundary); 0 keeps
    // only the boundary samples. Telemetry (NVML, CPU use) rate in Hz, at most 10; 0 = off.
    double sampleHz = 100.0;
    double telemetryHz = 10.0;
    std::optional<SnapshotRequest> memorySnapshot;
    std::optional<OpProfileRequest> opProfile;
    // The gradient norm of each layer group (gradNormNames) after every backward, computed
    // between the backward and optimizer phases: inside total_ms, outside the phase times.
    bool gradNorms = false;
    // Data-parallel over ddp->worldSize ranks (data_parallel.h); a single process when unset.
    std::optional<DdpRequest> ddp;
    // Execution variants, each a choice field (ChoiceField below: its names, flag, checks).
    AttentionKind attention = AttentionKind::Naive;
    bool tf32 = false; // fp32 matmuls on TF32 tensor cores (CUDA)
    // Capture the whole step in a CUDA graph after the warmup and replay it for the measured
    // steps (docs/MEASUREMENT.md, "CUDA graphs").
    bool cudaGraphs = false;

    // Test-only fault switch: raise a real c10::OutOfMemoryError at the start of this
    // phase of the first step that runs it. Never set by the GUI; the CLI reads it from
    // the LMPROF_FAULT_OOM environment variable so end-to-end tests can reach it.
    std::optional<Phase> faultOomPhase;
};

// The layer groups a gradient norm is taken over: "token_embeddings", "layers.0", ...,
// "ln_final", "lm_head" (the model's top-level modules, the blocks one by one).
std::vector<std::string> gradNormNames(const ModelConfig& model);

// Names of the built-in presets, smallest first ("tiny", "small", ..., "2.7B").
const std::vector<std::string>& presetNames();

// The preset's dimensions with the default vocabulary, or nullopt for an unknown name.
std::optional<ModelConfig> presetModel(std::string_view name);
// What `current` becomes when preset `name` is picked (Configure, sweeps, demo scripts): the
// preset's dimensions with current's vocabulary, which is the tokenizer's, not the size's.
// nullopt for an unknown name.
std::optional<ModelConfig> pickPreset(const ModelConfig& current, std::string_view name);

// A field that failed validation and why, e.g. {"model.d_model", "must be divisible by ..."}.
struct ConfigError {
    std::string field;
    std::string reason;
    std::string message() const { return field + ": " + reason; }
};

// Every problem with the configuration; empty when it is valid. Field names follow the
// JSON result schema (model.d_model, context_length, ...).
std::vector<ConfigError> validate(const RunConfig& config);
// "field: reason; field: reason": the errors in one line (a run's error text).
std::string describe(const std::vector<ConfigError>& errors);
std::vector<ConfigError> validate(const ModelConfig& model);
// The request's problems ("ddp.world_size", "ddp.bucket_mb", ...), part of validate(RunConfig).
std::vector<ConfigError> validate(const DdpRequest& request);
// The "device" error of a device string that parseCudaIndex, "auto" and "cpu" all refuse.
std::optional<ConfigError> deviceError(const std::string& device);

// docs/MODEL.md: N = 2·V·d + L·(4d² + 3·d·d_ff + 2d) + d.
int64_t parameterCount(const ModelConfig& model);

// Analytic FLOPs of one step (docs/MODEL.md): forward 2·N·B·T + L·4·B·T²·d, backward 2× forward.
double forwardFlops(const RunConfig& config);
double stepFlops(const RunConfig& config);

// A model for people: the preset's name, or "custom d512 L4 h8" (d_model, layers, heads).
std::string modelLabel(const ModelConfig& model);

// Run id like "small-ctx128-bf16-train"; the session appends a sequence number.
std::string runLabel(const RunConfig& config);

// The run configuration's choice fields: execution variants whose value is one of a few
// names (attention, tf32, ...). Each is declared once, in config_fields.cpp, and every part
// of lmprof reads the declaration: the result set's JSON (written, read, checked), the
// CLI's flag (a list for sweeps), the sweep's axis and its out-of-memory rule, the
// configuration's checks, the report's columns and run names, and Configure's combo with
// the values the device cannot run disabled and why. A new variant is its RunConfig member,
// its entry here and the engine code that honours it (docs/ARCHITECTURE.md).
struct ChoiceField {
    std::string key;   // "attention": the JSON key, the error's field, the CSV column
    std::string flag;  // "--attention"
    std::string label; // "Attention": Configure's label and the tables' header
    std::string help;  // one line for --help and Configure's tooltip
    // Every value's name, the default first; and each one's short form for run names and
    // legends ("sdpa flash"), in the same order.
    std::vector<std::string> values;
    std::vector<std::string> shortNames;
    std::function<std::string(const RunConfig&)> get;
    std::function<void(RunConfig&, const std::string&)> set; // `value` is one of values
    // Why `value` cannot run on a device of this type ("cpu" or "cuda"), or nullopt.
    std::function<std::optional<std::string>(const std::string& value, bool cuda)> deviceRefusal;

    bool isDefault(const RunConfig& c) const { return get(c) == values.front(); }
    std::string shortName(const RunConfig& c) const;
    // "'x' is not one of a, b, c": the message for a name outside `values`.
    std::optional<std::string> unknown(const std::string& value) const;
};

// Every choice field, in the order tables and names list them.
const std::vector<ChoiceField>& choiceFields();
// The field of a key; nullptr for none.
const ChoiceField* choiceField(std::string_view key);

// The run configuration's plain fields: a number or a flag (seed, threads, sample_hz,
// telemetry_hz, grad_norms). Each is declared once, in config_fields.cpp, and every part of lmprof
// reads the declaration: the result set's JSON (at its section's place), validate() (its
// range), the CLI's flag with its help and the names in its error messages, Configure's
// widget (in its section) and the comparison key (when it is part of it); the protocol
// carries the configuration's JSON. A new field is its RunConfig member and its entry
// here (docs/ARCHITECTURE.md).
struct ValueField {
    // Where it sits, in Configure and in the file: with the run's settings, with the memory
    // and telemetry sampling, or with the instruments after the op profile.
    enum class Section { Run, Sampling, Instruments };
    using Member = std::variant<int RunConfig::*, uint64_t RunConfig::*, double RunConfig::*,
                                bool RunConfig::*>;
    std::string key;   // "threads": the JSON key, the error's field
    std::string flag;  // "--threads"
    std::string label; // "threads": Configure's label
    std::string help;  // one line for --help and Configure's tooltip
    Member member;
    Section section = Section::Run;
    // Numbers: the accepted range, and the reason given outside it (empty: "must be between
    // min and max, got v"). min == max: any value.
    double min = 0.0;
    double max = 0.0;
    std::string rangeReason{};
    double step = 1.0; // Configure's +/- step for numbers
    // Runs that differ in it are different configurations (compare's key).
    bool inComparisonKey = false;
    // A sweep may list its values (SweepSpec::values): lmprof-cli sweep's flag takes a list,
    // the Sweep view an editable list, the tables a column where runs differ. Whole-number
    // fields only (a flag or a decimal so marked is refused where it is declared).
    bool sweepAxis = false;

    bool isFlag() const { return std::holds_alternative<bool RunConfig::*>(member); }
    double number(const RunConfig& c) const;
    // Its value as the tables and the CSV show it: a whole number in full, a flag "on"/"off".
    std::string text(const RunConfig& c) const;
    // Why `v` cannot be its value: outside what its member holds ("--threads 4294967297" is
    // refused, not narrowed to 1) or outside its range. nullopt: set() may take it.
    std::optional<std::string> valueError(int64_t v) const;
    // valueError of the first value of a sweep's list it refuses; nullopt when it takes all.
    std::optional<std::string> listError(const std::vector<int64_t>& values) const;
    // Sets `c`'s member to `v` (a flag: v != 0); valueError(v) says whether it fits.
    void set(RunConfig& c, int64_t v) const;
    // The reason `c`'s value is outside the range, or nullopt.
    std::optional<std::string> rangeError(const RunConfig& c) const;
};

// Every plain field, in the order the file and the form list them.
const std::vector<ValueField>& valueFields();
// The field of a key; nullptr for none.
const ValueField* valueField(std::string_view key);

// Tests only: one more field while this lives (the throwaway field, tests/engine/
// throwaway_field.h). Single-threaded and scoped: it changes the list valueFields() returns,
// so nothing may hold a field or iterate the list across its construction or destruction. A
// key that exists already is refused (std::invalid_argument).
class ExtraValueField {
public:
    explicit ExtraValueField(ValueField field);
    ~ExtraValueField();
    ExtraValueField(const ExtraValueField&) = delete;
    ExtraValueField& operator=(const ExtraValueField&) = delete;

private:
    std::string m_key;
};

// The config's choices that a device of this type cannot run, each as the field's error
// (validate() with an explicit device, checkRunnable() once "auto" is resolved).
std::vector<ConfigError> choiceRefusals(const RunConfig& config, bool cuda);

} // namespace lmprof::engine
