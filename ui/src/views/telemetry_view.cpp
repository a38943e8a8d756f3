// Telemetry on the run's time axis, under the step-time chart: each step's time at the
// moment it ended, then process CPU use and RSS, and on NVIDIA GPUs the utilisation,
// SM/memory clocks, power and temperature from NVML. The charts share one x range (they
// follow the runs together, and zooming one zooms all) so a slow step lines up with a clock
// drop; samples with a slowdown reason are marked in red. Compared runs get one legend entry
// each, in their colour; a run's secondary series (RSS, temperature) are drawn faint.

#include "plot_helpers.h"
#include "theme.h"
#include "view.h"

#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

class TelemetryView final : public View {
public:
    static constexpr const char* kTitle = "Telemetry";
    void draw(ViewContext& ctx) override;
    // The chart alone, filling `size` (the window's, or an exported PNG's).
    void drawChart(ViewContext& ctx, ImVec2 size);

private:
    struct Rows;
    plot::Range setupX(Rows& r, int row);
    void drawStepTimes(Rows& r);
    void drawCpu(Rows& r);
    void drawGpu(Rows& r);

    plot::FollowAxis m_x;     // shared by the linked charts
    plot::FollowAxis m_y[4];  // per chart: step ms, CPU % / GPU util, clocks, power
    plot::FollowAxis m_y2[4]; // per chart's right axis: -, RSS, -, temperature
    Decimated m_scratch;
};

namespace {

constexpr float kFaint = 0.45f;

void markThrottling(const TelemetrySeries& t) {
    if (t.throttledS.empty()) {
        return;
    }
    ImPlot::PlotInfLines("slowdown", t.throttledS.data(), static_cast<int>(t.throttledS.size()),
                         plot::colorSpec(palette().throttle));
}

// The y range of ys against xs over the x window, of every run.
template <typename Member>
plot::Range runsExtent(const std::vector<RunView*>& runs, const plot::Range& window, Member ys) {
    plot::Range r;
    for (const RunView* run : runs) {
        r.add(plot::extent(run->telemetry.tS, run->telemetry.*ys, window));
    }
    return r;
}

// The value of the sample nearest the mouse, per run, as tooltip lines.
void sampleTooltip(const std::vector<RunView*>& runs, const char* unit,
                   const std::vector<double>& (*xs)(const RunView&),
                   const std::vector<double>& (*ys)(const RunView&)) {
    if (!ImPlot::IsPlotHovered() || runs.empty()) {
        return;
    }
    ImGui::BeginTooltip();
    ImGui::Text("%.2f s", ImPlot::GetPlotMousePos().x);
    for (const RunView* run : runs) {
        const long i = plot::hoveredIndex(xs(*run));
        if (i >= 0 && static_cast<size_t>(i) < ys(*run).size()) {
            plot::swatch(*run);
            ImGui::Text("%s: %.1f %s at %.2f s", run->name.c_str(),
                        ys(*run)[static_cast<size_t>(i)], unit, xs(*run)[static_cast<size_t>(i)]);
        }
    }
    ImGui::EndTooltip();
}

const std::vector<double>& stepEnds(const RunView& r) {
    return r.stepEndS;
}
const std::vector<double>& stepTotals(const RunView& r) {
    return r.series.total;
}
const std::vector<double>& sampleTimes(const RunView& r) {
    return r.telemetry.tS;
}
const std::vector<double>& cpuPercent(const RunView& r) {
    return r.telemetry.cpuPercent;
}

} // namespace

void TelemetryView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const auto runs = ctx.selectedRuns();
    if (!runs.empty() && runs.front()->result.samplerError) {
        ImGui::TextColored(palette().warning, "%s", runs.front()->result.samplerError->c_str());
    }
    if (!runs.empty() && runs.front()->result.telemetryNote) {
        ImGui::TextDisabled("no GPU telemetry: %s", runs.front()->result.telemetryNote->c_str());
    } else if (!runs.empty() && runs.front()->telemetry.tS.empty() &&
               runs.front()->result.config.telemetryHz <= 0.0) {
        ImGui::TextDisabled("telemetry was off for this run");
    }
    drawChart(ctx, ImVec2(-1, -1));
    ImGui::End();
}

// What the rows of one chart share: the runs, their common x range, whether any ran on a
// GPU, and whether several are compared.
struct TelemetryView::Rows {
    ViewContext& ctx;
    const std::vector<RunView*>& selected;
    std::vector<RunView*> runs;
    plot::Range x{};
    bool gpu = false;
    bool comparing = false;
    bool legendShown = true;
};

// A row's x axis (linked, following the runs) and legend; the x range it shows.
// Compared runs: each chart's legend at its right, outside the data (every row has one, so
// the rows' time axes stay aligned); a single run's charts each name their own series inside
// the chart.
plot::Range TelemetryView::setupX(Rows& r, int row) {
    plot::linesOfRuns(r.runs.size(), 1.0f);
    plot::watchInput({&m_x, &m_y[row], &m_y2[row]});
    m_x.setup(ImAxis_X1, r.x, 0.0);
    if (r.comparing) {
        r.legendShown = plot::setupLegend(r.runs);
    } else {
        // Above the data in a row: outside it, without the width two y axes already take.
        ImPlot::SetupLegend(ImPlotLocation_North,
                            ImPlotLegendFlags_Outside | ImPlotLegendFlags_Horizontal);
    }
    return m_x.following() ? r.x : plot::shownRange(ImAxis_X1);
}

// Step time at each step's end.
void TelemetryView::drawStepTimes(Rows& r) {
    if (!plot::beginPlot("##step-time")) {
        return;
    }
    ImPlot::SetupAxes(nullptr, "step ms");
    const plot::Range window = setupX(r, 0);
    plot::Range y;
    for (const RunView* run : r.runs) {
        y.add(plot::extent(run->stepEndS, run->series.total, window));
    }
    m_y[0].setup(ImAxis_Y1, y, 0.06);
    for (RunView* run : r.runs) {
        const std::string label = r.comparing ? plot::legendName(*run) : std::string("step time");
        plot::line(label.c_str(), run->stepEndS, run->series.total, m_scratch, plot::runSpec(*run));
    }
    if (!r.runs.empty()) {
        markThrottling(r.runs.front()->telemetry);
    }
    plot::verdictMark(r.ctx, r.runs, true);
    if (y.empty()) {
        plot::emptyHint(r.runs, "steps");
    }
    sampleTooltip(r.runs, "ms", stepEnds, stepTotals);
    plot::legendTooltips(r.runs);
    plot::timelineNote(r.selected);
    if (!r.legendShown) {
        plot::hiddenLegendNote(r.runs);
    }
    plot::endPlot(r.ctx, "telemetry-step-time", r.runs);
}

// Process CPU use (and GPU utilisation) on the left axis, RSS on the right.
void TelemetryView::drawCpu(Rows& r) {
    if (!plot::beginPlot("##cpu", ImVec2(-1, 0))) {
        return;
    }
    ImPlot::SetupAxes(r.gpu ? nullptr : "time since run start (s)",
                      r.gpu ? "CPU %, GPU util %" : "CPU %");
    ImPlot::SetupAxis(ImAxis_Y2, "RSS MiB", ImPlotAxisFlags_Opposite);
    const plot::Range window = setupX(r, 1);
    plot::Range y = runsExtent(r.runs, window, &TelemetrySeries::cpuPercent);
    if (r.gpu) {
        y.add(runsExtent(r.runs, window, &TelemetrySeries::gpuUtil));
        y.add(runsExtent(r.runs, window, &TelemetrySeries::memUtil));
    }
    m_y[1].setup(ImAxis_Y1, y, 0.06);
    m_y2[1].setup(ImAxis_Y2, runsExtent(r.runs, window, &TelemetrySeries::rssMiB), 0.06);
    for (RunView* run : r.runs) {
        const TelemetrySeries& t = run->telemetry;
        const auto label = [&](const char* series) {
            return r.comparing ? plot::legendName(*run) : std::string(series);
        };
        ImPlot::SetAxes(ImAxis_X1, ImAxis_Y1);
        plot::line(label("process CPU %").c_str(), t.tS, t.cpuPercent, m_scratch,
                   plot::runSpec(*run));
        if (r.gpu) {
            const auto spec = [&](int series) {
                return r.comparing ? plot::runSpec(*run, kFaint)
                                   : plot::colorSpec(seriesColor(series));
            };
            plot::line(label("GPU util %").c_str(), t.tS, t.gpuUtil, m_scratch, spec(1));
            plot::line(label("GPU memory util %").c_str(), t.tS, t.memUtil, m_scratch, spec(2));
        }
        ImPlot::SetAxes(ImAxis_X1, ImAxis_Y2);
        plot::line(label("RSS").c_str(), t.tS, t.rssMiB, m_scratch,
                   r.comparing ? plot::runSpec(*run, kFaint) : plot::colorSpec(seriesColor(0)));
    }
    if (y.empty()) {
        plot::emptyHint(r.runs, "samples");
    }
    sampleTooltip(r.runs, "% CPU", sampleTimes, cpuPercent);
    plot::legendTooltips(r.runs);
    plot::endPlot(r.ctx, "telemetry-cpu");
}

// The first run's SM and memory clocks, then its power and temperature (NVML).
void TelemetryView::drawGpu(Rows& r) {
    const TelemetrySeries& t = r.runs.front()->telemetry;
    const std::vector<RunView*> first = {r.runs.front()};
    if (plot::beginPlot("##clocks")) {
        ImPlot::SetupAxes(nullptr, "MHz");
        const plot::Range window = setupX(r, 2);
        plot::Range y = runsExtent(first, window, &TelemetrySeries::smClockMHz);
        y.add(runsExtent(first, window, &TelemetrySeries::memClockMHz));
        m_y[2].setup(ImAxis_Y1, y, 0.06);
        plot::line("SM clock", t.tS, t.smClockMHz, m_scratch, plot::runSpec(*r.runs.front()));
        plot::line("memory clock", t.tS, t.memClockMHz, m_scratch, plot::colorSpec(seriesColor(1)));
        markThrottling(t);
        plot::endPlot(r.ctx, "telemetry-clocks");
    }
    if (plot::beginPlot("##power")) {
        ImPlot::SetupAxes("time since run start (s)", "W");
        ImPlot::SetupAxis(ImAxis_Y2, "°C", ImPlotAxisFlags_Opposite);
        const plot::Range window = setupX(r, 3);
        m_y[3].setup(ImAxis_Y1, runsExtent(first, window, &TelemetrySeries::powerW), 0.06);
        m_y2[3].setup(ImAxis_Y2, runsExtent(first, window, &TelemetrySeries::temperatureC), 0.06);
        plot::line("power", t.tS, t.powerW, m_scratch, plot::runSpec(*r.runs.front()));
        ImPlot::SetAxes(ImAxis_X1, ImAxis_Y2);
        plot::line("temperature", t.tS, t.temperatureC, m_scratch, plot::colorSpec(seriesColor(2)));
        plot::endPlot(r.ctx, "telemetry-power");
    }
}

void TelemetryView::drawChart(ViewContext& ctx, ImVec2 size) {
    const auto selected = ctx.selectedRuns();
    Rows r{ctx, selected, plot::timelineRuns(selected)};
    r.gpu = !r.runs.empty() && r.runs.front()->telemetry.anyGpu;
    r.comparing = r.runs.size() > 1;
    // One x range for all the charts: from the run start to the last step or sample.
    for (const RunView* run : r.runs) {
        r.x.add(0.0);
        for (const auto* times : {&run->stepEndS, &run->telemetry.tS}) {
            if (!times->empty()) {
                r.x.add(times->back());
            }
        }
    }
    if (ImPlot::BeginSubplots("##telemetry", r.gpu ? 4 : 2, 1, size,
                              ImPlotSubplotFlags_LinkAllX | ImPlotSubplotFlags_NoTitle)) {
        drawStepTimes(r);
        drawCpu(r);
        if (r.gpu) {
            drawGpu(r);
        }
        ImPlot::EndSubplots();
        // The grid's rectangle: the size "telemetry" exports at, as the window shows it.
        plot::rememberRect(ctx, "telemetry", ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
    }
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry telemetryWindow() {
    return windowOf<TelemetryView>(
        DockSlot::ChartBottomLeft,
        {chart<TelemetryView>(engine::chart::kTelemetry,
                              "Telemetry: step time, CPU use and RSS over the run",
                              &TelemetryView::drawChart)});
}

} // namespace lmprof::ui
