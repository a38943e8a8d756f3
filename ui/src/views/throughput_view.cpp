// Throughput per step (tokens/s = B·T / step time) of the selected runs, each in its colour,
// with the values of the step under the mouse in a tooltip; past a dozen runs, the runs as one
// band (runs_band.h).

#include "band_plot.h"
#include "plot_helpers.h"
#include "theme.h"
#include "view.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

class ThroughputView final : public View {
public:
    static constexpr const char* kTitle = "Throughput";
    void draw(ViewContext& ctx) override;
    // The chart alone, filling `size` (the window's, or an exported PNG's).
    void drawChart(ViewContext& ctx, ImVec2 size);

private:
    void drawRuns(const std::vector<RunView*>& runs);
    plot::FollowAxis m_x, m_y;
    Decimated m_scratch, m_scratchHigh;
    RunsBandCache m_band;
};

void ThroughputView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    drawChart(ctx, ImVec2(-1, -1));
    ImGui::End();
}

// Each run's line, and the values of the step under the mouse.
void ThroughputView::drawRuns(const std::vector<RunView*>& runs) {
    for (RunView* run : runs) {
        plot::line(plot::legendName(*run).c_str(), run->series.index, run->series.tokensPerS,
                   m_scratch, plot::runSpec(*run));
    }
    const long step = plot::hoveredStep();
    if (step >= 0 && !runs.empty()) {
        ImGui::BeginTooltip();
        ImGui::Text("step %ld", step);
        for (const RunView* run : runs) {
            if (step < static_cast<long>(run->series.tokensPerS.size())) {
                plot::swatch(*run);
                ImGui::Text("%s: %.0f tokens/s", run->name.c_str(),
                            run->series.tokensPerS[static_cast<size_t>(step)]);
            }
        }
        ImGui::EndTooltip();
    }
}

void ThroughputView::drawChart(ViewContext& ctx, ImVec2 size) {
    const auto runs = ctx.selectedRuns();
    if (plot::beginPlot("##throughput", size)) {
        ImPlot::SetupAxes("step", "tokens/s");
        const GroupedBands* band =
            plot::drawsBand(runs) ? &m_band.of(runs, &StepSeries::tokensPerS) : nullptr;
        const bool legendShown = band ? plot::setupGroupLegend(*band) : plot::setupLegend(runs);
        plot::watchInput({&m_x, &m_y});
        const plot::Range x = plot::stepRange(runs);
        m_x.setup(ImAxis_X1, x, 0.02);
        plot::stepTicks(ImAxis_X1);
        const plot::Range window = m_x.following() ? x : plot::shownRange(ImAxis_X1);
        plot::Range y;
        if (band) {
            y = plot::bandExtent(*band, window);
        } else {
            for (const RunView* run : runs) {
                y.add(plot::extent(run->series.index, run->series.tokensPerS, window));
            }
        }
        m_y.setup(ImAxis_Y1, y, 0.06);
        if (band) {
            plot::drawBands(*band, m_scratch, m_scratchHigh);
            plot::bandNote(*band);
            if (!legendShown) {
                plot::hiddenLegendNote(runs);
            }
            plot::bandTooltip(runs, &StepSeries::tokensPerS, "%.0f tokens/s");
        } else {
            plot::linesOfRuns(runs.size());
            drawRuns(runs);
            if (legendShown) {
                plot::legendTooltips(runs);
            } else {
                plot::hiddenLegendNote(runs);
            }
        }
        if (y.empty()) {
            plot::emptyHint(runs, "steps");
        }
        plot::endPlot(ctx, "throughput");
    }
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry throughputWindow() {
    return windowOf<ThroughputView>(
        DockSlot::ChartBottomRight,
        {chart<ThroughputView>(engine::chart::kThroughput, "Throughput, tokens per second",
                               &ThroughputView::drawChart)});
}

} // namespace lmprof::ui
