// Many runs as one band per configuration (runs_band.h).

#include "runs_band.h"

#include "lmprof/engine/compare.h"
#include "lmprof/engine/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lmprof::ui {

RunsBand bandAcross(const std::vector<const RunView*>& runs, StepValues values) {
    RunsBand band;
    band.runs = runs.size();
    size_t steps = 0;
    for (const RunView* run : runs) {
        steps = std::max(steps, (run->series.*values).size());
    }
    std::vector<double> at;
    at.reserve(runs.size());
    for (size_t i = 0; i < steps; ++i) {
        at.clear();
        double step = static_cast<double>(i);
        for (const RunView* run : runs) {
            const std::vector<double>& v = run->series.*values;
            if (i < v.size() && std::isfinite(v[i])) {
                at.push_back(v[i]);
                step = i < run->series.index.size() ? run->series.index[i] : step;
            }
        }
        if (at.empty()) {
            continue;
        }
        std::sort(at.begin(), at.end());
        band.x.push_back(step);
        band.median.push_back(engine::quantileSorted(at, 0.5));
        band.low.push_back(engine::quantileSorted(at, 0.1));
        band.high.push_back(engine::quantileSorted(at, 0.9));
        band.least.push_back(at.front());
        band.most.push_back(at.back());
    }
    return band;
}

GroupedBands groupedBands(const std::vector<const RunView*>& runs, StepValues values) {
    // Each configuration's runs, in the order the first of them is selected.
    std::vector<std::string> keys;
    std::vector<std::vector<const RunView*>> members;
    for (const RunView* run : runs) {
        const std::string key = engine::pairKey(run->result) + " warmup " +
                                std::to_string(run->result.config.warmupSteps);
        const auto at = std::find(keys.begin(), keys.end(), key);
        if (at == keys.end()) {
            keys.push_back(key);
            members.push_back({run});
        } else {
            members[static_cast<size_t>(at - keys.begin())].push_back(run);
        }
    }
    GroupedBands out;
    out.runs = runs.size();
    out.configurations = members.size();
    // Past kBandGroups, the largest kBandGroups - 1 stay (the first selected among equals).
    std::vector<size_t> kept(members.size());
    std::iota(kept.begin(), kept.end(), size_t{0});
    std::vector<const RunView*> rest;
    size_t restConfigurations = 0;
    if (members.size() > kBandGroups) {
        std::stable_sort(kept.begin(), kept.end(),
                         [&](size_t a, size_t b) { return members[a].size() > members[b].size(); });
        for (auto it = kept.begin() + kBandGroups - 1; it != kept.end(); ++it) {
            rest.insert(rest.end(), members[*it].begin(), members[*it].end());
        }
        restConfigurations = kept.size() - (kBandGroups - 1);
        kept.resize(kBandGroups - 1);
        std::sort(kept.begin(), kept.end());
    }
    std::vector<const engine::RunResult*> firsts;
    for (size_t g : kept) {
        firsts.push_back(&members[g].front()->result);
    }
    const std::vector<std::string> names = distinguishingNames(firsts);
    for (size_t k = 0; k < kept.size(); ++k) {
        const auto& group = members[kept[k]];
        out.groups.push_back(
            {names[k], group.size(), 1, false, static_cast<int>(k), bandAcross(group, values)});
    }
    if (!rest.empty()) {
        out.groups.push_back({"other " + std::to_string(restConfigurations) + " configurations",
                              rest.size(), restConfigurations, true, 0, bandAcross(rest, values)});
    }
    return out;
}

const GroupedBands& RunsBandCache::of(const std::vector<RunView*>& runs, StepValues values) {
    std::vector<std::pair<std::string, size_t>> key;
    key.reserve(runs.size());
    for (const RunView* run : runs) {
        key.emplace_back(run->result.id, (run->series.*values).size());
    }
    if (key != m_key || values != m_values) {
        m_bands = groupedBands(std::vector<const RunView*>(runs.begin(), runs.end()), values);
        m_key = std::move(key);
        m_values = values;
    }
    return m_bands;
}

} // namespace lmprof::ui
