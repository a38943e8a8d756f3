// The straggler among data-parallel ranks (docs/VERDICTS.md): the rank the others wait for.
// Each rank's step is split into its own time, which no other rank makes it wait for, and
// its wait, where the all-reduce holds it until the slowest rank has sent its gradients. A
// straggler's own time is longer than the others', step after step; they show it as a
// longer wait. The same rule reads an engine run's ranks (RunResult::ddp: its wait is the
// exposed communication) and a watched script's ranks under torchrun (separate runs named
// "<name>-rank<N>": its wait is backward, where DDP's hooks all-reduce).

#include "verdicts/rules.h"

#include <map>

namespace lmprof::engine {

namespace verdict_rules {

namespace {

// One rank's measured steps by step index: its own time by part, its wait and its step.
struct Sample {
    std::vector<double> parts; // own time, by the group's part names
    double wait = 0.0;
    double total = 0.0;
    double own() const { return std::accumulate(parts.begin(), parts.end(), 0.0); }
};
struct RankSteps {
    int rank = 0;
    std::map<int, Sample> byStep;
};

// Where a group's time is read from: the names of the own time's parts, what the wait is
// called, and the chart that shows the ranks.
struct Source {
    std::vector<const char*> parts;
    const char* wait;
    ChartId chart;
};

constexpr const char* kRule = "one rank's own time (its step but its wait for the all-reduce) "
                              "exceeds the other ranks' mean by at least 10% of the step (25%: "
                              "critical)";

// The advice for the part that holds most of the straggler's extra time.
std::string adviceFor(const std::string& part, int rank) {
    const std::string who = "rank " + std::to_string(rank);
    if (part == "data") {
        return who + "'s loader is slower than the others': give it as many workers as they "
                     "have, check its shard (larger, or on slower or remote storage) and "
                     "prefetch; every rank waits for the slowest batch";
    }
    if (part == "rest") {
        return who + " does work outside the step's phases that the others do not (logging, "
                     "evaluation or checkpoints on one rank only): move it out of the step, or "
                     "spread it over every rank";
    }
    return who + " computes slower than the others: a slower or shared device, thermal "
                 "throttling or a busy host core on its node (nvidia-smi, top), or more work "
                 "in its batches (longer sequences); balance the batches by tokens";
}

// The steps every rank measured, in order.
std::vector<int> commonSteps(const std::vector<RankSteps>& ranks) {
    std::vector<int> common;
    for (const auto& entry : ranks.front().byStep) {
        const int index = entry.first; // a named copy: a lambda captures no structured binding
        if (std::all_of(ranks.begin(), ranks.end(),
                        [index](const RankSteps& r) { return r.byStep.count(index) > 0; })) {
            common.push_back(index);
        }
    }
    return common;
}

// The rank with the longest mean own time over the common steps.
size_t slowestRank(const std::vector<RankSteps>& ranks, const std::vector<int>& common) {
    size_t slow = 0;
    double slowest = -1.0;
    for (size_t r = 0; r < ranks.size(); ++r) {
        double sum = 0.0;
        for (int i : common) {
            sum += ranks[r].byStep.at(i).own();
        }
        if (sum > slowest) {
            slowest = sum;
            slow = r;
        }
    }
    return slow;
}

// The straggler's lead over the others' mean, per step, and the sums the evidence gives
// as means a step: its lead by part, the mean step, both own times and both waits.
struct Lead {
    std::vector<double> perStep;
    std::vector<double> parts;
    double step = 0.0, ownSlow = 0.0, ownOthers = 0.0, waitSlow = 0.0, waitOthers = 0.0;
};

Lead leadOf(const std::vector<RankSteps>& ranks, size_t slow, const std::vector<int>& common,
            size_t parts) {
    const double others = static_cast<double>(ranks.size() - 1);
    Lead lead;
    lead.parts.assign(parts, 0.0);
    for (int i : common) {
        const Sample& s = ranks[slow].byStep.at(i);
        double rest = 0.0;
        double total = 0.0;
        for (size_t r = 0; r < ranks.size(); ++r) {
            const Sample& o = ranks[r].byStep.at(i);
            total += o.total;
            if (r != slow) {
                rest += o.own() / others;
                lead.waitOthers += o.wait / others;
                for (size_t p = 0; p < parts; ++p) {
                    lead.parts[p] -= o.parts[p] / others;
                }
            }
        }
        for (size_t p = 0; p < parts; ++p) {
            lead.parts[p] += s.parts[p];
        }
        lead.perStep.push_back(s.own() - rest);
        lead.step += total / static_cast<double>(ranks.size());
        lead.ownSlow += s.own();
        lead.ownOthers += rest;
        lead.waitSlow += s.wait;
    }
    return lead;
}

std::optional<RunVerdict> judgeGroup(const std::vector<RankSteps>& ranks, const Source& source) {
    if (ranks.size() < 2) {
        return std::nullopt;
    }
    const std::vector<int> common = commonSteps(ranks);
    RunVerdict v;
    v.kind = VerdictKind::Straggler;
    v.chart = source.chart.name;
    v.rule = kRule;
    v.firstStep = common.empty() ? 0 : common.front();
    v.lastStep = common.empty() ? 0 : common.back();
    const int n = static_cast<int>(common.size());
    if (n < kStraggler.minSteps) {
        v.certainty = Certainty::Abstained;
        v.evidence = "needs " + std::to_string(kStraggler.minSteps) +
                     " measured steps that every rank has; has " + std::to_string(n);
        v.advice = "measure at least " + std::to_string(kStraggler.minSteps) + " steps";
        return v;
    }
    const size_t slow = slowestRank(ranks, common);
    const Lead lead = leadOf(ranks, slow, common, source.parts.size());
    const double meanStep = lead.step / n;
    if (meanStep <= 0.0) {
        return std::nullopt;
    }
    const PhaseStats d = computeStats(lead.perStep);
    const double half = tCritical(n - 1) * d.std / std::sqrt(static_cast<double>(n));
    const Estimate e{d.mean / meanStep, (d.mean - half) / meanStep, (d.mean + half) / meanStep};
    if (!grade(v, e, kStraggler)) {
        return std::nullopt;
    }
    const auto top = std::max_element(lead.parts.begin(), lead.parts.end());
    const std::string part = source.parts[static_cast<size_t>(top - lead.parts.begin())];
    const int rank = ranks[slow].rank;
    v.unit = "share";
    v.evidence =
        "rank " + std::to_string(rank) + " works " + ms(lead.ownSlow / n) +
        " a step on its own against " + ms(lead.ownOthers / n) + " on the others" +
        (source.parts.size() > 1 ? ", " + ms(*top / n) + " more in its " + part + " phase" : "") +
        "; they wait " + ms(lead.waitOthers / n) + " a step in " + source.wait + " against its " +
        ms(lead.waitSlow / n) + ", steps " + std::to_string(v.firstStep) + "-" +
        std::to_string(v.lastStep);
    v.advice = adviceFor(part, rank);
    return v;
}

} // namespace

void ddpStraggler(const RunResult& run, std::vector<RunVerdict>& out) {
    if (!run.ddp || run.ddp->ranks.size() < 2) {
        return;
    }
    std::vector<RankSteps> ranks;
    for (const DdpRank& r : run.ddp->ranks) {
        RankSteps steps{r.rank, {}};
        for (const DdpStepRecord& s : r.steps) {
            if (!s.warmup && s.stepMs > 0.0) {
                steps.byStep[s.index] = Sample{{computeMs(s)}, s.exposedCommMs, s.stepMs};
            }
        }
        ranks.push_back(std::move(steps));
    }
    const Source source{{"compute"}, "exposed communication", chart::kDdpLanes};
    if (auto v = judgeGroup(ranks, source)) {
        out.push_back(std::move(*v));
    }
}

} // namespace verdict_rules

namespace {

// "<name>-rank<N>", a watched script's rank under torchrun (docs/WATCH.md): its name and
// N (at most 6 digits). Read by hand: a regex's recursion on a hostile file's megabyte of
// id would overflow the stack.
std::optional<std::pair<std::string, int>> rankOf(const std::string& id) {
    const size_t at = id.rfind("-rank");
    if (at == std::string::npos) {
        return std::nullopt;
    }
    const std::string digits = id.substr(at + 5);
    if (digits.empty() || digits.size() > 6 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
    }
    return std::pair{id.substr(0, at), std::stoi(digits)};
}

} // namespace

std::vector<RunVerdict> judgeRuns(std::span<const RunResult> runs) {
    using namespace verdict_rules;
    std::map<std::string, std::vector<const RunResult*>> groups;
    for (const RunResult& run : runs) {
        const auto rank = rankOf(run.id);
        if (run.source && (run.status == RunStatus::Ok || run.status == RunStatus::Cancelled) &&
            rank) {
            groups[rank->first].push_back(&run);
        }
    }
    std::vector<RunVerdict> out;
    const Source source{
        {"data", "forward", "optimizer", "rest"}, "backward (the all-reduce)", chart::kStepTimes};
    for (const auto& [name, members] : groups) {
        std::vector<RankSteps> ranks;
        std::vector<std::string> ids;
        for (const RunResult* run : members) {
            RankSteps steps{rankOf(run->id)->second, {}};
            for (const StepRecord& s : run->steps) {
                if (isMeasured(s) && s.totalMs > 0.0) {
                    steps.byStep[s.index] = Sample{{s.dataMs.value_or(0.0), s.forwardMs,
                                                    s.optimizerMs, s.restMs.value_or(0.0)},
                                                   s.backwardMs,
                                                   s.totalMs};
                }
            }
            ranks.push_back(std::move(steps));
            ids.push_back(run->id);
        }
        if (auto v = judgeGroup(ranks, source)) {
            v->runs = std::move(ids);
            out.push_back(std::move(*v));
        }
    }
    return out;
}

} // namespace lmprof::engine
