// Per-step times: forward, backward, optimizer and the whole step for the selected run
// (or the whole step of each selected run when comparing), the warmup steps shaded, and
// the running mean ± std of the measured steps as a band.

#include "theme.h"
#include "views.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

void StepTimesView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const auto runs = ctx.selectedRuns();
    if (ImPlot::BeginPlot("##steptimes", ImVec2(-1, -1))) {
        ImPlot::SetupAxes("step", "ms", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
        ImPlot::SetupLegend(ImPlotLocation_NorthEast);
        if (!runs.empty() && runs.front()->result.config.warmupSteps > 0) {
            const double end = runs.front()->result.config.warmupSteps - 0.5;
            plot::band(-0.5, end, IM_COL32(128, 128, 128, 48));
            ImPlot::PlotText("warmup", end / 2.0 - 0.25, 0.0, ImVec2(0, -12));
        }
        // Op-profiled steps run slower under the profiler and are left out of the band (shaded
        // for one run; compared runs may have profiled different steps).
        if (runs.size() == 1 && runs.front()->result.config.opProfile) {
            const auto& op = *runs.front()->result.config.opProfile;
            const double begin = op.firstStep - 0.5;
            const double end = begin + op.stepCount;
            ImVec4 tint = palette().warning;
            tint.w = 0.15f;
            plot::band(begin, end, ImGui::GetColorU32(tint));
            ImPlot::PlotText("op profile", (begin + end) / 2.0, 0.0, ImVec2(0, -28));
        }
        const bool comparing = runs.size() > 1;
        for (RunView* run : runs) {
            const StepSeries& s = run->series;
            const std::string id = run->result.id.empty() ? "run" : run->result.id;
            if (!comparing) {
                plot::line("forward", s.index, s.forward, m_scratch);
                if (run->result.config.mode != engine::Mode::Forward) {
                    plot::line("backward", s.index, s.backward, m_scratch);
                }
                if (run->result.config.mode == engine::Mode::Train) {
                    plot::line("optimizer", s.index, s.optimizer, m_scratch);
                }
            }
            const std::string stepLabel = comparing ? id : std::string("step");
            plot::line(stepLabel.c_str(), s.index, s.total, m_scratch);
            const std::string bandLabel = (comparing ? id + " " : std::string()) + "mean ± std";
            plot::shaded(bandLabel.c_str(), s.index, s.runLow, s.runHigh, 0.25f, m_scratch,
                         m_scratchHigh);
            plot::line(bandLabel.c_str(), s.index, s.runMean, m_scratch);
        }
        plot::endPlot(ctx, "step-times");
    }
    ImGui::End();
}

} // namespace lmprof::ui
