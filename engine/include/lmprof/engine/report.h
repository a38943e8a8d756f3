// Human and machine-readable reports of runs: a grid table (+---+ borders),
// GitHub Markdown, and CSV (RFC 4180). One writer per file under engine/src/report/.
#pragma once

#include "lmprof/engine/columns.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/op_profile.h"
#include "lmprof/engine/precision_lab.h"
#include "lmprof/engine/records.h"

#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

enum class ReportFormat { Table, Markdown, Csv };
std::optional<ReportFormat> parseReportFormat(std::string_view s);

void writeTable(std::ostream& out, std::span<const RunResult> runs);
void writeMarkdown(std::ostream& out, std::span<const RunResult> runs);
void writeCsv(std::ostream& out, std::span<const RunResult> runs);
void writeReport(std::ostream& out, std::span<const RunResult> runs, ReportFormat format);

// A comparison (compare.h) as a grid table (like the run table), Markdown or CSV.
void writeComparison(std::ostream& out, const Comparison& c, ReportFormat format);

// The cells shared by the table and Markdown writers: header names and one row per run,
// e.g. {"small", "128", ..., "22.11 ± 0.09", ...}, in a layout (columns.h: the tables'
// layout for the runs written, reportLayout(runs)).
std::vector<std::string> summaryHeader(std::span<const RunColumn* const> layout);
std::vector<std::string> summaryRow(const RunResult& run, std::span<const RunColumn* const> layout);

// Layouts the writers share; rows[0] is the header. The grid counts characters, not bytes
// ("±" is one column). Markdown left-aligns the first `textColumns` columns and the last
// one, right-aligns the figures between them.
using Rows = std::vector<std::vector<std::string>>;
// Text from data (a run's id, an error) as Markdown shows it, never as markup: `\`*_[]<>#!|`
// escaped, line ends as spaces. The Markdown tables write every cell through it.
std::string markdownText(std::string_view s);
void writeGridRows(std::ostream& out, const Rows& rows);
void writeMarkdownRows(std::ostream& out, const Rows& rows, size_t textColumns);
// Rows in a format: the grid, Markdown (textColumns as above) or CSV (CRLF line ends).
void writeRows(std::ostream& out, const Rows& rows, ReportFormat format, size_t textColumns);

// A comparison's table, shared by `lmprof-cli compare` and the window's Compare: the
// settings of its pairs (model, context, batch, precision, mode, warmup, and each execution
// variant one of its runs sets; "A vs B" where a pair differs), then kComparisonFigures
// columns: A's and B's step ms, the ratio B/A, its 95% interval, p and the verdict; then
// one column per scalar the runs logged (scalarColumns, columns.h), "A vs B" where differ.
Rows comparisonRows(const Comparison& c);
inline constexpr size_t kComparisonFigures = 6;
// The column of comparisonRows where those figures begin: after the pairs' settings.
size_t comparisonFiguresAt(const Comparison& c);

// "22.11 ± 0.09": mean ± sample std, two decimals, as benchmark tables print it.
std::string formatMeanStd(const PhaseStats& stats);

// The op profile of a run (docs/OP_PROFILE.md): the headline sentences, then one row per
// group with calls per step, self and total ms, share of the phase, GFLOP and TFLOP/s.
struct OpReportOptions {
    OpGrouping by = OpGrouping::Region;
    int top = 0;                // most rows per phase; 0: all
    std::optional<Phase> phase; // only this phase
};
// Several runs: one section each in a table or Markdown; in CSV one table, with the run id
// as the first column and one header (runs without a profile are left out there).
void writeOpReport(std::ostream& out, std::span<const RunResult> runs,
                   const OpReportOptions& options, ReportFormat format);

// A watched run's time per module (docs/WATCH.md): one row per module with its forward,
// backward and both, their shares of the two phases, and calls per step. The rows, and
// a section per run that has them (runs without are left out; nothing when none has).
Rows moduleRows(const RunResult& run);
void writeModuleReport(std::ostream& out, std::span<const RunResult> runs, ReportFormat format);

// Each run's verdicts (docs/VERDICTS.md) under its heading: a line per verdict with its
// interval and evidence, the advice below it, the abstentions in one line; then the
// verdicts about several of the runs together (judgeRuns: a straggler among ranks), under
// a heading naming them. Nothing in CSV, where the runs' table has a verdicts column.
void writeVerdictReport(std::ostream& out, std::span<const RunResult> runs, ReportFormat format);

// A pair phase by phase (comparePhases): phase, A ms, B ms, B/A, 95% CI, p, verdict.
Rows phaseComparisonRows(const std::vector<PhaseComparison>& phases);

// The precision lab (docs/PRECISION_LAB.md). Rows for the CLI and the window alike: the
// seeds' loops; the grid's sums at each decade (or at every point) with the relative error
// at the last and where the sum stalls; the dtypes of a model's modules (with the notes;
// indented by nesting for grids).
Rows seedLoopRows(const AccumulationReport& report);
Rows accumulationRows(const AccumulationReport& report, bool allPoints);
Rows dtypeRows(const DtypeReport& report, bool withNotes, bool indent);
// Tables (with the notes listed once below the dtype table), Markdown, or CSV (one row per
// series and point; one row per module with its note).
void writeAccumulationReport(std::ostream& out, const AccumulationReport& report,
                             ReportFormat format);
// In CSV each row starts with the report's model, precision and device; csvHeader false
// leaves the header out (for a report following another).
void writeDtypeReport(std::ostream& out, const DtypeReport& report, ReportFormat format,
                      bool csvHeader = true);

// Data-parallel runs (docs/DISTRIBUTED.md): one row per run with the means over every
// rank's measured steps (step, compute, communication, exposed and hidden communication,
// overhead, bandwidths, parameters identical); and the seeds' per-step table of one run,
// one row per step and rank. Runs without a ddp block are left out.
Rows ddpSummaryRows(std::span<const RunResult> runs);
Rows ddpStepRows(const RunResult& run);
// Both, for every DDP run; CSV: the step rows of all runs under one header, run id first.
void writeDdpReport(std::ostream& out, std::span<const RunResult> runs, ReportFormat format);

} // namespace lmprof::engine
