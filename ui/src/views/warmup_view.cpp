// Warmup study: for one configuration run with several warmup counts (e.g. 0, 1, 2, 5),
// the step time of every step index per run, so first-step outliers stand out (warmup
// steps drawn as hollow markers), and the std of the measured steps against the warmup count.

#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "summary_model.h"
#include "view.h"

#include <algorithm>
#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

// Warmup study: per configuration, step time by step index for each warmup count, and the
// std of the measured steps against the warmup count.
class WarmupView final : public View {
public:
    static constexpr const char* kTitle = "Warmup study";
    void draw(ViewContext& ctx) override;

private:
    // Step time by step index, one line per warmup count (warmup steps as hollow rings).
    void drawStepChart(ViewContext& ctx, const WarmupGroup& group, ImVec2 chart);
    // The std of the measured steps (m_xs, m_ys) against the warmup count, with each CV.
    void drawStdChart(ViewContext& ctx, const std::vector<double>& means,
                      const std::vector<std::string>& tickText, ImVec2 chart);

    int m_group = 0;
    bool m_logScale = true;
    std::vector<double> m_xs, m_ys;
    std::vector<double> m_ticks; // the log axis's tick values
};

using namespace lmprof::engine;

void WarmupView::drawStepChart(ViewContext& ctx, const WarmupGroup& group, ImVec2 chart) {
    auto& runs = ctx.store.runs();
    if (ImPlot::BeginPlot("step time by step index", chart)) {
        ImPlot::SetupAxes("step index", "step ms", ImPlotAxisFlags_AutoFit,
                          ImPlotAxisFlags_AutoFit);
        // Top right, over the later steps' empty upper half: at the top left it covered the
        // first steps, which the warmup makes the tallest (outside, it crushed the plot in a
        // pane shared with the std chart).
        ImPlot::SetupLegend(ImPlotLocation_NorthEast);
        if (m_logScale) {
            ImPlot::SetupAxisScale(ImAxis_Y1, ImPlotScale_Log10);
            // Log ticks at 1, 2, 5 × 10^k within the data (ImPlot's own give one or two
            // labels over less than a decade).
            plot::Range r;
            for (int i : group.runs) {
                r.add(plot::extent(runs[i].series.index, runs[i].series.total,
                                   plot::Range{-1e300, 1e300}));
            }
            m_ticks = plot::logTicks(r);
            if (!m_ticks.empty()) {
                ImPlot::SetupAxisTicks(ImAxis_Y1, m_ticks.data(), static_cast<int>(m_ticks.size()));
            }
        }
        for (int i : group.runs) {
            const RunView& v = runs[i];
            const std::string label =
                "warmup " + std::to_string(v.result.config.warmupSteps) + "##" + std::to_string(i);
            ImPlotSpec line = plot::runSpec(v);
            line.Marker = ImPlotMarker_Circle;
            line.MarkerSize = 3;
            ImPlot::PlotLine(label.c_str(), v.series.index.data(), v.series.total.data(),
                             static_cast<int>(v.series.total.size()), line);
            // Warmup steps: a hollow ring on top, in the same colour (the same label).
            m_xs.clear();
            m_ys.clear();
            for (const auto& s : v.result.steps) {
                if (s.warmup) {
                    m_xs.push_back(s.index);
                    m_ys.push_back(s.totalMs);
                }
            }
            ImPlotSpec ring = plot::runSpec(v);
            ring.Marker = ImPlotMarker_Circle;
            ring.MarkerSize = 7;
            ring.MarkerFillColor = ImVec4(0, 0, 0, 0);
            ImPlot::PlotScatter(label.c_str(), m_xs.data(), m_ys.data(),
                                static_cast<int>(m_xs.size()), ring);
        }
        plot::endPlot(ctx, "warmup-steps");
    }
}

void WarmupView::drawStdChart(ViewContext& ctx, const std::vector<double>& means,
                              const std::vector<std::string>& tickText, ImVec2 chart) {
    if (ImPlot::BeginPlot("std by warmup count", chart)) {
        ImPlot::SetupAxes("warmup steps", "std of step ms");
        // Room beside the outer bars and above the tallest, so that each bar's CV, written
        // over it, stays inside the plot.
        if (!m_xs.empty()) {
            const auto [lo, hi] = std::minmax_element(m_xs.begin(), m_xs.end());
            const double top = *std::max_element(m_ys.begin(), m_ys.end());
            ImPlot::SetupAxisLimits(ImAxis_X1, *lo - 0.8, *hi + 0.8, ImPlotCond_Always);
            ImPlot::SetupAxisLimits(ImAxis_Y1, 0.0, top > 0.0 ? 1.45 * top : 1.0,
                                    ImPlotCond_Always);
        }
        std::vector<const char*> ticks;
        for (const auto& t : tickText) {
            ticks.push_back(t.c_str());
        }
        if (!m_xs.empty()) {
            ImPlot::SetupAxisTicks(ImAxis_X1, m_xs.data(), static_cast<int>(m_xs.size()),
                                   ticks.data());
        }
        ImPlotSpec spec;
        spec.Flags = ImPlotItemFlags_NoLegend;
        ImPlot::PlotBars("std of step ms", m_xs.data(), m_ys.data(), static_cast<int>(m_xs.size()),
                         0.6, spec);
        for (size_t k = 0; k < m_xs.size(); ++k) {
            ImPlot::PlotText(
                ("CV " + engine::formatFixed(100.0 * m_ys[k] / std::max(means[k], 1e-9), 0) + "%")
                    .c_str(),
                m_xs[k], m_ys[k], ImVec2(0, -12));
        }
        plot::endPlot(ctx, "warmup-std");
    }
}

void WarmupView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const std::vector<WarmupGroup> groups = warmupGroups(ctx.store);
    if (groups.empty()) {
        ImGui::TextDisabled("No runs yet. A sweep with warmup counts 0, 1, 2, 5 fills this in.");
        ImGui::End();
        return;
    }
    groupCombo("configuration", groups, m_group, 18.0f);
    ImGui::SameLine();
    ImGui::Checkbox("log scale", &m_logScale);
    auto& runs = ctx.store.runs();
    const WarmupGroup& group = groups[m_group];
    // Two charts: side by side in a wide, short pane, else one above the other; each at
    // least 12 lines tall (the pane scrolls when it is smaller than that).
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float spacing = ImGui::GetStyle().ItemSpacing.x;
    const float minHeight = ImGui::GetFontSize() * 12.0f;
    const bool beside = avail.x > avail.y * 2.2f;
    const ImVec2 chart = beside ? ImVec2((avail.x - spacing) / 2, std::max(avail.y, minHeight))
                                : ImVec2(-1, std::max((avail.y - spacing) / 2, minHeight));
    if (!ImGui::BeginChild("##warmup-charts", ImVec2(0, 0), ImGuiChildFlags_None,
                           ImGuiWindowFlags_NoScrollWithMouse)) {
        ImGui::EndChild();
        ImGui::End();
        return;
    }
    drawStepChart(ctx, group, chart);
    // The std chart's bars, gathered before its plot: the same line of the pane when beside.
    m_xs.clear();
    m_ys.clear();
    std::vector<double> means;
    std::vector<std::string> tickText;
    for (int i : group.runs) {
        RunView& v = runs[i];
        const PhaseStats& t = v.liveSummary().totalMs;
        if (t.n > 0) {
            m_xs.push_back(v.result.config.warmupSteps);
            m_ys.push_back(t.std);
            means.push_back(t.mean);
            tickText.push_back(std::to_string(v.result.config.warmupSteps));
        }
    }
    if (beside) {
        ImGui::SameLine();
    }
    drawStdChart(ctx, means, tickText, chart);
    ImGui::EndChild();
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry warmupWindow() {
    return windowOf<WarmupView>(DockSlot::ChartBottomRight);
}

} // namespace lmprof::ui
