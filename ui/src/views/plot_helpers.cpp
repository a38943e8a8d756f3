// Helpers the plot views share: axes that follow the data until the user takes over,
// decimated lines in a run's colour, background bands, swatches, and the end of a plot with
// a "Save PNG" item in its right-click menu. Hints and notes over a plot: plot_notes.cpp.

#include "plot_helpers.h"

#include "theme.h"

#include <algorithm>
#include <cmath>
#include <imgui.h>
#include <imgui_internal.h>
#include <implot.h>
#include <implot_internal.h>

namespace lmprof::ui {

void sameLineIfFits(float width) {
    const float spacing = ImGui::GetStyle().ItemSpacing.x;
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    if (ImGui::GetItemRectMax().x + spacing + width <= right) {
        ImGui::SameLine();
    }
}

void deviceCombo(const char* label, const std::vector<std::string>& devices, std::string& chosen) {
    if (ImGui::BeginCombo(label, chosen.c_str())) {
        for (const auto& d : devices) {
            if (ImGui::Selectable(d.c_str(), d == chosen)) {
                chosen = d;
            }
        }
        ImGui::EndCombo();
    }
}

void groupCombo(const char* label, const std::vector<RunGroup>& groups, int& index, float widthEm) {
    if (groups.empty()) {
        return;
    }
    index = std::clamp(index, 0, static_cast<int>(groups.size()) - 1);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * widthEm);
    if (ImGui::BeginCombo(label, groups[static_cast<size_t>(index)].label.c_str())) {
        for (int i = 0; i < static_cast<int>(groups.size()); ++i) {
            const auto& g = groups[static_cast<size_t>(i)];
            const std::string item = g.label + " (" + std::to_string(g.runs.size()) + " run(s))";
            if (ImGui::Selectable(item.c_str(), i == index)) {
                index = i;
            }
        }
        ImGui::EndCombo();
    }
}

} // namespace lmprof::ui

namespace lmprof::ui::plot {

// ---------------------------------------------------------------------------------------
// Axes

Range extent(const std::vector<double>& xs, const std::vector<double>& ys, const Range& window,
             size_t first) {
    Range r;
    const size_t n = std::min(xs.size(), ys.size());
    for (size_t i = first; i < n; ++i) {
        if (window.contains(xs[i])) {
            r.add(ys[i]);
        }
    }
    return r;
}

Range fitted(const Range& data, double pad) {
    if (data.empty()) {
        return {0.0, 1.0};
    }
    if (data.lo == data.hi) {
        const double half = std::max(std::abs(data.lo) * 0.05, 0.5);
        if (data.lo >= 0.0 && data.lo < half) { // e.g. a time axis holding only its start, 0
            return {0.0, 2.0 * half};
        }
        return {data.lo - half, data.hi + half};
    }
    const double margin = (data.hi - data.lo) * pad;
    Range r{data.lo - margin, data.hi + margin};
    if (data.lo >= 0.0 && r.lo < 0.0) {
        r.lo = 0.0;
    }
    return r;
}

bool exporting() {
    return ImGui::GetCurrentContext() && ChartBook::current().drawsForFile;
}

void FollowAxis::setup(ImAxis axis, const Range& data, double pad) {
    if (exporting()) {
        const Range r = m_following || m_shown.empty() ? fitted(data, pad) : m_shown;
        ImPlot::SetupAxisLimits(axis, r.lo, r.hi, ImPlotCond_Always);
        return;
    }
    if (m_following) {
        m_shown = fitted(data, pad);
        ImPlot::SetupAxisLimits(axis, m_shown.lo, m_shown.hi, ImPlotCond_Always);
    } else {
        m_shown = shownRange(axis);
    }
}

void watchInput(std::initializer_list<FollowAxis*> axes) {
    const ImRect frame = ImPlot::GetCurrentPlot()->FrameRect;
    const ImGuiIO& io = ImGui::GetIO();
    const bool hovered = ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) &&
                         ImGui::IsMouseHoveringRect(frame.Min, frame.Max, false);
    // The wheel zooms only with the zoom modifier held (Ctrl in a pane that scrolls).
    const int zoomMod = ImPlot::GetInputMap().ZoomMod;
    const bool zooms = (io.KeyMods & zoomMod) == zoomMod;
    const auto draggedFromHere = [&](ImGuiMouseButton b) {
        return ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) &&
               ImGui::IsMouseDragging(b) && frame.Contains(io.MouseClickedPos[b]);
    };
    if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
        for (FollowAxis* a : axes) {
            a->follow();
        }
    } else if ((hovered && io.MouseWheel != 0.0f && zooms) ||
               draggedFromHere(ImGuiMouseButton_Left) || draggedFromHere(ImGuiMouseButton_Right)) {
        for (FollowAxis* a : axes) {
            a->release();
        }
    }
}

Range shownRange(ImAxis axis) {
    const ImPlotRange& r = ImPlot::GetCurrentPlot()->Axes[axis].Range;
    return {r.Min, r.Max};
}

Range stepRange(const std::vector<RunView*>& runs) {
    Range x;
    for (const RunView* run : runs) {
        x.add(0.0);
        // A run in progress shows the steps it plans; a finished one the steps it has: a
        // file may claim 10^8 measured steps and hold 14 (issue 56).
        const double last = run->series.index.empty() ? 0.0 : run->series.index.back();
        x.add(run->finished ? last : std::max(run->totalSteps() - 1.0, last));
    }
    return x;
}

void stepTicks(ImAxis axis) {
    const Range r = shownRange(axis);
    if (r.empty()) {
        return;
    }
    // Of the plot area's last frame: asking for this frame's would end the setup.
    const std::vector<double> ticks =
        stepTickValues(r, ImPlot::GetCurrentPlot()->PlotRect.GetWidth());
    if (!ticks.empty()) {
        ImPlot::SetupAxisTicks(axis, ticks.data(), static_cast<int>(ticks.size()));
    }
}

void helpMarker() {
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("The axes follow the runs as they grow.\n"
                          "Drag to pan, scroll to zoom (over an axis: that axis only),\n"
                          "right-drag to zoom into a box; double-click to follow again.\n"
                          "Hover a point for its values; right-click for options and Save PNG.");
    }
}

std::vector<double> logTicks(const Range& r) {
    std::vector<double> ticks;
    if (r.empty() || r.lo <= 0.0) {
        return ticks;
    }
    const auto collect = [&](std::initializer_list<double> mantissas) {
        ticks.clear();
        for (int k = static_cast<int>(std::floor(std::log10(r.lo)));
             k <= static_cast<int>(std::ceil(std::log10(r.hi))); ++k) {
            for (double m : mantissas) {
                const double v = m * std::pow(10.0, k);
                if (v >= r.lo * 0.999 && v <= r.hi * 1.001) {
                    ticks.push_back(v);
                }
            }
        }
    };
    collect({1, 2, 5});
    if (ticks.size() < 3) {
        collect({1, 2, 3, 4, 5, 6, 7, 8, 9});
    }
    return ticks;
}

// ---------------------------------------------------------------------------------------
// Items

ImPlotSpec colorSpec(const ImVec4& color) {
    ImPlotSpec spec;
    spec.LineColor = color;
    spec.FillColor = color;
    return spec;
}

namespace {

// Markers by RunView::style, and the shapes legend entries name them by (DejaVu Sans has
// them): none for the first run of a colour, then seven shapes, repeating past eight runs of
// one colour (64 selected runs).
constexpr ImPlotMarker kStyleMarkers[] = {
    ImPlotMarker_None, ImPlotMarker_Circle, ImPlotMarker_Square, ImPlotMarker_Diamond,
    ImPlotMarker_Up,   ImPlotMarker_Down,   ImPlotMarker_Left,   ImPlotMarker_Right};
constexpr const char* kStyleGlyphs[] = {"",        " \u25CF", " \u25A0", " \u25C6",
                                        " \u25B2", " \u25BC", " \u25C0", " \u25B6"};
constexpr int kStyles = static_cast<int>(std::size(kStyleMarkers));

int styleOf(const RunView& run) {
    return run.style <= 0 ? 0 : 1 + (run.style - 1) % (kStyles - 1);
}

} // namespace

ImPlotSpec runSpec(const RunView& run, float alpha) {
    ImPlotSpec spec = colorSpec(withAlpha(runColor(run.color), alpha));
    spec.Marker = kStyleMarkers[styleOf(run)];
    spec.MarkerSize = 3.5f;
    return spec;
}

std::string legendName(const RunView& run) {
    return run.name + kStyleGlyphs[styleOf(run)];
}

bool setupLegend(const std::vector<RunView*>& runs) {
    std::vector<std::string> labels;
    for (const RunView* run : runs) {
        labels.push_back(legendName(*run));
    }
    return setupLegendOf(labels);
}

bool setupLegendOf(const std::vector<std::string>& labels) {
    // The widest entry: its icon, name and padding.
    float widest = 0.0f;
    for (const std::string& label : labels) {
        widest = std::max(widest, ImGui::CalcTextSize(label.c_str()).x);
    }
    const float legendWidth = widest + ImGui::GetTextLineHeight() * 2.0f;
    // ImPlot keeps a plot's flags from frame to frame (the user's choices in its menu), so
    // the legend hidden here is shown again here once it fits, and only that one.
    ChartState& chart = ChartBook::current().chartBeingDrawn();
    ImPlotPlot* plot = ImPlot::GetCurrentPlot();
    if (labels.size() > 1 && legendWidth > 0.45f * plot->FrameRect.GetWidth()) {
        plot->Flags |= ImPlotFlags_NoLegend; // the plot would be narrower than its legend
        chart.legendHiddenForWidth = true;
        return false;
    }
    if (chart.legendHiddenForWidth) {
        chart.legendHiddenForWidth = false;
        plot->Flags &= ~ImPlotFlags_NoLegend;
    }
    ImPlot::SetupLegend(ImPlotLocation_NorthEast, ImPlotLegendFlags_Outside);
    return true; // shown, or hidden by the user from the plot's menu: no note
}

void hiddenLegendNote(const std::vector<RunView*>& runs) {
    const std::string note =
        std::to_string(runs.size()) + " runs; the legend is hidden in a pane this narrow";
    cornerNote(note.c_str());
}

void legendTooltips(const std::vector<RunView*>& runs) {
    for (const RunView* run : runs) {
        if (ImPlot::IsLegendEntryHovered(legendName(*run).c_str())) {
            ImGui::BeginTooltip();
            swatch(*run);
            ImGui::TextUnformatted(run->result.id.c_str());
            ImGui::TextUnformatted(describeRun(run->result).c_str());
            ImGui::TextDisabled("click the entry to hide or show the run");
            ImGui::EndTooltip();
            return;
        }
    }
}

namespace {
FigureLog* g_figureLog = nullptr; // the one alive, if any
} // namespace

FigureLog::FigureLog() {
    g_figureLog = this;
}

FigureLog::~FigureLog() {
    g_figureLog = nullptr;
}

DrawnFigures& FigureLog::thisFrame() {
    if (ImGui::GetFrameCount() != m_frame) {
        m_frame = ImGui::GetFrameCount();
        m_figures = {};
    }
    return m_figures;
}

void record(DrawnSeries series) {
    if (g_figureLog) {
        g_figureLog->thisFrame().series.push_back(std::move(series));
    }
}

void record(std::string text) {
    if (g_figureLog) {
        g_figureLog->thisFrame().texts.push_back(std::move(text));
    }
}

void bars(const char* label, const double* values, int count, double width, double shift,
          const ImPlotSpec& spec) {
    if (g_figureLog) {
        DrawnSeries s{label, {}, std::vector<double>(values, values + count)};
        for (int i = 0; i < count; ++i) {
            s.x.push_back(i + shift);
        }
        record(std::move(s));
    }
    ImPlot::PlotBars(label, values, count, width, shift, spec);
}

void figureText(const char* text, double x, double y, ImVec2 offset) {
    record(std::string(text));
    ImPlot::PlotText(text, x, y, offset);
}

namespace {
// The most points a series of the current plot keeps.
size_t pointBudget() {
    const float perPixel = ChartBook::current().chartBeingDrawn().pointsPerPixel;
    return static_cast<size_t>(std::max(150.0f, ImPlot::GetPlotSize().x * perPixel));
}
} // namespace

void linesOfRuns(size_t runs, float exponent) {
    ChartBook::current().chartBeingDrawn().pointsPerPixel =
        std::pow(static_cast<float>(std::max<size_t>(runs, 1)), -exponent);
}

void line(const char* label, const std::vector<double>& xs, const std::vector<double>& ys,
          Decimated& scratch, const ImPlotSpec& spec) {
    if (g_figureLog) {
        record(DrawnSeries{label, xs, ys});
    }
    // A point per pixel column (a bucket's least and most value every two) keeps every spike
    // while bounding the vertices: what a software renderer pays for is thin triangles.
    const size_t budget = pointBudget();
    decimateMinMax(xs, ys, budget, scratch);
    ImPlotSpec shown = spec;
    if (scratch.x.size() == 1) { // a line of one point draws nothing: a dot instead
        shown.Marker = shown.Marker == ImPlotMarker_None ? ImPlotMarker_Circle : shown.Marker;
        shown.MarkerSize = 3.0f;
    }
    // A long line with a marker (RunView::style) carries it every few dozen pixels, not at
    // every point, where markers would merge into a thick line.
    constexpr size_t kMarkers = 24;
    const bool sparse = shown.Marker != ImPlotMarker_None && scratch.x.size() > kMarkers;
    const ImPlotMarker marker = shown.Marker;
    if (sparse) {
        shown.Marker = ImPlotMarker_None;
    }
    ImPlot::PlotLine(label, scratch.x.data(), scratch.y.data(), static_cast<int>(scratch.x.size()),
                     shown);
    if (sparse) {
        ImPlotSpec marks = spec;
        marks.Marker = marker;
        marks.Stride = static_cast<int>(sizeof(double) * (scratch.x.size() / kMarkers));
        ImPlot::PlotScatter(label, scratch.x.data(), scratch.y.data(), static_cast<int>(kMarkers),
                            marks);
    }
}

void shaded(const char* label, const std::vector<double>& xs, const std::vector<double>& lo,
            const std::vector<double>& hi, Decimated& scratchLo, Decimated& scratchHi,
            const ImPlotSpec& spec) {
    if (g_figureLog) {
        record(DrawnSeries{std::string(label) + " [low]", xs, lo});
        record(DrawnSeries{std::string(label) + " [high]", xs, hi});
    }
    const size_t budget = pointBudget();
    const size_t stride = xs.size() > budget ? (xs.size() + budget - 1) / budget : 1;
    scratchLo.x.clear();
    scratchLo.y.clear();
    scratchHi.y.clear();
    for (size_t i = 0; i < xs.size(); i += stride) {
        scratchLo.x.push_back(xs[i]);
        scratchLo.y.push_back(lo[i]);
        scratchHi.y.push_back(hi[i]);
    }
    ImPlot::PlotShaded(label, scratchLo.x.data(), scratchLo.y.data(), scratchHi.y.data(),
                       static_cast<int>(scratchLo.x.size()), spec);
}

void band(double x0, double x1, unsigned int color) {
    const ImPlotRect limits = ImPlot::GetPlotLimits();
    if (x1 < limits.X.Min || x0 > limits.X.Max) {
        return;
    }
    ImPlot::PushPlotClipRect();
    const ImVec2 a = ImPlot::PlotToPixels(x0, limits.Y.Max);
    const ImVec2 b = ImPlot::PlotToPixels(x1, limits.Y.Min);
    ImPlot::GetPlotDrawList()->AddRectFilled(a, b, color);
    ImPlot::PopPlotClipRect();
}

// ---------------------------------------------------------------------------------------
// Swatches (the hints and notes over a plot are in plot_notes.cpp)

namespace {

// The chip, and where it is, for a marker drawn on it.
ImRect chip(const ImVec4& color) {
    const float side = ImGui::GetTextLineHeight() * 0.8f;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float inset = (ImGui::GetTextLineHeight() - side) / 2.0f;
    const ImRect r(ImVec2(at.x, at.y + inset), ImVec2(at.x + side, at.y + inset + side));
    ImGui::GetWindowDrawList()->AddRectFilled(r.Min, r.Max, ImGui::GetColorU32(color), 2.0f);
    ImGui::Dummy(ImVec2(side, ImGui::GetTextLineHeight()));
    ImGui::SameLine();
    return r;
}

} // namespace

void swatch(const ImVec4& color) {
    chip(color);
}

// The run's marker in the chip's middle, dark on its colour, in the shape its lines carry.
void swatch(const RunView& run) {
    const ImRect r = chip(runColor(run.color));
    const ImVec2 c = r.GetCenter();
    const float h = r.GetWidth() * 0.3f;
    ImDrawList* draw = ImGui::GetWindowDrawList();
    const ImU32 ink = IM_COL32(20, 20, 20, 230);
    switch (kStyleMarkers[styleOf(run)]) {
    case ImPlotMarker_Circle:
        draw->AddCircleFilled(c, h, ink);
        break;
    case ImPlotMarker_Square:
        draw->AddRectFilled(ImVec2(c.x - h, c.y - h), ImVec2(c.x + h, c.y + h), ink);
        break;
    case ImPlotMarker_Diamond:
        draw->AddQuadFilled(ImVec2(c.x, c.y - h), ImVec2(c.x + h, c.y), ImVec2(c.x, c.y + h),
                            ImVec2(c.x - h, c.y), ink);
        break;
    case ImPlotMarker_Up:
        draw->AddTriangleFilled(ImVec2(c.x, c.y - h), ImVec2(c.x + h, c.y + h),
                                ImVec2(c.x - h, c.y + h), ink);
        break;
    case ImPlotMarker_Down:
        draw->AddTriangleFilled(ImVec2(c.x - h, c.y - h), ImVec2(c.x + h, c.y - h),
                                ImVec2(c.x, c.y + h), ink);
        break;
    case ImPlotMarker_Left:
        draw->AddTriangleFilled(ImVec2(c.x - h, c.y), ImVec2(c.x + h, c.y - h),
                                ImVec2(c.x + h, c.y + h), ink);
        break;
    case ImPlotMarker_Right:
        draw->AddTriangleFilled(ImVec2(c.x - h, c.y - h), ImVec2(c.x + h, c.y),
                                ImVec2(c.x - h, c.y + h), ink);
        break;
    default:
        break;
    }
}

// ---------------------------------------------------------------------------------------
// End of a plot

PngRequest rectRequest(const char* fileStem, ImVec2 min, ImVec2 max) {
    PngRequest r; // the other fields keep their defaults
    r.x = min.x;
    r.y = min.y;
    r.width = max.x - min.x;
    r.height = max.y - min.y;
    r.fileStem = fileStem;
    return r;
}

void rememberRect(ViewContext& ctx, const char* fileStem, ImVec2 min, ImVec2 max) {
    if (ctx.plotRects && !exporting()) {
        (*ctx.plotRects)[fileStem] = rectRequest(fileStem, min, max);
    }
}

long hoveredStep() {
    return ImPlot::IsPlotHovered() ? std::max(-1L, std::lround(ImPlot::GetPlotMousePos().x)) : -1;
}

namespace {

// Selects these runs of the store (views of ctx.store.runs()), in their order.
void selectRuns(ViewContext& ctx, const std::vector<RunView*>& runs) {
    const RunView* first = ctx.store.runs().data();
    std::vector<int> rows;
    for (const RunView* v : runs) {
        rows.push_back(static_cast<int>(v - first));
    }
    ctx.store.select(std::move(rows));
}

} // namespace

void endPlot(ViewContext& ctx, const char* fileStem, const std::vector<RunView*>& drawn) {
    const ImPlotPlot* current = ImPlot::GetCurrentPlot();
    const ImGuiID id = current->ID;
    const ImRect rect = current->FrameRect;
    ImRect data = current->PlotRect;
    notesTooltip();
    const bool overData = notesOverData();
    ImPlot::EndPlot();
    // The plot stays in ImPlot's pool: its legend's box, laid out by EndPlot, is read here.
    const bool legendShown =
        !ImHasFlag(current->Flags, ImPlotFlags_NoLegend) && current->Items.GetLegendCount() > 0;
    const ImRect legend = legendShown ? current->Items.Legend.Rect : ImRect();
    if (exporting()) {
        return; // drawn for a file: the window's rectangles and menus are not this one's
    }
    const ImGuiWindow* window = ImGui::GetCurrentWindow();
    ImRect shown = rect;
    shown.ClipWithFull(window->ClipRect);
    data.ClipWithFull(window->ClipRect);
    ChartBook::current().plots.push_back({window->RootWindow->Name, fileStem, shown.Min, shown.Max,
                                          data.Min, data.Max, rect.GetSize(), legend.Min,
                                          legend.Max, overData});
    rememberRect(ctx, fileStem, rect.Min, rect.Max);
    if (!ctx.pngRequests) {
        return;
    }
    // ImPlot's own context menu is the popup "##PlotContext" under the plot's ID; opening
    // the same popup again appends an item at its end.
    ImGui::PushOverrideID(id);
    if (ImGui::BeginPopup("##PlotContext")) {
        ImGui::Separator();
        if (ImGui::MenuItem("Save PNG")) {
            ctx.pngRequests->push_back(rectRequest(fileStem, rect.Min, rect.Max));
        }
        if (!drawn.empty() && drawn.size() < ctx.store.selection().size() &&
            ImGui::MenuItem(
                ("Select only the " + std::to_string(drawn.size()) + " runs drawn").c_str())) {
            selectRuns(ctx, drawn);
        }
        ImGui::EndPopup();
    }
    ImGui::PopID();
}

} // namespace lmprof::ui::plot
