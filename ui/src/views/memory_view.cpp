// The Memory view: the sampled timeline of the selected runs (allocated, reserved, RSS,
// whole-device use) with phase bands and the allocator's measured phase peaks; the
// breakdown of the first selected run's peak (parameters, gradients, AdamW moments,
// activations) predicted vs measured; and its largest allocations from a memory snapshot.
//
// Sections: timeline · breakdown · largest allocations · draw.

#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/report.h"
#include "theme.h"
#include "views.h"

#include <algorithm>
#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// Bands are drawn only while this few are visible; zoom in to see them on long runs.
constexpr size_t kMaxBands = 1500;

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

const char* const kParts[] = {"parameters", "gradients", "AdamW moments", "activations"};
const char* const kBars[] = {"predicted", "measured"};

// ---------------------------------------------------------------------------------------
// Timeline

void drawBands(const RunView& run) {
    const ImPlotRect limits = ImPlot::GetPlotLimits();
    size_t drawn = 0;
    for (const PhaseSpan& span : run.spans) {
        if (drawn >= kMaxBands) {
            break;
        }
        if (span.t1S < limits.X.Min || span.t0S > limits.X.Max) {
            continue;
        }
        plot::band(span.t0S, span.t1S, phaseColor(span.phase));
        ++drawn;
    }
}

void drawTimeline(ViewContext& ctx, const std::vector<RunView*>& runs, Decimated& scratch) {
    // Headroom above the data so the peak segments at the top stay visible.
    // (The fit is applied while the plot is built, so the style stays pushed until its end.)
    ImPlot::PushStyleVar(ImPlotStyleVar_FitPadding, ImVec2(0.0f, 0.08f));
    if (!ImPlot::BeginPlot("##memory", ImVec2(-1, ImGui::GetContentRegionAvail().y * 0.55f))) {
        ImPlot::PopStyleVar();
        return;
    }
    ImPlot::SetupAxes("time since run start (s)", "MiB", ImPlotAxisFlags_AutoFit,
                      ImPlotAxisFlags_AutoFit);
    ImPlot::SetupLegend(ImPlotLocation_NorthWest);
    if (!runs.empty()) {
        drawBands(*runs.front());
    }
    const bool comparing = runs.size() > 1;
    for (RunView* run : runs) {
        const MemorySeries& m = run->memory;
        const std::string prefix = comparing ? run->result.id + " " : std::string();
        const bool cuda = run->result.resolvedDevice.rfind("cuda", 0) == 0;
        plot::line((prefix + "allocated").c_str(), m.tS, m.allocatedMiB, scratch);
        if (cuda) {
            plot::line((prefix + "reserved").c_str(), m.tS, m.reservedMiB, scratch);
            plot::line((prefix + "device used").c_str(), m.tS, m.deviceUsedMiB, scratch);
        }
        // RSS counts the process's libraries too (hundreds of MiB for LibTorch) and would
        // flatten the tensor lines: off until its legend entry is clicked.
        ImPlot::HideNextItem(true, ImPlotCond_Once);
        plot::line((prefix + "RSS").c_str(), m.tS, m.rssMiB, scratch);
        if (!comparing && !run->peaks.tS.empty()) {
            // Samples can miss a short-lived peak; the allocator's own peak of each phase
            // is drawn over the phase it belongs to.
            ImPlotSpec spec;
            spec.LineColor = palette().peak;
            spec.LineWeight = 2.0f;
            spec.Flags = ImPlotLineFlags_Segments;
            ImPlot::PlotLine("phase peak", run->peaks.tS.data(), run->peaks.peakMiB.data(),
                             static_cast<int>(run->peaks.tS.size()), spec);
        }
    }
    if (!runs.empty()) {
        const double peakMiB =
            static_cast<double>(runs.front()->liveSummary().peakBytes.max()) / kMiB;
        if (peakMiB > 0.0) {
            ImPlot::TagY(peakMiB, palette().peak, "peak %.1f", peakMiB);
        }
    }
    plot::endPlot(ctx, "memory");
    ImPlot::PopStyleVar();
}

// ---------------------------------------------------------------------------------------
// Breakdown: two stacked horizontal bars, predicted and measured, in MiB.

void drawBreakdown(ViewContext& ctx, RunView& run) {
    const engine::RunConfig& c = run.result.config;
    const int64_t measuredPeak = run.liveSummary().peakBytes.max();
    const engine::MemoryBreakdown predicted = engine::predictPeak(c);
    const engine::MemoryBreakdown measured = engine::measuredBreakdown(c, measuredPeak);
    ImGui::Text("Peak: predicted %s, measured %s", engine::formatBytes(predicted.total()).c_str(),
                measuredPeak > 0 ? engine::formatBytes(measuredPeak).c_str() : "-");
    if (measuredPeak > 0 && measuredPeak < measured.staticBytes()) {
        ImGui::TextColored(palette().warning,
                           "the run ended before its static memory was all allocated");
    }
    if (!ImPlot::BeginPlot("##breakdown", ImVec2(-1, -1), ImPlotFlags_NoTitle)) {
        return;
    }
    const double values[] = {
        predicted.parameters / kMiB,     measured.parameters / kMiB,
        predicted.gradients / kMiB,      measured.gradients / kMiB,
        predicted.optimizerState / kMiB, measured.optimizerState / kMiB,
        predicted.activations / kMiB,    measuredPeak > 0 ? measured.activations / kMiB : 0.0,
    };
    const double ticks[] = {0.0, 1.0};
    ImPlot::SetupAxes("MiB", nullptr, ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
    ImPlot::SetupAxisTicks(ImAxis_Y1, ticks, 2, kBars);
    ImPlot::SetupLegend(ImPlotLocation_North,
                        ImPlotLegendFlags_Horizontal | ImPlotLegendFlags_Outside);
    ImPlotSpec spec;
    spec.Flags = ImPlotBarGroupsFlags_Horizontal | ImPlotBarGroupsFlags_Stacked;
    ImPlot::PlotBarGroups(kParts, values, 4, 2, 0.6, 0.0, spec);
    plot::endPlot(ctx, "memory-breakdown");
}

// ---------------------------------------------------------------------------------------
// Largest allocations of the run's memory snapshot

void drawLargest(ViewContext& ctx, const RunView& run) {
    const auto& snap = run.result.memorySnapshot;
    if (!snap) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("Largest allocations: no memory snapshot for this run.");
        ImGui::PopStyleColor();
        ImGui::BeginDisabled(ctx.session.busy() || !run.finished);
        if (ImGui::Button("Run again with a memory snapshot")) {
            // Same configuration; the last warmup step is recorded (steady state, and
            // not one of the measured steps).
            engine::RunConfig c = run.result.config;
            // Without warmup one is added, so the recorded step is never a measured one.
            c.warmupSteps = std::max(1, c.warmupSteps);
            c.memorySnapshot = engine::defaultSnapshotRequest(snapshotPath(ctx, c), c.warmupSteps);
            ctx.session.submit(c);
            ctx.report("started " + engine::runLabel(c) + " with a memory snapshot", false);
        }
        ImGui::EndDisabled();
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("(or tick \"record memory snapshot\" in Configure; CLI: "
                           "--memory-snapshot FILE)");
        ImGui::PopStyleColor();
        return;
    }
    ImGui::Text("Largest allocations, steps %d-%d (%lld events%s)", snap->firstStep,
                snap->firstStep + snap->stepCount - 1, static_cast<long long>(snap->entries),
                snap->truncated ? ", limit reached" : "");
    if (snap->error) {
        ImGui::TextColored(palette().error, "not saved: %s", snap->error->c_str());
    } else {
        ImGui::TextDisabled("%s", snap->path.c_str());
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip(snap->format == "cuda-pickle"
                                  ? "Open in pytorch.org/memory_viz (click to copy the path)"
                                  : "lmprof allocation trace, JSON (click to copy the path)");
        }
        if (ImGui::IsItemClicked()) {
            ImGui::SetClipboardText(snap->path.c_str());
        }
    }
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("##largest", 5, flags, ImVec2(-1, -1))) {
        return;
    }
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("size");
    ImGui::TableSetupColumn("step");
    ImGui::TableSetupColumn("phase");
    ImGui::TableSetupColumn("at (ms)");
    ImGui::TableSetupColumn("lived (ms)");
    ImGui::TableHeadersRow();
    for (const auto& a : snap->largest) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(engine::formatBytes(a.bytes).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%d", a.step);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(engine::toString(a.phase).data());
        ImGui::TableNextColumn();
        ImGui::Text("%.1f", a.tMs);
        ImGui::TableNextColumn();
        if (a.lifetimeMs < 0) {
            ImGui::TextDisabled("still alive");
        } else {
            ImGui::Text("%.2f", a.lifetimeMs);
        }
    }
    ImGui::EndTable();
}

} // namespace

// ---------------------------------------------------------------------------------------
// draw

void MemoryView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const auto runs = ctx.selectedRuns();
    drawTimeline(ctx, runs, m_scratch);
    if (!runs.empty()) {
        const float width = ImGui::GetContentRegionAvail().x;
        if (ImGui::BeginChild("##breakdown-pane", ImVec2(width * 0.5f, 0))) {
            drawBreakdown(ctx, *runs.front());
        }
        ImGui::EndChild();
        ImGui::SameLine();
        if (ImGui::BeginChild("##largest-pane", ImVec2(0, 0))) {
            drawLargest(ctx, *runs.front());
        }
        ImGui::EndChild();
    }
    ImGui::End();
}

} // namespace lmprof::ui
