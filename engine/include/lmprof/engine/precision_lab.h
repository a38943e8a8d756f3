// The precision lab (docs/PRECISION_LAB.md): what reduced precision does to numbers, next to
// the speed it buys. Two experiments that LibTorch runs on a chosen device:
//   - accumulation: summing 0.01 over and over in fp32, fp16 and bf16 accumulators, the
//     seeds' four loops and a grid of accumulator × addend × number of terms;
//   - dtypes: which dtype every module of a model sees and returns under a precision,
//     recorded by the engine's own modules during a real forward and backward.
// (The third part, the loss of a training run per step, is in every run's StepRecord.)
// Plain structs; the experiments themselves are in engine/src/lab.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/precision.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

inline constexpr std::array kNumberFormats{NumberFormat::Fp32, NumberFormat::Fp16,
                                           NumberFormat::Bf16};
std::string_view toString(NumberFormat f); // "fp32", "fp16", "bf16"
std::optional<NumberFormat> parseNumberFormat(std::string_view s);

// The distance between the two values of the format around |v| (its unit in the last
// place), for normal and subnormal values alike.
double ulpOf(NumberFormat format, double v);

// ---------------------------------------------------------------------------------------
// Accumulation

// The decimal value every experiment adds, and how often the seeds' loops add it.
inline constexpr double kAddend = 0.01;
inline constexpr int64_t kSeedTerms = 1000;
inline constexpr int64_t kMinGridTerms = 100;
inline constexpr int64_t kMaxGridTerms = 10'000'000;

// One of the seeds' loops: `acc += x` kSeedTerms times, with acc a 0-d tensor of the
// accumulator's format and x = 0.01 in the addend's (cast to fp32 before each add when
// castPerAdd).
struct SeedLoop {
    std::string label; // "fp32 += fp16"
    NumberFormat accumulator = NumberFormat::Fp32;
    NumberFormat addend = NumberFormat::Fp32;
    bool castPerAdd = false;
    double addendValue = 0.0; // 0.01 as the addend's format stores it
    double result = 0.0;
    double exactSum() const { return static_cast<double>(kSeedTerms) * addendValue; }
    double intendedSum() const { return static_cast<double>(kSeedTerms) * kAddend; } // 10
    double error() const { return result - exactSum(); } // what the accumulation lost
    double ulps() const; // |error| in units of the accumulator's last place at exactSum
};

// The running sum after `terms` additions.
struct AccumulationPoint {
    int64_t terms = 0;
    double sum = 0.0;
};

// One line of the grid: an accumulator format fed one addend format, or (accumulator
// empty) LibTorch's own sum() of `terms` addends, reduced pairwise in fp32.
struct AccumulationSeries {
    std::optional<NumberFormat> accumulator;
    NumberFormat addend = NumberFormat::Fp32;
    double addendValue = 0.0;              // 0.01 as the addend's format stores it
    std::vector<AccumulationPoint> points; // at gridTerms(maxTerms), in order
    // Where the sum stopped growing: the first addition that left it unchanged (every
    // later one does too), and the sum it stuck at. Empty if it kept growing.
    std::optional<int64_t> stallTerms;
    std::optional<double> stallSum;
    std::string label() const; // "fp16 += bf16", "sum() of fp16"
};

// |sum - exact| / exact, where exact is terms × the addend as stored (accumulation error
// alone) or, when `intended`, terms × 0.01 (adding the error of storing 0.01 itself).
double relativeError(const AccumulationSeries& series, const AccumulationPoint& point,
                     bool intended = false);

struct AccumulationRequest {
    std::string device = "auto";
    int64_t maxTerms = 1'000'000; // the grid's last point, kMinGridTerms..kMaxGridTerms
};

// Term counts of the grid: four per decade from kMinGridTerms (100, 178, 316, 562, 1000, …)
// up to maxTerms, which is always the last.
std::vector<int64_t> gridTerms(int64_t maxTerms);

struct AccumulationReport {
    std::string device; // what ran it: "cpu", "cuda:0"
    int64_t maxTerms = 0;
    std::vector<SeedLoop> seedLoops;
    std::vector<AccumulationSeries> series; // accumulator × addend, then the sum() lines
    std::optional<std::string> error;       // why it did not run (or stopped)
    bool cancelled = false;
};

// A bad request ("max_terms: must be ...") in the same form as a RunConfig's.
std::vector<ConfigError> validate(const AccumulationRequest& request);

// Runs the seeds' loops and the grid on the request's device. Never throws: a refusal or a
// failure is the report's `error`. Checks `cancel` between chunks of additions.
AccumulationReport runAccumulation(const AccumulationRequest& request,
                                   const std::atomic<bool>* cancel = nullptr);

// ---------------------------------------------------------------------------------------
// Dtypes

// The seeds' ToyModel: fc1 (in → 10, no bias) → ReLU → LayerNorm(10) → fc2 (10 → out).
inline constexpr std::string_view kToyModel = "toy";
inline constexpr int64_t kToyInFeatures = 16;
inline constexpr int64_t kToyOutFeatures = 5;
// The model names the inspector takes: "toy", then the presets.
std::vector<std::string> dtypeModelNames();

struct DtypeRequest {
    std::string model = "toy"; // kToyModel or a preset
    Precision precision = Precision::Fp32;
    std::string device = "auto";
};

// What one module call saw, or a tensor of interest (the logits, the loss). Dtypes are
// LibTorch's short names: "fp32", "fp16", "bf16", "int64", ...; empty when not applicable.
struct DtypeRow {
    std::string name;       // "fc1", "layers.0.attn.q_proj"; "logits", "loss"
    std::string kind;       // "Linear", "LayerNorm", ...; "tensor" for logits and loss
    int depth = 0;          // nesting in the model, for indenting
    std::string parameters; // its own parameters' dtype(s), e.g. "fp32"
    std::string input;      // its tensor inputs' dtypes, e.g. "fp16" or "fp32, complex64"
    std::string output;
    std::string gradients; // its own parameters' gradients after backward
    std::string note;      // why, in one or two sentences
    bool operator==(const DtypeRow&) const = default;
};

struct DtypeReport {
    std::string model;
    Precision precision = Precision::Fp32;
    std::string device;   // what ran it
    std::string autocast; // "fp16", "bf16", or "off"
    std::vector<DtypeRow> rows;
    std::optional<std::string> error; // why it could not run
};

std::vector<ConfigError> validate(const DtypeRequest& request);

// Builds the model, runs one forward (under the precision's autocast) and one backward on a
// fixed batch, with every module recording the dtypes it saw. Never throws.
DtypeReport inspectDtypes(const DtypeRequest& request);

// True for the reduced formats' names ("fp16", "bf16"), which the views colour.
bool isReducedDtype(std::string_view dtype);

// ---------------------------------------------------------------------------------------
// The lab's results in a result set ("precision_lab", docs/RESULTS.md).
struct PrecisionLab {
    std::optional<AccumulationReport> accumulation;
    std::vector<DtypeReport> dtypes;
    bool empty() const { return !accumulation && dtypes.empty(); }
};

} // namespace lmprof::engine
