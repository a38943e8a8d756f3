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

// A getter's arguments: the run, and the summary of its measured steps.
using Run = const RunResult&;
using Summary = const RunSummary&;

// Adds a column and returns it, for the settings that follow.
RunColumn& add(std::deque<RunColumn>& out, RunColumn made) {
    out.push_back(std::move(made));
    return out.back();
}

// Adds a column of the run's configuration, which tables show always or where their runs
// differ in it (RunColumn::Setting).
constexpr auto kAlways = RunColumn::Setting::Always;
constexpr auto kWhereRunsDiffer = RunColumn::Setting::WhereRunsDiffer;
RunColumn& addSetting(std::deque<RunColumn>& out, RunColumn::Setting shown, RunColumn made) {
    made.setting = shown;
    return add(out, std::move(made));
}

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
    out.push_back(text(
        "status", "Status", [](Run r, Summary) { return std::string(toString(r.status)); },
        [](Run r, Summary) { return statusText(r); }));
    out.push_back(text("failed_phase", "", [](Run r, Summary) {
        return r.failedPhase ? std::string(toString(*r.failedPhase)) : std::string();
    }));
    out.push_back(text("error", "", [](Run r, Summary) { return r.error.value_or(""); }));
    // The verdicts for machines (docs/VERDICTS.md); the tables print them under the runs.
    out.push_back(text("verdicts", "", [](Run r, Summary) { return verdictsText(r.verdicts); }));
}

// The engine's model and batch. A watched script's run (RunResult::source) has no model of
// the engine's: its model column is its class, its dimensions, context and batch are empty.
void addModelColumns(std::deque<RunColumn>& out) {
    out.push_back(text("id", "", [](Run r, Summary) { return r.id; }));
    addSetting(out, kAlways,
               text(
                   "model", "Model",
                   [](Run r, Summary) {
                       return r.source ? std::string("watched") : r.config.model.preset;
                   },
                   [](Run r, Summary) { return runModelLabel(r); }));
    out.push_back(engineCount("d_model", "", [](Run r) { return r.config.model.dModel; }));
    out.push_back(engineCount("d_ff", "", [](Run r) { return r.config.model.dFf; }));
    out.push_back(engineCount("num_layers", "", [](Run r) { return r.config.model.numLayers; }));
    out.push_back(engineCount("num_heads", "", [](Run r) { return r.config.model.numHeads; }));
    out.push_back(engineCount("vocab_size", "", [](Run r) { return r.config.model.vocabSize; }));
    out.push_back(count("parameter_count", "", [](Run r) { return r.parameterCount; }));
    addSetting(out, kAlways, engineCount("context_length", "Context", [](Run r) {
                   return r.config.contextLength;
               }));
    addSetting(out, kAlways,
               engineCount("batch_size", "Batch", [](Run r) { return r.config.batchSize; }));
}

// How the run ran: precision and mode, the execution variants, the device, data-parallel,
// the warmup and measured steps.
void addExecutionColumns(std::deque<RunColumn>& out) {
    addSetting(out, kAlways, text("precision", "Precision", [](Run r, Summary) {
                   return std::string(toString(r.config.precision));
               }));
    addSetting(out, kAlways, text("mode", "Mode", [](Run r, Summary) {
                   return std::string(toString(r.config.mode));
               }));
    // The execution variants (ChoiceField, config.h), one column each.
    for (const ChoiceField& f : choiceFields()) {
        addSetting(out, kWhereRunsDiffer,
                   text(f.key, f.label, [&f](Run r, Summary) { return f.get(r.config); }))
            .differsFromDefault = [&f](Run r) { return !f.isDefault(r.config); };
    }
    // The device that ran it (a run asked for "auto" ran on cuda or cpu).
    addSetting(out, kWhereRunsDiffer, text("device", "Device", [](Run r, Summary) {
                   return r.resolvedDevice.empty() ? r.config.device : r.resolvedDevice;
               }));
    // How a data-parallel run ran ("2 × gloo, bucketed 25 MiB"; its times are rank 0's).
    const auto parallel = [](Run r, std::string none) {
        return r.config.ddp ? describe(*r.config.ddp) : none;
    };
    addSetting(out, kWhereRunsDiffer,
               text(
                   "parallel", "Parallel", [parallel](Run r, Summary) { return parallel(r, ""); },
                   [parallel](Run r, Summary) { return parallel(r, "-"); }))
        .differsFromDefault = [](Run r) { return r.config.ddp.has_value(); };
    addSetting(out, kWhereRunsDiffer,
               count("warmup_steps", "Warmup", [](Run r) { return r.config.warmupSteps; }));
    addSetting(out, kWhereRunsDiffer,
               count("measure_steps", "Steps", [](Run r) { return r.config.measureSteps; }));
}

// The phases' times (mean ± std for people, every statistic for machines), after whether
// the run has an op profile; then the step time's spread and the noise mark
// (noiseRule(), stats.h): "12.3% noisy".
void addTimeColumns(std::deque<RunColumn>& out) {
    // The window's runs table says which step has an op profile; the CSV leaves it out.
    add(out, text("op_profile", "Ops",
                  [](Run r, Summary) {
                      return r.opProfile ? "step " + std::to_string(r.opProfile->firstStep)
                                         : std::string("-");
                  }))
        .inCsv = false;
    for (const PhaseColumn& p : kPhaseColumns) {
        RunColumn& shown =
            add(out, text(p.key, p.header, [p](Run r, Summary s) {
                    return timeCell(r, s.*p.stats, !p.phase || runsPhase(r, *p.phase));
                }));
        shown.unit = "ms";
        shown.inCsv = false;
        addPhaseStats(out, p);
    }
    RunColumn& noise =
        add(out, text(
                     "total_ms_noisy", "CV",
                     [](Run, Summary s) {
                         return s.totalMs.n ? std::string(s.totalMs.noisy ? "true" : "false") : "";
                     },
                     [](Run, Summary s) {
                         const PhaseStats& t = s.totalMs;
                         return t.n ? formatFixed(100.0 * t.cv, 1) + "%" + (t.noisy ? " noisy" : "")
                                    : std::string("-");
                     }));
    noise.warns = [](Run, Summary s) { return s.totalMs.noisy; };
    noise.explain = [](Run, Summary s) {
        const PhaseStats& t = s.totalMs;
        return "step time: CV " + formatFixed(100.0 * t.cv, 1) + "% (std / mean), IQR / median " +
               formatFixed(t.median > 0.0 ? 100.0 * t.iqr / t.median : 0.0, 1) + "%\n" +
               noiseRule();
    };
}

// Throughput: tokens and FLOPs per second.
void addThroughputColumns(std::deque<RunColumn>& out) {
    RunColumn& tokens = add(
        out,
        column(
            "tokens_per_s", "Tokens/s", "tokens/s", ColumnKind::Real,
            [](Run, Summary s) { return num(s.tokensPerS); },
            [](Run, Summary s) { return s.tokensPerS > 0 ? formatFixed(s.tokensPerS, 0) : "-"; }));
    tokens.number = [](Run, Summary s) { return std::optional(s.tokensPerS); };
    tokens.chartName = "tokens/s";
    out.push_back(column("tflops", "", "TFLOP/s", ColumnKind::Real,
                         [](Run, Summary s) { return num(s.tflops); }));
}

// Where the GPU waits (docs/MEASUREMENT.md): the busy share, and MFU only beside it. The
// tables show both only when a run has a busy share (a CUDA run). Then a CUDA graph's
// capture.
void addGpuColumns(std::deque<RunColumn>& out) {
    const auto measuredBusy = [](Run r) { return busyShare(r.summary).has_value(); };
    const auto percent = [](std::optional<double> v) {
        return v ? formatFixed(100.0 * *v, 0) + "%" : std::string("-");
    };
    RunColumn& mfu =
        add(out, column(
                     "mfu", "MFU", "", ColumnKind::Real,
                     [](Run, Summary s) { return s.mfu ? num(*s.mfu) : std::string(); },
                     [percent](Run, Summary s) { return percent(s.mfu); }));
    mfu.differsFromDefault = measuredBusy;
    mfu.number = [](Run, Summary s) {
        return s.mfu ? std::optional(100.0 * *s.mfu) : std::nullopt;
    };
    mfu.chartName = "MFU (%)";
    RunColumn& busy =
        add(out, column(
                     "gpu_busy", "GPU busy", "", ColumnKind::Real,
                     [](Run, Summary s) { return s.gpuBusy ? num(*s.gpuBusy) : std::string(); },
                     [percent](Run, Summary s) {
                         const auto bound = hostBound(s);
                         return percent(busyShare(s)) + (bound && *bound ? " host-bound" : "");
                     }));
    busy.differsFromDefault = measuredBusy;
    busy.number = [](Run, Summary s) {
        const auto share = busyShare(s);
        return share ? std::optional(100.0 * *share) : std::nullopt;
    };
    busy.chartName = "GPU busy (%)";
    out.push_back(column("gpu_busy_nvml", "", "", ColumnKind::Real, [](Run, Summary s) {
        return s.gpuBusyNvml ? num(*s.gpuBusyNvml) : std::string();
    }));
    out.push_back(text("host_bound", "", [](Run, Summary s) {
        const auto bound = hostBound(s);
        return bound ? std::string(*bound ? "true" : "false") : std::string();
    }));
    out.push_back(column("graph_capture_ms", "", "ms", ColumnKind::Real, [](Run r, Summary) {
        return r.graph ? num(r.graph->captureMs) : std::string();
    }));
    out.push_back(column("graph_pool_bytes", "", "bytes", ColumnKind::Integer, [](Run r, Summary) {
        return r.graph ? integer(r.graph->poolBytes) : std::string();
    }));
}

// Memory: the largest phase peak for people and charts, each phase's for machines.
void addMemoryColumns(std::deque<RunColumn>& out) {
    RunColumn& peak =
        add(out, bytes(
                     "peak_bytes", "Peak mem", [](Summary s) { return s.peakBytes.max(); },
                     [](Run, Summary s) {
                         const int64_t p = s.peakBytes.max();
                         return p > 0 ? formatBytes(p) : "-";
                     }));
    peak.inCsv = false;
    peak.number = [](Run, Summary s) {
        return std::optional(static_cast<double>(s.peakBytes.max()) / (1024.0 * 1024.0));
    };
    peak.chartName = "peak memory (MiB)";
    out.push_back(bytes("peak_forward_bytes", "", [](Summary s) { return s.peakBytes.forward; }));
    out.push_back(bytes("peak_backward_bytes", "", [](Summary s) { return s.peakBytes.backward; }));
    out.push_back(
        bytes("peak_optimizer_bytes", "", [](Summary s) { return s.peakBytes.optimizer; }));
}

// Every column, in the CSV's order: what was run, how it ended, what it measured.
std::deque<RunColumn> buildColumns() {
    std::deque<RunColumn> columns;
    addModelColumns(columns);
    addExecutionColumns(columns);
    addSweepAxisColumns(columns);
    addOutcomeColumns(columns);
    addTimeColumns(columns);
    addThroughputColumns(columns);
    addGpuColumns(columns);
    addMemoryColumns(columns);
    return columns;
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
