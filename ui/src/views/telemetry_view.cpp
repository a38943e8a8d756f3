// Telemetry on the run's time axis, under the step-time chart: each step's time at the
// moment it ended, then process CPU use and RSS, and on NVIDIA GPUs the utilisation,
// SM/memory clocks, power and temperature from NVML. The x axes are linked so a slow step
// lines up with a clock drop; samples with a slowdown reason are marked in red.

#include "theme.h"
#include "views.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

namespace {

void markThrottling(const TelemetrySeries& t) {
    if (t.throttledS.empty()) {
        return;
    }
    ImPlotSpec spec;
    spec.LineColor = palette().throttle;
    ImPlot::PlotInfLines("slowdown", t.throttledS.data(), static_cast<int>(t.throttledS.size()),
                         spec);
}

} // namespace

void TelemetryView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const auto runs = ctx.selectedRuns();
    const bool gpu = !runs.empty() && runs.front()->telemetry.anyGpu;
    if (!runs.empty() && runs.front()->result.samplerError) {
        ImGui::TextColored(palette().warning, "%s", runs.front()->result.samplerError->c_str());
    }
    if (!runs.empty() && runs.front()->result.telemetryNote) {
        ImGui::TextDisabled("no GPU telemetry: %s", runs.front()->result.telemetryNote->c_str());
    } else if (!runs.empty() && runs.front()->telemetry.tS.empty() &&
               runs.front()->result.config.telemetryHz <= 0.0) {
        ImGui::TextDisabled("telemetry was off for this run");
    }
    const int rows = gpu ? 4 : 2;
    if (ImPlot::BeginSubplots("##telemetry", rows, 1, ImVec2(-1, -1),
                              ImPlotSubplotFlags_LinkAllX | ImPlotSubplotFlags_NoTitle)) {
        const bool comparing = runs.size() > 1;
        // Step time at each step's end.
        if (ImPlot::BeginPlot("##step-time")) {
            ImPlot::SetupAxes(nullptr, "step ms", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
            for (RunView* run : runs) {
                const std::string label = comparing ? run->result.id : std::string("step time");
                plot::line(label.c_str(), run->stepEndS, run->series.total, m_scratch);
            }
            if (!runs.empty()) {
                markThrottling(runs.front()->telemetry);
            }
            plot::endPlot(ctx, "telemetry-step-time");
        }
        // Process CPU use and RSS.
        if (ImPlot::BeginPlot("##cpu")) {
            ImPlot::SetupAxes(gpu ? nullptr : "time since run start (s)", "CPU %",
                              ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
            ImPlot::SetupAxis(ImAxis_Y2, "RSS MiB",
                              ImPlotAxisFlags_AutoFit | ImPlotAxisFlags_Opposite);
            for (RunView* run : runs) {
                const TelemetrySeries& t = run->telemetry;
                const std::string prefix = comparing ? run->result.id + " " : std::string();
                ImPlot::SetAxes(ImAxis_X1, ImAxis_Y1);
                plot::line((prefix + "process CPU %").c_str(), t.tS, t.cpuPercent, m_scratch);
                if (gpu) {
                    plot::line((prefix + "GPU util %").c_str(), t.tS, t.gpuUtil, m_scratch);
                    plot::line((prefix + "GPU memory util %").c_str(), t.tS, t.memUtil, m_scratch);
                }
                ImPlot::SetAxes(ImAxis_X1, ImAxis_Y2);
                plot::line((prefix + "RSS").c_str(), t.tS, t.rssMiB, m_scratch);
            }
            plot::endPlot(ctx, "telemetry-cpu");
        }
        if (gpu) {
            const TelemetrySeries& t = runs.front()->telemetry;
            if (ImPlot::BeginPlot("##clocks")) {
                ImPlot::SetupAxes(nullptr, "MHz", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
                plot::line("SM clock", t.tS, t.smClockMHz, m_scratch);
                plot::line("memory clock", t.tS, t.memClockMHz, m_scratch);
                markThrottling(t);
                plot::endPlot(ctx, "telemetry-clocks");
            }
            if (ImPlot::BeginPlot("##power")) {
                ImPlot::SetupAxes("time since run start (s)", "W", ImPlotAxisFlags_AutoFit,
                                  ImPlotAxisFlags_AutoFit);
                ImPlot::SetupAxis(ImAxis_Y2, "°C",
                                  ImPlotAxisFlags_AutoFit | ImPlotAxisFlags_Opposite);
                plot::line("power", t.tS, t.powerW, m_scratch);
                ImPlot::SetAxes(ImAxis_X1, ImAxis_Y2);
                plot::line("temperature", t.tS, t.temperatureC, m_scratch);
                plot::endPlot(ctx, "telemetry-power");
            }
        }
        ImPlot::EndSubplots();
    }
    ImGui::End();
}

} // namespace lmprof::ui
