// The op profile's shared rules: kinds, which ops are matmuls, grouping and the headline
// answers (docs/OP_PROFILE.md).

#include "lmprof/engine/op_profile.h"

#include "enum_names.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace lmprof::engine {

namespace {
constexpr std::array kOpKinds{OpKind::Op, OpKind::Kernel};

// Softmax's analytic FLOPs per score element: max, subtract, exp, sum, divide.
constexpr double kSoftmaxFlopsPerScore = 5.0;
} // namespace

constexpr EnumNames<OpKind, 2> kOpKindNames{{
    {OpKind::Op, "op"},
    {OpKind::Kernel, "kernel"},
}};

std::string_view toString(OpKind k) {
    return nameIn(kOpKindNames, k);
}

std::optional<OpKind> parseOpKind(std::string_view s) {
    return parseByName(s, kOpKinds);
}

bool isMatmulOp(std::string_view name) {
    static constexpr std::array<std::string_view, 8> kMatmuls{
        "aten::mm",     "aten::bmm",    "aten::addmm",  "aten::baddbmm",
        "aten::addbmm", "aten::matmul", "aten::linear", "aten::_scaled_mm"};
    return std::find(kMatmuls.begin(), kMatmuls.end(), name) != kMatmuls.end();
}

double OpProfile::phaseTotal(const OpRow& row) const {
    return row.kind == OpKind::Kernel ? kernelMs.of(row.phase) : phaseMs.of(row.phase);
}

std::optional<double> OpHeadline::timeRatio() const {
    return attentionMatmulMs > 0.0 ? std::optional(softmaxMs / attentionMatmulMs) : std::nullopt;
}

std::optional<double> OpHeadline::flopRatio() const {
    return attentionMatmulFlops > 0.0 ? std::optional(softmaxFlops / attentionMatmulFlops)
                                      : std::nullopt;
}

std::vector<OpRow> groupRows(const std::vector<OpRow>& rows, OpGrouping by) {
    if (by == OpGrouping::Row) {
        return rows;
    }
    std::map<std::tuple<Phase, std::string, OpKind>, OpRow> groups;
    for (const auto& r : rows) {
        const std::string& key = by == OpGrouping::Region ? r.region : r.name;
        auto [it, fresh] = groups.try_emplace({r.phase, key, r.kind});
        OpRow& g = it->second;
        if (fresh) {
            g.phase = r.phase;
            g.kind = r.kind;
            (by == OpGrouping::Region ? g.region : g.name) = key;
            g.matmul = by == OpGrouping::Op && r.matmul;
        }
        g.calls += r.calls;
        g.selfMs += r.selfMs;
        g.totalMs += r.totalMs;
        g.flops += r.flops;
    }
    std::vector<OpRow> out;
    for (auto& [key, g] : groups) {
        out.push_back(std::move(g));
    }
    std::stable_sort(out.begin(), out.end(), [](const OpRow& a, const OpRow& b) {
        return a.phase != b.phase ? a.phase < b.phase : a.selfMs > b.selfMs;
    });
    return out;
}

OpHeadline computeHeadline(const OpProfile& p, const RunConfig& config) {
    OpHeadline h;
    const bool kernels = std::any_of(p.rows.begin(), p.rows.end(),
                                     [](const OpRow& r) { return r.kind == OpKind::Kernel; });
    h.kind = kernels ? OpKind::Kernel : OpKind::Op;
    const PerPhase<double>& totals = kernels ? p.kernelMs : p.phaseMs;
    const double forward = totals.forward;
    auto share = [](double part, double whole) { return whole > 0.0 ? part / whole : 0.0; };

    // By name across regions: "aten::mm" is one answer, wherever it ran.
    const std::vector<OpRow> byName = groupRows(p.rows, OpGrouping::Op);
    double matmulForward = 0.0;
    double matmulAll = 0.0;
    for (const auto& r : byName) {
        if (r.kind != h.kind) {
            continue;
        }
        if (r.matmul) {
            matmulAll += r.selfMs;
            matmulForward += r.phase == Phase::Forward ? r.selfMs : 0.0;
        }
        if (r.phase != Phase::Forward) {
            continue;
        }
        if (h.topForwardName.empty()) { // byName is largest first within a phase
            h.topForwardName = r.name;
            h.topForwardShare = share(r.selfMs, forward);
            h.topForwardCalls = r.calls;
        }
        if (!r.matmul && h.topNonMatmulForward.size() < 3) {
            h.topNonMatmulForward.push_back({r.name, share(r.selfMs, forward)});
        }
    }
    // The region of the top name's largest row.
    for (const auto& r : p.rows) {
        if (r.kind == h.kind && r.phase == Phase::Forward && r.name == h.topForwardName) {
            h.topForwardRegion = r.region;
            break;
        }
    }
    h.matmulForwardShare = share(matmulForward, forward);
    h.matmulStepShare = share(matmulAll, totals.sum());

    for (const auto& r : p.rows) {
        if (r.phase != Phase::Forward) {
            continue;
        }
        const bool scores = r.matmul && r.region == region::kScores;
        const bool value = r.matmul && r.region == region::kValue;
        if (r.kind == h.kind) {
            h.softmaxMs += r.region == region::kSoftmax ? r.selfMs : 0.0;
            h.scoresMs += scores ? r.selfMs : 0.0;
            h.valueMs += value ? r.selfMs : 0.0;
        }
        if (r.kind == OpKind::Op) {
            h.scoresFlops += scores ? r.flops : 0.0;
            h.valueFlops += value ? r.flops : 0.0;
        }
    }
    h.attentionMatmulMs = h.scoresMs + h.valueMs;
    h.attentionMatmulFlops = h.scoresFlops + h.valueFlops;
    // Scores (B·h·T²) per layer and pass; the matmuls fall back to 2 · 2·B·h·T²·dh.
    const double b = static_cast<double>(config.batchSize);
    const double t = static_cast<double>(config.contextLength);
    const double heads = static_cast<double>(config.model.numHeads);
    const double layers = static_cast<double>(config.model.numLayers);
    const double scores = b * heads * t * t * layers;
    h.softmaxFlops = kSoftmaxFlopsPerScore * scores;
    if (h.attentionMatmulFlops == 0.0) {
        const double dh = static_cast<double>(config.model.dModel) / heads;
        h.attentionMatmulFlops = 2.0 * 2.0 * scores * dh;
    }
    return h;
}

PerPhase<double> sumUnattributed(const OpProfile& p) {
    PerPhase<double> out;
    for (const auto& row : p.rows) {
        if (row.kind == p.headline.kind && row.region == region::kUnattributed) {
            out.of(row.phase) += row.selfMs;
        }
    }
    return out;
}

std::vector<std::string> headlineSentences(const OpProfile& p) {
    const OpHeadline& h = p.headline;
    const std::string what = h.kind == OpKind::Kernel ? "GPU kernel time" : "CPU op time";
    auto pct = [](double share) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * share);
        return std::string(buf);
    };
    auto num = [](double v, const char* fmt) {
        char buf[32];
        std::snprintf(buf, sizeof buf, fmt, v);
        return std::string(buf);
    };
    std::vector<std::string> out;
    if (h.topForwardName.empty()) {
        out.push_back("The profile holds no forward " +
                      std::string(h.kind == OpKind::Kernel ? "kernels." : "ops."));
        return out;
    }
    out.push_back("From " + profiledStepsText(p) + ": " + h.topForwardName + " takes " +
                  pct(h.topForwardShare) + " of the forward pass's " + what + " (" +
                  num(h.topForwardCalls, "%.0f") + " calls per pass, most in " +
                  h.topForwardRegion + ").");
    out.push_back("Matrix multiplications take " + pct(h.matmulForwardShare) +
                  " of the forward pass and " + pct(h.matmulStepShare) + " of the whole step.");
    if (!h.topNonMatmulForward.empty()) {
        std::string list;
        for (const auto& item : h.topNonMatmulForward) {
            list += (list.empty() ? "" : ", ") + item.name + " " + pct(item.share);
        }
        out.push_back("Besides matmuls, the forward pass spends most in " + list + ".");
    }
    if (auto t = h.timeRatio(), f = h.flopRatio(); t && f) {
        out.push_back("Attention's softmax takes " + num(*t, "%.2f") +
                      "x the time of its two matmuls (QK^T, PV) for " + num(*f, "%.3f") +
                      "x their FLOPs.");
    }
    if (auto doubt = attentionTimingDoubt(p)) {
        out.push_back(*doubt);
    }
    return out;
}

std::string profiledStepsText(const OpProfile& p) {
    const int n = std::max(1, p.stepCount);
    if (n == 1) {
        return "1 profiled step (step " + std::to_string(p.firstStep) + ")";
    }
    return std::to_string(n) + " profiled steps (" + std::to_string(p.firstStep) + " to " +
           std::to_string(p.firstStep + n - 1) + ")";
}

std::optional<std::string> attentionTimingDoubt(const OpProfile& p) {
    constexpr double kTrustRatio = 10.0;
    const OpHeadline& h = p.headline;
    if (h.scoresMs <= 0.0 || h.valueMs <= 0.0) {
        return std::nullopt;
    }
    const double apart = std::max(h.scoresMs, h.valueMs) / std::min(h.scoresMs, h.valueMs);
    if (apart <= kTrustRatio) {
        return std::nullopt;
    }
    char figures[160];
    std::snprintf(figures, sizeof figures,
                  "QK^T took %.3g ms and PV %.3g ms per forward pass for the same FLOPs, "
                  "%.0fx apart",
                  h.scoresMs, h.valueMs, apart);
    return std::string(figures) + ": more than the work explains, so read it as " +
           profiledStepsText(p) +
           "'s timing (first calls, a busy machine), not as the ops' cost; profile more steps "
           "(--profile-steps) to see whether it holds.";
}

} // namespace lmprof::engine
