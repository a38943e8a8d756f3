// The Memory view: the sampled timeline of the selected runs (allocated, reserved, RSS,
// whole-device use) with phase bands and the allocator's measured phase peaks; the
// breakdown of the first selected run's peak (parameters, gradients, AdamW moments,
// activations) predicted vs measured; and its largest allocations from a memory snapshot.
//
// Sections: timeline · breakdown · largest allocations · draw.

#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "theme.h"
#include "view.h"

#include <algorithm>
#include <imgui.h>
#include <implot.h>
#include <implot_internal.h>

namespace lmprof::ui {

class MemoryView final : public View {
public:
    static constexpr const char* kTitle = "Memory";
    void draw(ViewContext& ctx) override;
    // The timeline of the selected runs, and the first one's peak breakdown (for exports).
    void drawTimeline(ViewContext& ctx, const std::vector<RunView*>& runs, ImVec2 size);
    void drawSeries(const std::vector<RunView*>& runs, bool comparing);
    void drawBreakdown(ViewContext& ctx, ImVec2 size);

private:
    plot::FollowAxis m_x, m_y;
    Decimated m_scratch;
};

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// Phase bands are drawn only while each can be at least this wide, on average, and no more
// than kMaxBands of them show: narrower, they are stripes that hide the lines (zoom in).
constexpr float kMinBandPixels = 3.0f;
constexpr size_t kMaxBands = 1500;

const char* const kParts[] = {"parameters", "gradients", "AdamW moments", "activations"};
const char* const kBars[] = {"predicted", "measured"};
// The height, in lines, under which the breakdown's bars would be below the layout's
// smallest readable plot (its data area and axes): the table is shown instead.
constexpr float kBarsMinHeightLines = 14.0f;

// ---------------------------------------------------------------------------------------
// Timeline

void drawBands(const RunView& run) {
    const ImPlotRect limits = ImPlot::GetPlotLimits();
    const auto shown = [&](const PhaseSpan& s) {
        return !(s.t1S < limits.X.Min || s.t0S > limits.X.Max);
    };
    const auto visible =
        static_cast<size_t>(std::count_if(run.spans.begin(), run.spans.end(), shown));
    if (visible >
        std::min(kMaxBands, static_cast<size_t>(ImPlot::GetPlotSize().x / kMinBandPixels))) {
        return; // nor in the legend: the phases come back as the user zooms in
    }
    // Every band's phase in the legend, in the phases' order, by its name alone (the legend
    // beside the plot takes its width from the plot's).
    using engine::Phase;
    for (Phase phase : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
        if (std::any_of(run.spans.begin(), run.spans.end(),
                        [&](const PhaseSpan& s) { return s.phase == phase; })) {
            ImPlotSpec spec = plot::colorSpec(withAlpha(phaseColor(phase), 0.4f));
            spec.FillColor = withAlpha(phaseColor(phase), 0.4f);
            ImPlot::PlotDummy(std::string(engine::toString(phase)).c_str(), spec);
        }
    }
    for (const PhaseSpan& span : run.spans) {
        if (shown(span)) {
            plot::band(span.t0S, span.t1S,
                       ImGui::GetColorU32(withAlpha(phaseColor(span.phase), 0.16f)));
        }
    }
}

// Whether the current plot's item `label` is shown (its legend entry not switched off), asked
// before the plot's setup ends: the item's ID is made as ImPlot makes it once setup is over.
bool itemShown(const std::string& label) {
    ImPlotItemGroup& items = ImPlot::GetCurrentPlot()->Items;
    ImGui::PushOverrideID(items.ID);
    const ImGuiID id = ImGui::GetID(label.c_str());
    ImGui::PopID();
    const ImPlotItem* item = items.GetItem(id);
    return item != nullptr && item->Show;
}

bool onCuda(const RunView& run) {
    return run.result.resolvedDevice.rfind("cuda", 0) == 0;
}

void timelineTooltip(const std::vector<RunView*>& runs) {
    if (!ImPlot::IsPlotHovered() || runs.empty()) {
        return;
    }
    ImGui::BeginTooltip();
    ImGui::Text("%.3f s", ImPlot::GetPlotMousePos().x);
    for (const RunView* run : runs) {
        const long i = plot::hoveredIndex(run->memory.tS);
        if (i < 0) {
            continue;
        }
        const auto k = static_cast<size_t>(i);
        const MemorySeries& m = run->memory;
        plot::swatch(*run);
        if (onCuda(*run)) {
            ImGui::Text("%s: allocated %.1f MiB, reserved %.1f MiB, RSS %.1f MiB",
                        run->name.c_str(), m.allocatedMiB[k], m.reservedMiB[k], m.rssMiB[k]);
        } else {
            ImGui::Text("%s: allocated %.1f MiB, RSS %.1f MiB", run->name.c_str(),
                        m.allocatedMiB[k], m.rssMiB[k]);
        }
    }
    ImGui::EndTooltip();
}

// A series' legend name: compared runs have one entry per run (allocated, reserved) and
// one "RSS" entry for every run's RSS line (each in its run's colour, faint).
std::string seriesLabel(const RunView& run, const char* series, bool comparing) {
    return comparing && std::string(series) != "RSS" ? plot::legendName(run) : std::string(series);
}

} // namespace

// Each run's lines (allocated; on CUDA reserved and, alone, device used; RSS hidden at
// first), a lone run's phase peaks, and the peak's label at the plot's right edge.
void MemoryView::drawSeries(const std::vector<RunView*>& runs, bool comparing) {
    for (RunView* run : runs) {
        const MemorySeries& m = run->memory;
        const auto spec = [&](int series) {
            return comparing ? plot::runSpec(*run, 0.45f) : plot::colorSpec(seriesColor(series));
        };
        plot::line(seriesLabel(*run, "allocated", comparing).c_str(), m.tS, m.allocatedMiB,
                   m_scratch, plot::runSpec(*run));
        if (onCuda(*run)) {
            plot::line(seriesLabel(*run, "reserved", comparing).c_str(), m.tS, m.reservedMiB,
                       m_scratch, spec(1));
            if (!comparing) {
                plot::line("device used", m.tS, m.deviceUsedMiB, m_scratch, spec(2));
            }
        }
        // RSS counts the process's libraries too (hundreds of MiB for LibTorch) and would
        // flatten the tensor lines: off until its legend entry is clicked.
        ImPlot::HideNextItem(true, ImPlotCond_Once);
        plot::line(seriesLabel(*run, "RSS", comparing).c_str(), m.tS, m.rssMiB, m_scratch, spec(0));
        if (!comparing && !run->peaks.tS.empty()) {
            // Samples can miss a short-lived peak; the allocator's own peak of each phase
            // is drawn over the phase it belongs to.
            ImPlotSpec peakSpec = plot::colorSpec(palette().peak);
            peakSpec.LineWeight = 2.0f;
            peakSpec.Flags = ImPlotLineFlags_Segments;
            ImPlot::PlotLine("phase peak", run->peaks.tS.data(), run->peaks.peakMiB.data(),
                             static_cast<int>(run->peaks.tS.size()), peakSpec);
        }
    }
    if (!runs.empty()) {
        const double peakMiB =
            static_cast<double>(runs.front()->liveSummary().peakBytes.max()) / kMiB;
        if (peakMiB > 0.0) {
            // Inside the plot at its right edge, above the line (clamped to stay visible).
            char text[48];
            std::snprintf(text, sizeof(text), "peak %.1f MiB", peakMiB);
            plot::record(std::string(text));
            ImPlot::Annotation(plot::shownRange(ImAxis_X1).hi, peakMiB, palette().peak,
                               ImVec2(-4, -4), true, "%s", text);
        }
    }
}

void MemoryView::drawTimeline(ViewContext& ctx, const std::vector<RunView*>& selected,
                              ImVec2 size) {
    if (!plot::beginPlot("##memory", size)) {
        return;
    }
    const std::vector<RunView*> runs = plot::timelineRuns(selected);
    for (RunView* run : runs) {
        run->ensureTimeline();
    }
    plot::linesOfRuns(runs.size(), 1.0f);
    ImPlot::SetupAxes("time since run start (s)", "MiB");
    const bool legendShown = plot::setupLegend(runs);
    const bool comparing = runs.size() > 1;
    const auto label = [&](const RunView& run, const char* series) {
        return seriesLabel(run, series, comparing);
    };
    plot::watchInput({&m_x, &m_y});
    plot::Range x;
    for (const RunView* run : runs) {
        x.add(0.0);
        x.add(run->memory.tS.empty() ? 0.0 : run->memory.tS.back());
    }
    m_x.setup(ImAxis_X1, x, 0.0);
    const plot::Range window = m_x.following() ? x : plot::shownRange(ImAxis_X1);
    plot::Range y;
    for (const RunView* run : runs) {
        const MemorySeries& m = run->memory;
        y.add(plot::extent(m.tS, m.allocatedMiB, window));
        if (onCuda(*run)) {
            y.add(plot::extent(m.tS, m.reservedMiB, window));
            y.add(plot::extent(m.tS, m.deviceUsedMiB, window));
        }
        if (itemShown(label(*run, "RSS"))) {
            y.add(plot::extent(m.tS, m.rssMiB, window));
        }
        if (!comparing) {
            y.add(plot::extent(run->peaks.tS, run->peaks.peakMiB, window));
        }
    }
    // Headroom above the data so the peak segments and their label stay clear of the top.
    m_y.setup(ImAxis_Y1, y, 0.1);
    if (!runs.empty()) {
        drawBands(*runs.front());
    }
    drawSeries(runs, comparing);
    plot::verdictMark(ctx, runs, true);
    if (x.empty() || runs.front()->memory.tS.empty()) {
        plot::emptyHint(runs, "samples");
    }
    timelineTooltip(runs);
    if (legendShown) {
        plot::legendTooltips(runs);
    } else {
        plot::hiddenLegendNote(runs);
    }
    plot::timelineNote(selected);
    plot::endPlot(ctx, "memory", runs);
}

namespace {

// ---------------------------------------------------------------------------------------
// Breakdown: two stacked horizontal bars, predicted and measured, in MiB (a table when the
// pane is narrow).

struct MemoryRow {
    const char* shortPart; // the table's name for the part, narrower than the legend's
    int64_t predicted, measured;
};

void drawBreakdownTable(const MemoryRow (&rows)[4], bool measuredKnown) {
    ImGui::TextDisabled("predicted / measured");
    if (!ImGui::BeginTable("##breakdown-table", 2,
                           ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
        return;
    }
    ImGui::TableSetupColumn("part");
    ImGui::TableSetupColumn("predicted / measured");
    for (const MemoryRow& r : rows) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(r.shortPart);
        ImGui::TableNextColumn();
        ImGui::Text("%s / %s", engine::formatBytes(r.predicted).c_str(),
                    measuredKnown ? engine::formatBytes(r.measured).c_str() : "-");
    }
    ImGui::EndTable();
}

void drawBreakdownChart(ViewContext& ctx, RunView& run, ImVec2 size, bool tableWhenNarrow) {
    const engine::RunConfig& c = run.result.config;
    const int64_t measuredPeak = run.liveSummary().peakBytes.max();
    if (run.result.source) {
        // The memory model knows the engine's Transformer, not a watched script's model.
        ImGui::TextWrapped("Peak: measured %s. A watched script's model has no prediction: "
                           "the memory model knows lmprof's own Transformer only.",
                           measuredPeak > 0 ? engine::formatBytes(measuredPeak).c_str() : "-");
        return;
    }
    const engine::MemoryBreakdown predicted = engine::predictPeak(c);
    const engine::MemoryBreakdown measured = engine::measuredBreakdown(c, measuredPeak);
    ImGui::TextWrapped("Peak: predicted %s, measured %s",
                       engine::formatBytes(predicted.total()).c_str(),
                       measuredPeak > 0 ? engine::formatBytes(measuredPeak).c_str() : "-");
    if (measuredPeak > 0 && measuredPeak < measured.staticBytes()) {
        ImGui::TextColored(palette().warning,
                           "the run ended before its static memory was all allocated");
    }
    const MemoryRow rows[] = {
        {"weights", predicted.parameters, measured.parameters},
        {"gradients", predicted.gradients, measured.gradients},
        {"AdamW m, v", predicted.optimizerState, measured.optimizerState},
        {"activations", predicted.activations, measuredPeak > 0 ? measured.activations : 0}};
    // A narrow or short pane gets the figures as a table; a roomy one the stacked bars. The
    // bars never ask the layout for room (docs/WINDOW.md, "Layout"): drawn only where they
    // already read, they cannot hold a pane tall against a window brought forward below it.
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    if (tableWhenNarrow && (avail.x < ImGui::GetFontSize() * 26.0f ||
                            avail.y < ImGui::GetFontSize() * kBarsMinHeightLines)) {
        drawBreakdownTable(rows, measuredPeak > 0);
        return;
    }
    // At least tall enough for its two bars and the four legend entries.
    if (size.y <= 0.0f) {
        size.y = std::max(ImGui::GetContentRegionAvail().y, ImGui::GetFontSize() * 7.0f);
    }
    if (!plot::beginPlot("##breakdown", size, ImPlotFlags_NoTitle)) {
        return;
    }
    double values[8];
    for (size_t i = 0; i < 4; ++i) {
        values[2 * i] = static_cast<double>(rows[i].predicted) / kMiB;
        values[2 * i + 1] = static_cast<double>(rows[i].measured) / kMiB;
    }
    const double ticks[] = {0.0, 1.0};
    ImPlot::SetupAxes("MiB", nullptr, ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
    ImPlot::SetupAxisTicks(ImAxis_Y1, ticks, 2, kBars);
    ImPlot::SetupLegend(ImPlotLocation_East, ImPlotLegendFlags_Outside);
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
            c.memorySnapshot = engine::defaultSnapshotRequest({}, c.warmupSteps);
            if (submitRun(ctx, c) >= 0) { // a fresh snapshot file
                ctx.report("started " + engine::runLabel(c) + " with a memory snapshot", false);
            }
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

void MemoryView::drawBreakdown(ViewContext& ctx, ImVec2 size) {
    const auto runs = ctx.selectedRuns();
    if (runs.empty()) {
        ImGui::TextDisabled("no run selected");
        return;
    }
    drawBreakdownChart(ctx, *runs.front(), size, false);
}

// ---------------------------------------------------------------------------------------
// draw

void MemoryView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const auto runs = ctx.selectedRuns();
    // The timeline above the details (the first selected run's peak breakdown and largest
    // allocations, as tabs); in a short, wide pane (a small window) beside them instead.
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const bool beside = avail.y < ImGui::GetFontSize() * 26.0f && avail.x > avail.y * 1.2f;
    if (runs.empty()) {
        drawTimeline(ctx, runs, ImVec2(-1, -1));
    } else if (beside) {
        drawTimeline(ctx, runs, ImVec2(avail.x * 0.52f, -1));
        ImGui::SameLine();
    } else {
        drawTimeline(ctx, runs, ImVec2(-1, avail.y * 0.6f));
    }
    if (!runs.empty() && ImGui::BeginChild("##memory-details-pane") &&
        ImGui::BeginTabBar("##memory-details")) {
        if (ImGui::BeginTabItem("Breakdown")) {
            drawBreakdownChart(ctx, *runs.front(), ImVec2(-1, 0), true);
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Allocations")) {
            drawLargest(ctx, *runs.front());
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    if (!runs.empty()) {
        ImGui::EndChild();
    }
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry memoryWindow() {
    return windowOf<MemoryView>(
        DockSlot::ChartTopRight,
        {chart<MemoryView>(engine::chart::kMemory, "Memory over the run, MiB",
                           [](MemoryView& v, ViewContext& ctx, ImVec2 size) {
                               v.drawTimeline(ctx, ctx.selectedRuns(), size);
                           }),
         chart<MemoryView>(engine::chart::kMemoryBreakdown,
                           "Peak memory: predicted and measured, MiB",
                           &MemoryView::drawBreakdown)});
}

} // namespace lmprof::ui
