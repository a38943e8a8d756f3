// The summary views' data from the RunStore (summary_model.h).

#include "summary_model.h"

#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The configuration's identity in the summaries: the engine's comparison key plus the
// warmup count (the warmup study varies it; everything else treats it as a dimension).
std::string rowKey(const RunConfig& c) {
    return configKey(c) + " W" + std::to_string(c.warmupSteps);
}

auto sortKey(const RunConfig& c) {
    return std::make_tuple(static_cast<int>(c.precision), static_cast<int>(c.mode), c.batchSize,
                           parameterCount(c.model), c.contextLength, c.warmupSteps);
}

} // namespace

std::vector<const RunResult*> resultsOf(const std::vector<RunView>& runs) {
    std::vector<const RunResult*> out;
    out.reserve(runs.size());
    for (const auto& v : runs) {
        out.push_back(&v.result);
    }
    return out;
}

MatrixColumns matrixColumns(std::span<const RunResult* const> runs) {
    // The figures start with the first time column (after the configuration's columns).
    MatrixColumns out;
    for (const RunColumn* c : reportLayout(runs)) {
        if (c->key == "status") {
            continue;
        }
        out.columns.push_back(c);
        if (c->key == "mode") {
            out.columns.push_back(&runColumn("warmup_steps"));
        }
    }
    out.firstFigure = firstFigure(out.columns);
    return out;
}

std::vector<int> matrixRows(const RunStore& store) {
    const auto& runs = store.runs();
    std::map<std::string, int> newest;
    for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
        if (runs[i].started || runs[i].finished) {
            newest[rowKey(runs[i].result.config)] = i; // later runs replace earlier ones
        }
    }
    std::vector<int> rows;
    for (const auto& [key, i] : newest) {
        rows.push_back(i);
    }
    std::stable_sort(rows.begin(), rows.end(), [&](int a, int b) {
        return sortKey(runs[a].result.config) < sortKey(runs[b].result.config);
    });
    return rows;
}

std::optional<double> metricValue(const RunResult& r, const RunColumn& metric) {
    if (r.status != RunStatus::Ok || r.summary.totalMs.n == 0 || !metric.number) {
        return std::nullopt;
    }
    return metric.number(r, r.summary);
}

std::string_view toString(HeatmapAxis axis) {
    switch (axis) {
    case HeatmapAxis::Model:
        return "model";
    case HeatmapAxis::Context:
        return "context length";
    case HeatmapAxis::Batch:
        return "batch size";
    }
    return "";
}

namespace {

// Where a run lies on an axis: a sort key (parameters for models) and its label.
std::pair<int64_t, std::string> axisKey(const RunConfig& c, HeatmapAxis axis) {
    switch (axis) {
    case HeatmapAxis::Model:
        return {parameterCount(c.model), modelLabel(c.model)};
    case HeatmapAxis::Context:
        return {c.contextLength, std::to_string(c.contextLength)};
    case HeatmapAxis::Batch:
        return {c.batchSize, std::to_string(c.batchSize)};
    }
    return {};
}

bool inQuery(const RunView& v, const HeatmapQuery& q) {
    const RunConfig& c = v.result.config;
    if (!v.finished || c.precision != q.precision || c.mode != q.mode) {
        return false;
    }
    for (const auto& [key, value] : q.variants) {
        const ChoiceField* f = choiceField(key);
        if (f && f->get(c) != value) {
            return false;
        }
    }
    return true;
}

} // namespace

HeatmapGrid heatmapGrid(const RunStore& store, const RunColumn& metric, const HeatmapQuery& q) {
    HeatmapGrid g;
    std::map<std::pair<int64_t, std::string>, size_t> rows, columns;
    const auto& runs = store.runs();
    for (const auto& v : runs) {
        if (inQuery(v, q)) {
            rows[axisKey(v.result.config, q.rows)] = 0;
            columns[axisKey(v.result.config, q.columns)] = 0;
        }
    }
    for (auto* axis : {&rows, &columns}) {
        auto& labels = axis == &rows ? g.rows : g.columns;
        for (auto& [key, index] : *axis) {
            index = labels.size();
            labels.push_back(key.second);
        }
    }
    g.values.assign(g.rows.size() * g.columns.size(), kNaN);
    g.marks.assign(g.values.size(), std::string());
    for (const auto& v : runs) {
        if (!inQuery(v, q)) {
            continue;
        }
        const size_t cell = rows[axisKey(v.result.config, q.rows)] * g.columns.size() +
                            columns[axisKey(v.result.config, q.columns)];
        // The newest run of a cell wins, so a rerun that succeeds clears an old OOM mark.
        if (const auto value = metricValue(v.result, metric)) {
            g.values[cell] = *value;
            g.marks[cell].clear();
        } else {
            g.values[cell] = kNaN;
            g.marks[cell] = v.result.status == RunStatus::Ok ? "" : toString(v.result.status);
        }
    }
    return g;
}

std::vector<std::pair<const ChoiceField*, std::vector<std::string>>>
variantsInUse(const RunStore& store, Precision precision, Mode mode) {
    std::vector<std::pair<const ChoiceField*, std::vector<std::string>>> out;
    HeatmapQuery all;
    all.precision = precision;
    all.mode = mode;
    for (const ChoiceField& f : choiceFields()) {
        std::set<std::string> seen;
        for (const auto& v : store.runs()) {
            if (inQuery(v, all)) {
                seen.insert(f.get(v.result.config));
            }
        }
        if (seen.size() > 1) {
            std::vector<std::string> values;
            for (const auto& name : f.values) { // in the field's order
                if (seen.count(name)) {
                    values.push_back(name);
                }
            }
            out.emplace_back(&f, std::move(values));
        }
    }
    return out;
}

std::vector<PrecisionCell> precisionComparison(const RunStore& store) {
    std::vector<PrecisionCell> cells;
    std::set<int> warmups;
    for (const auto& v : store.runs()) {
        warmups.insert(v.result.config.warmupSteps);
    }
    for (Precision p : kPrecisions) {
        if (p == Precision::Fp32) {
            continue; // the baseline every other precision is compared with
        }
        for (int w : warmups) {
            // compareRuns matches on the full config key; the other precision's runs are
            // relabelled fp32 so that they pair with the fp32 run of the same cell.
            std::vector<RunResult> fp32, other;
            for (const auto& v : store.runs()) {
                const RunConfig& c = v.result.config;
                if (!v.finished || v.result.status != RunStatus::Ok || c.warmupSteps != w) {
                    continue;
                }
                if (c.precision == Precision::Fp32) {
                    fp32.push_back(v.result);
                } else if (c.precision == p) {
                    other.push_back(v.result);
                    other.back().config.precision = Precision::Fp32;
                }
            }
            if (fp32.empty() || other.empty()) {
                continue;
            }
            const Comparison cmp = compareRuns(fp32, other);
            for (const auto& m : cmp.matched) {
                PrecisionCell cell;
                cell.fp32 = m.a;
                cell.other = m.b;
                cell.other.config.precision = p;
                const RatioInterval& r = m.stepRatio; // other / fp32
                cell.speedup = r.ratio > 0 ? 1.0 / r.ratio : 0.0;
                cell.low = r.high > 0 ? 1.0 / r.high : 0.0;
                cell.high = r.low > 0 ? 1.0 / r.low : std::numeric_limits<double>::infinity();
                cell.welch = m.welch;
                cell.verdict = m.verdict;
                cells.push_back(std::move(cell));
            }
        }
    }
    std::stable_sort(cells.begin(), cells.end(),
                     [](const PrecisionCell& a, const PrecisionCell& b) {
                         return sortKey(a.fp32.config) < sortKey(b.fp32.config);
                     });
    return cells;
}

std::vector<WarmupGroup> warmupGroups(const RunStore& store) {
    std::map<std::string, WarmupGroup> groups;
    std::vector<std::string> order;
    const auto& runs = store.runs();
    for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
        const RunView& v = runs[i];
        if (!v.started && !v.finished) {
            continue;
        }
        const std::string key = configKey(v.result.config);
        auto [it, inserted] = groups.try_emplace(key);
        if (inserted) {
            it->second.label = runLabel(v.result.config);
            order.push_back(key);
        }
        it->second.runs.push_back(i);
    }
    std::vector<WarmupGroup> out;
    for (const auto& key : order) {
        WarmupGroup g = std::move(groups[key]);
        std::stable_sort(g.runs.begin(), g.runs.end(), [&](int a, int b) {
            return runs[a].result.config.warmupSteps < runs[b].result.config.warmupSteps;
        });
        out.push_back(std::move(g));
    }
    return out;
}

std::vector<LossGroup> lossGroups(const RunStore& store) {
    std::map<std::string, LossGroup> groups;
    std::vector<std::string> order;
    const auto& runs = store.runs();
    for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
        const RunResult& r = runs[i].result;
        const bool hasLoss =
            std::any_of(r.steps.begin(), r.steps.end(), [](const auto& s) { return s.loss; });
        if (!hasLoss) {
            continue;
        }
        const std::string key = numericsKey(r);
        if (groups.try_emplace(key).second) {
            order.push_back(key);
        }
        groups[key].runs.push_back(i);
    }
    std::vector<LossGroup> out;
    for (const auto& key : order) {
        LossGroup g = std::move(groups[key]);
        std::stable_sort(g.runs.begin(), g.runs.end(), [&](int a, int b) {
            return runs[a].result.config.precision < runs[b].result.config.precision;
        });
        const RunResult& first = runs[g.runs.front()].result;
        const RunConfig& c = first.config;
        g.label = modelLabel(c.model) + " ctx " + std::to_string(c.contextLength) + " batch " +
                  std::to_string(c.batchSize) + " " + std::string(toString(c.mode)) + ", " +
                  (first.resolvedDevice.empty() ? c.device : first.resolvedDevice) + ":";
        std::set<Precision> seen;
        for (int i : g.runs) {
            if (seen.insert(runs[i].result.config.precision).second) {
                g.label += " " + std::string(toString(runs[i].result.config.precision));
            }
        }
        out.push_back(std::move(g));
    }
    // Groups that compare precisions against fp32 first.
    std::stable_partition(out.begin(), out.end(), [&](const LossGroup& g) {
        const auto& first = runs[g.runs.front()].result.config.precision;
        const auto& last = runs[g.runs.back()].result.config.precision;
        return first == Precision::Fp32 && last != Precision::Fp32;
    });
    return out;
}

std::vector<PickableRun> pickableRuns(const std::vector<RunView>& session,
                                      const std::vector<RunResult>& fileA, const std::string& nameA,
                                      const std::vector<RunResult>& fileB, const std::string& nameB) {
    std::vector<PickableRun> out;
    const auto add = [&out](const std::string& origin, size_t place, const RunResult& run) {
        out.push_back({origin + ":" + std::to_string(place) + ":" + run.id, origin, &run});
    };
    for (size_t i = 0; i < session.size(); ++i) {
        if (session[i].finished) {
            add("session", i, session[i].result);
        }
    }
    const auto fileName = [](const std::string& path) {
        return std::filesystem::path(path).filename().string();
    };
    for (size_t i = 0; i < fileA.size(); ++i) {
        add("A " + fileName(nameA), i, fileA[i]);
    }
    for (size_t i = 0; i < fileB.size(); ++i) {
        add("B " + fileName(nameB), i, fileB[i]);
    }
    // Ids repeat (two sessions' "tiny-ctx64-fp32-train-1"): the label adds what tells the
    // runs apart (batch, warmup, variants; legends name runs the same way).
    std::vector<const RunResult*> runs;
    for (const PickableRun& p : out) {
        runs.push_back(p.run);
    }
    const std::vector<std::string> names = runs.empty() ? std::vector<std::string>()
                                                        : distinguishingNames(runs);
    for (size_t i = 0; i < out.size(); ++i) {
        const RunResult& run = *out[i].run;
        const size_t measured = engine::measuredStepTimes(run.steps).size();
        std::string label = out[i].label + " \u00b7 " + run.id + " \u00b7 ";
        if (run.source) {
            label += runModelLabel(run);
        } else {
            // A name that is only the id says nothing more: the model then.
            label += names[i].empty() || names[i].rfind(run.id, 0) == 0 ? runModelLabel(run)
                                                                        : names[i];
        }
        label += ", " + std::to_string(measured) + " measured step" + (measured == 1 ? "" : "s");
        if (run.status != RunStatus::Ok) {
            label += " (" + statusText(run) + ")";
        }
        out[i].label = std::move(label);
    }
    return out;
}

const RunResult* pickedRun(const std::vector<PickableRun>& runs, std::string_view key) {
    const auto it = std::find_if(runs.begin(), runs.end(),
                                 [&](const PickableRun& p) { return p.key == key; });
    return it == runs.end() ? nullptr : it->run;
}

} // namespace lmprof::ui
