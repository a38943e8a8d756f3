// Attribution of profiler events to phases and regions (docs/OP_PROFILE.md, "How ops are
// attributed").
//
// Sections: helpers · placing host events · backward through the forward op · kernels ·
// rows · timeline · analyze.

#include "profile/op_analysis.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

namespace lmprof::engine::profile {

namespace {

using Type = RawEvent::Type;
constexpr size_t kNone = static_cast<size_t>(-1);
constexpr size_t kMaxTimelineEvents = 60000;
constexpr std::string_view kEvaluatePrefix = "autograd::engine::evaluate_function: ";

double nsToMs(int64_t ns) {
    return static_cast<double>(ns) / 1e6;
}

// The region of that name from kRegions (static storage), or "" for other ranges.
std::string_view regionNamed(std::string_view name) {
    const auto it = std::find(kRegions.begin(), kRegions.end(), name);
    return it == kRegions.end() ? std::string_view() : *it;
}

bool isStepRange(std::string_view name) {
    return name == kStepRange || name == kWarmupStepRange;
}

bool onHost(const RawEvent& e) {
    return e.type != Type::Kernel;
}

// Where an event belongs; filled in by the passes below.
struct Placed {
    int step = -1; // among the profiled steps, -1 outside them
    std::optional<Phase> phase;
    std::string_view region; // empty: none
    size_t parentOp = kNone; // the op that called it (same thread)
    size_t node = kNone;     // the backward node it ran in
    size_t launcher = kNone; // runtime calls and kernels: the op that launched the work
    int depth = 0;           // ops among ops, ranges among ranges
    int64_t childNs = 0;     // ops: time spent in the ops it called
    double flops = 0.0;      // ops: the profiler's or the analytic count; kernels: assigned
};

// The step and phase a host moment belongs to: inside a phase, between the phases of a step
// (then the phase that ran last: the harness's work after it), or before the first.
void locate(const StepFrame& f, int64_t t, Placed& p) {
    for (size_t s = 0; s < f.steps.size(); ++s) {
        if (t >= f.steps[s].first && t <= f.steps[s].second) {
            p.step = static_cast<int>(s);
            break;
        }
    }
    for (const auto& ph : f.phases) {
        if (ph.startNs > t) {
            break;
        }
        if (ph.step == p.step) {
            p.phase = ph.phase;
        }
    }
    if (p.step >= 0 && !p.phase) { // before the step's first phase: count it there
        for (const auto& ph : f.phases) {
            if (ph.step == p.step) {
                p.phase = ph.phase;
                break;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Placing host events: nesting per thread gives each op its caller, its innermost region
// and (in backward) the autograd node it runs in.

void placeHostEvents(const std::vector<RawEvent>& ev, std::vector<Placed>& placed) {
    std::map<uint64_t, std::vector<size_t>> byThread;
    for (size_t i = 0; i < ev.size(); ++i) {
        if (onHost(ev[i])) {
            byThread[ev[i].thread].push_back(i);
        }
    }
    std::unordered_map<size_t, size_t> evaluateNode; // evaluate_function op -> its node
    for (auto& [thread, idx] : byThread) {
        // Outer before inner: by start, then the longer first, ranges before ops.
        std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
            if (ev[a].startNs != ev[b].startNs) {
                return ev[a].startNs < ev[b].startNs;
            }
            if (ev[a].endNs != ev[b].endNs) {
                return ev[a].endNs > ev[b].endNs;
            }
            return ev[a].type == Type::Range && ev[b].type != Type::Range;
        });
        std::vector<size_t> stack;
        for (size_t i : idx) {
            const RawEvent& e = ev[i];
            while (!stack.empty() && ev[stack.back()].endNs <= e.startNs) {
                stack.pop_back();
            }
            Placed& p = placed[i];
            for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
                const RawEvent& outer = ev[*it];
                if (outer.type == Type::Range) {
                    if (p.region.empty()) {
                        p.region = regionNamed(outer.name);
                    }
                    if (e.type == Type::Range) {
                        ++p.depth;
                    }
                } else if (outer.type == Type::Op) {
                    if (p.parentOp == kNone) {
                        p.parentOp = *it;
                    }
                    if (p.node == kNone && outer.backwardNode) {
                        p.node = *it;
                    }
                    if (p.node == kNone && outer.name.rfind(kEvaluatePrefix, 0) == 0) {
                        if (auto n = evaluateNode.find(*it); n != evaluateNode.end()) {
                            p.node = n->second;
                        }
                    }
                    if (e.type == Type::Op) {
                        ++p.depth;
                    }
                }
            }
            if (e.type == Type::Op && e.backwardNode) {
                p.node = i;
                if (p.parentOp != kNone && ev[p.parentOp].name.rfind(kEvaluatePrefix, 0) == 0) {
                    evaluateNode.emplace(p.parentOp, i);
                }
            }
            if (e.type == Type::Op && p.parentOp != kNone) {
                placed[p.parentOp].childNs += e.endNs - e.startNs;
            }
            if (e.type == Type::Runtime) {
                p.launcher = p.parentOp;
            }
            stack.push_back(i);
        }
    }
    // The evaluate_function wrapper belongs to the node it runs (found once its child was seen).
    for (auto [wrapper, node] : evaluateNode) {
        placed[wrapper].node = node;
    }
}

// ---------------------------------------------------------------------------------------
// Backward: an op belongs to the region of the forward op that made its autograd node
// (the node's sequence number and forward thread name that op).

void attributeBackward(const std::vector<RawEvent>& ev, const StepFrame& frame,
                       uint64_t stepThreadRecordId, std::vector<Placed>& placed) {
    std::vector<size_t> forwardOps;
    for (size_t i = 0; i < ev.size(); ++i) {
        // Ops outside any autograd node made the graph: the forward pass, and the loss
        // scaling in a region at the start of the backward phase. (The engine's
        // evaluate_function wrapper carries its node's number too; it is not a maker.)
        const RawEvent& e = ev[i];
        const Placed& p = placed[i];
        if (e.type == Type::Op && e.sequenceNr >= 0 && !e.backwardNode && p.node == kNone &&
            e.name.rfind(kEvaluatePrefix, 0) != 0 &&
            (p.phase == Phase::Forward || !p.region.empty())) {
            forwardOps.push_back(i);
        }
    }
    std::sort(forwardOps.begin(), forwardOps.end(),
              [&](size_t a, size_t b) { return ev[a].startNs < ev[b].startNs; });
    // Ops that make no node share the next node's number; the last op to start with a
    // number is the one that made it.
    std::map<std::pair<uint64_t, int64_t>, std::string_view> forwardRegion;
    for (size_t i : forwardOps) {
        forwardRegion[{ev[i].thread, ev[i].sequenceNr}] = placed[i].region;
    }
    for (size_t i = 0; i < ev.size(); ++i) {
        Placed& p = placed[i];
        if (!onHost(ev[i]) || p.phase != Phase::Backward || p.node == kNone) {
            continue;
        }
        const RawEvent& node = ev[p.node];
        const uint64_t thread = stepThreadRecordId != 0 && node.forwardThread == stepThreadRecordId
                                    ? frame.mainThread
                                    : node.forwardThread;
        if (node.name.find("AccumulateGrad") != std::string::npos) {
            p.region = region::kAccumulateGrad;
        } else if (auto it = forwardRegion.find({thread, node.sequenceNr});
                   it != forwardRegion.end()) {
            p.region = it->second;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Kernels: placed where the runtime call that launched them was (CUPTI's correlation id).
// The launching op's FLOPs go to its longest kernel.

void placeKernels(const std::vector<RawEvent>& ev, const StepFrame& frame,
                  std::vector<Placed>& placed) {
    std::unordered_map<uint64_t, size_t> runtimeByCorrelation;
    for (size_t i = 0; i < ev.size(); ++i) {
        if (ev[i].type == Type::Runtime && ev[i].correlation != 0) {
            runtimeByCorrelation.emplace(ev[i].correlation, i);
        }
    }
    std::unordered_map<size_t, size_t> longestOfOp; // launching op -> its longest kernel
    for (size_t i = 0; i < ev.size(); ++i) {
        if (ev[i].type != Type::Kernel) {
            continue;
        }
        Placed& p = placed[i];
        const auto rt = runtimeByCorrelation.find(ev[i].correlation);
        if (rt == runtimeByCorrelation.end()) {
            locate(frame, ev[i].startNs, p); // device work nobody launched that we saw
            continue;
        }
        const Placed& r = placed[rt->second];
        p.step = r.step;
        p.phase = r.phase;
        p.region = r.region;
        p.launcher = r.launcher;
        if (p.launcher != kNone) {
            auto [it, fresh] = longestOfOp.emplace(p.launcher, i);
            const auto dur = [&](size_t k) { return ev[k].endNs - ev[k].startNs; };
            if (!fresh && dur(i) > dur(it->second)) {
                it->second = i;
            }
        }
    }
    for (auto [op, kernel] : longestOfOp) {
        placed[kernel].flops = placed[op].flops;
    }
}

// ---------------------------------------------------------------------------------------
// Rows: per (phase, region, name, kind), divided by the number of profiled steps.

std::vector<OpRow> aggregate(const std::vector<RawEvent>& ev, const std::vector<Placed>& placed,
                             int stepCount) {
    std::map<std::tuple<Phase, std::string_view, std::string_view, OpKind>, OpRow> rows;
    for (size_t i = 0; i < ev.size(); ++i) {
        const RawEvent& e = ev[i];
        const Placed& p = placed[i];
        if ((e.type != Type::Op && e.type != Type::Kernel) || p.step < 0 || !p.phase) {
            continue;
        }
        const OpKind kind = e.type == Type::Kernel ? OpKind::Kernel : OpKind::Op;
        const std::string_view region = p.region.empty() ? region::kUnattributed : p.region;
        OpRow& row = rows[{*p.phase, region, e.name, kind}];
        if (row.name.empty()) {
            row.phase = *p.phase;
            row.region = std::string(region);
            row.name = e.name;
            row.kind = kind;
            row.matmul = isMatmulOp(kind == OpKind::Op    ? e.name
                                    : p.launcher != kNone ? ev[p.launcher].name
                                                          : std::string());
        }
        const int64_t dur = e.endNs - e.startNs;
        row.calls += 1.0;
        row.totalMs += nsToMs(dur);
        row.selfMs += nsToMs(kind == OpKind::Op ? dur - p.childNs : dur);
        row.flops += p.flops;
    }
    std::vector<OpRow> out;
    const double n = std::max(1, stepCount);
    for (auto& [key, row] : rows) {
        row.calls /= n;
        row.selfMs /= n;
        row.totalMs /= n;
        row.flops /= n;
        out.push_back(std::move(row));
    }
    std::stable_sort(out.begin(), out.end(), [](const OpRow& a, const OpRow& b) {
        if (a.phase != b.phase) {
            return a.phase < b.phase;
        }
        return a.selfMs > b.selfMs;
    });
    return out;
}

// ---------------------------------------------------------------------------------------
// The timeline of the first profiled step: host threads (the main one first), then streams.

OpTimeline timelineOf(const std::vector<RawEvent>& ev, const std::vector<Placed>& placed,
                      const StepFrame& frame, int firstStep, std::vector<std::string>& notes) {
    OpTimeline t;
    t.step = firstStep;
    if (frame.steps.empty()) {
        return t;
    }
    const int64_t origin = frame.steps.front().first;
    std::map<std::pair<int, uint64_t>, int> laneOf; // (0 main / 1 thread / 2 stream, id)
    std::vector<size_t> chosen;
    for (size_t i = 0; i < ev.size(); ++i) {
        const RawEvent& e = ev[i];
        if (e.type == Type::Runtime || placed[i].step != 0) {
            continue;
        }
        const int group = e.type == Type::Kernel ? 2 : e.thread == frame.mainThread ? 0 : 1;
        laneOf.emplace(std::pair{group, e.thread}, 0);
        chosen.push_back(i);
    }
    int next = 0;
    for (auto& [key, lane] : laneOf) {
        lane = next++;
        t.lanes.push_back(key.first == 0   ? "thread " + std::to_string(key.second) + " (main)"
                          : key.first == 1 ? "thread " + std::to_string(key.second)
                                           : "stream " + std::to_string(key.second));
    }
    if (chosen.size() > kMaxTimelineEvents) {
        notes.push_back("the timeline keeps the first " + std::to_string(kMaxTimelineEvents) +
                        " of " + std::to_string(chosen.size()) + " events of step " +
                        std::to_string(firstStep));
    }
    std::sort(chosen.begin(), chosen.end(),
              [&](size_t a, size_t b) { return ev[a].startNs < ev[b].startNs; });
    chosen.resize(std::min(chosen.size(), kMaxTimelineEvents));
    for (size_t i : chosen) {
        const RawEvent& e = ev[i];
        const Placed& p = placed[i];
        OpEvent o;
        o.name = e.name;
        // Ranges carry their own region (none for step and phase ranges); ops and kernels the
        // one they are counted in, as in the rows.
        o.region = e.type == Type::Range ? std::string(regionNamed(e.name))
                   : p.region.empty()    ? std::string(region::kUnattributed)
                                         : std::string(p.region);
        o.phase = p.phase.value_or(Phase::Forward);
        o.kind = e.type == Type::Kernel ? OpKind::Kernel : OpKind::Op;
        o.range = e.type == Type::Range;
        const int group = e.type == Type::Kernel ? 2 : e.thread == frame.mainThread ? 0 : 1;
        o.lane = laneOf.at({group, e.thread});
        o.depth = p.depth;
        o.startMs = nsToMs(e.startNs - origin);
        o.durMs = nsToMs(e.endNs - e.startNs);
        o.flops = p.flops;
        o.shapes = formatShapes(e.shapes);
        t.events.push_back(std::move(o));
    }
    std::stable_sort(t.events.begin(), t.events.end(),
                     [](const OpEvent& a, const OpEvent& b) { return a.lane < b.lane; });
    return t;
}

} // namespace

// ---------------------------------------------------------------------------------------
// analyze

double matmulFlops(const std::string& name, const std::vector<std::vector<int64_t>>& s) {
    auto mk = [&](size_t a, size_t b) -> double {
        if (s.size() <= b || s[a].size() < 2 || s[b].size() < 2) {
            return 0.0;
        }
        const auto& x = s[a];
        const auto& y = s[b];
        double batch = 1.0;
        for (size_t i = 0; i + 2 < x.size(); ++i) {
            batch *= static_cast<double>(x[i]);
        }
        const double m = static_cast<double>(x[x.size() - 2]);
        const double k = static_cast<double>(x.back());
        const double n = static_cast<double>(y.back());
        return 2.0 * batch * m * n * k;
    };
    if (name == "aten::mm" || name == "aten::bmm") {
        return mk(0, 1);
    }
    if (name == "aten::addmm" || name == "aten::baddbmm") {
        return mk(1, 2);
    }
    return 0.0;
}

std::string formatShapes(const std::vector<std::vector<int64_t>>& shapes) {
    std::string out;
    for (const auto& s : shapes) {
        out += out.empty() ? "[" : ", [";
        for (size_t i = 0; i < s.size(); ++i) {
            out += (i ? ", " : "") + std::to_string(s[i]);
        }
        out += "]";
    }
    return out;
}

StepFrame findFrame(const std::vector<RawEvent>& events, int completedSteps) {
    StepFrame f;
    std::vector<size_t> stepIdx;
    for (size_t i = 0; i < events.size(); ++i) {
        if (events[i].type == Type::Range && isStepRange(events[i].name)) {
            stepIdx.push_back(i);
        }
    }
    if (stepIdx.empty()) {
        return f;
    }
    std::sort(stepIdx.begin(), stepIdx.end(),
              [&](size_t a, size_t b) { return events[a].startNs < events[b].startNs; });
    f.mainThread = events[stepIdx.front()].thread;
    if (completedSteps >= 0 && stepIdx.size() > static_cast<size_t>(completedSteps)) {
        f.cutSteps = static_cast<int>(stepIdx.size()) - completedSteps;
        stepIdx.resize(static_cast<size_t>(completedSteps));
    }
    for (size_t i : stepIdx) {
        f.steps.emplace_back(events[i].startNs, events[i].endNs);
    }
    for (const auto& e : events) {
        const auto phase = e.type == Type::Range ? parsePhase(e.name) : std::nullopt;
        if (!phase || e.thread != f.mainThread) {
            continue;
        }
        for (size_t s = 0; s < f.steps.size(); ++s) {
            if (e.startNs >= f.steps[s].first && e.endNs <= f.steps[s].second) {
                f.phases.push_back({*phase, e.startNs, e.endNs, static_cast<int>(s)});
            }
        }
    }
    std::sort(f.phases.begin(), f.phases.end(),
              [](const auto& a, const auto& b) { return a.startNs < b.startNs; });
    return f;
}

OpProfile analyze(AnalysisInput input, const RunConfig& config) {
    const StepFrame frame = findFrame(input.events, input.completedSteps);
    return analyze(std::move(input), frame, config);
}

OpProfile analyze(AnalysisInput input, const StepFrame& frame, const RunConfig& config) {
    const std::vector<RawEvent>& ev = input.events;
    OpProfile profile;
    profile.firstStep = input.firstStep;
    profile.stepCount = static_cast<int>(frame.steps.size());
    if (frame.steps.empty()) {
        profile.notes.push_back("the profile holds no finished step; nothing was attributed");
    }
    if (frame.cutSteps > 0) {
        profile.notes.push_back("a profiled step was cut short (cancel or failure) and is left "
                                "out of the rows");
    }
    std::vector<Placed> placed(ev.size());
    for (size_t i = 0; i < ev.size(); ++i) {
        if (onHost(ev[i])) {
            locate(frame, ev[i].startNs, placed[i]);
        }
        if (ev[i].type == Type::Op) {
            placed[i].flops =
                ev[i].flops > 0.0 ? ev[i].flops : matmulFlops(ev[i].name, ev[i].shapes);
        }
    }
    placeHostEvents(ev, placed);
    attributeBackward(ev, frame, input.stepThreadRecordId, placed);
    placeKernels(ev, frame, placed);
    profile.rows = aggregate(ev, placed, profile.stepCount);

    const double n = std::max(1, profile.stepCount);
    for (const auto& ph : frame.phases) {
        profile.phaseMs.of(ph.phase) += nsToMs(ph.endNs - ph.startNs) / n;
    }
    for (const auto& row : profile.rows) {
        if (row.kind == OpKind::Kernel) {
            profile.kernelMs.of(row.phase) += row.selfMs;
        }
    }
    profile.headline = computeHeadline(profile, config);
    profile.unattributedMs = sumUnattributed(profile);
    profile.timeline = timelineOf(ev, placed, frame, input.firstStep, profile.notes);
    return profile;
}

} // namespace lmprof::engine::profile
