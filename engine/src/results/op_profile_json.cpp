// The op profile of a run in the result set ("op_profile", docs/RESULTS.md and
// docs/OP_PROFILE.md): written in full, read strictly, with the headline recomputed from
// the rows when a file has none; and a watched run's time per module ("module_times",
// docs/WATCH.md).

#include "lmprof/engine/op_profile.h"
#include "results/fields.h"

#include <algorithm>
#include <limits>

namespace lmprof::engine::json_io {

namespace {

// Deeper nesting than any real op stack; the window draws at most a few levels anyway.
constexpr int kMaxDepth = 256;
// Bounds of the values in a file (docs/LIMITS.md): calls of one op per step, and FLOPs per
// step (1e21: a thousand seconds of a 1 EFLOP/s machine), so that sums and tables stay sane.
constexpr double kMaxCalls = 1e9;
constexpr double kMaxFlops = 1e21;

} // namespace

// The records' fields, outside the unnamed namespace so that toObject and fromObject find
// them (argument-dependent lookup ignores the unnamed namespace's using-directive).

template <typename Io>
void fields(Io& io, Ref<PerPhase<double>, Io> p) {
    io.duration("forward", p.forward);
    io.duration("backward", p.backward);
    io.duration("optimizer", p.optimizer);
}

template <typename Io>
void fields(Io& io, Ref<OpRow, Io> r) {
    io.enumeration("phase", r.phase, parsePhase, true);
    io.required("region", r.region);
    io.required("name", r.name);
    io.enumeration("kind", r.kind, parseOpKind, true);
    io.between("calls", r.calls, 0.0, kMaxCalls);
    io.duration("self_ms", r.selfMs);
    io.duration("total_ms", r.totalMs);
    io.between("flops", r.flops, 0.0, kMaxFlops);
    if constexpr (Io::kReads) {
        r.matmul = isMatmulOp(r.name); // files before the field
    }
    io.field("matmul", r.matmul);
}

template <typename Io>
void fields(Io& io, Ref<OpHeadline::Item, Io> item) {
    io.field("name", item.name);
    io.between("share", item.share, 0.0, 1.0);
}

template <typename Io>
void fields(Io& io, Ref<OpHeadline, Io> h) {
    io.enumeration("kind", h.kind, parseOpKind);
    io.group("top_forward", [&](auto& top) {
        top.field("name", h.topForwardName);
        top.field("region", h.topForwardRegion);
        top.between("share", h.topForwardShare, 0.0, 1.0);
        top.between("calls", h.topForwardCalls, 0.0, kMaxCalls);
    });
    io.between("matmul_forward_share", h.matmulForwardShare, 0.0, 1.0);
    io.between("matmul_step_share", h.matmulStepShare, 0.0, 1.0);
    io.array("top_non_matmul_forward", h.topNonMatmulForward);
    io.group("attention", [&](auto& a) {
        a.duration("softmax_ms", h.softmaxMs);
        a.duration("matmul_ms", h.attentionMatmulMs);
        a.between("softmax_flops", h.softmaxFlops, 0.0, kMaxFlops);
        a.between("matmul_flops", h.attentionMatmulFlops, 0.0, kMaxFlops);
        // Since the watched profile (1.7): the two matmuls apart; absent before.
        a.duration("scores_ms", h.scoresMs);
        a.duration("value_ms", h.valueMs);
        a.between("scores_flops", h.scoresFlops, 0.0, kMaxFlops);
        a.between("value_flops", h.valueFlops, 0.0, kMaxFlops);
        a.derived("time_ratio", [&] { return nullable(h.timeRatio()); });
        a.derived("flop_ratio", [&] { return nullable(h.flopRatio()); });
    });
}

// Ranges drawn above the lanes, ops and kernels; flops, shapes and range only when there.
template <typename Io>
void fields(Io& io, Ref<OpEvent, Io> e) {
    io.required("name", e.name);
    io.field("region", e.region);
    io.enumeration("phase", e.phase, parsePhase);
    io.enumeration("kind", e.kind, parseOpKind);
    io.required("lane", e.lane);
    io.between("depth", e.depth, 0, kMaxDepth);
    io.between("start_ms", e.startMs, -kMaxDurationMs, kMaxDurationMs, true);
    io.duration("dur_ms", e.durMs, true);
    if constexpr (Io::kReads) {
        io.between("flops", e.flops, 0.0, kMaxFlops);
    } else {
        io.when(e.flops > 0.0, "flops", e.flops);
    }
    io.when(!e.shapes.empty(), "shapes", e.shapes);
    io.when(e.range, "range", e.range);
}

// `steps`: the run's steps, which the profiled step lies within.
template <typename Io>
void fields(Io& io, Ref<OpTimeline, Io> t, int steps) {
    io.between("step", t.step, 0, std::max(0, steps - 1));
    io.strings("lanes", t.lanes);
    io.array("events", t.events);
    if constexpr (Io::kReads) {
        for (size_t i = 0; i < t.events.size(); ++i) {
            const int lane = t.events[i].lane;
            if (lane < 0 || static_cast<size_t>(lane) >= t.lanes.size()) {
                io.refuse("events", i, "lane", "no lane " + std::to_string(lane) + " in lanes");
            }
        }
    }
}

// The headline is recomputed from the rows when a file has none.
template <typename Io>
void fields(Io& io, Ref<OpProfile, Io> p, const RunConfig& config) {
    const int steps = config.warmupSteps + config.measureSteps;
    io.between("first_step", p.firstStep, 0, std::max(0, steps - 1), true);
    io.between("step_count", p.stepCount, 0, steps - p.firstStep, true);
    if constexpr (Io::kReads) {
        io.field("trace", p.trace);
    } else {
        io.out["trace"] = p.trace.empty() ? json(nullptr) : json(p.trace);
    }
    io.nullable("trace_error", p.traceError);
    io.object("phase_ms", p.phaseMs);
    io.object("kernel_ms", p.kernelMs);
    io.object("unattributed_ms", p.unattributedMs);
    io.object("headline", p.headline);
    io.strings("notes", p.notes);
    if constexpr (Io::kReads) {
        arrayOrFail(io.in, io.path, "rows");
    }
    io.array("rows", p.rows);
    io.object("timeline", p.timeline, false, steps);
    if constexpr (Io::kReads) {
        if (!io.has("headline")) {
            p.headline = computeHeadline(p, config);
        }
    }
}

template <typename Io>
void fields(Io& io, Ref<ModuleTime, Io> m) {
    io.required("name", m.name);
    io.duration("forward_ms", m.forwardMs);
    io.duration("backward_ms", m.backwardMs);
    io.between("forward_calls", m.forwardCalls, 0.0, kMaxCalls);
    io.between("backward_calls", m.backwardCalls, 0.0, kMaxCalls);
}

template <typename Io>
void fields(Io& io, Ref<ModuleTimes, Io> t) {
    io.between("depth", t.depth, 1, kMaxDepth, true);
    io.between("steps", t.steps, 0, std::numeric_limits<int>::max());
    if constexpr (Io::kReads) {
        arrayOrFail(io.in, io.path, "modules");
    }
    io.array("modules", t.modules);
}

template <typename Io>
void insideFields(Io& io, Ref<RunResult, Io> r) {
    io.optionalObject("op_profile", r.opProfile, r.config);
    io.optionalObject("module_times", r.moduleTimes);
}

void opProfileFields(Writer& io, const RunResult& r) {
    insideFields(io, r);
}
void opProfileFields(Reader& io, RunResult& r) {
    insideFields(io, r);
}
void opProfileFields(SimdReader& io, RunResult& r) {
    insideFields(io, r);
}

} // namespace lmprof::engine::json_io
