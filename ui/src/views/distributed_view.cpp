// Distributed (docs/DISTRIBUTED.md): data-parallel runs. The strategies side by side
// (overhead share of the step and bus bandwidth, as a chart and the report's table), every
// rank's steps as lanes of compute and exposed communication, and the seeds' per-step table.
// Runs start from Configure's "Data parallel" section, or here all three strategies at once.

#include "lmprof/engine/devices.h"
#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "table_cells.h"
#include "theme.h"
#include "view.h"

#include <algorithm>
#include <cstdio>
#include <imgui.h>
#include <implot.h>
#include <map>

namespace lmprof::ui {

// Data-parallel runs (docs/DISTRIBUTED.md): the strategies side by side (overhead and bus
// bandwidth), each rank's steps as lanes of compute and exposed communication, the seeds'
// per-step table; runs all three strategies of Configure's configuration.
class DistributedView final : public View {
public:
    static constexpr const char* kTitle = "Distributed";
    void draw(ViewContext& ctx) override;
    // The charts alone, filling `size` (the window's, or an exported PNG's).
    void drawStrategiesChart(ViewContext& ctx, ImVec2 size);
    void drawLanesChart(ViewContext& ctx, ImVec2 size);

private:
    void drawLauncher(ViewContext& ctx);
    void drawLanesControls(ViewContext& ctx);
    // The run whose lanes and steps are shown: the one chosen, else the newest finished.
    RunView* lanesRun(ViewContext& ctx);

    std::string m_lanesRunId;
    bool m_showWarmup = false;
    plot::FollowAxis m_lanesX;
};

using namespace lmprof::engine;

namespace {

// The DDP runs to show: two or more selected ones; otherwise every one of the session, the
// newest of each configuration (a run again replaces its bar), so that the strategies of
// one configuration stand side by side without selecting them.
std::vector<RunView*> ddpRuns(ViewContext& ctx) {
    std::vector<RunView*> selected;
    for (RunView* v : ctx.selectedRuns()) {
        if (v->result.config.ddp) {
            selected.push_back(v);
        }
    }
    if (selected.size() >= 2) {
        return selected;
    }
    std::vector<RunView*> out;
    std::map<std::string, size_t> slot; // configuration -> its place in out
    for (RunView& v : ctx.store.runs()) {
        if (!v.result.config.ddp) {
            continue;
        }
        const auto [it, fresh] = slot.emplace(configKey(v.result.config), out.size());
        if (fresh) {
            out.push_back(&v);
        } else {
            out[it->second] = &v;
        }
    }
    return out;
}

std::vector<std::string> namesOf(const std::vector<RunView*>& runs) {
    std::vector<const RunResult*> results;
    for (const RunView* v : runs) {
        results.push_back(&v->result);
    }
    return distinguishingNames(results);
}

ImVec4 computeColor() {
    return phaseColor(Phase::Forward);
}
ImVec4 exposedColor() {
    return phaseColor(Phase::Backward);
}

// One step of one rank as lane rectangles: compute, then the exposed wait; communication
// hidden behind compute as a thin strip along the lane's top edge, ending with compute.
void drawStepRects(ImDrawList* draw, double t0, const DdpStepRecord& s, double lane, float alpha) {
    const double compute = computeMs(s);
    const double hidden = std::max(0.0, s.commMs - s.exposedCommMs);
    const auto rect = [&](double x0, double x1, double y0, double y1, ImVec4 color) {
        if (x1 <= x0) {
            return;
        }
        const ImVec2 a = ImPlot::PlotToPixels(x0, y0);
        const ImVec2 b = ImPlot::PlotToPixels(x1, y1);
        draw->AddRectFilled(ImVec2(std::min(a.x, b.x), std::min(a.y, b.y)),
                            ImVec2(std::max(a.x, b.x) - 1.0f, std::max(a.y, b.y)),
                            ImGui::GetColorU32(withAlpha(color, alpha)));
    };
    rect(t0, t0 + compute, lane - 0.3, lane + 0.3, computeColor());
    // The step's number inside its compute part, where it fits.
    const std::string number = std::to_string(s.index);
    const ImVec2 a = ImPlot::PlotToPixels(t0, lane);
    const ImVec2 b = ImPlot::PlotToPixels(t0 + compute, lane);
    const ImVec2 text = ImGui::CalcTextSize(number.c_str());
    if (b.x - a.x > text.x + 6.0f) {
        draw->AddText(ImVec2(a.x + 3.0f, a.y - text.y * 0.5f),
                      ImGui::GetColorU32(withAlpha(ImVec4(0, 0, 0, 1), 0.75f * alpha)),
                      number.c_str());
    }
    rect(t0 + compute, t0 + s.stepMs, lane - 0.3, lane + 0.3, exposedColor());
    rect(t0 + compute - std::min(hidden, compute), t0 + compute, lane - 0.38, lane - 0.3,
         exposedColor());
}

void stepTooltip(const DdpStepRecord& s, int rank, int worldSize) {
    ImGui::BeginTooltip();
    ImGui::Text("rank %d, step %d%s", rank, s.index, s.warmup ? " (warmup)" : "");
    ImGui::Text("step %.2f ms = compute %.2f + exposed communication %.2f", s.stepMs, computeMs(s),
                s.exposedCommMs);
    ImGui::Text("communication %.2f ms, %.2f hidden behind backward", s.commMs,
                std::max(0.0, s.commMs - s.exposedCommMs));
    ImGui::Text("overhead %.1f%% of the step", 100.0 * overheadShare(s));
    if (const auto bus = busBandwidthGBps(s, worldSize)) {
        ImGui::Text("%s all-reduced, bus bandwidth %.2f GB/s", formatBytes(s.bytes).c_str(), *bus);
    }
    ImGui::EndTooltip();
}

} // namespace

void DistributedView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    drawLauncher(ctx);
    const auto runs = ddpRuns(ctx);
    if (runs.empty()) {
        ImGui::Separator();
        ImGui::TextWrapped(
            "No data-parallel run yet. Tick \"data-parallel\" in Configure (world size, "
            "backend, strategy) and press Run, or run all three strategies above. Each rank is "
            "a process of lmprof-cli on LibTorch's c10d: Gloo on the CPU, NCCL on GPUs. Result "
            "sets from lmprof-cli ddp open here too.");
        ImGui::End();
        return;
    }
    const float avail = ImGui::GetContentRegionAvail().y;
    const float chartHeight = std::max(ImGui::GetFontSize() * 12.0f, avail * 0.42f);
    ImGui::SeparatorText("Strategies side by side");
    const float half = ImGui::GetContentRegionAvail().x * 0.5f - ImGui::GetStyle().ItemSpacing.x;
    drawStrategiesChart(ctx, ImVec2(half, chartHeight));
    ImGui::SameLine();
    ImGui::BeginGroup();
    drawLanesControls(ctx);
    drawLanesChart(ctx, ImVec2(-1, chartHeight - ImGui::GetFrameHeightWithSpacing()));
    ImGui::EndGroup();

    std::vector<RunResult> results;
    for (const RunView* v : runs) {
        if (v->result.ddp) {
            results.push_back(v->result);
        }
    }
    const Rows summary = ddpSummaryRows(results);
    copyMarkdownButton("Copy as Markdown##ddp-summary", summary, 1);
    drawRowsTable("##ddp-summary", summary, ImGui::GetFontSize() * 9.0f);

    if (const RunView* run = lanesRun(ctx); run && run->result.ddp) {
        ImGui::SeparatorText("Per step (the CS336 study's table)");
        const Rows steps = ddpStepRows(run->result);
        ImGui::TextDisabled("%s", run->result.id.c_str());
        ImGui::SameLine();
        copyMarkdownButton("Copy as Markdown##ddp-steps", steps, 2);
        drawRowsTable("##ddp-steps", steps,
                      std::max(ImGui::GetFontSize() * 8.0f, ImGui::GetContentRegionAvail().y));
    }
    ImGui::End();
}

void DistributedView::drawLauncher(ViewContext& ctx) {
    const RunConfig& form = ctx.form.config();
    DdpRequest request = form.ddp.value_or(DdpRequest{});
    if (!form.ddp && ctx.session.isCuda(form.device)) {
        request.backend = DdpBackend::Nccl;
    }
    char label[96];
    std::snprintf(label, sizeof(label), "Run naive, flat and bucketed on %d ranks (%s)",
                  request.worldSize, std::string(toString(request.backend)).c_str());
    ImGui::BeginDisabled(ctx.session.busy() || ctx.experimentRunning);
    if (ImGui::Button(label)) {
        int started = 0;
        for (DdpStrategy strategy : kDdpStrategies) {
            RunConfig c = form;
            c.ddp = request;
            c.ddp->strategy = strategy;
            started += submitRun(ctx, c) >= 0 ? 1 : 0;
        }
        if (started == static_cast<int>(kDdpStrategies.size())) {
            ctx.report("started the three strategies on " + std::to_string(request.worldSize) +
                           " ranks",
                       false);
        }
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip(
            "The configuration in Configure, once per strategy: naive all-reduces each "
            "gradient after backward, flat all of them in one call, bucketed fills buckets "
            "of its bucket size and all-reduces them while backward still runs. World size, "
            "backend and bucket size come from Configure's Data parallel section.");
    }
}

RunView* DistributedView::lanesRun(ViewContext& ctx) {
    const auto runs = ddpRuns(ctx);
    RunView* chosen = nullptr;
    for (RunView* v : runs) {
        if (v->result.id == m_lanesRunId) {
            chosen = v;
        }
    }
    // The newest finished run until one is chosen (or the chosen one is gone).
    for (auto it = runs.rbegin(); !chosen && it != runs.rend(); ++it) {
        if ((*it)->result.ddp) {
            chosen = *it;
        }
    }
    return chosen ? chosen : (runs.empty() ? nullptr : runs.back());
}

void DistributedView::drawStrategiesChart(ViewContext& ctx, ImVec2 size) {
    const auto runs = ddpRuns(ctx);
    const auto names = namesOf(runs);
    std::vector<double> positions, overhead, busbw;
    std::vector<const char*> labels;
    for (size_t i = 0; i < runs.size(); ++i) {
        const RunResult& r = runs[i]->result;
        const auto s = r.ddp ? summarizeDdp(*r.ddp, r.config.ddp->worldSize) : std::nullopt;
        positions.push_back(static_cast<double>(i));
        overhead.push_back(s ? 100.0 * s->overhead : 0.0);
        busbw.push_back(s && s->busbwGBps ? *s->busbwGBps : 0.0);
        labels.push_back(names[i].c_str());
    }
    if (!plot::beginPlot("Overhead and bus bandwidth", size)) {
        return;
    }
    // Fixed ranges with room above the tallest bar for its figure.
    const auto top = [](const std::vector<double>& v) {
        const double most = v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
        return most > 0.0 ? most * 1.25 : 1.0;
    };
    ImPlot::SetupAxes(nullptr, "overhead, % of the step", 0, 0);
    ImPlot::SetupAxis(ImAxis_Y2, "bus bandwidth, GB/s", ImPlotAxisFlags_Opposite);
    ImPlot::SetupAxisLimits(ImAxis_Y1, 0.0, top(overhead), ImPlotCond_Always);
    ImPlot::SetupAxisLimits(ImAxis_Y2, 0.0, top(busbw), ImPlotCond_Always);
    ImPlot::SetupAxisLimits(ImAxis_X1, -0.6, static_cast<double>(runs.size()) - 0.4,
                            ImPlotCond_Always);
    if (!runs.empty()) {
        ImPlot::SetupAxisTicks(ImAxis_X1, positions.data(), static_cast<int>(runs.size()),
                               labels.data());
    }
    ImPlot::SetupLegend(ImPlotLocation_North,
                        ImPlotLegendFlags_Outside | ImPlotLegendFlags_Horizontal);
    const int n = static_cast<int>(runs.size());
    ImPlotSpec left = plot::colorSpec(exposedColor());
    left.FillColor = exposedColor();
    ImPlot::SetAxes(ImAxis_X1, ImAxis_Y1);
    plot::bars("overhead %", overhead.data(), n, 0.36, -0.2, left);
    for (int i = 0; i < n; ++i) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.1f%%", overhead[static_cast<size_t>(i)]);
        plot::figureText(text, positions[static_cast<size_t>(i)] - 0.2,
                         overhead[static_cast<size_t>(i)], ImVec2(0, -8));
    }
    ImPlotSpec right = plot::colorSpec(seriesColor(1));
    right.FillColor = seriesColor(1);
    ImPlot::SetAxes(ImAxis_X1, ImAxis_Y2);
    plot::bars("bus bandwidth", busbw.data(), n, 0.36, 0.2, right);
    for (int i = 0; i < n; ++i) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.2f", busbw[static_cast<size_t>(i)]);
        plot::figureText(text, positions[static_cast<size_t>(i)] + 0.2,
                         busbw[static_cast<size_t>(i)], ImVec2(0, -8));
    }
    if (std::none_of(runs.begin(), runs.end(), [](const RunView* v) { return v->result.ddp; })) {
        plot::hint("the figures come when a run ends (rank 0 gathers every rank's steps)");
    }
    plot::endPlot(ctx, "ddp-strategies");
}

void DistributedView::drawLanesChart(ViewContext& ctx, ImVec2 size) {
    RunView* run = lanesRun(ctx);
    const DdpReport* report = run && run->result.ddp ? &*run->result.ddp : nullptr;
    const int worldSize = run ? run->result.config.ddp->worldSize : 0;
    const int lanes = report ? static_cast<int>(report->ranks.size()) : std::max(worldSize, 1);
    if (plot::beginPlot("Ranks: compute and exposed communication", size)) {
        ImPlot::SetupAxes("ms since the first step shown", nullptr, 0,
                          ImPlotAxisFlags_Invert | ImPlotAxisFlags_Lock);
        std::vector<double> lanePos;
        std::vector<std::string> laneNames;
        for (int r = 0; r < lanes; ++r) {
            lanePos.push_back(r);
            laneNames.push_back("rank " + std::to_string(r));
        }
        std::vector<const char*> laneLabels;
        for (const auto& s : laneNames) {
            laneLabels.push_back(s.c_str());
        }
        ImPlot::SetupAxisTicks(ImAxis_Y1, lanePos.data(), lanes, laneLabels.data());
        ImPlot::SetupAxisLimits(ImAxis_Y1, -0.6, lanes - 0.4, ImPlotCond_Always);
        plot::Range span;
        span.add(0.0);
        if (report) {
            for (const auto& rank : report->ranks) {
                double t = 0.0;
                for (const auto& s : rank.steps) {
                    t += m_showWarmup || !s.warmup ? s.stepMs : 0.0;
                }
                span.add(t);
            }
        }
        plot::watchInput({&m_lanesX});
        m_lanesX.setup(ImAxis_X1, span, 0.02);
        ImPlot::SetupLegend(ImPlotLocation_North,
                            ImPlotLegendFlags_Outside | ImPlotLegendFlags_Horizontal);
        ImPlotSpec computeSpec = plot::colorSpec(computeColor());
        computeSpec.FillColor = computeColor();
        ImPlotSpec exposedSpec = plot::colorSpec(exposedColor());
        exposedSpec.FillColor = exposedColor();
        ImPlot::PlotDummy("compute", computeSpec);
        ImPlot::PlotDummy("exposed communication (hidden: thin strip)", exposedSpec);
        if (report) {
            ImPlot::PushPlotClipRect();
            ImDrawList* draw = ImPlot::GetPlotDrawList();
            const ImPlotPoint mouse = ImPlot::GetPlotMousePos();
            const DdpStepRecord* hovered = nullptr;
            int hoveredRank = 0;
            for (const auto& rank : report->ranks) {
                double t = 0.0;
                for (const auto& s : rank.steps) {
                    if (s.warmup && !m_showWarmup) {
                        continue;
                    }
                    drawStepRects(draw, t, s, rank.rank, s.warmup ? 0.45f : 1.0f);
                    if (ImPlot::IsPlotHovered() && mouse.x >= t && mouse.x < t + s.stepMs &&
                        std::abs(mouse.y - rank.rank) <= 0.4) {
                        hovered = &s;
                        hoveredRank = rank.rank;
                    }
                    t += s.stepMs;
                }
            }
            ImPlot::PopPlotClipRect();
            if (hovered) {
                stepTooltip(*hovered, hoveredRank, worldSize);
            }
        } else {
            plot::hint(run ? "the lanes come when the run ends (rank 0 gathers every rank's "
                             "steps); its step times show live in Step times"
                           : "no data-parallel run");
        }
        plot::endPlot(ctx, "ddp-lanes");
    }
}

void DistributedView::drawLanesControls(ViewContext& ctx) {
    RunView* run = lanesRun(ctx);
    const auto runs = ddpRuns(ctx);
    const auto names = namesOf(runs);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14.0f);
    if (ImGui::BeginCombo("##lanes-run", run ? run->result.id.c_str() : "")) {
        for (size_t i = 0; i < runs.size(); ++i) {
            if (ImGui::Selectable((names[i] + "##" + runs[i]->result.id).c_str(), runs[i] == run)) {
                m_lanesRunId = runs[i]->result.id;
            }
        }
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::Checkbox("warmup steps", &m_showWarmup);
    ImGui::SameLine();
    plot::helpMarker();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry distributedWindow() {
    return windowOf<DistributedView>(
        DockSlot::Bottom,
        {chart<DistributedView>(
             engine::chart::kDdpStrategies,
             "Distributed: communication overhead and bus bandwidth per strategy",
             &DistributedView::drawStrategiesChart),
         chart<DistributedView>(engine::chart::kDdpLanes,
                                "Distributed: each rank's steps, compute and exposed communication",
                                &DistributedView::drawLanesChart)});
}

} // namespace lmprof::ui
