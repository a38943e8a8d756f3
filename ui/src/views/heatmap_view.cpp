// Heatmap: one metric (step time, a phase, tokens/s, MFU, GPU busy share, peak memory, CV)
// over two of model, context and batch for a chosen precision and mode (and any other setting
// the runs differ in: a variant, the warmup, ...), each cell labelled with its value ("~"
// when noisy), or why it has none (oom, skipped); its tooltip names the run it shows and
// what happens when several share it. The colour scale spans the cells that have values.

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
                  double hi, float width);

    int m_metric = 0;
    int m_precision = 0;
    int m_mode = 2;                                // train
    int m_rows = 0;                                // model
    int m_columns = 1;                             // context
    std::map<std::string, std::string> m_settings; // column key -> value; absent: every value
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

// Each cell's text over it: its value ("~" when noisy), or why it has none on grey.
void labelCells(const HeatmapGrid& g) {
    const int rows = static_cast<int>(g.rows.size());
    const int cols = static_cast<int>(g.columns.size());
    ImDrawList* draw = ImPlot::GetPlotDrawList();
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            const double v = g.at(r, c);
            const double y = rows - r - 0.5;
            char text[32];
            if (std::isnan(v)) {
                const ImVec2 a = ImPlot::PlotToPixels(c, y + 0.5);
                const ImVec2 b = ImPlot::PlotToPixels(c + 1, y - 0.5);
                draw->AddRectFilled(a, b, IM_COL32(90, 90, 90, 255));
                const std::string& mark = g.marks[r * cols + c];
                std::snprintf(text, sizeof(text), "%s", mark.empty() ? "-" : mark.c_str());
            } else {
                // A noisy run's value carries "~" (the rule is in the tooltip).
                std::snprintf(text, sizeof(text), v >= 1000 ? "%.0f%s" : "%.2f%s", v,
                              g.noisy[r * cols + c] ? " ~" : "");
            }
            const ImVec2 centre = ImPlot::PlotToPixels(c + 0.5, y);
            const ImVec2 size = ImGui::CalcTextSize(text);
            draw->AddText(ImVec2(centre.x - size.x / 2 + 1, centre.y - size.y / 2 + 1),
                          IM_COL32(0, 0, 0, 200), text);
            draw->AddText(ImVec2(centre.x - size.x / 2, centre.y - size.y / 2),
                          IM_COL32(255, 255, 255, 255), text);
        }
    }
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
                           double lo, double hi, float width) {
    if (!ImPlot::BeginPlot("##heatmap", ImVec2(width, -1),
                           ImPlotFlags_NoLegend | ImPlotFlags_NoMouseText)) {
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
    labelCells(g);
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
    const float scaleWidth = ImGui::GetFontSize() * 5.0f;
    drawGrid(ctx, g, query, lo, hi, ImGui::GetContentRegionAvail().x - scaleWidth);
    ImGui::SameLine();
    ImPlot::ColormapScale(metric.chartName.c_str(), lo, hi, ImVec2(scaleWidth, -1), "%g", 0,
                          ImPlotColormap_Viridis);
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry heatmapWindow() {
    return windowOf<HeatmapView>(DockSlot::ChartTopRight);
}

} // namespace lmprof::ui
