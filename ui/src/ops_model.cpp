// The Ops view's tree, attention parts and overlay (see ops_model.h).

#include "ops_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {

bool containsNoCase(std::string_view hay, std::string_view needle) {
    if (needle.empty()) {
        return true;
    }
    auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) ==
               std::tolower(static_cast<unsigned char>(b));
    });
    return it != hay.end();
}

double keyOf(const OpsNode& n, OpsSort sort) {
    switch (sort) {
    case OpsSort::Calls:
        return n.calls;
    case OpsSort::Total:
        return n.totalMs;
    case OpsSort::Share:
    case OpsSort::Self:
        return n.selfMs;
    case OpsSort::Flops:
        return n.flops;
    case OpsSort::Name:
        break;
    }
    return 0.0;
}

void sortLevel(std::vector<OpsNode>& nodes, OpsSort sort, bool descending) {
    std::stable_sort(nodes.begin(), nodes.end(), [&](const OpsNode& a, const OpsNode& b) {
        if (sort == OpsSort::Name) {
            const std::string la = a.label(), lb = b.label();
            return descending ? la > lb : la < lb;
        }
        return descending ? keyOf(a, sort) > keyOf(b, sort) : keyOf(a, sort) < keyOf(b, sort);
    });
    for (auto& n : nodes) {
        sortLevel(n.children, sort, descending);
    }
}

void add(OpsNode& into, const OpRow& r) {
    into.calls += r.calls;
    into.selfMs += r.selfMs;
    into.totalMs += r.totalMs;
    into.flops += r.flops;
}

} // namespace

std::string OpsNode::label() const {
    switch (level) {
    case Level::Phase:
        return std::string(toString(phase));
    case Level::Region:
        return region;
    case Level::Op:
        break;
    }
    return name;
}

std::vector<OpsNode> buildOpsTree(const OpProfile& p, OpKind kind, std::string_view filter,
                                  OpsSort sort, bool descending) {
    std::vector<OpsNode> phases;
    for (Phase ph : kPhases) {
        OpsNode phase;
        phase.level = OpsNode::Level::Phase;
        phase.phase = ph;
        std::map<std::string, OpsNode> regions;
        for (const OpRow& r : p.rows) {
            if (r.kind != kind || r.phase != ph ||
                !(containsNoCase(r.name, filter) || containsNoCase(r.region, filter))) {
                continue;
            }
            OpsNode& region = regions[r.region];
            region.level = OpsNode::Level::Region;
            region.phase = ph;
            region.region = r.region;
            OpsNode op;
            op.phase = ph;
            op.region = r.region;
            op.name = r.name;
            add(op, r);
            region.children.push_back(std::move(op));
            add(region, r);
            add(phase, r);
        }
        if (regions.empty()) {
            continue;
        }
        const double total = p.phaseTotal(OpRow{ph, "", "", kind});
        for (auto& [name, region] : regions) {
            for (auto& op : region.children) {
                op.share = total > 0.0 ? op.selfMs / total : 0.0;
            }
            region.share = total > 0.0 ? region.selfMs / total : 0.0;
            phase.children.push_back(std::move(region));
        }
        phase.share = total > 0.0 ? phase.selfMs / total : 0.0;
        phases.push_back(std::move(phase));
    }
    for (auto& phase : phases) {
        sortLevel(phase.children, sort, descending);
    }
    return phases;
}

AttentionParts attentionParts(const OpProfile& p, OpKind kind) {
    AttentionParts a;
    for (const OpRow& r : p.rows) {
        if (r.phase != Phase::Forward) {
            continue;
        }
        const bool scores = r.region == region::kScores && r.matmul;
        const bool value = r.region == region::kValue && r.matmul;
        if (r.kind == kind) {
            a.softmaxMs += r.region == region::kSoftmax ? r.selfMs : 0.0;
            a.scoresMs += scores ? r.selfMs : 0.0;
            a.valueMs += value ? r.selfMs : 0.0;
        }
        if (r.kind == OpKind::Op) { // FLOPs are counted on ops (kernels carry their op's)
            a.scoresFlops += scores ? r.flops : 0.0;
            a.valueFlops += value ? r.flops : 0.0;
        }
    }
    a.softmaxFlops = p.headline.softmaxFlops;
    const OpHeadline& h = p.headline;
    const bool none = a.softmaxMs == 0.0 && a.scoresMs == 0.0 && a.valueMs == 0.0;
    if (none && kind == h.kind) { // no attention regions (a watched model): the headline's
        a.softmaxMs = h.softmaxMs;
        a.scoresMs = h.scoresMs;
        a.valueMs = h.valueMs;
        a.scoresFlops = h.scoresFlops;
        a.valueFlops = h.valueFlops;
    }
    return a;
}

RegionOverlay overlayRegions(const OpProfile& a, const OpProfile& b, OpKind kind) {
    auto perRegion = [&](const OpProfile& p) {
        std::map<std::string, double, std::less<>> ms;
        for (const OpRow& r : p.rows) {
            if (r.kind == kind) {
                ms[r.region] += r.selfMs;
            }
        }
        return ms;
    };
    const auto ma = perRegion(a);
    const auto mb = perRegion(b);
    RegionOverlay out;
    // The engine's regions in model order; a watched model's module paths (docs/WATCH.md)
    // by name after them, so blocks.0 comes before blocks.1; unattributed last.
    std::vector<std::string_view> order(kRegions.begin(), kRegions.end());
    for (const auto* m : {&ma, &mb}) {
        for (const auto& [name, ms] : *m) {
            const bool known = std::find(order.begin(), order.end(), name) != order.end();
            if (!known && name != region::kUnattributed) {
                order.push_back(name);
            }
        }
    }
    std::sort(order.begin() + static_cast<std::ptrdiff_t>(kRegions.size()), order.end());
    order.push_back(region::kUnattributed);
    for (std::string_view name : order) {
        const auto ia = ma.find(name);
        const auto ib = mb.find(name);
        if (ia == ma.end() && ib == mb.end()) {
            continue;
        }
        out.regions.emplace_back(name);
        out.a.push_back(ia == ma.end() ? 0.0 : ia->second);
        out.b.push_back(ib == mb.end() ? 0.0 : ib->second);
    }
    return out;
}

std::vector<RulerTick> rulerTicks(double t0, double t1, int maxTicks) {
    std::vector<RulerTick> ticks;
    if (!(t1 > t0) || maxTicks < 1) {
        return ticks;
    }
    const double rough = (t1 - t0) / maxTicks;
    double step = std::pow(10.0, std::floor(std::log10(rough)));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        if (m * step >= rough) {
            step *= m;
            break;
        }
    }
    const bool micro = step < 1.0; // labels in µs below a millisecond's step
    for (double k = std::ceil(t0 / step); k * step <= t1 + step * 1e-9; k += 1.0) {
        const double ms = k * step;
        char text[32];
        const double value = micro ? ms * 1e3 : ms;
        const double unitStep = micro ? step * 1e3 : step;
        const int decimals =
            unitStep >= 1.0 ? 0 : static_cast<int>(std::ceil(-std::log10(unitStep)));
        std::snprintf(text, sizeof(text), "%.*f %s", decimals, value, micro ? "\u00b5s" : "ms");
        ticks.push_back({ms, text});
    }
    return ticks;
}

} // namespace lmprof::ui
