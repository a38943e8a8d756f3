// Many runs as one band (runs_band.h).

#include "runs_band.h"

#include "lmprof/engine/stats.h"

#include <algorithm>
#include <cmath>

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

const RunsBand& RunsBandCache::of(const std::vector<RunView*>& runs, StepValues values) {
    std::vector<std::pair<std::string, size_t>> key;
    key.reserve(runs.size());
    for (const RunView* run : runs) {
        key.emplace_back(run->result.id, (run->series.*values).size());
    }
    if (key != m_key || values != m_values) {
        m_band = bandAcross(std::vector<const RunView*>(runs.begin(), runs.end()), values);
        m_key = std::move(key);
        m_values = values;
    }
    return m_band;
}

} // namespace lmprof::ui
