// Memory over time: allocated and reserved bytes (and RSS) of the selected runs, phases of
// the first selected run as background bands, and its measured peak as a line.

#include "views.h"

#include <algorithm>
#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

namespace {
unsigned int phaseColor(engine::Phase p) {
    switch (p) {
    case engine::Phase::Forward:
        return IM_COL32(70, 130, 220, 40);
    case engine::Phase::Backward:
        return IM_COL32(220, 120, 60, 40);
    case engine::Phase::Optimizer:
        return IM_COL32(80, 180, 100, 40);
    }
    return 0;
}
// Bands are drawn only while this few are visible; zoom in to see them on long runs.
constexpr size_t kMaxBands = 1500;
} // namespace

void MemoryView::draw(ViewContext& ctx) {
    if (!ImGui::Begin("Memory")) {
        ImGui::End();
        return;
    }
    const auto runs = ctx.selectedRuns();
    if (ImPlot::BeginPlot("##memory", ImVec2(-1, -1))) {
        ImPlot::SetupAxes("time since run start (ms)", "MiB", ImPlotAxisFlags_AutoFit,
                          ImPlotAxisFlags_AutoFit);
        ImPlot::SetupLegend(ImPlotLocation_NorthWest);
        if (!runs.empty()) {
            // Samples come in (phase start, phase end) pairs: one band per pair.
            const MemorySeries& m = runs.front()->memory;
            const ImPlotRect limits = ImPlot::GetPlotLimits();
            size_t drawn = 0;
            for (size_t i = 0; i + 1 < m.tMs.size() && drawn < kMaxBands; i += 2) {
                if (m.tMs[i + 1] < limits.X.Min || m.tMs[i] > limits.X.Max) {
                    continue;
                }
                plot::band(m.tMs[i], m.tMs[i + 1], phaseColor(m.phase[i]));
                ++drawn;
            }
        }
        const bool comparing = runs.size() > 1;
        for (RunView* run : runs) {
            const MemorySeries& m = run->memory;
            const std::string prefix = comparing ? run->result.id + " " : std::string();
            plot::line((prefix + "allocated").c_str(), m.tMs, m.allocatedMiB, m_scratch);
            if (run->result.resolvedDevice.rfind("cuda", 0) == 0) {
                plot::line((prefix + "reserved").c_str(), m.tMs, m.reservedMiB, m_scratch);
            }
            plot::line((prefix + "RSS").c_str(), m.tMs, m.rssMiB, m_scratch);
        }
        if (!runs.empty()) {
            // The measured peak comes from the allocator inside each phase; samples are
            // taken at phase boundaries and can miss it, so it is drawn as its own line.
            const double peakMiB =
                static_cast<double>(runs.front()->liveSummary().peakBytes.max()) /
                (1024.0 * 1024.0);
            if (peakMiB > 0.0) {
                ImPlotSpec spec;
                spec.Flags = ImPlotInfLinesFlags_Horizontal | ImPlotItemFlags_NoLegend;
                spec.LineColor = ImVec4(0.9f, 0.3f, 0.3f, 1.0f);
                ImPlot::PlotInfLines("##peak", &peakMiB, 1, spec);
                ImPlot::TagY(peakMiB, ImVec4(0.9f, 0.3f, 0.3f, 1.0f), "peak %.1f", peakMiB);
            }
        }
        ImPlot::EndPlot();
    }
    ImGui::End();
}

} // namespace lmprof::ui
