// The per-run columns of lmprof's reports, each declared once (engine/src/report/
// columns.cpp): a machine key and unit, a header for people, how a run gives its value and
// its cell, and for a metric the window can plot, its number and the name charts give it.
// The CSV writer, the grid and Markdown tables, `lmprof-cli columns`, the CSV test, the
// window's Runs table and its Heatmap all read them; layouts (lists of keys) give the order
// of the CSV, the tables and the charts' metric lists.
// Adding a metric: its field in RunSummary and summarize() (records.h / records.cpp), a
// column in columns.cpp (in the CSV by default), its key in the tables' layout if people
// should see it, and a number and chart name if the Heatmap should offer it
// (docs/ARCHITECTURE.md).
#pragma once

#include "lmprof/engine/records.h"

#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

// How a column's values read in a CSV: text, a whole number, a real number.
enum class ColumnKind { Text, Integer, Real };
std::string_view toString(ColumnKind kind);

struct RunColumn {
    using Getter = std::function<std::string(const RunResult&, const RunSummary&)>;
    std::string key;    // "tokens_per_s": the CSV header and the name in the layouts
    std::string header; // "Tokens/s": the tables' header; empty for CSV-only columns
    std::string unit;   // "ms", "bytes", "tokens/s", "TFLOP/s"; empty for text and counts
    ColumnKind kind = ColumnKind::Text;
    Getter value;      // the machine value (CSV); "" when the run has none
    Getter cell;       // the value for people (tables); `value` when not set
    bool inCsv = true; // false: a column for people only ("Fwd ms" as mean ± std)
    // A metric charts offer (the Heatmap colours model × context by it): the run's value in
    // the unit chartName gives, or nullopt where the run has none (a phase its mode lacks).
    // Unset for columns that are not such a metric.
    using Number = std::function<std::optional<double>(const RunResult&, const RunSummary&)>;
    Number number;
    std::string chartName; // "step ms (mean)", "peak memory (MiB)"
    // A setting most runs leave at its default (an execution variant): true for a run that
    // does not. Tables show such a column only when one of their runs does
    // (reportLayout(runs)); the CSV always has it.
    std::function<bool(const RunResult&)> differsFromDefault;
    // A setting of the run's configuration that tells rows apart (settingColumns): shown in
    // every table, or only where the runs shown differ in it (or one of them leaves its
    // default). No for figures and for CSV-only columns.
    enum class Setting { No, Always, WhereRunsDiffer };
    Setting setting = Setting::No;
    // A figure that can warn (the step time's noise mark): true where the run's cell is to
    // stand out, and what hovering any of its cells explains. Unset for other columns.
    std::function<bool(const RunResult&, const RunSummary&)> warns;
    Getter explain;
    std::string cellOf(const RunResult& run, const RunSummary& summary) const {
        return cell ? cell(run, summary) : value(run, summary);
    }
};

// Every column, each once (a deque: adding one keeps the others where they are).
const std::deque<RunColumn>& runColumns();
// The column of a key; throws std::out_of_range for an unknown key.
const RunColumn& runColumn(std::string_view key);

// The CSV's columns: every column with inCsv, in the table's order (stable: scripts read
// these names; `lmprof-cli columns` lists them). The grid and Markdown tables' columns.
std::span<const RunColumn* const> csvLayout();
std::span<const RunColumn* const> reportLayout();
// The tables' columns for these runs: their settingColumns, then reportLayout()'s figures
// less those none of them has (differsFromDefault: the busy share on a CPU), with their
// logged scalars (scalarColumns) before the status.
std::vector<const RunColumn*> reportLayout(std::span<const RunResult* const> runs);
std::vector<const RunColumn*> reportLayout(std::span<const RunResult> runs);
// The one rule for which configuration columns a table of these runs shows, so that its
// rows can be told apart (docs/RESULTS.md, "Tables"): model, context, batch, precision and
// mode always; each other setting (an execution variant, the warmup and measured step
// counts, data-parallel, the device) where the runs differ in it or one of them leaves its
// default. The Runs, Summary, Precision and Compare tables, the Heatmap's tooltips, and the
// grid, Markdown and CSV copies of the tables all take their columns from it.
std::vector<const RunColumn*> settingColumns(std::span<const RunResult* const> runs);
std::vector<const RunColumn*> settingColumns(std::span<const RunResult> runs);
// Where a layout's figures begin: the configuration (model, context, ..., mode and the
// variants shown) is text before it; from the first time on the columns are measurements.
size_t firstFigure(std::span<const RunColumn* const> layout);
// The columns with a number, in the order charts list them (step time first).
std::span<const RunColumn* const> chartMetrics();

// The columns of the scalars runs logged with their steps (RunSummary::scalars: run.log in
// a watched script; docs/RESULTS.md, "Logged scalars"), one declaration for every writer
// and table. Per name: for the tables its last value, hovering says mean ± std over the
// measured steps; for the CSV `scalar.NAME.last`, `.mean`, `.std`, `.min`, `.max` and `.n`.
// Names in order; at most kMaxScalarColumns of them, each printable and at most
// kMaxScalarNameBytes long (the rest stay in the result set, without a column). Made when
// first asked for and kept, so the pointers last; any thread may ask.
inline constexpr size_t kMaxScalarColumns = 32;
inline constexpr size_t kMaxScalarNameBytes = 64;
std::vector<const RunColumn*> scalarColumns(std::span<const RunResult* const> runs, bool forCsv);
// One name's CSV columns (`lmprof-cli columns` lists them for "NAME").
std::vector<const RunColumn*> scalarCsvColumns(const std::string& name);
// The CSV's columns for these runs: csvLayout(), then the scalars' columns.
std::vector<const RunColumn*> csvLayout(std::span<const RunResult> runs);

// Adds a column after the built-in ones: in the CSV when its inCsv, at the end of the
// tables' layout when inTables, among the charts' metrics when it has a number. For a
// metric a build adds (and for the test that proves one declaration reaches every writer);
// call it before any report is written or window drawn, on one thread.
void addRunColumn(RunColumn column, bool inTables);

} // namespace lmprof::engine
