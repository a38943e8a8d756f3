// What the views share for drawing: layout helpers and the plot helpers (plot_helpers.cpp).
#pragma once

#include "chart_book.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/precision_lab.h"
#include "lmprof/ui/decimate.h"
#include "ops_model.h"
#include "summary_model.h"
#include "view_context.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <implot.h>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace lmprof::ui {

// Puts the next item on the same line as the last one if `width` more pixels fit there.
void sameLineIfFits(float width);
// A combo choosing one of `groups` ("label (n run(s))"), `widthEm` font sizes wide; keeps
// `index` inside the list.
void groupCombo(const char* label, const std::vector<RunGroup>& groups, int& index, float widthEm);
// A combo choosing one of the engine's devices (SessionInterface::devices) into `chosen`,
// which keeps a value the list lacks (a "cuda:3" given on the command line) until one is
// picked. The width is the caller's (SetNextItemWidth).
void deviceCombo(const char* label, const std::vector<std::string>& devices, std::string& chosen);

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
    // While a chart is drawn for a file (exporting()), the axis shows what the window showed
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
// Whether the charts being drawn are drawn for a file: in an OffscreenCharts context, whose
// chart book says so (ChartBook::drawsForFile).
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
// `drawn`, for a chart that draws fewer runs than are selected (timelineRuns), adds
// "Select only the N runs drawn".
void endPlot(ViewContext& ctx, const char* fileStem, const std::vector<RunView*>& drawn = {});
// The style of one run's line: its colour (RunView::color), full or faint, and the marker
// that tells it from runs of the same colour (RunView::style).
ImPlotSpec runSpec(const RunView& run, float alpha = 1.0f);
// A run's legend entry: its name and, past eight runs, its marker's shape ("… ▲").
std::string legendName(const RunView& run);
// Where legends of runs go in every chart: outside the plot area, at its right, so they
// never cover data; in a pane too narrow for that (the legend would take more than 45% of
// it) the legend is hidden and false returned: say so with hiddenLegendNote after the items.
// Entries show the run's whole configuration when hovered (legendTooltips, after the items).
bool setupLegend(const std::vector<RunView*>& runs);
// setupLegend for entries named `labels` (bands of runs, say).
bool setupLegendOf(const std::vector<std::string>& labels);
void hiddenLegendNote(const std::vector<RunView*>& runs);
void legendTooltips(const std::vector<RunView*>& runs);
ImPlotSpec colorSpec(const ImVec4& color);
// What the charts drew, for the test that holds the study's report to its charts
// (tests/ui/study_figures_test.cpp): while a FigureLog lives, each series drawn through
// line(), shaded() and bars() is kept with its label and whole data (before decimation),
// and each figure written on a chart through figureText(); of the newest frame only (an
// exported chart is drawn over a few frames).
struct DrawnSeries {
    std::string label; // the legend's; a band's edges are "LABEL [low]" and "LABEL [high]"
    std::vector<double> x, y;
};
struct DrawnFigures {
    std::vector<DrawnSeries> series;
    std::vector<std::string> texts;
};
// Keep a series or a figure drawn some other way (an annotation) in the FigureLog, if any.
void record(DrawnSeries series);
void record(std::string text);
class FigureLog {
public:
    FigureLog();
    ~FigureLog();
    FigureLog(const FigureLog&) = delete;
    FigureLog& operator=(const FigureLog&) = delete;
    // What the newest frame drew, cleared.
    DrawnFigures take() {
        m_frame = -1;
        return std::exchange(m_figures, {});
    }

private:
    friend void record(DrawnSeries series);
    friend void record(std::string text);
    DrawnFigures& thisFrame();
    DrawnFigures m_figures;
    int m_frame = -1;
};
// Bars of `values` at 0, 1, ... shifted by `shift` (ImPlot::PlotBars), logged.
void bars(const char* label, const double* values, int count, double width, double shift,
          const ImPlotSpec& spec = ImPlotSpec());
// A figure written on the chart at (x, y) (ImPlot::PlotText), logged.
void figureText(const char* text, double x, double y, ImVec2 offset = ImVec2(0, 0));
// Draws ys against xs, decimated to a point per pixel column of the plot when long.
void line(const char* label, const std::vector<double>& xs, const std::vector<double>& ys,
          Decimated& scratch, const ImPlotSpec& spec = ImPlotSpec());
// The current plot draws `runs` runs' lines over each other: each is decimated to fewer
// points (runs^-exponent per pixel column, at least 150), as each is decimated per step,
// until endPlot. The step charts compare a few runs step by step (1/sqrt(runs)); the
// timelines overlay whole runs (1/runs: together as many points as one run's).
void linesOfRuns(size_t runs, float exponent = 0.5f);
// The area between lo and hi (a smooth band such as mean ± std), subsampled by stride to
// about a point per pixel column when long.
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
// A note about what the chart shows or leaves out. It is drawn above the plot area, with
// the plot's title, wrapped to the plot's width: never over the data (docs/WINDOW.md). The
// notes of a frame take their place at the next (ImPlot lays the plot out before its items);
// a note the plot has not shown before is drawn in the plot area's top-left corner for that
// one frame.
void cornerNote(const char* text);
// Use instead of ImPlot::BeginPlot (same arguments): begins the plot with room above its
// data for the notes it had at its last frame.
bool beginPlot(const char* titleId, const ImVec2& size = ImVec2(-1, 0), ImPlotFlags flags = 0);
// The notes in full while the mouse is over them (endPlot calls it).
void notesTooltip();
// Whether a note was drawn over the current plot's data this frame.
bool notesOverData();
// The steps of the verdict clicked in the strip (ViewContext::verdictMark), when its run is
// one of `runs`: a band over them in the verdict's colour (the strip frames its chip; no
// text goes over the data). `timeAxis`: the x axis is seconds since the run started
// (memory, telemetry), where a step spans from the end of the step before it to its own end.
void verdictMark(const ViewContext& ctx, const std::vector<RunView*>& runs, bool timeAxis);
// The index of the point of xs nearest the mouse when the plot is hovered, else -1.
long hoveredIndex(const std::vector<double>& xs);
// The x range of a step-indexed chart: every step the runs will have (known from their
// configuration, so the axis does not jump as steps arrive), from step 0 to the last.
Range stepRange(const std::vector<RunView*>& runs);
// Whole-number ticks on a step axis (steps are whole numbers), a few per plot width. Call
// after the axis's setup.
void stepTicks(ImAxis axis);
// stepTicks' values for a step range drawn `width` pixels wide (step_ticks.cpp): about one per
// 80 pixels, 1, 2 or 5 × 10^k steps apart, and at least two where the range holds two steps.
std::vector<double> stepTickValues(const Range& shown, float width);
// Timelines (memory, telemetry) of many runs overlaid are noise: they draw the first
// kTimelineRuns selected runs, and timelineNote says so and how to choose (docs/WINDOW.md).
inline constexpr size_t kTimelineRuns = 6;
std::vector<RunView*> timelineRuns(const std::vector<RunView*>& selected);
void timelineNote(const std::vector<RunView*>& selected);
// "(?)" explaining how to zoom, pan and return to following the runs.
void helpMarker();
// Tick values for a log axis over r: 1, 2 and 5 × 10^k inside it (every integer multiple
// when that gives fewer than three); empty for an empty or non-positive range.
std::vector<double> logTicks(const Range& r);
// A small square of a colour before the next item (tooltips, tables); a run's carries its
// marker (RunView::style) too.
void swatch(const ImVec4& color);
void swatch(const RunView& run);
} // namespace plot

} // namespace lmprof::ui
