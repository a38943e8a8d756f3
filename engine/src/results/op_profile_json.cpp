// The op profile of a run in the result set ("op_profile", docs/RESULTS.md and
// docs/OP_PROFILE.md): written in full, read strictly, with the headline recomputed from
// the rows when a file has none.

#include "results/json_access.h"

#include <algorithm>
#include <cmath>

namespace lmprof::engine::json_io {

namespace {

// Deeper nesting than any real op stack; the window draws at most a few levels anyway.
constexpr int kMaxDepth = 256;
// Bounds of the values in a file (docs/LIMITS.md): calls of one op per step, and FLOPs per
// step (1e21: a thousand seconds of a 1 EFLOP/s machine), so that sums and tables stay sane.
constexpr double kMaxCalls = 1e9;
constexpr double kMaxFlops = 1e21;

// What the reader holds to a range is written within it: a share summed in another order
// than its total may come out a rounding above 1, and an op's self time (its duration less
// its children's) below 0 when the profiler's events overlap oddly.
double share01(double v) {
    return std::clamp(std::isfinite(v) ? v : 0.0, 0.0, 1.0);
}
double notNegative(double v) {
    return std::isfinite(v) && v > 0.0 ? v : 0.0;
}

json perPhaseJson(const PerPhase<double>& p) {
    return {{"forward", notNegative(p.forward)},
            {"backward", notNegative(p.backward)},
            {"optimizer", notNegative(p.optimizer)}};
}

PerPhase<double> perPhaseFrom(const json& obj, const std::string& path, const char* key) {
    PerPhase<double> p;
    if (const json* v = member(obj, path, key, false)) {
        const std::string where = path + "." + key;
        readDuration(*v, where, "forward", p.forward);
        readDuration(*v, where, "backward", p.backward);
        readDuration(*v, where, "optimizer", p.optimizer);
    }
    return p;
}

json rowJson(const OpRow& r) {
    return {{"phase", toString(r.phase)}, {"region", r.region}, {"name", r.name},
            {"kind", toString(r.kind)},   {"calls", r.calls},   {"self_ms", notNegative(r.selfMs)},
            {"total_ms", notNegative(r.totalMs)},      {"flops", r.flops},   {"matmul", r.matmul}};
}

OpRow rowFrom(const json& j, const std::string& path) {
    OpRow r;
    readEnum(j, path, "phase", r.phase, parsePhase, true);
    read(j, path, "region", r.region, true);
    read(j, path, "name", r.name, true);
    readEnum(j, path, "kind", r.kind, parseOpKind, true);
    readBetween(j, path, "calls", r.calls, 0.0, kMaxCalls);
    readDuration(j, path, "self_ms", r.selfMs);
    readDuration(j, path, "total_ms", r.totalMs);
    readBetween(j, path, "flops", r.flops, 0.0, kMaxFlops);
    r.matmul = isMatmulOp(r.name);
    read(j, path, "matmul", r.matmul);
    return r;
}

json headlineJson(const OpHeadline& h) {
    json nonMatmul = json::array();
    for (const auto& item : h.topNonMatmulForward) {
        nonMatmul.push_back({{"name", item.name}, {"share", share01(item.share)}});
    }
    return {{"kind", toString(h.kind)},
            {"top_forward",
             {{"name", h.topForwardName},
              {"region", h.topForwardRegion},
              {"share", share01(h.topForwardShare)},
              {"calls", h.topForwardCalls}}},
            {"matmul_forward_share", share01(h.matmulForwardShare)},
            {"matmul_step_share", share01(h.matmulStepShare)},
            {"top_non_matmul_forward", std::move(nonMatmul)},
            {"attention",
             {{"softmax_ms", notNegative(h.softmaxMs)},
              {"matmul_ms", notNegative(h.attentionMatmulMs)},
              {"softmax_flops", h.softmaxFlops},
              {"matmul_flops", h.attentionMatmulFlops},
              {"time_ratio", nullable(h.timeRatio())},
              {"flop_ratio", nullable(h.flopRatio())}}}};
}

OpHeadline headlineFrom(const json& j, const std::string& path) {
    OpHeadline h;
    readEnum(j, path, "kind", h.kind, parseOpKind);
    if (const json* t = member(j, path, "top_forward", false)) {
        const std::string tp = path + ".top_forward";
        read(*t, tp, "name", h.topForwardName);
        read(*t, tp, "region", h.topForwardRegion);
        readBetween(*t, tp, "share", h.topForwardShare, 0.0, 1.0);
        readBetween(*t, tp, "calls", h.topForwardCalls, 0.0, kMaxCalls);
    }
    readBetween(j, path, "matmul_forward_share", h.matmulForwardShare, 0.0, 1.0);
    readBetween(j, path, "matmul_step_share", h.matmulStepShare, 0.0, 1.0);
    const json& items = arrayMember(j, path, "top_non_matmul_forward");
    for (size_t i = 0; i < items.size(); ++i) {
        OpHeadline::Item item;
        read(items[i], indexed(path, "top_non_matmul_forward", i), "name", item.name);
        readBetween(items[i], indexed(path, "top_non_matmul_forward", i), "share", item.share,
                    0.0, 1.0);
        h.topNonMatmulForward.push_back(item);
    }
    if (const json* a = member(j, path, "attention", false)) {
        const std::string ap = path + ".attention";
        readDuration(*a, ap, "softmax_ms", h.softmaxMs);
        readDuration(*a, ap, "matmul_ms", h.attentionMatmulMs);
        readBetween(*a, ap, "softmax_flops", h.softmaxFlops, 0.0, kMaxFlops);
        readBetween(*a, ap, "matmul_flops", h.attentionMatmulFlops, 0.0, kMaxFlops);
    }
    return h;
}

json timelineJson(const OpTimeline& t) {
    json events = json::array();
    for (const auto& e : t.events) {
        json o = {{"name", e.name},           {"region", e.region}, {"phase", toString(e.phase)},
                  {"kind", toString(e.kind)}, {"lane", e.lane},     {"depth", e.depth},
                  {"start_ms", e.startMs},    {"dur_ms", notNegative(e.durMs)}};
        if (e.flops > 0.0) {
            o["flops"] = e.flops;
        }
        if (!e.shapes.empty()) {
            o["shapes"] = e.shapes;
        }
        if (e.range) {
            o["range"] = true;
        }
        events.push_back(std::move(o));
    }
    return {{"step", t.step}, {"lanes", t.lanes}, {"events", std::move(events)}};
}

OpTimeline timelineFrom(const json& j, const std::string& path, int steps) {
    OpTimeline t;
    readBetween(j, path, "step", t.step, 0, std::max(0, steps - 1));
    const json& lanes = arrayMember(j, path, "lanes");
    for (size_t i = 0; i < lanes.size(); ++i) {
        if (!lanes[i].is_string()) {
            fail(indexed(path, "lanes", i), "expected a string");
        }
        t.lanes.push_back(lanes[i].get<std::string>());
    }
    const json& events = arrayMember(j, path, "events");
    for (size_t i = 0; i < events.size(); ++i) {
        const std::string ep = indexed(path, "events", i);
        const json& o = events[i];
        OpEvent e;
        read(o, ep, "name", e.name, true);
        read(o, ep, "region", e.region);
        readEnum(o, ep, "phase", e.phase, parsePhase);
        readEnum(o, ep, "kind", e.kind, parseOpKind);
        read(o, ep, "lane", e.lane, true);
        if (e.lane < 0 || static_cast<size_t>(e.lane) >= t.lanes.size()) {
            fail(ep + ".lane", "no lane " + std::to_string(e.lane) + " in lanes");
        }
        read(o, ep, "depth", e.depth);
        if (e.depth < 0 || e.depth > kMaxDepth) {
            fail(ep + ".depth", "must be between 0 and " + std::to_string(kMaxDepth));
        }
        readBetween(o, ep, "start_ms", e.startMs, -kMaxDurationMs, kMaxDurationMs, true);
        readDuration(o, ep, "dur_ms", e.durMs, true);
        readBetween(o, ep, "flops", e.flops, 0.0, kMaxFlops);
        read(o, ep, "shapes", e.shapes);
        read(o, ep, "range", e.range);
        t.events.push_back(std::move(e));
    }
    return t;
}

} // namespace

void writeOpProfile(json& run, const RunResult& r) {
    if (!r.opProfile) {
        return;
    }
    const OpProfile& p = *r.opProfile;
    json rows = json::array();
    for (const auto& row : p.rows) {
        rows.push_back(rowJson(row));
    }
    run["op_profile"] = {{"first_step", p.firstStep},
                         {"step_count", p.stepCount},
                         {"trace", p.trace.empty() ? json(nullptr) : json(p.trace)},
                         {"trace_error", nullable(p.traceError)},
                         {"phase_ms", perPhaseJson(p.phaseMs)},
                         {"kernel_ms", perPhaseJson(p.kernelMs)},
                         {"unattributed_ms", perPhaseJson(p.unattributedMs)},
                         {"headline", headlineJson(p.headline)},
                         {"notes", p.notes},
                         {"rows", std::move(rows)},
                         {"timeline", timelineJson(p.timeline)}};
}

void readOpProfile(const json& run, const std::string& path, RunResult& r) {
    const json* j = member(run, path, "op_profile", false);
    if (!j) {
        return;
    }
    const std::string pp = path + ".op_profile";
    OpProfile p;
    // The profiled steps lie within the run's steps (its config is read first).
    const int steps = r.config.warmupSteps + r.config.measureSteps;
    readBetween(*j, pp, "first_step", p.firstStep, 0, std::max(0, steps - 1), true);
    readBetween(*j, pp, "step_count", p.stepCount, 0, steps - p.firstStep, true);
    read(*j, pp, "trace", p.trace);
    readOptional(*j, pp, "trace_error", p.traceError);
    p.phaseMs = perPhaseFrom(*j, pp, "phase_ms");
    p.kernelMs = perPhaseFrom(*j, pp, "kernel_ms");
    p.unattributedMs = perPhaseFrom(*j, pp, "unattributed_ms");
    const json& rows = arrayOrFail(*j, pp, "rows");
    for (size_t i = 0; i < rows.size(); ++i) {
        p.rows.push_back(rowFrom(rows[i], indexed(pp, "rows", i)));
    }
    const json& notes = arrayMember(*j, pp, "notes");
    for (size_t i = 0; i < notes.size(); ++i) {
        if (!notes[i].is_string()) {
            fail(indexed(pp, "notes", i), "expected a string");
        }
        p.notes.push_back(notes[i].get<std::string>());
    }
    const json* headline = member(*j, pp, "headline", false);
    p.headline =
        headline ? headlineFrom(*headline, pp + ".headline") : computeHeadline(p, r.config);
    if (const json* t = member(*j, pp, "timeline", false)) {
        p.timeline = timelineFrom(*t, pp + ".timeline", steps);
    }
    r.opProfile = std::move(p);
}

} // namespace lmprof::engine::json_io
