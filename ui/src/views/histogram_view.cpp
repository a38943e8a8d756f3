// Distribution of the measured step times of each selected run, with mean, median, std
// and CV written out, the mean and median marked as lines (the mean tagged).

#include "theme.h"
#include "views.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

void HistogramView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const auto runs = ctx.selectedRuns();
    for (RunView* run : runs) {
        const auto& t = run->liveSummary().totalMs;
        if (t.n == 0) {
            ImGui::TextDisabled("%s: no measured steps yet", run->result.id.c_str());
            continue;
        }
        ImGui::Text("%s  n %d  mean %.2f  median %.2f  std %.2f  CV %.1f%%%s",
                    run->result.id.c_str(), t.n, t.mean, t.median, t.std, 100.0 * t.cv,
                    t.noisy ? "  NOISY" : "");
    }
    if (ImPlot::BeginPlot("##histogram", ImVec2(-1, -1))) {
        ImPlot::SetupAxes("step ms (measured steps)", "steps", ImPlotAxisFlags_AutoFit,
                          ImPlotAxisFlags_AutoFit);
        for (RunView* run : runs) {
            engine::measuredStepTimes(run->result.steps, m_values);
            if (m_values.empty()) {
                continue;
            }
            ImPlotSpec spec;
            spec.FillAlpha = runs.size() > 1 ? 0.5f : 0.8f;
            ImPlot::PlotHistogram(run->result.id.c_str(), m_values.data(),
                                  static_cast<int>(m_values.size()), ImPlotBin_Sqrt, 1.0,
                                  ImPlotRange(), spec);
            const auto& t = run->liveSummary().totalMs;
            const double marks[2] = {t.mean, t.median};
            ImPlotSpec markSpec;
            markSpec.Flags = ImPlotItemFlags_NoLegend;
            ImPlot::PlotInfLines("##marks", marks, 2, markSpec);
            ImPlot::TagX(t.mean, palette().warning, "mean");
        }
        plot::endPlot(ctx, "distribution");
    }
    ImGui::End();
}

} // namespace lmprof::ui
