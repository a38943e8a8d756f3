// Heatmap: one metric (step time, a phase, tokens/s, MFU, GPU busy share, peak memory, CV)
// over two of model, context and batch for a chosen precision and mode (and any other setting
// the runs differ in: a variant, the warmup, ...; data-parallel runs are left out until asked
// for), each cell labelled with its value in black or white as its colour reads ("~" when
// noisy, "×n" when n runs share it), or why it has none (oom, skipped); a line under the grid
// says what the marks mean, and its tooltip names the run it shows and the others. The colour
// scale spans the cells that have values; a single value gets none.

#include "lmprof/engine/columns.h"
#include "plot_helpers.h"
#include "summary_model.h"
#include "view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <imgui.h>
#include <implot.h>
#include <iterator>
#include <map>
#include <span>

namespace lmprof::ui {

// One metric over two axes for a chosen precision, mode and variants.
class HeatmapView final : public View {
public:
    static constexpr const char* kTitle = "Heatmap";
    void draw(ViewContext& ctx) override;

private:
    void drawFilters(const RunStore& store, const HeatmapQuery& query);
    HeatmapQuery drawChoices(const RunStore& store,
                             std::span<const engine::RunColumn* const> metrics);
    void drawGrid(ViewContext& ctx, const HeatmapGrid& g, const HeatmapQuery& query, double lo,
                  double hi, ImVec2 size);

    int m_metric = 0;
    int m_precision = 0;
    int m_mode = 2;                                // train
    int m_rows = 0;                                // model
    int m_columns = 1;                             // context
    std::map<std::string, std::string> m_settings; // column key -> value; absent: every value
    bool m_parallelDefaulted = false;              // the Parallel filter got its default
    std::vector<double> m_filled;                  // the grid with gaps filled, for PlotHeatmap
    std::vector<std::string> m_tickLabels;         // storage behind the axis tick labels
};

using namespace lmprof::engine;

namespace {

template <typename T, size_t N>
void enumCombo(const char* label, int& index, const std::array<T, N>& options) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9.0f);
    if (ImGui::BeginCombo(label, std::string(toString(options[index])).c_str())) {
        for (size_t i = 0; i < N; ++i) {
            if (ImGui::Selectable(std::string(toString(options[i])).c_str(),
                                  static_cast<int>(i) == index)) {
                index = static_cast<int>(i);
            }
        }
        ImGui::EndCombo();
    }
}

} // namespace

// A combo per setting the runs differ in beyond the axes (heatmapFilters): "all" or one
// value.
void HeatmapView::drawFilters(const RunStore& store, const HeatmapQuery& query) {
    const auto filters = heatmapFilters(store, query);
    for (auto it = m_settings.begin(); it != m_settings.end();) { // forget vanished ones
        const bool shown = std::any_of(filters.begin(), filters.end(), [&](const auto& f) {
            return f.column->key == it->first &&
                   std::find(f.values.begin(), f.values.end(), it->second) != f.values.end();
        });
        it = shown ? std::next(it) : m_settings.erase(it);
    }
    const float comboWidth = ImGui::GetFontSize() * 9.0f + ImGui::GetStyle().ItemInnerSpacing.x;
    for (const HeatmapFilter& f : filters) {
        // Data-parallel runs stay out of the plain cells until the user asks for them: one
        // filled a plain context's cell as "the newest" (issue 60).
        if (f.column->key == "parallel" && !m_parallelDefaulted) {
            m_parallelDefaulted = true;
            if (std::find(f.values.begin(), f.values.end(), "-") != f.values.end()) {
                m_settings.emplace(f.column->key, "-");
            }
        }
        const std::string& label = f.column->header;
        sameLineIfFits(comboWidth + ImGui::CalcTextSize(label.c_str()).x);
        const auto chosen = m_settings.find(f.column->key);
        const std::string current = chosen == m_settings.end() ? "all" : chosen->second;
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9.0f);
        if (ImGui::BeginCombo(label.c_str(), current.c_str())) {
            if (ImGui::Selectable("all", current == "all")) {
                m_settings.erase(f.column->key);
            }
            for (const auto& v : f.values) {
                if (ImGui::Selectable(v.c_str(), v == current)) {
                    m_settings[f.column->key] = v;
                }
            }
            ImGui::EndCombo();
        }
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("all: runs that differ only in %s share a cell (the newest shows)",
                              label.c_str());
        }
    }
}

namespace {

// The colour scale: the cells that have values, never an empty range.
std::pair<double, double> valueRange(const HeatmapGrid& g) {
    double lo = INFINITY, hi = -INFINITY;
    for (double v : g.values) {
        if (!std::isnan(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    if (lo > hi) {
        return {0.0, 1.0};
    }
    return {lo, lo == hi ? lo + 1.0 : hi}; // one value: any non-empty range colours it
}

// Black or white, whichever reads on a cell of this value (Viridis runs from dark purple to
// light yellow): by the colour's luminance.
ImU32 textOn(double v, double lo, double hi) {
    const float t = hi > lo ? static_cast<float>((v - lo) / (hi - lo)) : 0.5f;
    const ImVec4 c = ImPlot::SampleColormap(std::clamp(t, 0.0f, 1.0f), ImPlotColormap_Viridis);
    const float luminance = 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z;
    return luminance > 0.45f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

// Each cell's text over it: its value ("~" when noisy, "×n" when n runs share it) as far as
// it fits the cell (cellLabel), or why it has none on grey; in black or white as the cell's
// colour reads. Each line is centred on its own.
void labelCells(const HeatmapGrid& g, double lo, double hi) {
    const int rows = static_cast<int>(g.rows.size());
    const int cols = static_cast<int>(g.columns.size());
    ImDrawList* draw = ImPlot::GetPlotDrawList();
    const auto textWidth = [](const std::string& t) { return ImGui::CalcTextSize(t.c_str()).x; };
    const float lineHeight = ImGui::GetTextLineHeight();
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            const double v = g.at(r, c);
            const double y = rows - r - 0.5;
            const ImVec2 a = ImPlot::PlotToPixels(c, y + 0.5);
            const ImVec2 b = ImPlot::PlotToPixels(c + 1, y - 0.5);
            const float width = std::abs(b.x - a.x) - ImGui::GetStyle().ItemInnerSpacing.x;
            const int fitLines = static_cast<int>(std::abs(b.y - a.y) / lineHeight);
            std::vector<std::string> lines;
            ImU32 ink = IM_COL32(255, 255, 255, 255);
            if (std::isnan(v)) {
                draw->AddRectFilled(a, b, IM_COL32(90, 90, 90, 255));
                const std::string& mark = g.marks[r * cols + c];
                lines.push_back(mark.empty() ? "-" : mark);
                if (textWidth(lines[0]) > width || fitLines < 1) {
                    lines.clear();
                }
            } else {
                // A noisy run's value carries "~", a shared cell "×n" (both explained under
                // the grid, and in the tooltip).
                const int k = r * cols + c;
                lines = cellLabel(v, g.noisy[k] != 0, g.sharing[k], width, fitLines, textWidth);
                ink = textOn(v, lo, hi);
            }
            const ImVec2 centre = ImPlot::PlotToPixels(c + 0.5, y);
            float top = centre.y - lineHeight * static_cast<float>(lines.size()) / 2.0f;
            for (const std::string& line : lines) {
                draw->AddText(ImVec2(centre.x - textWidth(line) / 2.0f, top), ink, line.c_str());
                top += lineHeight;
            }
        }
    }
}

// The cells that have a value.
size_t valueCount(const HeatmapGrid& g) {
    return static_cast<size_t>(
        std::count_if(g.values.begin(), g.values.end(), [](double v) { return !std::isnan(v); }));
}

// What the marks in the cells mean, for those that appear: "~" a noisy run, "×n" a cell that
// n runs share (the filters left at "all"), a single value with no scale.
std::string gridLegend(const HeatmapGrid& g) {
    std::string out;
    if (std::any_of(g.noisy.begin(), g.noisy.end(), [](char n) { return n != 0; })) {
        out += "~ noisy: " + engine::noiseRule() + ". ";
    }
    if (std::any_of(g.sharing.begin(), g.sharing.end(), [](int n) { return n > 1; })) {
        out += "\u00D7n: n runs share the cell, which shows the newest (hover it for them); "
               "choose a value in the filters above to pick. ";
    }
    if (valueCount(g) == 1) {
        out += "One value: no colour scale.";
    }
    return out;
}

// The hovered cell's run, and the noise rule when it is noisy.
void cellTooltip(const HeatmapGrid& g) {
    if (!ImPlot::IsPlotHovered()) {
        return;
    }
    const int rows = static_cast<int>(g.rows.size());
    const int cols = static_cast<int>(g.columns.size());
    const ImPlotPoint mouse = ImPlot::GetPlotMousePos();
    const int c = static_cast<int>(std::floor(mouse.x));
    const int r = rows - 1 - static_cast<int>(std::floor(mouse.y));
    if (c >= 0 && c < cols && r >= 0 && r < rows && g.shown[r * cols + c] >= 0) {
        const size_t k = static_cast<size_t>(r * cols + c);
        ImGui::SetTooltip("%s%s%s", g.about[k].c_str(), g.noisy[k] ? "\n~ " : "",
                          g.noisy[k] ? engine::noiseRule().c_str() : "");
    }
}

} // namespace

// The metric, precision, mode and axes, then the filters; the query they make.
HeatmapQuery HeatmapView::drawChoices(const RunStore& store,
                                      std::span<const RunColumn* const> metrics) {
    m_metric = std::clamp(m_metric, 0, static_cast<int>(metrics.size()) - 1);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12.0f);
    if (ImGui::BeginCombo("metric", metrics[static_cast<size_t>(m_metric)]->chartName.c_str())) {
        for (int i = 0; i < static_cast<int>(metrics.size()); ++i) {
            if (ImGui::Selectable(metrics[static_cast<size_t>(i)]->chartName.c_str(),
                                  i == m_metric)) {
                m_metric = i;
            }
        }
        ImGui::EndCombo();
    }
    // The three choices on one line while they fit, else wrapped to the next.
    const float comboWidth = ImGui::GetFontSize() * 9.0f + ImGui::GetStyle().ItemInnerSpacing.x;
    sameLineIfFits(comboWidth + ImGui::CalcTextSize("precision").x);
    enumCombo("precision", m_precision, kPrecisions);
    sameLineIfFits(comboWidth + ImGui::CalcTextSize("mode").x);
    enumCombo("mode", m_mode, kModes);
    sameLineIfFits(comboWidth + ImGui::CalcTextSize("rows").x);
    enumCombo("rows", m_rows, kHeatmapAxes);
    sameLineIfFits(comboWidth + ImGui::CalcTextSize("columns").x);
    enumCombo("columns", m_columns, kHeatmapAxes);
    if (m_columns == m_rows) { // two different axes: the other one moves
        m_columns = (m_rows + 1) % static_cast<int>(kHeatmapAxes.size());
    }
    HeatmapQuery query;
    query.rows = kHeatmapAxes[m_rows];
    query.columns = kHeatmapAxes[m_columns];
    query.precision = kPrecisions[m_precision];
    query.mode = kModes[m_mode];
    drawFilters(store, query);
    query.settings = m_settings;
    return query;
}

// The grid with its axes' labels, each cell labelled; lo..hi is its colour scale.
void HeatmapView::drawGrid(ViewContext& ctx, const HeatmapGrid& g, const HeatmapQuery& query,
                           double lo, double hi, ImVec2 size) {
    if (!plot::beginPlot("##heatmap", size, ImPlotFlags_NoLegend | ImPlotFlags_NoMouseText)) {
        return;
    }
    const int rows = static_cast<int>(g.rows.size());
    const int cols = static_cast<int>(g.columns.size());
    // PlotHeatmap cannot colour NaN; empty cells get the low end and are covered (labelCells).
    m_filled.assign(g.values.begin(), g.values.end());
    for (double& v : m_filled) {
        v = std::isnan(v) ? lo : v;
    }
    m_tickLabels.clear();
    std::vector<double> xTicks, yTicks;
    for (int c = 0; c < cols; ++c) {
        xTicks.push_back(c + 0.5);
        m_tickLabels.push_back(g.columns[c]);
    }
    for (int r = 0; r < rows; ++r) {
        yTicks.push_back(rows - r - 0.5); // row 0 is drawn at the top
        m_tickLabels.push_back(g.rows[r]);
    }
    std::vector<const char*> labels;
    for (const auto& l : m_tickLabels) {
        labels.push_back(l.c_str());
    }
    const ImPlotAxisFlags axisFlags = ImPlotAxisFlags_Lock | ImPlotAxisFlags_NoGridLines;
    ImPlot::SetupAxes(std::string(toString(query.columns)).c_str(),
                      std::string(toString(query.rows)).c_str(), axisFlags, axisFlags);
    ImPlot::SetupAxisLimits(ImAxis_X1, 0, cols, ImPlotCond_Always);
    ImPlot::SetupAxisLimits(ImAxis_Y1, 0, rows, ImPlotCond_Always);
    ImPlot::SetupAxisTicks(ImAxis_X1, xTicks.data(), cols, labels.data());
    ImPlot::SetupAxisTicks(ImAxis_Y1, yTicks.data(), rows, labels.data() + cols);
    ImPlot::PushColormap(ImPlotColormap_Viridis);
    ImPlot::PlotHeatmap("##values", m_filled.data(), rows, cols, lo, hi, nullptr, ImPlotPoint(0, 0),
                        ImPlotPoint(cols, rows));
    ImPlot::PopColormap();
    ImPlot::PushPlotClipRect();
    labelCells(g, lo, hi);
    ImPlot::PopPlotClipRect();
    cellTooltip(g);
    plot::endPlot(ctx, "heatmap");
}

void HeatmapView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const auto metrics = chartMetrics();
    const HeatmapQuery query = drawChoices(ctx.store, metrics);
    const RunColumn& metric = *metrics[static_cast<size_t>(m_metric)];
    const HeatmapGrid g = heatmapGrid(ctx.store, metric, query);
    if (g.rows.empty()) {
        ImGui::TextDisabled("no finished %s %s runs yet",
                            std::string(toString(kPrecisions[m_precision])).c_str(),
                            std::string(toString(kModes[m_mode])).c_str());
        ImGui::End();
        return;
    }
    const auto [lo, hi] = valueRange(g);
    const std::string legend = gridLegend(g);
    // A scale for one value would spread ten ticks over a range the data does not have.
    const bool scale = valueCount(g) > 1 && hi > lo;
    const float scaleWidth =
        scale ? ImGui::CalcTextSize("00000.0").x + ImGui::GetFontSize() * 3.0f : 0.0f;
    const float below = legend.empty() ? 0.0f : ImGui::GetTextLineHeightWithSpacing() * 2.0f;
    drawGrid(ctx, g, query, lo, hi,
             ImVec2(ImGui::GetContentRegionAvail().x - scaleWidth,
                    std::max(ImGui::GetContentRegionAvail().y - below, ImGui::GetFontSize() * 8)));
    if (scale) {
        ImGui::SameLine();
        ImPlot::ColormapScale(metric.chartName.c_str(), lo, hi,
                              ImVec2(scaleWidth, ImGui::GetItemRectSize().y), "%g", 0,
                              ImPlotColormap_Viridis);
    }
    if (!legend.empty()) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("%s", legend.c_str());
        ImGui::PopTextWrapPos();
    }
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry heatmapWindow() {
    return windowOf<HeatmapView>(DockSlot::ChartTopRight);
}

} // namespace lmprof::ui
