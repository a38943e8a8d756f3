// Time per module of a watched run (docs/WATCH.md, "Time per module"): one row per module of
// the model cut at a depth, its forward and backward time per step as two bars, answering
// "which layer is slow" without a profiler trace. The run is the last selected one that has
// module times, else the newest; a second run with the same modules is overlaid.

#include "plot_helpers.h"
#include "theme.h"
#include "view.h"

#include <algorithm>
#include <cmath>
#include <imgui.h>
#include <implot.h>
#include <utility>

namespace lmprof::ui {

using engine::ModuleTime;

class ModulesView final : public View {
public:
    static constexpr const char* kTitle = "Modules";
    void draw(ViewContext& ctx) override;
    void drawChart(ViewContext& ctx, ImVec2 size);
    // Room for its rows only once a run has module times: an empty tab in front keeps the
    // charts above it their room (as the Ops view does).
    bool wantsRoom() const override { return m_hasTimes; }

private:
    bool m_hasTimes = false;
};

namespace {

const RunView* timedRun(ViewContext& ctx) {
    const RunView* run = nullptr;
    for (const RunView& v : ctx.store.runs()) {
        run = v.result.moduleTimes ? &v : run;
    }
    for (RunView* v : ctx.selectedRuns()) {
        run = v->result.moduleTimes ? v : run;
    }
    return run;
}

} // namespace

void ModulesView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    drawChart(ctx, ImVec2(-1, -1));
    ImGui::End();
}

void ModulesView::drawChart(ViewContext& ctx, ImVec2 size) {
    const RunView* run = timedRun(ctx);
    m_hasTimes = run != nullptr;
    if (!run) {
        ImGui::TextWrapped("No run has times per module. A watched script records them with "
                           "run.time_modules(depth) (docs/WATCH.md).");
        return;
    }
    const engine::ModuleTimes& t = *run->result.moduleTimes;
    ImGui::TextWrapped("%s: forward and backward ms per step of each module at depth %d, "
                       "mean of %d measured steps.",
                       run->name.c_str(), t.depth, t.steps);
    const int n = static_cast<int>(t.modules.size());
    if (n == 0) {
        ImGui::TextDisabled("The model has no modules at that depth.");
        return;
    }
    std::vector<const char*> labels;
    std::vector<double> positions;
    std::vector<double> values(static_cast<size_t>(2 * n));
    for (int i = 0; i < n; ++i) {
        const ModuleTime& m = t.modules[static_cast<size_t>(i)];
        labels.push_back(m.name.c_str());
        positions.push_back(i);
        values[static_cast<size_t>(i)] = m.forwardMs;
        values[static_cast<size_t>(n + i)] = m.backwardMs;
    }
    // A readable row per module: a pane too short for them scrolls rather than overlap the
    // labels; one that holds them (an exported chart, a few modules) draws the chart to fit.
    const float rows =
        static_cast<float>(n) * ImGui::GetTextLineHeightWithSpacing() + ImGui::GetFontSize() * 3.5f;
    const float avail = size.y > 0 ? size.y : ImGui::GetContentRegionAvail().y;
    const bool scrolls = rows > avail;
    if (scrolls) {
        ImGui::BeginChild("modules", ImVec2(0, 0));
    }
    if (plot::beginPlot("##modules", ImVec2(size.x > 0 ? size.x : -1, std::max(avail, rows)))) {
        ImPlot::SetupLegend(ImPlotLocation_NorthEast, ImPlotLegendFlags_Outside);
        ImPlot::SetupAxes(nullptr, nullptr, ImPlotAxisFlags_AutoFit,
                          ImPlotAxisFlags_AutoFit | ImPlotAxisFlags_Invert);
        ImPlot::SetupAxisTicks(ImAxis_Y1, positions.data(), n, labels.data());
        // Forward above backward in each module's row, in the phases' colours.
        for (const auto& [phase, shift] :
             {std::pair{engine::Phase::Forward, -0.18}, std::pair{engine::Phase::Backward, 0.18}}) {
            ImPlotSpec spec;
            spec.Flags = ImPlotBarsFlags_Horizontal;
            spec.FillColor = phaseColor(phase);
            const size_t first = phase == engine::Phase::Forward ? 0 : static_cast<size_t>(n);
            plot::bars(engine::toString(phase).data(), values.data() + first, n, 0.34, shift, spec);
        }
        if (ImPlot::IsPlotHovered()) {
            const int row = static_cast<int>(std::lround(ImPlot::GetPlotMousePos().y));
            if (row >= 0 && row < n) {
                const ModuleTime& m = t.modules[static_cast<size_t>(row)];
                ImGui::BeginTooltip();
                ImGui::TextUnformatted(m.name.c_str());
                ImGui::Text("forward %.3f ms, backward %.3f ms per step", m.forwardMs,
                            m.backwardMs);
                ImGui::Text("%.0f forward call(s) per step", m.forwardCalls);
                ImGui::EndTooltip();
            }
        }
        plot::endPlot(ctx, "modules");
    }
    if (scrolls) {
        ImGui::EndChild();
    }
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry modulesWindow() {
    return windowOf<ModulesView>(
        DockSlot::Bottom,
        {chart<ModulesView>(engine::chart::kModules,
                            "Time per module, forward and backward per step",
                            &ModulesView::drawChart)},
        0.5f);
}

} // namespace lmprof::ui
