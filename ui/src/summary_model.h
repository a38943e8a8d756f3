// What the summary views show, computed from the RunStore without ImGui so tests can check
// it: the matrix table's rows, a metric over model × context for the heatmap, the
// precision comparison (engine compareRuns on fp32 vs each other precision) and the
// warmup study's groups.
#pragma once

#include "lmprof/engine/columns.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"
#include "lmprof/ui/run_store.h"

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace lmprof::ui {

// The Summary matrix's columns for these runs: the report's (columns.h, so a metric added
// to the tables is here too, and the settings follow engine::settingColumns' rule) less the
// status, which marks a failed row's figures instead. Figures start at firstFigure.
struct MatrixColumns {
    std::vector<const engine::RunColumn*> columns;
    size_t firstFigure = 0;
};
MatrixColumns matrixColumns(std::span<const engine::RunResult* const> runs);

// The results of these runs, for the layouts that depend on them (reportLayout(runs)).
std::vector<const engine::RunResult*> resultsOf(const std::vector<RunView>& runs);

// The matrix table: indices into store.runs(), the newest run of each configuration
// (model, context, batch, precision, mode, warmup), ordered by precision, mode, model size,
// context and warmup. Skipped and failed runs are included (their cells are marked).
std::vector<int> matrixRows(const RunStore& store);

// The metrics are the run columns with a number (engine::chartMetrics(), columns.h).
// The metric of a finished ok run with measured steps; nullopt for other runs or a phase
// the mode lacks.
std::optional<double> metricValue(const engine::RunResult& run, const engine::RunColumn& metric);

// The Heatmap's axes: what its rows and columns range over.
enum class HeatmapAxis { Model, Context, Batch };
inline constexpr std::array kHeatmapAxes{HeatmapAxis::Model, HeatmapAxis::Context,
                                         HeatmapAxis::Batch};
std::string_view toString(HeatmapAxis axis); // "model", "context length", "batch size"

// Which runs a Heatmap shows and how: two axes, one precision and mode, and for each other
// setting the runs differ in (a filter: an execution variant, the batch when it is not an
// axis, the warmup, data-parallel, the device) one value, or all values when absent.
struct HeatmapQuery {
    HeatmapAxis rows = HeatmapAxis::Model;
    HeatmapAxis columns = HeatmapAxis::Context;
    engine::Precision precision = engine::Precision::Fp32;
    engine::Mode mode = engine::Mode::Train;
    std::map<std::string, std::string> settings; // run column key -> its cell text
};

// A metric over the query's rows (smallest first) × columns (ascending); the newest run of
// each cell (runs that differ in a setting left at "all" share a cell). NaN where no run has
// finished ok.
struct HeatmapGrid {
    std::vector<std::string> rows; // "tiny", "small"; "128"; "4"
    std::vector<std::string> columns;
    std::vector<double> values; // row-major, rows.size() × columns.size()
    // Per cell, why it has no value: "oom", "skipped", "error", "cancelled"; empty otherwise.
    std::vector<std::string> marks;
    // Per cell: the run it shows (an index into store.runs(), -1 for none), how many runs of
    // the query fall in it, whether the shown run's step time is noisy (engine::noiseRule),
    // and which run it shows: "#7 tiny-ctx128-fp32-train-3 · warmup 5", with a second line
    // when runs share the cell ("3 runs share this cell (warmup 0, 5, 10): the newest
    // shows; pick one with the warmup filter").
    std::vector<int> shown;
    std::vector<int> sharing;
    std::vector<char> noisy;
    std::vector<std::string> about;
    double at(size_t row, size_t col) const { return values[row * columns.size() + col]; }
};
HeatmapGrid heatmapGrid(const RunStore& store, const engine::RunColumn& metric,
                        const HeatmapQuery& query);
// A cell's label as lines that fit it, `width` × `lines` text lines, with `textWidth` the
// width of a text: the value and its marks ("78.45 ~ ×2") on one line, else on two, else the
// value alone, else the value in 3 significant digits ("78.5", "123k"), else nothing (the cell's
// tooltip still says it). A label is never drawn over the next cell.
std::vector<std::string> cellLabel(double value, bool noisy, int sharing, float width, int lines,
                                   const std::function<float(const std::string&)>& textWidth);

// The Heatmap's filters: each setting (engine::settingColumns) its query's runs (precision
// and mode) differ in, other than its two axes, with the values they take, in a setting's
// own order (a variant's choices; numbers ascending).
struct HeatmapFilter {
    const engine::RunColumn* column = nullptr;
    std::vector<std::string> values;
};
std::vector<HeatmapFilter> heatmapFilters(const RunStore& store, const HeatmapQuery& query);

// One precision against fp32 for the same model, context, batch, mode and warmup count:
// speedup = fp32 mean step time / this precision's, its 95% interval, Welch's test.
struct PrecisionCell {
    engine::RunResult fp32;
    engine::RunResult other;
    double speedup = 0.0, low = 0.0, high = 0.0;
    engine::WelchTest welch;
    engine::Verdict verdict = engine::Verdict::Untestable; // of the other against fp32
};
std::vector<PrecisionCell> precisionComparison(const RunStore& store);

// Runs of one configuration that differ only in their warmup count, fewest warmup first.
// (Groups of runs: a label and indices into store.runs(), shown in a combo by groupCombo.)
struct RunGroup {
    std::string label;
    std::vector<int> runs;
};
using WarmupGroup = RunGroup; // label: runLabel of the configuration
std::vector<WarmupGroup> warmupGroups(const RunStore& store);

// Runs that trained one model on one batch (engine::numericsKey) and recorded a loss, in
// precision order: the Precision lab overlays their loss curves. Groups with an fp32 run
// and another precision come first, then the rest, each in order of appearance.
using LossGroup = RunGroup; // label: "tiny ctx 32 batch 2 train, cpu: fp32 bf16 fp16"
std::vector<LossGroup> lossGroups(const RunStore& store);
// A run's row of the Precision lab's numerics table: id, precision, steps, its last loss,
// its largest loss gap to `fp32` (the group's fp32 run, if any: "(reference)" for itself),
// fp16's skipped updates and the loss scale's range.
std::vector<std::string> numericsRow(const engine::RunResult& r, const engine::RunResult* fp32);

// Compare's "pick two runs": every run it can pick, this session's finished runs first,
// then those loaded from file A, then file B. The key names a run across frames (its
// origin, place and id); the label is what the list shows.
struct PickableRun {
    std::string key;   // "session:3:tiny-ctx64-fp32-train-1"
    std::string label; // "session · tiny-ctx64-fp32-train-1 · tiny, 5 measured steps"
    const engine::RunResult* run = nullptr;
};
std::vector<PickableRun> pickableRuns(const std::vector<RunView>& session,
                                      const std::vector<engine::RunResult>& fileA,
                                      const std::string& nameA,
                                      const std::vector<engine::RunResult>& fileB,
                                      const std::string& nameB);
// The run a key names, or nullptr once it is gone (the file was replaced).
const engine::RunResult* pickedRun(const std::vector<PickableRun>& runs, std::string_view key);

} // namespace lmprof::ui
