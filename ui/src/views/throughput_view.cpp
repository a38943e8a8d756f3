// Throughput per step (tokens/s = B·T / step time) of the selected runs.

#include "views.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

void ThroughputView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const auto runs = ctx.selectedRuns();
    if (ImPlot::BeginPlot("##throughput", ImVec2(-1, -1))) {
        ImPlot::SetupAxes("step", "tokens/s", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
        for (RunView* run : runs) {
            const std::string label = run->result.id.empty() ? "tokens/s" : run->result.id;
            plot::line(label.c_str(), run->series.index, run->series.tokensPerS, m_scratch);
        }
        plot::endPlot(ctx, "throughput");
    }
    ImGui::End();
}

} // namespace lmprof::ui
