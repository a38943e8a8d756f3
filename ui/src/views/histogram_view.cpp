// Distribution of the measured step times of each selected run (the first six), in its
// colour, with n, mean, median, std and CV written out (NOISY when the spread is large; a
// table that scrolls past three runs), the mean and median marked as lines and, for up to
// three runs, the mean labelled inside the chart. Bins: √n between the
// run's fastest and slowest step. Hovering shows the measured step nearest the mouse.

#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "theme.h"
#include "view.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

class HistogramView final : public View {
public:
    static constexpr const char* kTitle = "Distribution";
    void draw(ViewContext& ctx) override;
    // The chart alone, filling `size` (the window's, or an exported PNG's).
    void drawChart(ViewContext& ctx, ImVec2 size);

private:
    plot::FollowAxis m_x, m_y;
    std::vector<double> m_values;
};

namespace {

// Up to this many selected runs, each run's statistics are a line above the chart; past it,
// a table that scrolls.
constexpr size_t kSummaryLines = 3;

int binCount(size_t n) {
    return std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
}

// The tallest bin of values in `bins` equal bins over [lo, hi].
double tallestBin(const std::vector<double>& values, int bins, double lo, double hi) {
    std::vector<int> counts(static_cast<size_t>(bins), 0);
    const double width = hi > lo ? (hi - lo) / bins : 1.0;
    for (double v : values) {
        const int b = std::clamp(static_cast<int>((v - lo) / width), 0, bins - 1);
        ++counts[static_cast<size_t>(b)];
    }
    return *std::max_element(counts.begin(), counts.end());
}

void drawSummaryLine(RunView& run) {
    const auto& t = run.liveSummary().totalMs;
    plot::swatch(run);
    if (t.n == 0) {
        ImGui::TextDisabled("%s: no measured steps yet", run.name.c_str());
        return;
    }
    if (t.noisy) {
        ImGui::TextColored(palette().warning, "NOISY");
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("The interquartile range is over %.0f%% of the median: more "
                              "measured steps, or a quieter machine, would help.",
                              100.0 * engine::kNoisyIqrRatio);
        }
        ImGui::SameLine();
    }
    ImGui::TextWrapped("%s: n = %d, mean %s ms, median %s, std %s, CV %s%%", run.name.c_str(), t.n,
                       engine::formatFixed(t.mean, 2).c_str(),
                       engine::formatFixed(t.median, 2).c_str(),
                       t.n > 1 ? engine::formatFixed(t.std, 2).c_str() : "-",
                       t.n > 1 ? engine::formatFixed(100.0 * t.cv, 1).c_str() : "-");
}

// Many runs' statistics as a table of at most kSummaryRows rows in view, which scrolls: the
// pane keeps its chart, whatever the selection (a line each pushed the histogram out of view
// at 100 runs).
void drawSummaryTable(const std::vector<RunView*>& runs) {
    constexpr int kSummaryRows = 4;
    const float rowHeight = ImGui::GetTextLineHeightWithSpacing();
    const float height =
        rowHeight * (static_cast<float>(std::min<size_t>(runs.size(), kSummaryRows)) + 1.5f);
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_BordersInnerV;
    if (!ImGui::BeginTable("statistics", 7, flags, ImVec2(-1, height))) {
        return;
    }
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* h : {"run", "n", "mean ms", "median", "std", "CV %", ""}) {
        ImGui::TableSetupColumn(h);
    }
    ImGui::TableHeadersRow();
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(runs.size()));
    while (clipper.Step()) {
        for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
            RunView& run = *runs[static_cast<size_t>(i)];
            const auto& t = run.liveSummary().totalMs;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            plot::swatch(run);
            ImGui::TextUnformatted(run.name.c_str());
            const bool spread = t.n > 1;
            for (const std::string& cell :
                 {std::to_string(t.n), t.n > 0 ? engine::formatFixed(t.mean, 2) : "-",
                  t.n > 0 ? engine::formatFixed(t.median, 2) : "-",
                  spread ? engine::formatFixed(t.std, 2) : "-",
                  spread ? engine::formatFixed(100.0 * t.cv, 1) : "-"}) {
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(cell.c_str());
            }
            ImGui::TableNextColumn();
            if (t.noisy) {
                ImGui::TextColored(palette().warning, "NOISY");
            }
        }
    }
    ImGui::EndTable();
}

// Over the plot: each run's measured step nearest the mouse.
void nearestStepTooltip(const std::vector<RunView*>& runs) {
    if (!ImPlot::IsPlotHovered()) {
        return;
    }
    const double at = ImPlot::GetPlotMousePos().x;
    ImGui::BeginTooltip();
    for (const RunView* run : runs) {
        const engine::StepRecord* nearest = nullptr;
        for (const auto& r : run->result.steps) {
            if (engine::isMeasured(r) &&
                (!nearest || std::abs(r.totalMs - at) < std::abs(nearest->totalMs - at))) {
                nearest = &r;
            }
        }
        if (nearest) {
            plot::swatch(*run);
            ImGui::Text("%s: step %d, %.2f ms", run->name.c_str(), nearest->index,
                        nearest->totalMs);
        }
    }
    ImGui::EndTooltip();
}

} // namespace

void HistogramView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const auto runs = ctx.selectedRuns();
    if (runs.size() <= kSummaryLines) {
        for (RunView* run : runs) {
            drawSummaryLine(*run);
        }
    } else {
        drawSummaryTable(runs);
    }
    drawChart(ctx, ImVec2(-1, -1));
    ImGui::End();
}

void HistogramView::drawChart(ViewContext& ctx, ImVec2 size) {
    // Overlaid histograms past a few runs are noise: the first kTimelineRuns are drawn, as in
    // the timelines, and a note says so (the table above has every run's figures).
    const auto selected = ctx.selectedRuns();
    const auto runs = plot::timelineRuns(selected);
    if (plot::beginPlot("##histogram", size)) {
        ImPlot::SetupAxes("step ms (measured steps)", "steps");
        const bool legendShown = plot::setupLegend(runs);
        plot::watchInput({&m_x, &m_y});
        plot::Range x, y;
        for (RunView* run : runs) {
            engine::measuredStepTimes(run->result.steps, m_values);
            if (m_values.empty()) {
                continue;
            }
            const auto [lo, hi] = std::minmax_element(m_values.begin(), m_values.end());
            x.add(*lo);
            x.add(*hi);
            y.add(0.0);
            y.add(tallestBin(m_values, binCount(m_values.size()), *lo, *hi));
        }
        m_x.setup(ImAxis_X1, x, 0.08);
        m_y.setup(ImAxis_Y1, y, 0.12);
        bool any = false;
        float tagOffset = 12.0f; // each run's mean label a line lower than the previous one
        for (RunView* run : runs) {
            engine::measuredStepTimes(run->result.steps, m_values);
            if (m_values.empty()) {
                continue;
            }
            any = true;
            const auto [lo, hi] = std::minmax_element(m_values.begin(), m_values.end());
            // One bin over equal times would have no width: a bar ±0.5% (at least ±0.01 ms).
            const double half = *hi > *lo ? 0.0 : std::max(std::abs(*lo) * 0.005, 0.01);
            ImPlotSpec spec = plot::runSpec(*run);
            spec.FillAlpha = runs.size() > 1 ? 0.5f : 0.8f;
            ImPlot::PlotHistogram(plot::legendName(*run).c_str(), m_values.data(),
                                  static_cast<int>(m_values.size()), binCount(m_values.size()), 1.0,
                                  ImPlotRange(*lo - half, *hi + half), spec);
            const auto& t = run->liveSummary().totalMs;
            const double marks[2] = {t.mean, t.median};
            ImPlotSpec markSpec = plot::runSpec(*run);
            markSpec.Flags = ImPlotItemFlags_NoLegend;
            ImPlot::PlotInfLines("##marks", marks, 2, markSpec);
            // Inside the plot, under its top edge (a tag on the axis would cover a tick); for a
            // few runs only, a line lower each (the table and the tooltip have every mean).
            if (runs.size() <= kSummaryLines) {
                ImPlot::Annotation(t.mean, plot::shownRange(ImAxis_Y1).hi, runColor(run->color),
                                   ImVec2(0, tagOffset), true, "mean %.1f", t.mean);
                tagOffset += ImGui::GetTextLineHeightWithSpacing();
            }
        }
        if (!any) {
            plot::emptyHint(runs, "measured steps");
        }
        if (any) {
            nearestStepTooltip(runs);
        }
        if (legendShown) {
            plot::legendTooltips(runs);
        } else {
            plot::hiddenLegendNote(runs);
        }
        plot::timelineNote(selected);
        plot::endPlot(ctx, "distribution", runs);
    }
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry histogramWindow() {
    return windowOf<HistogramView>(DockSlot::ChartTopRight,
                                   {chart<HistogramView>(engine::chart::kDistribution,
                                                         "Distribution of the measured step times",
                                                         &HistogramView::drawChart)});
}

} // namespace lmprof::ui
