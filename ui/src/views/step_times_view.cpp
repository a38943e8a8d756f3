// Per-step times: forward, backward, optimizer (and a watched script's data and rest) and
// the whole step for the selected run
// (or the whole step of each selected run when comparing, in the run's colour), the warmup
// steps shaded, the running mean ± std of the measured steps as a band, and the values of
// the step under the mouse in a tooltip. Past a dozen runs, the runs are drawn as one band
// (runs_band.h). The axes follow the runs until the user zooms; the y range leaves the
// (often far slower) warmup steps out by default.

#include "band_plot.h"
#include "plot_helpers.h"
#include "theme.h"
#include "view.h"

#include <imgui.h>
#include <implot.h>
#include <limits>
#include <set>

namespace lmprof::ui {

class StepTimesView final : public View {
public:
    static constexpr const char* kTitle = "Step times";
    void draw(ViewContext& ctx) override;
    // The chart alone, filling `size` (the window's, or an exported PNG's).
    void drawChart(ViewContext& ctx, ImVec2 size);

private:
    bool m_measuredOnly = true; // y range over the measured steps (where there are some)
    void drawRuns(const std::vector<RunView*>& runs, bool comparing);
    plot::FollowAxis m_x, m_y;
    Decimated m_scratch;
    Decimated m_scratchHigh;
    RunsBandCache m_band;
};

namespace {

// The y range of the runs' step times over the steps in xWindow, from the first measured step
// on when measuredOnly (and such steps exist).
plot::Range timeAxis(const std::vector<RunView*>& runs, const plot::Range& xWindow,
                     bool measuredOnly, bool comparing, const GroupedBands* band) {
    plot::Range y;
    if (band) { // many runs: the band's, from the first step any run measured
        plot::Range window = xWindow;
        if (measuredOnly) {
            int warmup = std::numeric_limits<int>::max();
            for (const RunView* run : runs) {
                warmup = std::min(warmup, run->result.config.warmupSteps);
            }
            window.lo = std::max(window.lo, warmup - 0.5);
        }
        y = plot::bandExtent(*band, window);
        return y.empty() && measuredOnly ? plot::bandExtent(*band, xWindow) : y;
    }
    for (const RunView* run : runs) {
        const StepSeries& s = run->series;
        const size_t measuredFrom =
            static_cast<size_t>(std::max(0, run->result.config.warmupSteps));
        const size_t first = measuredOnly && s.index.size() > measuredFrom ? measuredFrom : 0;
        y.add(plot::extent(s.index, s.total, xWindow, first));
        y.add(plot::extent(s.index, s.runHigh, xWindow, first));
        y.add(plot::extent(s.index, s.runLow, xWindow, first));
        if (!comparing) {
            y.add(plot::extent(s.index, s.forward, xWindow, first));
            y.add(plot::extent(s.index, s.backward, xWindow, first));
            if (!s.data.empty()) {
                y.add(plot::extent(s.index, s.data, xWindow, first));
            }
        }
    }
    return y;
}

void drawTooltip(const std::vector<RunView*>& runs) {
    const long step = plot::hoveredStep();
    if (step < 0 || runs.empty()) {
        return;
    }
    bool any = false;
    for (const RunView* run : runs) {
        if (step >= static_cast<long>(run->result.steps.size())) {
            continue;
        }
        if (!any) {
            ImGui::BeginTooltip();
            ImGui::Text("step %ld", step);
            any = true;
        }
        const engine::StepRecord& r = run->result.steps[static_cast<size_t>(step)];
        plot::swatch(*run);
        if (r.evaluation) {
            ImGui::Text("%s: evaluation before this step, %.2f ms (%d forwards), not in its data",
                        run->name.c_str(), r.evaluation->ms, r.evaluation->forwards);
        }
        if (r.dataMs) { // a watched script's step
            ImGui::Text("%s%s: %.2f ms (data %.2f, forward %.2f, backward %.2f, optimizer "
                        "%.2f, rest %.2f)",
                        run->name.c_str(), r.warmup ? " (warmup)" : "", r.totalMs, *r.dataMs,
                        r.forwardMs, r.backwardMs, r.optimizerMs, r.restMs.value_or(0.0));
        } else {
            ImGui::Text("%s%s: %.2f ms (forward %.2f, backward %.2f, optimizer %.2f)",
                        run->name.c_str(), r.warmup ? " (warmup)" : "", r.totalMs, r.forwardMs,
                        r.backwardMs, r.optimizerMs);
        }
    }
    if (any) {
        ImGui::EndTooltip();
    }
}

// A watched script's evaluation passes, as dashed lines between the steps they ran between
// (the last one's after its last step): one legend entry for a single run, none when
// comparing (the runs own the legend); the tooltip names each one's time.
void drawEvaluations(const std::vector<RunView*>& runs, bool comparing) {
    std::vector<double> at;
    for (const RunView* run : runs) {
        at.insert(at.end(), run->series.evaluationAt.begin(), run->series.evaluationAt.end());
        if (run->result.finalEvaluation && !run->series.index.empty()) {
            at.push_back(run->series.index.back() + 0.5);
        }
    }
    if (at.empty()) {
        return;
    }
    ImPlotSpec spec = plot::colorSpec(withAlpha(palette().skipped, 0.8f)); // not a step
    spec.LineWeight = 1.5f;
    ImPlot::PlotInfLines(comparing ? "##evaluation" : "evaluation", at.data(),
                         static_cast<int>(at.size()), spec);
}

} // namespace

void StepTimesView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    ImGui::Checkbox("y range: measured steps only", &m_measuredOnly);
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("Leave the warmup steps out of the y range (they can be many times "
                          "slower and flatten the measured steps).");
    }
    ImGui::SameLine();
    plot::helpMarker();
    drawChart(ctx, ImVec2(-1, -1));
    ImGui::End();
}

// Each run's lines: one run's phases, and each run's step, running mean and band.
void StepTimesView::drawRuns(const std::vector<RunView*>& runs, bool comparing) {
    for (RunView* run : runs) {
        const StepSeries& s = run->series;
        if (!comparing) {
            using engine::Phase;
            plot::line("forward", s.index, s.forward, m_scratch,
                       plot::colorSpec(phaseColor(Phase::Forward)));
            if (run->result.config.mode != engine::Mode::Forward) {
                plot::line("backward", s.index, s.backward, m_scratch,
                           plot::colorSpec(phaseColor(Phase::Backward)));
            }
            if (run->result.config.mode == engine::Mode::Train) {
                plot::line("optimizer", s.index, s.optimizer, m_scratch,
                           plot::colorSpec(phaseColor(Phase::Optimizer)));
            }
            // A watched script's step also holds its loader's time and what runs outside
            // the three phases: without them the step line above the phases is unexplained.
            if (!s.data.empty()) {
                plot::line("data", s.index, s.data, m_scratch, plot::colorSpec(seriesColor(0)));
                plot::line("rest", s.index, s.rest, m_scratch, plot::colorSpec(seriesColor(1)));
            }
        }
        // Compared runs get one legend entry each (their step, band and mean share it).
        const std::string stepLabel = comparing ? plot::legendName(*run) : std::string("step");
        const std::string bandLabel =
            comparing ? plot::legendName(*run) : std::string("mean ± std");
        // The step line last: the legend shows the colour of its entry's last item.
        ImPlotSpec bandSpec = plot::runSpec(*run);
        bandSpec.FillAlpha = 0.22f;
        plot::shaded(bandLabel.c_str(), s.index, s.runLow, s.runHigh, m_scratch, m_scratchHigh,
                     bandSpec);
        ImPlotSpec meanSpec = plot::runSpec(*run, 0.6f);
        meanSpec.Marker = ImPlotMarker_None; // the step line carries the run's marker
        plot::line(bandLabel.c_str(), s.index, s.runMean, m_scratch, meanSpec);
        ImPlotSpec stepSpec = plot::runSpec(*run);
        stepSpec.LineWeight = 2.0f;
        plot::line(stepLabel.c_str(), s.index, s.total, m_scratch, stepSpec);
    }
}

namespace {

// A long run's file keeps a sample of its steps (docs/WATCH.md, "Long runs"): the first
// such run among those drawn says how many it draws.
// The tooltip of the step under the mouse, the legend's tooltips, and the notes for bands
// and for a legend too wide to show.
void hoverAndLegendNotes(const std::vector<RunView*>& runs, const GroupedBands* band,
                         bool legendShown) {
    if (band) {
        plot::bandNote(*band);
        plot::bandTooltip(runs, &StepSeries::total, "%.2f ms");
    } else {
        drawTooltip(runs);
    }
    if (!legendShown) {
        plot::hiddenLegendNote(runs);
    } else if (!band) {
        plot::legendTooltips(runs);
    }
}

void thinnedNote(const std::vector<RunView*>& runs) {
    const auto thinned =
        std::find_if(runs.begin(), runs.end(), [](const RunView* r) { return r->result.thinned; });
    if (thinned == runs.end()) {
        return;
    }
    const engine::Thinning& t = *(*thinned)->result.thinned;
    plot::cornerNote(("1 step in " + std::to_string(t.every) + " drawn, of " +
                      std::to_string(t.recordedSteps) +
                      (runs.size() > 1 ? " (" + (*thinned)->result.id + ")" : ""))
                         .c_str());
}

} // namespace

void StepTimesView::drawChart(ViewContext& ctx, ImVec2 size) {
    const auto runs = ctx.selectedRuns();
    if (plot::beginPlot("##steptimes", size)) {
        ImPlot::SetupAxes("step", "ms");
        const GroupedBands* band =
            plot::drawsBand(runs) ? &m_band.of(runs, &StepSeries::total) : nullptr;
        const bool legendShown = band ? plot::setupGroupLegend(*band) : plot::setupLegend(runs);
        const bool comparing = runs.size() > 1;
        plot::watchInput({&m_x, &m_y});
        const plot::Range x = plot::stepRange(runs);
        m_x.setup(ImAxis_X1, x, 0.02);
        plot::stepTicks(ImAxis_X1);
        const plot::Range window = m_x.following() ? x : plot::shownRange(ImAxis_X1);
        const plot::Range y = timeAxis(runs, window, m_measuredOnly, comparing, band);
        m_y.setup(ImAxis_Y1, y, 0.06);

        // Each run's warmup shaded (darker where several runs are still warming up), and
        // named in a note above the plot.
        // Many runs of one warmup shade it once.
        int longestWarmup = 0;
        std::set<int> shaded;
        for (const RunView* run : runs) {
            const int warmup = run->result.config.warmupSteps;
            if (warmup > 0 && (!band || shaded.insert(warmup).second)) {
                plot::band(-0.5, warmup - 0.5, IM_COL32(128, 128, 128, comparing ? 32 : 48));
                longestWarmup = std::max(longestWarmup, warmup);
            }
        }
        if (longestWarmup > 0) {
            plot::cornerNote("grey: warmup steps");
        }
        // Op-profiled steps run slower under the profiler and are left out of the band (shaded
        // for one run; compared runs may have profiled different steps).
        if (runs.size() == 1 && runs.front()->result.config.opProfile) {
            const auto& op = *runs.front()->result.config.opProfile;
            const double begin = op.firstStep - 0.5;
            const double end = begin + op.stepCount;
            plot::band(begin, end, ImGui::GetColorU32(withAlpha(palette().warning, 0.15f)));
            plot::cornerNote("amber: the op-profiled step, left out of the statistics");
        }
        if (band) {
            plot::drawBands(*band, m_scratch, m_scratchHigh);
        } else {
            plot::linesOfRuns(runs.size());
            drawRuns(runs, comparing);
            drawEvaluations(runs, comparing);
        }
        plot::verdictMark(ctx, runs, false);
        const bool anySteps = std::any_of(
            runs.begin(), runs.end(), [](const RunView* r) { return !r->series.index.empty(); });
        if (!anySteps) {
            plot::emptyHint(runs, "steps");
        } else if (m_measuredOnly && m_y.following() && !y.empty()) {
            const plot::Range all = timeAxis(runs, window, false, comparing, band);
            if (all.hi > plot::shownRange(ImAxis_Y1).hi) {
                plot::cornerNote("warmup steps are above the top");
            }
        }
        if (anySteps) {
            thinnedNote(runs);
        }
        hoverAndLegendNotes(runs, band, legendShown);
        plot::endPlot(ctx, "step-times");
    }
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry stepTimesWindow() {
    return windowOf<StepTimesView>(
        DockSlot::ChartTopLeft,
        {chart<StepTimesView>(engine::chart::kStepTimes, "Step times, ms per step",
                              &StepTimesView::drawChart)});
}

} // namespace lmprof::ui
