// The window's views, one per file in this directory, each with a draw(). A view owns its
// own UI state (scratch buffers, edit fields) as members.
#pragma once

#include "lmprof/engine/compare.h"
#include "lmprof/engine/precision_lab.h"
#include "lmprof/ui/decimate.h"
#include "ops_model.h"
#include "summary_model.h"
#include "sweep_driver.h"
#include "view_context.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <implot.h>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace lmprof::ui {

// Puts the next item on the same line as the last one if `width` more pixels fit there.
void sameLineIfFits(float width);
// A combo choosing one of `groups` ("label (n run(s))"), `widthEm` font sizes wide; keeps
// `index` inside the list.
void groupCombo(const char* label, const std::vector<RunGroup>& groups, int& index, float widthEm);

// Shared drawing helpers for the plot views.
namespace plot {

// A range of values being gathered; empty until a finite value is added.
struct Range {
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    void add(double v) {
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    void add(const Range& r) {
        add(r.lo);
        add(r.hi);
    }
    bool empty() const { return !(lo <= hi); }
    bool contains(double v) const { return v >= lo && v <= hi; }
};
// The range of ys[i] over the points from index `first` on whose xs[i] lies in `window`.
Range extent(const std::vector<double>& xs, const std::vector<double>& ys, const Range& window,
             size_t first = 0);
// What an axis shows for data in `data`: padded by `pad` of the span on each side (not below
// zero for data that is not), a single value widened to ±5% (at least ±0.5; 0 alone shows
// as 0 to 1), nothing at all shown as 0 to 1.
Range fitted(const Range& data, double pad);

// One axis of a chart that follows its data (fitted every frame as runs grow) until the user
// zooms, pans or box-selects the chart; then it keeps the user's range until a double-click
// on the chart returns it to following.
class FollowAxis {
public:
    // While a chart is drawn for a file (ExportScope), the axis shows what the window showed
    // last: the fitted data while following, else the user's range.
    // Between BeginPlot (after SetupAxes) and the first item: sets the axis to
    // fitted(data, pad) while following.
    void setup(ImAxis axis, const Range& data, double pad);
    bool following() const { return m_following; }
    void follow() { m_following = true; }
    void release() { m_following = false; }

private:
    bool m_following = true;
    Range m_shown; // what the axis showed in the window's last frame
};
// Marks a chart drawn for a file (OffscreenCharts) for as long as it lives.
class ExportScope {
public:
    ExportScope();
    ~ExportScope();
    ExportScope(const ExportScope&) = delete;
    ExportScope& operator=(const ExportScope&) = delete;
};
bool exporting();
// Call once per chart before its FollowAxis::setup calls: releases the axes when the user
// drags or scrolls over the current plot this frame, makes them follow on a double-click.
void watchInput(std::initializer_list<FollowAxis*> axes);
// The range an axis of the current plot shows (last frame's, during setup).
Range shownRange(ImAxis axis);

// A chart's rectangle (in window coordinates) as a PNG request, and kept as the chart's place
// (ctx.plotRects: the size it exports at) unless it is being drawn for a file.
PngRequest rectRequest(const char* fileStem, ImVec2 min, ImVec2 max);
void rememberRect(ViewContext& ctx, const char* fileStem, ImVec2 min, ImVec2 max);
// The step under the mouse in a step-indexed plot (the nearest whole x), or -1 when the plot
// is not hovered or the mouse is left of step 0.
long hoveredStep();
// Use instead of ImPlot::EndPlot(): ends the plot and adds "Save PNG" to its right-click
// menu, which queues a capture of the plot's rectangle (saved after the frame renders).
void endPlot(ViewContext& ctx, const char* fileStem);
// The style of one run's line: its colour (RunView::color), full or faint.
ImPlotSpec runSpec(const RunView& run, float alpha = 1.0f);
ImPlotSpec colorSpec(const ImVec4& color);
// Draws ys against xs, decimated to the plot's pixel width when long.
void line(const char* label, const std::vector<double>& xs, const std::vector<double>& ys,
          Decimated& scratch, const ImPlotSpec& spec = ImPlotSpec());
// The area between lo and hi (a smooth band such as mean ± std), subsampled by stride to
// about two points per pixel column when long.
void shaded(const char* label, const std::vector<double>& xs, const std::vector<double>& lo,
            const std::vector<double>& hi, Decimated& scratchLo, Decimated& scratchHi,
            const ImPlotSpec& spec);
// A translucent vertical band from x0 to x1 across the whole plot (warmup, phases).
void band(double x0, double x1, unsigned int color);
// A line of text centred in the plot area: what an empty chart is waiting for.
void hint(const char* text);
// The hint of a chart with nothing to draw: no run selected (how to get one), or why the
// selected runs have no `what` ("steps", "samples") yet: still starting, or how they ended.
void emptyHint(const std::vector<RunView*>& runs, const char* what);
// Text in the plot area's top-left corner, under the legend's usual place (a note about
// what the chart leaves out).
void cornerNote(const char* text);
// The index of the point of xs nearest the mouse when the plot is hovered, else -1.
long hoveredIndex(const std::vector<double>& xs);
// The x range of a step-indexed chart: every step the runs will have (known from their
// configuration, so the axis does not jump as steps arrive), ±0.5 around the step numbers.
Range stepRange(const std::vector<RunView*>& runs);
// "(?)" explaining how to zoom, pan and return to following the runs.
void helpMarker();
// Tick values for a log axis over r: 1, 2 and 5 × 10^k inside it (every integer multiple
// when that gives fewer than three); empty for an empty or non-positive range.
std::vector<double> logTicks(const Range& r);
// A small square of a run's colour before the next item (tooltips, tables).
void swatch(const ImVec4& color);
} // namespace plot

class ConfigView {
public:
    static constexpr const char* kTitle = "Configure";
    void draw(ViewContext& ctx);

private:
    bool m_customContext = false; // "custom" picked in the context combo
    std::string m_deviceBytesFor; // the engine and device m_deviceBytes was asked for
    int64_t m_deviceBytes = 0;
};

class StepTimesView {
public:
    static constexpr const char* kTitle = "Step times";
    void draw(ViewContext& ctx);
    // The chart alone, filling `size` (the window's, or an exported PNG's).
    void drawChart(ViewContext& ctx, ImVec2 size);

private:
    bool m_measuredOnly = true; // y range over the measured steps (where there are some)
    plot::FollowAxis m_x, m_y;
    Decimated m_scratch;
    Decimated m_scratchHigh;
};

class HistogramView {
public:
    static constexpr const char* kTitle = "Distribution";
    void draw(ViewContext& ctx);
    // The chart alone, filling `size` (the window's, or an exported PNG's).
    void drawChart(ViewContext& ctx, ImVec2 size);

private:
    plot::FollowAxis m_x, m_y;
    std::vector<double> m_values;
};

class MemoryView {
public:
    static constexpr const char* kTitle = "Memory";
    void draw(ViewContext& ctx);
    // The timeline of the selected runs, and the first one's peak breakdown (for exports).
    void drawTimeline(ViewContext& ctx, const std::vector<RunView*>& runs, ImVec2 size);
    void drawBreakdown(ViewContext& ctx, ImVec2 size);

private:
    plot::FollowAxis m_x, m_y;
    Decimated m_scratch;
};

class TelemetryView {
public:
    static constexpr const char* kTitle = "Telemetry";
    void draw(ViewContext& ctx);
    // The chart alone, filling `size` (the window's, or an exported PNG's).
    void drawChart(ViewContext& ctx, ImVec2 size);

private:
    plot::FollowAxis m_x;     // shared by the linked charts
    plot::FollowAxis m_y[4];  // per chart: step ms, CPU % / GPU util, clocks, power
    plot::FollowAxis m_y2[4]; // per chart's right axis: -, RSS, -, temperature
    Decimated m_scratch;
};

class ThroughputView {
public:
    static constexpr const char* kTitle = "Throughput";
    void draw(ViewContext& ctx);
    // The chart alone, filling `size` (the window's, or an exported PNG's).
    void drawChart(ViewContext& ctx, ImVec2 size);

private:
    plot::FollowAxis m_x, m_y;
    Decimated m_scratch;
};

class RunsTableView {
public:
    static constexpr const char* kTitle = "Runs";
    void draw(ViewContext& ctx);

private:
    std::vector<std::vector<std::string>> m_cells; // the cells of the frame being drawn
};

class FilesView {
public:
    static constexpr const char* kTitle = "Files";
    void draw(ViewContext& ctx);
    // Saves, after asking in a modal when the file exists and this window did not write it.
    void requestSave(ViewContext& ctx, const std::string& path);
    void save(ViewContext& ctx, const std::string& path);
    void open(ViewContext& ctx, const std::string& path);

private:
    void drawReplaceQuestion(ViewContext& ctx);
    std::string m_confirmReplace;    // a file to ask about replacing; empty: none
    std::set<std::string> m_written; // files this window saved (replaced without asking)
    char m_path[1024] = "";
    bool m_pathInitialised = false;
};

// Sweep builder: lists of models, contexts, precisions, modes and warmup counts, the run
// count and cost, Run sweep / Cancel, progress with ETA. Owns the SweepDriver, which must
// see every frame's events (observe) even while the window is hidden.
class SweepView {
public:
    static constexpr const char* kTitle = "Sweep";
    void observe(const std::vector<engine::SessionEvent>& events);
    void draw(ViewContext& ctx);
    bool running() const { return m_driver.running(); }
    // Starts a sweep over these configurations (validated), as "Run sweep" does.
    void start(ViewContext& ctx, std::vector<engine::RunConfig> configs);

private:
    void initFrom(const engine::RunConfig& c);
    std::vector<engine::RunConfig> buildConfigs(const engine::RunConfig& base,
                                                const engine::SessionInterface& engine,
                                                std::string& error) const;
    void drawProgress();

    SweepDriver m_driver;
    bool m_initialised = false;
    std::vector<char> m_models, m_precisions, m_modes; // ticked, index-aligned with options
    bool m_customModel = false;
    bool m_runAfterOom = false;
    char m_contexts[256] = "";
    char m_warmups[128] = "";
};

// The benchmark matrix (model × context rows with phase times ± std, peak memory,
// tokens/s), failed and skipped cells marked, filling live.
class SummaryTableView {
public:
    static constexpr const char* kTitle = "Summary";
    void draw(ViewContext& ctx);
};

// One metric over model × context for a chosen precision and mode.
class HeatmapView {
public:
    static constexpr const char* kTitle = "Heatmap";
    void draw(ViewContext& ctx);

private:
    int m_metric = 0;
    int m_precision = 0;
    int m_mode = 2;                        // train
    std::vector<double> m_filled;          // the grid with gaps filled, for PlotHeatmap
    std::vector<std::string> m_tickLabels; // storage behind the axis tick labels
};

// Speedup of bf16 / fp16 / bf16-pure over fp32 per cell, with interval, p and verdict from one
// test.
class PrecisionView {
public:
    static constexpr const char* kTitle = "Precision";
    void draw(ViewContext& ctx);
};

// The precision lab (docs/PRECISION_LAB.md): accumulation error, dtypes per module, and the
// loss, loss scale and gradient norms of runs that differ only in precision.
class PrecisionLabView {
public:
    static constexpr const char* kTitle = "Precision lab";
    void draw(ViewContext& ctx);
    // Keeps the reports of the experiments this view asked the engine for (drawn or not).
    void observe(const std::vector<engine::SessionEvent>& events);
    // The charts alone, filling `size` (the window's, or an exported PNG's).
    void drawAccumulationChart(ViewContext& ctx, ImVec2 size);
    void drawLossChart(ViewContext& ctx, ImVec2 size);
    void drawLossScaleChart(ViewContext& ctx, ImVec2 size);
    void drawGradNormChart(ViewContext& ctx, ImVec2 size);
    // An experiment this view asked for is queued or running on the engine.
    bool busy() const;

private:
    void poll(ViewContext& ctx);
    void drawAccumulation(ViewContext& ctx);
    void drawDtypes(ViewContext& ctx);
    void drawNumerics(ViewContext& ctx);
    // The runs of the chosen training-numerics group, each with its legend name.
    using NamedRuns = std::vector<std::pair<RunView*, std::string>>;
    NamedRuns groupRuns(ViewContext& ctx) const;
    static ImPlotSpec precisionSpec(const RunView& run);
    // One value per step of every run of the chosen group; `mark` adds crosses on the steps
    // it picks (fp16's skipped updates).
    void drawStepChart(ViewContext& ctx, const NamedRuns& runs, const char* title,
                       const char* yLabel, const char* stem, ImVec2 size, plot::FollowAxis& ax,
                       plot::FollowAxis& ay, bool logY,
                       const std::function<std::optional<double>(const engine::StepRecord&)>& value,
                       const std::function<bool(const engine::StepRecord&)>& mark = {});

    std::optional<int> m_accumulationJob; // the engine's lab index while it runs
    std::optional<int> m_dtypesJob;
    std::vector<engine::LabReport> m_arrived; // reports observed, not yet taken in by poll()
    std::string m_device = "auto";            // one of the engine's devices
    int m_maxTermsIndex = 2;   // 1e4 .. 1e7: 1e6
    bool m_intended = false;   // errors against n × 0.01 instead of n × 0.01 as stored
    int m_model = 0;           // toy
    int m_precision = 2;       // fp16
    std::string m_shownReport; // model/precision/device of the dtype report shown
    int m_group = 0;
    bool m_lossDelta = false; // the loss chart shows loss - fp32's loss
    bool m_showGradNorms = false;
    int m_layer = 0;
    plot::FollowAxis m_accX, m_accY, m_lossX, m_lossY, m_scaleX, m_scaleY, m_normX, m_normY;
    std::vector<double> m_xs, m_ys;
    std::vector<double> m_ticks; // a log axis's tick values
};

// Data-parallel runs (docs/DISTRIBUTED.md): the strategies side by side (overhead and bus
// bandwidth), each rank's steps as lanes of compute and exposed communication, the seeds'
// per-step table; runs all three strategies of Configure's configuration.
class DistributedView {
public:
    static constexpr const char* kTitle = "Distributed";
    void draw(ViewContext& ctx);
    // The charts alone, filling `size` (the window's, or an exported PNG's).
    void drawStrategiesChart(ViewContext& ctx, ImVec2 size);
    void drawLanesChart(ViewContext& ctx, ImVec2 size);

private:
    void drawLauncher(ViewContext& ctx);
    void drawLanesControls(ViewContext& ctx);
    // The run whose lanes and steps are shown: the one chosen, else the newest finished.
    RunView* lanesRun(ViewContext& ctx);

    std::string m_lanesRunId;
    bool m_showWarmup = false;
    plot::FollowAxis m_lanesX;
};

// Warmup study: per configuration, step time by step index for each warmup count, and the
// std of the measured steps against the warmup count.
class WarmupView {
public:
    static constexpr const char* kTitle = "Warmup study";
    void draw(ViewContext& ctx);

private:
    int m_group = 0;
    bool m_logScale = true;
    std::vector<double> m_xs, m_ys;
    std::vector<double> m_ticks; // the log axis's tick values
};

// A/B comparison: the current runs (or a file A) against a file B, matched by
// configuration, ratio with 95% interval and verdict, step-time histograms of a row.
class CompareView {
public:
    static constexpr const char* kTitle = "Compare";
    void draw(ViewContext& ctx);

private:
    void load(ViewContext& ctx);

    char m_pathA[1024] = "";
    char m_pathB[1024] = "";
    std::vector<engine::RunResult> m_fileA; // when a path A is given
    std::vector<engine::RunResult> m_runsB;
    std::string m_loadedA, m_loadedB; // what was loaded, for the header line
    bool m_haveB = false;
    int m_selected = -1;
    std::vector<double> m_valuesA, m_valuesB;
};

// Where a profiled step's time goes (docs/OP_PROFILE.md): headline, tree, timeline,
// attention, two runs' regions side by side.
class OpsView {
public:
    static constexpr const char* kTitle = "Ops";
    void draw(ViewContext& ctx);

private:
    struct Selection {
        engine::Phase phase = engine::Phase::Forward;
        std::string region; // empty: nothing chosen
        std::string name;   // empty: the whole region
        bool matches(const engine::OpEvent& e) const;
    };
    void drawHeadline(const engine::OpProfile& p);
    void drawTable(const engine::OpProfile& p);
    void drawNode(const OpsNode& node, bool openAll);
    void drawTimeline(const engine::OpProfile& p);
    void drawAttention(ViewContext& ctx, const engine::OpProfile& p);
    void drawOverlay(ViewContext& ctx, const std::vector<const RunView*>& runs, const RunView& run);

    std::string m_runId, m_lastSelected, m_otherId;
    engine::OpKind m_kind = engine::OpKind::Kernel;
    char m_filter[128] = "";
    OpsSort m_sort = OpsSort::Self;
    bool m_descending = true;
    std::string m_kindFor; // the run m_kind was set for (its headline kind, then the user's)
    Selection m_selection;
    std::string m_timelineFor; // the run the zoom below belongs to
    double m_t0 = 0.0, m_t1 = 0.0;
};

} // namespace lmprof::ui
