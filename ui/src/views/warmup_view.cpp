// Warmup study: for one configuration run with several warmup counts (e.g. 0, 1, 2, 5),
// the step time of every step index per run, so first-step outliers stand out (warmup
// steps drawn as hollow markers), and the std of the measured steps against the warmup count.

#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "summary_model.h"
#include "theme.h"
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
    void drawStepChart(ViewContext& ctx, const WarmupGroup& group,
                       const std::vector<std::string>& names, ImVec2 chart);
    // The std of the measured steps (m_ys), a bar per warmup count (m_xs: its place), with
    // each CV.
    void drawStdChart(ViewContext& ctx, const std::vector<double>& means,
                      const std::vector<std::string>& tickText, ImVec2 chart);

    int m_group = 0;
    bool m_logScale = true;
    std::vector<double> m_xs, m_ys;
    std::vector<double> m_ticks; // the log axis's tick values
};

using namespace lmprof::engine;

namespace {

// The study's runs by what tells them apart: "w2" for a lone run, else their warmup and
// whatever else differs ("w2 · 10 steps" against "w2 · 40 steps"), so that no two share a
// legend entry or a tick.
std::vector<std::string> runNames(ViewContext& ctx, const WarmupGroup& group) {
    std::vector<const RunResult*> results;
    for (int i : group.runs) {
        results.push_back(&ctx.store.runs()[static_cast<size_t>(i)].result);
    }
    if (results.size() == 1) {
        return {"w" + std::to_string(results.front()->config.warmupSteps)};
    }
    return distinguishingNames(results);
}

} // namespace

void WarmupView::drawStepChart(ViewContext& ctx, const WarmupGroup& group,
                               const std::vector<std::string>& names, ImVec2 chart) {
    auto& runs = ctx.store.runs();
    if (plot::beginPlot("step time by step index", chart)) {
        ImPlot::SetupAxes("step index", "step ms", ImPlotAxisFlags_AutoFit,
                          ImPlotAxisFlags_AutoFit);
        // Outside, at the right: a legend inside covered the first steps, which the warmup
        // makes the tallest, or the later ones (docs/WINDOW.md: no legend over data).
        ImPlot::SetupLegend(ImPlotLocation_NorthEast, ImPlotLegendFlags_Outside);
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
        for (size_t k = 0; k < group.runs.size(); ++k) {
            const RunView& v = runs[group.runs[k]];
            const std::string label = names[k] + "##" + std::to_string(group.runs[k]);
            // Each run of the study its own colour, whether or not it is selected.
            ImPlotSpec line = plot::colorSpec(runColor(static_cast<int>(k)));
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
            ImPlotSpec ring = plot::colorSpec(runColor(static_cast<int>(k)));
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
    std::vector<std::string> cvText;
    float widest = 0.0f;
    for (size_t k = 0; k < m_xs.size(); ++k) {
        cvText.push_back("CV " +
                         engine::formatFixed(100.0 * m_ys[k] / std::max(means[k], 1e-9), 0) + "%");
        widest = std::max(widest, ImGui::CalcTextSize(cvText.back().c_str()).x);
    }
    // Each bar's CV is written over it. Where the bars stand closer than the widest CV (a
    // narrow pane, many counts), every other CV goes a line higher so that none overlaps
    // its neighbour; the plot area is estimated from the chart less its y axis.
    const float plotWidth =
        (chart.x > 0 ? chart.x : ImGui::GetContentRegionAvail().x) - ImGui::GetFontSize() * 5.0f;
    const float perBar = plotWidth / (static_cast<float>(m_xs.size()) + 0.6f);
    const bool stagger = m_xs.size() > 1 && widest + ImGui::GetFontSize() * 0.5f > perBar;
    if (plot::beginPlot("std by warmup count", chart)) {
        ImPlot::SetupAxes("warmup steps", "std of step ms");
        // Room beside the outer bars and above the tallest for its CV (two lines staggered).
        if (!m_xs.empty()) {
            const double top = *std::max_element(m_ys.begin(), m_ys.end());
            ImPlot::SetupAxisLimits(ImAxis_X1, -0.8, static_cast<double>(m_xs.size()) - 0.2,
                                    ImPlotCond_Always);
            ImPlot::SetupAxisLimits(ImAxis_Y1, 0.0, top > 0.0 ? (stagger ? 1.8 : 1.45) * top : 1.0,
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
        const float raised = -12.0f - ImGui::GetTextLineHeightWithSpacing();
        for (size_t k = 0; k < m_xs.size(); ++k) {
            ImPlot::PlotText(cvText[k].c_str(), m_xs[k], m_ys[k],
                             ImVec2(0, stagger && k % 2 == 1 ? raised : -12.0f));
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
    const std::vector<std::string> names = runNames(ctx, group); // both charts' labels
    drawStepChart(ctx, group, names, chart);
    // The std chart's bars, gathered before its plot: the same line of the pane when beside.
    m_xs.clear();
    m_ys.clear();
    std::vector<double> means;
    std::vector<std::string> tickText;
    for (size_t k = 0; k < group.runs.size(); ++k) {
        RunView& v = runs[group.runs[k]];
        const PhaseStats& t = v.liveSummary().totalMs;
        if (t.n > 0) {
            // A bar per count at its place in the list, the count its tick: 1 and 2 stand as
            // far apart as 2 and 5.
            m_xs.push_back(static_cast<double>(m_xs.size()));
            m_ys.push_back(t.std);
            means.push_back(t.mean);
            // A line per part ("w2" over "10 steps"): side by side they ran into each other.
            std::string tick = names[k];
            for (size_t at; (at = tick.find(" \u00B7 ")) != std::string::npos;) {
                tick.replace(at, std::string(" \u00B7 ").size(), "\n");
            }
            tickText.push_back(tick);
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
