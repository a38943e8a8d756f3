// The summary views' data from the RunStore (summary_model.h).

#include "summary_model.h"

#include "lmprof/engine/compare.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
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
    for (const auto& [key, value] : q.settings) { // keys of heatmapFilters' columns
        if (runColumn(key).cellOf(v.result, v.result.summary) != value) {
            return false;
        }
    }
    return true;
}

// The run column an axis shows.
std::string_view axisColumn(HeatmapAxis axis) {
    switch (axis) {
    case HeatmapAxis::Model:
        return "model";
    case HeatmapAxis::Context:
        return "context_length";
    case HeatmapAxis::Batch:
        return "batch_size";
    }
    return "";
}

// A filter's values in the setting's own order: a variant's choices, numbers ascending,
// other text alphabetically.
void orderValues(const RunColumn& column, std::vector<std::string>& values) {
    if (const ChoiceField* f = choiceField(column.key)) {
        std::vector<std::string> ordered;
        for (const auto& name : f->values) {
            if (std::find(values.begin(), values.end(), name) != values.end()) {
                ordered.push_back(name);
            }
        }
        values = std::move(ordered);
    } else if (column.kind == ColumnKind::Integer) {
        // A watched run has no context or batch: its empty cell goes after the numbers.
        const auto number = [](const std::string& cell) -> std::optional<long long> {
            long long v = 0;
            const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
            return ec == std::errc() && end == cell.data() + cell.size() && !cell.empty()
                       ? std::optional(v)
                       : std::nullopt;
        };
        std::sort(values.begin(), values.end(), [&](const std::string& a, const std::string& b) {
            const auto na = number(a), nb = number(b);
            if (na && nb) {
                return *na < *nb;
            }
            return na.has_value() != nb.has_value() ? na.has_value() : a < b;
        });
    } else {
        std::sort(values.begin(), values.end());
    }
}

// The values these runs have in a column, each once, in the setting's own order.
std::vector<std::string> distinctCells(const RunColumn& column,
                                       const std::vector<const RunResult*>& runs) {
    std::vector<std::string> values;
    for (const RunResult* r : runs) {
        const std::string cell = column.cellOf(*r, r->summary);
        if (std::find(values.begin(), values.end(), cell) == values.end()) {
            values.push_back(cell);
        }
    }
    orderValues(column, values);
    return values;
}

// "#7 tiny-ctx128-fp32-train-3 · Warmup 5", and when runs share the cell a second line
// naming the filters that would tell them apart.
std::string aboutCell(const std::vector<RunView>& runs, const std::vector<int>& inCell,
                      const std::vector<HeatmapFilter>& filters, const HeatmapQuery& q) {
    const RunView& v = runs[static_cast<size_t>(inCell.back())];
    std::string out = "#" + std::to_string(inCell.back() + 1) + " " + v.result.id;
    std::vector<const RunResult*> sharing;
    for (int i : inCell) {
        sharing.push_back(&runs[static_cast<size_t>(i)].result);
    }
    std::string differ;
    for (const HeatmapFilter& f : filters) {
        out += " \u00B7 " + f.column->header + " " + f.column->cellOf(v.result, v.result.summary);
        if (q.settings.count(f.column->key)) {
            continue;
        }
        const std::vector<std::string> seen = distinctCells(*f.column, sharing);
        if (seen.size() > 1) {
            std::string list;
            for (const auto& value : seen) {
                list += (list.empty() ? "" : ", ") + value;
            }
            differ += (differ.empty() ? "" : "; ") + f.column->header + " " + list;
        }
    }
    if (inCell.size() > 1) {
        out += "\n" + std::to_string(inCell.size()) + " runs share this cell" +
               (differ.empty() ? std::string(" (reruns of one configuration)")
                               : " (" + differ + "), pick one with the filters above") +
               ": the newest shows";
    }
    return out;
}

} // namespace

std::vector<std::string> cellLabel(double value, bool noisy, int sharing, float width, int lines,
                                   const std::function<float(const std::string&)>& textWidth) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), value >= 1000 ? "%.0f" : "%.2f", value);
    const std::string full = buf;
    // Three significant digits: "78.5", and from 1000 on in thousands, "123k".
    if (value >= 1000) {
        std::snprintf(buf, sizeof(buf), "%.3gk", value / 1000);
    } else {
        std::snprintf(buf, sizeof(buf), "%.3g", value);
    }
    const std::string brief = buf;
    std::string marks = noisy ? "~" : "";
    if (sharing > 1) {
        marks += (marks.empty() ? "" : " ") + std::string("\u00D7") + std::to_string(sharing);
    }
    const auto fits = [&](const std::string& text) { return textWidth(text) <= width; };
    const std::vector<std::vector<std::string>> choices{
        {marks.empty() ? full : full + " " + marks},
        {full, marks},
        {full},
        {brief},
    };
    for (const auto& choice : choices) {
        if (static_cast<int>(choice.size()) <= lines &&
            std::all_of(choice.begin(), choice.end(), fits) && !choice.back().empty()) {
            return choice;
        }
    }
    return {};
}

std::vector<HeatmapFilter> heatmapFilters(const RunStore& store, const HeatmapQuery& query) {
    HeatmapQuery all = query;
    all.settings.clear();
    std::vector<const RunResult*> runs;
    for (const auto& v : store.runs()) {
        if (inQuery(v, all)) {
            runs.push_back(&v.result);
        }
    }
    std::vector<HeatmapFilter> out;
    for (const RunColumn* c : settingColumns(runs)) {
        if (c->key == axisColumn(query.rows) || c->key == axisColumn(query.columns) ||
            c->key == "precision" || c->key == "mode") {
            continue;
        }
        HeatmapFilter f{c, distinctCells(*c, runs)};
        if (f.values.size() > 1) {
            out.push_back(std::move(f));
        }
    }
    return out;
}

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
    const size_t cells = g.rows.size() * g.columns.size();
    g.values.assign(cells, kNaN);
    g.marks.assign(cells, std::string());
    g.shown.assign(cells, -1);
    g.sharing.assign(cells, 0);
    g.noisy.assign(cells, 0);
    g.about.assign(cells, std::string());
    std::vector<std::vector<int>> inCell(cells);
    for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
        const RunView& v = runs[static_cast<size_t>(i)];
        if (inQuery(v, q)) {
            inCell[rows[axisKey(v.result.config, q.rows)] * g.columns.size() +
                   columns[axisKey(v.result.config, q.columns)]]
                .push_back(i);
        }
    }
    const std::vector<HeatmapFilter> filters = heatmapFilters(store, q);
    for (size_t cell = 0; cell < cells; ++cell) {
        if (inCell[cell].empty()) {
            continue;
        }
        // The newest run of a cell shows, so a rerun that succeeds clears an old OOM mark.
        const RunResult& r = runs[static_cast<size_t>(inCell[cell].back())].result;
        if (const auto value = metricValue(r, metric)) {
            g.values[cell] = *value;
        } else {
            g.marks[cell] = r.status == RunStatus::Ok ? "" : toString(r.status);
        }
        g.shown[cell] = inCell[cell].back();
        g.sharing[cell] = static_cast<int>(inCell[cell].size());
        g.noisy[cell] = r.summary.totalMs.noisy ? 1 : 0;
        g.about[cell] = aboutCell(runs, inCell[cell], filters, q);
    }
    return g;
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
            // The run's label, and the plain fields of the key it leaves at another value
            // than the default (groups of one sweep over threads differ only there).
            it->second.label = runLabel(v.result.config);
            for (const ValueField& f : valueFields()) {
                if (f.inComparisonKey && f.text(v.result.config) != f.text(RunConfig{})) {
                    it->second.label += " " + f.label + " " + f.text(v.result.config);
                }
            }
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
                                      const std::vector<RunResult>& fileB,
                                      const std::string& nameB) {
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
    const std::vector<std::string> names =
        runs.empty() ? std::vector<std::string>() : distinguishingNames(runs);
    for (size_t i = 0; i < out.size(); ++i) {
        const RunResult& run = *out[i].run;
        const size_t measured = engine::measuredStepTimes(run.steps).size();
        std::string label = out[i].label + " \u00b7 " + run.id + " \u00b7 ";
        if (run.source) {
            label += runModelLabel(run);
        } else {
            // A name that is only the id says nothing more: the model then.
            label +=
                names[i].empty() || names[i].rfind(run.id, 0) == 0 ? runModelLabel(run) : names[i];
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
    const auto it =
        std::find_if(runs.begin(), runs.end(), [&](const PickableRun& p) { return p.key == key; });
    return it == runs.end() ? nullptr : it->run;
}

std::vector<std::string> numericsRow(const RunResult& r, const RunResult* fp32) {
    std::optional<double> last;
    int skipped = 0;
    std::optional<double> lo, hi; // the loss scale's range (fp16)
    for (const auto& s : r.steps) {
        if (s.loss) {
            last = s.loss;
        }
        skipped += s.skippedUpdate ? 1 : 0;
        if (s.lossScale && std::isfinite(*s.lossScale)) {
            lo = std::min(lo.value_or(*s.lossScale), *s.lossScale);
            hi = std::max(hi.value_or(*s.lossScale), *s.lossScale);
        }
    }
    std::string delta = "-";
    if (fp32 && fp32 != &r) {
        const auto d = maxLossDifference(*fp32, r);
        delta = d ? (std::isfinite(*d) ? formatFixed(*d, 5) : "not finite") : "no common step";
    } else if (fp32 == &r) {
        delta = "(reference)";
    }
    char scaleText[64] = "-";
    if (lo) {
        std::snprintf(scaleText, sizeof(scaleText), *lo == *hi ? "%g" : "%g .. %g", *lo, *hi);
    }
    return {r.id,
            std::string(toString(r.config.precision)),
            std::to_string(r.steps.size()),
            last ? formatFixed(*last, 5) : "-",
            delta,
            r.config.precision == Precision::Fp16 ? std::to_string(skipped) : "-",
            scaleText};
}

} // namespace lmprof::ui
