// The op and kernel profile of a run's profiled steps (docs/OP_PROFILE.md): every op (CPU)
// and kernel (GPU) attributed to a phase and a region, aggregated per step, with the
// headline answers computed. Plain structs, no LibTorch types.
#pragma once

#include "lmprof/engine/config.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

// The named regions of a step (docs/NVTX.md), in model order. The model and the runner open
// them by these constants; NVTX ranges and the op profile carry the same names.
namespace region {
inline constexpr const char* kEmbedding = "embedding";
inline constexpr const char* kNorm = "norm";
inline constexpr const char* kQkv = "attention.qkv";
inline constexpr const char* kRope = "attention.rope";
inline constexpr const char* kScores = "attention.scores";
inline constexpr const char* kSoftmax = "attention.softmax";
inline constexpr const char* kValue = "attention.value";
// attention = sdpa: the fused scaled_dot_product_attention, in place of scores, softmax, value.
inline constexpr const char* kSdpa = "attention.sdpa";
inline constexpr const char* kAttnOutput = "attention.output";
inline constexpr const char* kResidual = "residual";
inline constexpr const char* kMlp = "mlp";
inline constexpr const char* kLmHead = "lm_head";
inline constexpr const char* kLoss = "loss";
// Backward only: autograd adding a parameter's gradient into .grad (no forward op).
inline constexpr const char* kAccumulateGrad = "autograd.accumulate_grad";
inline constexpr const char* kGradScaler = "optimizer.grad_scaler";
inline constexpr const char* kAdamW = "optimizer.adamw";
inline constexpr const char* kZeroGrad = "optimizer.zero_grad";
// Not a range: the rows of ops and kernels that no region claims.
inline constexpr const char* kUnattributed = "unattributed";
} // namespace region

inline constexpr std::array<std::string_view, 17> kRegions{
    region::kEmbedding,  region::kNorm,           region::kQkv,        region::kRope,
    region::kScores,     region::kSoftmax,        region::kValue,      region::kSdpa,
    region::kAttnOutput, region::kResidual,       region::kMlp,        region::kLmHead,
    region::kLoss,       region::kAccumulateGrad, region::kGradScaler, region::kAdamW,
    region::kZeroGrad};

// The range names of a step and its phases (outermost), which are not regions.
inline constexpr const char* kStepRange = "step";
inline constexpr const char* kWarmupStepRange = "warmup";

enum class OpKind { Op, Kernel };
std::string_view toString(OpKind k);
std::optional<OpKind> parseOpKind(std::string_view s);

// True for the ops that are matrix multiplications (aten::mm, bmm, addmm, baddbmm, ...).
bool isMatmulOp(std::string_view name);

// One (phase, region, name, kind) of the profile; figures are means per profiled step.
struct OpRow {
    Phase phase = Phase::Forward;
    std::string region;
    std::string name;
    OpKind kind = OpKind::Op;
    double calls = 0.0;
    double selfMs = 0.0;  // kernels: their duration
    double totalMs = 0.0; // ops: with the ops they called
    double flops = 0.0;   // 0 when neither the profiler nor the model's analytic count has one
    bool matmul = false;  // a matrix multiplication (for kernels: launched by one)
};

// The seeds' questions, answered from the rows of the headline kind: kernels when the profile
// has any (GPU), ops otherwise (CPU).
struct OpHeadline {
    OpKind kind = OpKind::Op;
    std::string topForwardName;
    std::string topForwardRegion;
    double topForwardShare = 0.0;    // of the forward pass's time of that kind
    double topForwardCalls = 0.0;    // per forward pass
    double matmulForwardShare = 0.0; // matmul time / forward time
    double matmulStepShare = 0.0;    // matmul time / the whole step's time
    struct Item {
        std::string name;
        double share = 0.0;
    };
    std::vector<Item> topNonMatmulForward; // the three largest, largest first
    // Attention in the forward pass: softmax vs the two matmuls (QKᵀ and P·V).
    double softmaxMs = 0.0;
    double attentionMatmulMs = 0.0;
    double softmaxFlops = 0.0; // analytic: 5 per score element (max, subtract, exp, sum, divide)
    double attentionMatmulFlops = 0.0;
    // The two matmuls apart: QKᵀ (scores) and P·V (value), which sum to the two above. A
    // watched model has no attention regions; its profile finds them by names and shapes
    // and says so here (docs/WATCH.md).
    double scoresMs = 0.0, valueMs = 0.0;
    double scoresFlops = 0.0, valueFlops = 0.0;
    std::optional<double> timeRatio() const; // softmax / matmuls; null without matmul time
    std::optional<double> flopRatio() const;
};

// One bar of the timeline of the first profiled step: an op, a kernel, or (range = true) a
// phase or region range drawn above the lanes.
struct OpEvent {
    std::string name;
    std::string region;
    Phase phase = Phase::Forward;
    OpKind kind = OpKind::Op;
    int lane = 0;         // index into OpTimeline::lanes; ranges use the lane they ran on
    int depth = 0;        // nesting depth within the lane (ops in ops; ranges in ranges)
    double startMs = 0.0; // since the step started
    double durMs = 0.0;
    double flops = 0.0;
    std::string shapes; // input shapes, "[4, 128, 128], [128, 128]"
    bool range = false;
};

struct OpTimeline {
    int step = 0;
    std::vector<std::string> lanes; // "thread 1 (main)", "thread 2", "stream 7"
    std::vector<OpEvent> events;    // by lane, then start
};

struct OpProfile {
    int firstStep = 0;
    int stepCount = 0;
    std::string trace;                     // the Chrome trace, empty when none was written
    std::optional<std::string> traceError; // why the trace could not be written
    std::vector<OpRow> rows;               // by phase, then self time, largest first
    PerPhase<double> phaseMs;              // each phase's wall time (ops' share is of this)
    PerPhase<double> kernelMs;             // GPU kernel time launched in each phase
    PerPhase<double> unattributedMs;       // of the headline kind, per phase (sumUnattributed())
    OpHeadline headline;
    OpTimeline timeline;
    std::vector<std::string> notes; // what the profile could not do (e.g. CUPTI missing)

    // The time a row's share is taken of: its phase's kernel time or wall time.
    double phaseTotal(const OpRow& row) const;
};

// The headline from the rows (the analysis, and the loader for files without one).
OpHeadline computeHeadline(const OpProfile& profile, const RunConfig& config);
// Self time of the rows no region claims, per phase, of the headline's kind only (on a GPU
// the unattributed CPU ops are in the rows but not in this sum).
PerPhase<double> sumUnattributed(const OpProfile& profile);

// The headline as plain sentences, for the CLI and the window; the first says how many
// steps its figures come from:
//   "From 1 profiled step (step 5): aten::mm takes 61% of the forward pass (14 calls ...)."
std::vector<std::string> headlineSentences(const OpProfile& profile);
// "1 profiled step (step 5)", "3 profiled steps (5 to 7)".
std::string profiledStepsText(const OpProfile& profile);
// QK^T and PV do the same FLOPs. When one took more than 10 times the other's time, the
// profile's timing of them is not a measurement to state as a fact: the sentence that says
// so (with how many steps it comes from), else none.
std::optional<std::string> attentionTimingDoubt(const OpProfile& profile);

// Rows summed by (phase, region) with name "" (by == Region) or by (phase, name) with
// region "" (by == Op), kind kept; largest self time first within each phase.
enum class OpGrouping { Region, Op, Row };
std::vector<OpRow> groupRows(const std::vector<OpRow>& rows, OpGrouping by);

} // namespace lmprof::engine
