// The column table (columns.h): every per-run column once, in the CSV's order, and the
// tables' layout as a list of keys.

#include "lmprof/engine/columns.h"

#include "column_cells.h"
#include "enum_names.h"
#include "lmprof/engine/ddp.h"
#include "lmprof/engine/op_profile.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/verdicts.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <optional>
#include <stdexcept>

namespace lmprof::engine {

namespace {

using cells::column;
using cells::integer;
using cells::num;

bool runsPhase(const RunResult& run, Phase phase) {
    const auto phases = phasesOf(run.config.mode);
    return std::find(phases.begin(), phases.end(), phase) != phases.end();
}

// "22.11 ± 0.09", or why there is no figure: the phase is not part of the mode ("-"), or
// the run ended without measured steps ("OOM", "error", "cancelled").
std::string timeCell(const RunResult& run, const PhaseStats& stats, bool phaseRuns) {
    if (!phaseRuns) {
        return "-";
    }
    if (stats.n == 0) {
        return run.status == RunStatus::Ok
                   ? "-"
                   : (run.status == RunStatus::Oom ? "OOM" : std::string(toString(run.status)));
    }
    return formatMeanStd(stats);
}

RunColumn text(std::string key, std::string header, RunColumn::Getter value,
               RunColumn::Getter cell = {}) {
    return column(std::move(key), std::move(header), "", ColumnKind::Text, std::move(value),
                  std::move(cell));
}

RunColumn count(std::string key, std::string header, std::function<int64_t(const RunResult&)> f) {
    return column(std::move(key), std::move(header), "", ColumnKind::Integer,
                  [f](const RunResult& r, const RunSummary&) { return integer(f(r)); });
}

// A count of the engine's configuration, empty for a watched script's run.
RunColumn engineCount(std::string key, std::string header,
                      std::function<int64_t(const RunResult&)> f) {
    return column(std::move(key), std::move(header), "", ColumnKind::Integer,
                  [f](const RunResult& r, const RunSummary&) {
                      return r.source ? std::string() : integer(f(r));
                  });
}

RunColumn bytes(std::string key, std::string header, std::function<int64_t(const RunSummary&)> f,
                RunColumn::Getter cell = {}) {
    return column(
        std::move(key), std::move(header), "bytes", ColumnKind::Integer,
        [f](const RunResult&, const RunSummary& s) { return integer(f(s)); }, std::move(cell));
}

struct PhaseColumn {
    const char* key;       // "forward_ms"
    const char* header;    // "Fwd ms"
    const char* chartName; // "forward": "forward ms (mean)" in a chart's metric list
    PhaseStats RunSummary::*stats;
    std::optional<Phase> phase; // the phase the mode must run; none for the whole step
};
constexpr std::array kPhaseColumns{
    PhaseColumn{"forward_ms", "Fwd ms", "forward", &RunSummary::forwardMs, Phase::Forward},
    PhaseColumn{"backward_ms", "Bwd ms", "backward", &RunSummary::backwardMs, Phase::Backward},
    PhaseColumn{"optimizer_ms", "Opt ms", "optimizer", &RunSummary::optimizerMs, Phase::Optimizer},
    PhaseColumn{"total_ms", "Step ms", "step", &RunSummary::totalMs, std::nullopt},
};

// A phase's statistics for the CSV: mean ... cv (ms, or a ratio), then n.
void addPhaseStats(std::deque<RunColumn>& out, const PhaseColumn& p) {
    struct Stat {
        const char* name;
        double PhaseStats::*field;
    };
    constexpr std::array kStats{Stat{"mean", &PhaseStats::mean},     Stat{"std", &PhaseStats::std},
                                Stat{"median", &PhaseStats::median}, Stat{"min", &PhaseStats::min},
                                Stat{"max", &PhaseStats::max},       Stat{"p95", &PhaseStats::p95},
                                Stat{"cv", &PhaseStats::cv}};
    for (const Stat& st : kStats) {
        const std::string unit = std::string(st.name) == "cv" ? "" : "ms";
        out.push_back(column(std::string(p.key) + "_" + st.name, "", unit, ColumnKind::Real,
                             [p, st](const RunResult&, const RunSummary& s) {
                                 const PhaseStats& ps = s.*p.stats;
                                 return ps.n ? num(ps.*st.field) : std::string();
                             }));
        const std::string_view stat = st.name;
        if (stat == "mean" || (stat == "cv" && !p.phase)) {
            // The mean of every phase the mode runs, and the step time's spread, in percent.
            const double scale = stat == "cv" ? 100.0 : 1.0;
            out.back().number = [p, st, scale](const RunResult& r,
                                               const RunSummary& s) -> std::optional<double> {
                if (p.phase && !runsPhase(r, *p.phase)) {
                    return std::nullopt;
                }
                return scale * ((s.*p.stats).*st.field);
            };
            out.back().chartName = stat == "cv" ? std::string(p.chartName) + " time CV (%)"
                                                : std::string(p.chartName) + " ms (mean)";
        }
    }
    out.push_back(
        column(std::string(p.key) + "_n", "", "", ColumnKind::Integer,
               [p](const RunResult&, const RunSummary& s) { return integer((s.*p.stats).n); }));
}

// The plain fields a sweep can list (seed, threads), shown where the runs shown differ in
// them. The registry is built once, from the fields declared by then; each getter holds its
// field by value, since a test's extra field (config.h) may be gone before the registry.
void addSweepAxisColumns(std::deque<RunColumn>& out) {
    for (const ValueField& f : valueFields()) {
        if (f.sweepAxis) {
            std::string header = f.label;
            header[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(header[0])));
            out.push_back(
                column(f.key, header, "", ColumnKind::Integer,
                       [f](const RunResult& r, const RunSummary&) { return f.text(r.config); }));
            out.back().setting = RunColumn::Setting::WhereRunsDiffer;
        }
    }
}

// How the run ended, and what bounds its steps.
void addOutcomeColumns(std::deque<RunColumn>& out) {
    using R = const RunResult&;
    using S = const RunSummary&;
    out.push_back(text(
        "status", "Status", [](R r, S) { return std::string(toString(r.status)); },
        [](R r, S) { return statusText(r); }));
    out.push_back(text("failed_phase", "", [](R r, S) {
        return r.failedPhase ? std::string(toString(*r.failedPhase)) : std::string();
    }));
    out.push_back(text("error", "", [](R r, S) { return r.error.value_or(""); }));
    // The verdicts for machines (docs/VERDICTS.md); the tables print them under the runs.
    out.push_back(text("verdicts", "", [](R r, S) { return verdictsText(r.verdicts); }));
}

std::deque<RunColumn> buildColumns() {
    using R = const RunResult&;
    using S = const RunSummary&;
    std::deque<RunColumn> c;
    // The configuration and the outcome.
    c.push_back(text("id", "", [](R r, S) { return r.id; }));
    // A watched script's run (RunResult::source) has no model of the engine's: its model
    // column is its class, its dimensions, context and batch are empty.
    c.push_back(text(
        "model", "Model",
        [](R r, S) { return r.source ? std::string("watched") : r.config.model.preset; },
        [](R r, S) { return runModelLabel(r); }));
    c.back().setting = RunColumn::Setting::Always;
    c.push_back(engineCount("d_model", "", [](R r) { return r.config.model.dModel; }));
    c.push_back(engineCount("d_ff", "", [](R r) { return r.config.model.dFf; }));
    c.push_back(engineCount("num_layers", "", [](R r) { return r.config.model.numLayers; }));
    c.push_back(engineCount("num_heads", "", [](R r) { return r.config.model.numHeads; }));
    c.push_back(engineCount("vocab_size", "", [](R r) { return r.config.model.vocabSize; }));
    c.push_back(count("parameter_count", "", [](R r) { return r.parameterCount; }));
    c.push_back(
        engineCount("context_length", "Context", [](R r) { return r.config.contextLength; }));
    c.back().setting = RunColumn::Setting::Always;
    c.push_back(engineCount("batch_size", "Batch", [](R r) { return r.config.batchSize; }));
    c.back().setting = RunColumn::Setting::Always;
    c.push_back(text("precision", "Precision",
                     [](R r, S) { return std::string(toString(r.config.precision)); }));
    c.back().setting = RunColumn::Setting::Always;
    c.push_back(text("mode", "Mode", [](R r, S) { return std::string(toString(r.config.mode)); }));
    c.back().setting = RunColumn::Setting::Always;
    // The execution variants (ChoiceField, config.h), one column each.
    for (const ChoiceField& f : choiceFields()) {
        c.push_back(text(f.key, f.label, [&f](R r, S) { return f.get(r.config); }));
        c.back().differsFromDefault = [&f](R r) { return !f.isDefault(r.config); };
        c.back().setting = RunColumn::Setting::WhereRunsDiffer;
    }
    // The device that ran it (a run asked for "auto" ran on cuda or cpu).
    c.push_back(text("device", "Device", [](R r, S) {
        return r.resolvedDevice.empty() ? r.config.device : r.resolvedDevice;
    }));
    c.back().setting = RunColumn::Setting::WhereRunsDiffer;
    // How a data-parallel run ran ("2 × gloo, bucketed 25 MiB"; its times are rank 0's).
    c.push_back(text(
        "parallel", "Parallel",
        [](R r, S) { return r.config.ddp ? describe(*r.config.ddp) : std::string(); },
        [](R r, S) { return r.config.ddp ? describe(*r.config.ddp) : std::string("-"); }));
    c.back().setting = RunColumn::Setting::WhereRunsDiffer;
    c.back().differsFromDefault = [](R r) { return r.config.ddp.has_value(); };
    c.push_back(count("warmup_steps", "Warmup", [](R r) { return r.config.warmupSteps; }));
    c.back().setting = RunColumn::Setting::WhereRunsDiffer;
    c.push_back(count("measure_steps", "Steps", [](R r) { return r.config.measureSteps; }));
    c.back().setting = RunColumn::Setting::WhereRunsDiffer;
    addSweepAxisColumns(c);
    addOutcomeColumns(c);
    // Whether the run has an op profile (the window's runs table; the CSV leaves it out).
    c.push_back(text("op_profile", "Ops", [](R r, S) {
        return r.opProfile ? "step " + std::to_string(r.opProfile->firstStep) : std::string("-");
    }));
    c.back().inCsv = false;
    // Times: mean ± std for people, every statistic for machines.
    for (const PhaseColumn& p : kPhaseColumns) {
        c.push_back(text(p.key, p.header, [p](R r, S s) {
            return timeCell(r, s.*p.stats, !p.phase || runsPhase(r, *p.phase));
        }));
        c.back().unit = "ms";
        c.back().inCsv = false;
        addPhaseStats(c, p);
    }
    // The step time's spread and the noise mark (noiseRule(), stats.h): "12.3% noisy".
    c.push_back(text(
        "total_ms_noisy", "CV",
        [](R, S s) { return s.totalMs.n ? std::string(s.totalMs.noisy ? "true" : "false") : ""; },
        [](R, S s) {
            const PhaseStats& t = s.totalMs;
            return t.n ? formatFixed(100.0 * t.cv, 1) + "%" + (t.noisy ? " noisy" : "")
                       : std::string("-");
        }));
    c.back().warns = [](R, S s) { return s.totalMs.noisy; };
    c.back().explain = [](R, S s) {
        const PhaseStats& t = s.totalMs;
        return "step time: CV " + formatFixed(100.0 * t.cv, 1) + "% (std / mean), IQR / median " +
               formatFixed(t.median > 0.0 ? 100.0 * t.iqr / t.median : 0.0, 1) + "%\n" +
               noiseRule();
    };
    // Throughput and memory.
    c.push_back(column(
        "tokens_per_s", "Tokens/s", "tokens/s", ColumnKind::Real,
        [](R, S s) { return num(s.tokensPerS); },
        [](R, S s) { return s.tokensPerS > 0 ? formatFixed(s.tokensPerS, 0) : "-"; }));
    c.back().number = [](R, S s) { return std::optional(s.tokensPerS); };
    c.back().chartName = "tokens/s";
    c.push_back(
        column("tflops", "", "TFLOP/s", ColumnKind::Real, [](R, S s) { return num(s.tflops); }));
    // Where the GPU waits (docs/MEASUREMENT.md): the busy share, and MFU only beside it. The
    // tables show both only when a run has a busy share (a CUDA run).
    const auto measuredBusy = [](R r) { return busyShare(r.summary).has_value(); };
    const auto percent = [](std::optional<double> v) {
        return v ? formatFixed(100.0 * *v, 0) + "%" : std::string("-");
    };
    c.push_back(column(
        "mfu", "MFU", "", ColumnKind::Real,
        [](R, S s) { return s.mfu ? num(*s.mfu) : std::string(); },
        [percent](R, S s) { return percent(s.mfu); }));
    c.back().differsFromDefault = measuredBusy;
    c.back().number = [](R, S s) { return s.mfu ? std::optional(100.0 * *s.mfu) : std::nullopt; };
    c.back().chartName = "MFU (%)";
    c.push_back(column(
        "gpu_busy", "GPU busy", "", ColumnKind::Real,
        [](R, S s) { return s.gpuBusy ? num(*s.gpuBusy) : std::string(); },
        [percent](R, S s) {
            const auto bound = hostBound(s);
            return percent(busyShare(s)) + (bound && *bound ? " host-bound" : "");
        }));
    c.back().differsFromDefault = measuredBusy;
    c.back().number = [](R, S s) {
        const auto busy = busyShare(s);
        return busy ? std::optional(100.0 * *busy) : std::nullopt;
    };
    c.back().chartName = "GPU busy (%)";
    c.push_back(column("gpu_busy_nvml", "", "", ColumnKind::Real,
                       [](R, S s) { return s.gpuBusyNvml ? num(*s.gpuBusyNvml) : std::string(); }));
    c.push_back(text("host_bound", "", [](R, S s) {
        const auto bound = hostBound(s);
        return bound ? std::string(*bound ? "true" : "false") : std::string();
    }));
    c.push_back(column("graph_capture_ms", "", "ms", ColumnKind::Real,
                       [](R r, S) { return r.graph ? num(r.graph->captureMs) : std::string(); }));
    c.push_back(column("graph_pool_bytes", "", "bytes", ColumnKind::Integer, [](R r, S) {
        return r.graph ? integer(r.graph->poolBytes) : std::string();
    }));
    c.push_back(bytes(
        "peak_bytes", "Peak mem", [](S s) { return s.peakBytes.max(); },
        [](R, S s) {
            const int64_t peak = s.peakBytes.max();
            return peak > 0 ? formatBytes(peak) : "-";
        }));
    c.back().inCsv = false;
    c.back().number = [](R, S s) {
        return std::optional(static_cast<double>(s.peakBytes.max()) / (1024.0 * 1024.0));
    };
    c.back().chartName = "peak memory (MiB)";
    c.push_back(bytes("peak_forward_bytes", "", [](S s) { return s.peakBytes.forward; }));
    c.push_back(bytes("peak_backward_bytes", "", [](S s) { return s.peakBytes.backward; }));
    c.push_back(bytes("peak_optimizer_bytes", "", [](S s) { return s.peakBytes.optimizer; }));
    return c;
}

constexpr EnumNames<ColumnKind, 3> kColumnKindNames{{
    {ColumnKind::Text, "text"},
    {ColumnKind::Integer, "integer"},
    {ColumnKind::Real, "real"},
}};

} // namespace

std::string_view toString(ColumnKind kind) {
    return nameIn(kColumnKindNames, kind);
}

namespace {

// The tables' columns: the configuration (every setting that may tell runs apart), the
// figures, the outcome.
std::vector<std::string> defaultTableKeys() {
    std::vector<std::string> keys{"model", "context_length", "batch_size", "precision", "mode"};
    for (const ChoiceField& f : choiceFields()) {
        keys.push_back(f.key);
    }
    for (const char* k : {"warmup_steps", "measure_steps"}) {
        keys.emplace_back(k);
    }
    for (const ValueField& f : valueFields()) {
        if (f.sweepAxis) {
            keys.push_back(f.key);
        }
    }
    for (const char* k : {"parallel", "device"}) {
        keys.emplace_back(k);
    }
    for (const char* k : {"forward_ms", "backward_ms", "optimizer_ms", "total_ms", "total_ms_noisy",
                          "peak_bytes", "tokens_per_s", "gpu_busy", "mfu", "status"}) {
        keys.emplace_back(k);
    }
    return keys;
}

// The registry and its layouts, rebuilt when a column is added.
struct Registry {
    std::deque<RunColumn> columns = buildColumns();
    std::vector<std::string> tableKeys = defaultTableKeys();
    std::vector<std::string> chartKeys{
        "total_ms_mean", "forward_ms_mean", "backward_ms_mean", "optimizer_ms_mean",
        "tokens_per_s",  "peak_bytes",      "total_ms_cv",      "mfu",
        "gpu_busy"};
    std::vector<const RunColumn*> csv, tables, charts;
    Registry() { relayout(); }
    void relayout() {
        csv.clear();
        for (const auto& c : columns) {
            if (c.inCsv) {
                csv.push_back(&c);
            }
        }
        tables = layout(tableKeys);
        charts = layout(chartKeys);
    }
    std::vector<const RunColumn*> layout(const std::vector<std::string>& keys) const {
        std::vector<const RunColumn*> out;
        for (const auto& key : keys) {
            const auto it = std::find_if(columns.begin(), columns.end(),
                                         [&](const RunColumn& c) { return c.key == key; });
            if (it == columns.end()) {
                throw std::logic_error("a layout names no run column '" + key + "'");
            }
            out.push_back(&*it);
        }
        return out;
    }
};

Registry& registry() {
    static Registry r;
    return r;
}

} // namespace

const std::deque<RunColumn>& runColumns() {
    return registry().columns;
}

const RunColumn& runColumn(std::string_view key) {
    for (const auto& c : runColumns()) {
        if (c.key == key) {
            return c;
        }
    }
    throw std::out_of_range("no run column '" + std::string(key) + "'");
}

std::span<const RunColumn* const> csvLayout() {
    return registry().csv;
}

std::span<const RunColumn* const> reportLayout() {
    return registry().tables;
}

size_t firstFigure(std::span<const RunColumn* const> layout) {
    return static_cast<size_t>(std::find_if(layout.begin(), layout.end(),
                                            [](const RunColumn* c) { return c->unit == "ms"; }) -
                               layout.begin());
}

namespace {

std::vector<const RunResult*> pointersTo(std::span<const RunResult> runs) {
    std::vector<const RunResult*> out;
    out.reserve(runs.size());
    for (const auto& r : runs) {
        out.push_back(&r);
    }
    return out;
}

} // namespace

std::vector<const RunColumn*> settingColumns(std::span<const RunResult* const> runs) {
    std::vector<const RunColumn*> out;
    for (const RunColumn* c : reportLayout()) {
        if (c->setting == RunColumn::Setting::No) {
            continue;
        }
        const auto cellOf = [c](const RunResult* r) { return c->cellOf(*r, r->summary); };
        const bool shown = c->setting == RunColumn::Setting::Always ||
                           std::any_of(runs.begin(), runs.end(), [&](const RunResult* r) {
                               return cellOf(r) != cellOf(runs.front()) ||
                                      (c->differsFromDefault && c->differsFromDefault(*r));
                           });
        if (shown) {
            out.push_back(c);
        }
    }
    return out;
}

std::vector<const RunColumn*> settingColumns(std::span<const RunResult> runs) {
    return settingColumns(pointersTo(runs));
}

std::vector<const RunColumn*> csvLayout(std::span<const RunResult> runs) {
    const auto fixed = csvLayout();
    std::vector<const RunColumn*> out(fixed.begin(), fixed.end());
    const auto scalars = scalarColumns(pointersTo(runs), true);
    out.insert(out.end(), scalars.begin(), scalars.end());
    return out;
}

std::vector<const RunColumn*> reportLayout(std::span<const RunResult* const> runs) {
    std::vector<const RunColumn*> out = settingColumns(runs);
    for (const RunColumn* c : reportLayout()) {
        if (c->setting != RunColumn::Setting::No) {
            continue;
        }
        if (c->key == "status") {
            const auto scalars = scalarColumns(runs, false);
            out.insert(out.end(), scalars.begin(), scalars.end());
        }
        if (!c->differsFromDefault ||
            std::any_of(runs.begin(), runs.end(),
                        [&](const RunResult* r) { return c->differsFromDefault(*r); })) {
            out.push_back(c);
        }
    }
    return out;
}

std::vector<const RunColumn*> reportLayout(std::span<const RunResult> runs) {
    return reportLayout(pointersTo(runs));
}

std::span<const RunColumn* const> chartMetrics() {
    return registry().charts;
}

void addRunColumn(RunColumn column, bool inTables) {
    Registry& r = registry();
    if (std::any_of(r.columns.begin(), r.columns.end(),
                    [&](const RunColumn& c) { return c.key == column.key; })) {
        throw std::invalid_argument("run column '" + column.key + "' exists already");
    }
    if (inTables) {
        r.tableKeys.push_back(column.key);
    }
    if (column.number) {
        r.chartKeys.push_back(column.key);
    }
    r.columns.push_back(std::move(column));
    r.relayout();
}

} // namespace lmprof::engine
