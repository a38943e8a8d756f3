// Ops: where a profiled step's time goes (docs/OP_PROFILE.md). The headline in sentences; a
// sortable, filterable tree of phase → region → op or kernel with share bars; attention's
// softmax against its two matmuls in time and FLOPs; a zoomable timeline of the first
// profiled step in which the rows chosen in the tree light up (ops_timeline.cpp); and two
// runs' per-region times side by side.

#include "ops_view.h"

#include "lmprof/engine/format.h"
#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "table_cells.h"
#include "theme.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <imgui.h>
#include <implot.h>

namespace lmprof::ui {

using namespace lmprof::engine;

// A region's colour, the same in the tree, the timeline and the overlay: one hue per
// region of kRegions (a qualitative colormap has too few), grey for the rest.
ImU32 regionColor(std::string_view region, float alpha) {
    const auto it = std::find(kRegions.begin(), kRegions.end(), region);
    if (it == kRegions.end()) {
        return ImGui::GetColorU32(ImVec4(0.55f, 0.55f, 0.55f, alpha));
    }
    const float i = static_cast<float>(it - kRegions.begin());
    // Every other region a step across the wheel, so neighbours in the model differ most.
    const float hue = std::fmod(i * 7.0f / static_cast<float>(kRegions.size()), 1.0f);
    ImVec4 c(0, 0, 0, alpha);
    ImGui::ColorConvertHSVtoRGB(hue, 0.55f, 0.85f, c.x, c.y, c.z);
    return ImGui::GetColorU32(c);
}

namespace {

// The tree rows kept in view (docs/WINDOW.md, "Layout"): the phases and a region or two.
constexpr int kTreeRowsWanted = 4;
// A tree pane at least this many lines tall shows the whole headline above the tree.
constexpr float kTallPane = 18.0f;

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::vector<const RunView*> profiledRuns(ViewContext& ctx) {
    std::vector<const RunView*> out;
    for (const RunView& v : ctx.store.runs()) {
        if (v.finished && v.result.opProfile) {
            out.push_back(&v);
        }
    }
    return out;
}

} // namespace

bool OpsView::Selection::matches(const OpEvent& e) const {
    if (region.empty() || e.range || e.phase != phase || e.region != region) {
        return false;
    }
    return name.empty() || e.name == name;
}

void OpsView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const std::vector<const RunView*> runs = profiledRuns(ctx);
    m_hasProfiles = !runs.empty();
    if (runs.empty()) {
        ImGui::TextWrapped("No run has an op profile yet. Tick \"profile ops\" in Configure "
                           "(or run lmprof-cli with --profile-ops) and press Run.");
        ImGui::End();
        return;
    }
    const RunView* run = chooseRun(ctx, runs);
    const OpProfile& p = *run->result.opProfile;
    drawHeader(ctx, runs, p);

    if (ImGui::BeginTabBar("ops-tabs")) {
        if (ImGui::BeginTabItem("Ops and timeline")) {
            // The headline and the tree beside the timeline (above it in a tall window): a
            // row clicked lights up at once.
            const ImVec2 avail = ImGui::GetContentRegionAvail();
            const bool sideBySide = avail.x > 1.6f * avail.y;
            const ImVec2 treeSize =
                sideBySide ? ImVec2(avail.x * 0.5f, avail.y) : ImVec2(avail.x, avail.y * 0.55f);
            ImGui::BeginChild("tree", treeSize);
            // A short pane keeps the tree in view: the headline's first sentence, the rest on
            // hover.
            const bool compact = treeSize.y < ImGui::GetTextLineHeightWithSpacing() * kTallPane;
            const size_t more = drawHeadline(p, compact);
            drawTable(p, more);
            ImGui::EndChild();
            if (sideBySide) {
                ImGui::SameLine();
            }
            ImGui::BeginChild("timeline-pane", ImVec2(0, 0));
            drawTimeline(p);
            ImGui::EndChild();
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Attention")) {
            drawAttention(ctx, p, ImVec2(-1, -1));
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Compare runs")) {
            drawOverlay(ctx, runs, *run);
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    ImGui::End();
}

// The run: the selected one if it has a profile, else the one chosen here (newest first);
// the kind of row shown follows it (GPU kernels when it has them).
const RunView* OpsView::chooseRun(ViewContext& ctx, const std::vector<const RunView*>& runs) {
    for (RunView* v : ctx.selectedRuns()) {
        if (v->result.opProfile && v->result.id != m_runId && v->result.id != m_lastSelected) {
            m_runId = v->result.id;
            m_lastSelected = v->result.id;
        }
    }
    const RunView* run = runs.back();
    for (const RunView* v : runs) {
        run = v->result.id == m_runId ? v : run;
    }
    m_runId = run->result.id;
    if (m_kindFor != m_runId) {
        m_kindFor = m_runId;
        m_kind = run->result.opProfile->headline.kind;
        m_selection = {};
    }
    return run;
}

// The run's combo, the kind of rows, the profiled steps and the trace's path.
void OpsView::drawHeader(ViewContext& ctx, const std::vector<const RunView*>& runs,
                         const OpProfile& p) {
    const bool hasKernels = p.headline.kind == OpKind::Kernel;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 22);
    if (ImGui::BeginCombo("run", m_runId.c_str())) {
        for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
            if (ImGui::Selectable((*it)->result.id.c_str(), (*it)->result.id == m_runId)) {
                m_runId = (*it)->result.id;
                m_selection = {};
            }
        }
        ImGui::EndCombo();
    }
    if (hasKernels) {
        ImGui::SameLine();
        int kind = m_kind == OpKind::Kernel ? 1 : 0;
        ImGui::RadioButton("GPU kernels", &kind, 1);
        ImGui::SameLine();
        ImGui::RadioButton("CPU ops", &kind, 0);
        m_kind = kind == 1 ? OpKind::Kernel : OpKind::Op;
    }
    ImGui::SameLine();
    ImGui::TextDisabled("step %d%s", p.firstStep,
                        p.stepCount > 1 ? (" + " + std::to_string(p.stepCount - 1)).c_str() : "");

    if (!p.trace.empty()) {
        ImGui::SameLine();
        if (ImGui::SmallButton("copy trace path")) {
            ImGui::SetClipboardText(p.trace.c_str());
            ctx.report("copied " + p.trace, false);
        }
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("Chrome trace of the profiled steps, for ui.perfetto.dev or "
                              "chrome://tracing:\n%s",
                              p.trace.c_str());
        }
    } else if (p.traceError) {
        ImGui::SameLine();
        ImGui::TextColored(palette().error, "%s", p.traceError->c_str());
    }
}

// ---------------------------------------------------------------------------------------
// The headline, then the tree

size_t OpsView::drawHeadline(const OpProfile& p, bool firstOnly) {
    const std::vector<std::string> sentences = headlineSentences(p);
    const size_t shown = firstOnly ? std::min<size_t>(1, sentences.size()) : sentences.size();
    for (size_t i = 0; i < shown; ++i) {
        ImGui::Bullet();
        ImGui::TextWrapped("%s", sentences[i].c_str());
    }
    m_moreHeadline.assign(sentences.begin() + static_cast<std::ptrdiff_t>(shown), sentences.end());
    if (firstOnly) {
        m_moreHeadline.insert(m_moreHeadline.end(), p.notes.begin(), p.notes.end());
        return m_moreHeadline.size();
    }
    for (const std::string& note : p.notes) {
        ImGui::PushStyleColor(ImGuiCol_Text, palette().warning);
        ImGui::Bullet();
        ImGui::TextWrapped("%s", note.c_str());
        ImGui::PopStyleColor();
    }
    return 0;
}

void OpsView::drawTable(const OpProfile& p, size_t moreHeadline) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16);
    ImGui::InputTextWithHint("##filter", "filter ops and regions", m_filter, sizeof m_filter);
    ImGui::SameLine();
    const std::string hint = "click a row to light up its " +
                             std::string(m_kind == OpKind::Kernel ? "kernels" : "ops") +
                             " in the timeline";
    if (moreHeadline > 0) {
        // A short pane: the headline's other sentences and the hint, on hover.
        ImGui::TextDisabled("headline: %zu more (hover)", moreHeadline);
        if (ImGui::IsItemHovered()) {
            ImGui::BeginTooltip();
            ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
            for (const std::string& sentence : m_moreHeadline) {
                ImGui::BulletText("%s", sentence.c_str());
            }
            ImGui::TextDisabled("%s", hint.c_str());
            ImGui::PopTextWrapPos();
            ImGui::EndTooltip();
        }
    } else {
        // Wrapped beside the filter: a narrow pane keeps the whole hint.
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("%s", hint.c_str());
        ImGui::PopStyleColor();
    }
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersV |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_Sortable |
                                  ImGuiTableFlags_Resizable | ImGuiTableFlags_Hideable |
                                  ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("ops", 7, flags)) {
        return;
    }
    const float digit = ImGui::CalcTextSize("0").x;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("phase / region / name",
                            ImGuiTableColumnFlags_WidthStretch | ImGuiTableColumnFlags_NoHide);
    // Total ms and TFLOP/s start hidden (the header's context menu shows them): the tree
    // often shares its pane with the timeline.
    ImGui::TableSetupColumn("calls/step", ImGuiTableColumnFlags_WidthFixed, digit * 8);
    ImGui::TableSetupColumn("self ms",
                            ImGuiTableColumnFlags_WidthFixed | ImGuiTableColumnFlags_DefaultSort |
                                ImGuiTableColumnFlags_PreferSortDescending,
                            digit * 9);
    ImGui::TableSetupColumn("total ms",
                            ImGuiTableColumnFlags_WidthFixed | ImGuiTableColumnFlags_DefaultHide,
                            digit * 9);
    ImGui::TableSetupColumn("share of phase", ImGuiTableColumnFlags_WidthFixed, digit * 12);
    ImGui::TableSetupColumn("GFLOP", ImGuiTableColumnFlags_WidthFixed, digit * 8);
    ImGui::TableSetupColumn(
        "TFLOP/s", ImGuiTableColumnFlags_WidthFixed | ImGuiTableColumnFlags_DefaultHide, digit * 8);
    ImGui::TableHeadersRow();
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsCount > 0) {
        static constexpr OpsSort kByColumn[] = {OpsSort::Name,  OpsSort::Calls, OpsSort::Self,
                                                OpsSort::Total, OpsSort::Share, OpsSort::Flops,
                                                OpsSort::Self};
        m_sort = kByColumn[specs->Specs[0].ColumnIndex];
        m_descending = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
    }
    const auto tree = buildOpsTree(p, m_kind, m_filter, m_sort, m_descending);
    const bool filtering = m_filter[0] != '\0';
    // Rows a text line high (the share bars are framed items): more of the tree in view.
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(ImGui::GetStyle().FramePadding.x, 1.0f));
    for (size_t i = 0; i < tree.size(); ++i) {
        ImGui::PushID(static_cast<int>(i));
        drawNode(tree[i], filtering);
        ImGui::PopID();
    }
    ImGui::PopStyleVar();
    noteTableRows("op tree", kTreeRowsWanted, kTreeRowsWanted);
    ImGui::EndTable();
}

void OpsView::drawNode(const OpsNode& n, bool openAll) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const bool leaf = n.level == OpsNode::Level::Op;
    const bool selected = !m_selection.region.empty() && m_selection.phase == n.phase &&
                          m_selection.region == n.region &&
                          (leaf ? m_selection.name == n.name : m_selection.name.empty()) &&
                          n.level != OpsNode::Level::Phase;
    ImGuiTreeNodeFlags flags =
        ImGuiTreeNodeFlags_SpanFullWidth | ImGuiTreeNodeFlags_OpenOnArrow |
        (leaf ? ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen : 0) |
        (selected ? ImGuiTreeNodeFlags_Selected : 0);
    if (n.level == OpsNode::Level::Phase) {
        flags |= ImGuiTreeNodeFlags_DefaultOpen;
    }
    if (openAll && !leaf) {
        ImGui::SetNextItemOpen(true, ImGuiCond_Always);
    }
    if (n.level == OpsNode::Level::Region) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(regionColor(n.region)));
    }
    const bool open = ImGui::TreeNodeEx("node", flags, "%s", n.label().c_str());
    if (n.level == OpsNode::Level::Region) {
        ImGui::PopStyleColor();
    }
    if (ImGui::IsItemClicked() && !ImGui::IsItemToggledOpen() && n.level != OpsNode::Level::Phase) {
        m_selection = selected ? Selection{} : Selection{n.phase, n.region, leaf ? n.name : ""};
    }
    if (leaf && ImGui::IsItemHovered() && n.name.size() > 40) {
        ImGui::SetTooltip("%s", n.name.c_str());
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(engine::formatCount(n.calls).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.3f", n.selfMs);
    ImGui::TableNextColumn();
    ImGui::Text("%.3f", n.totalMs);
    ImGui::TableNextColumn();
    ImGui::PushStyleColor(ImGuiCol_PlotHistogram,
                          ImGui::ColorConvertU32ToFloat4(regionColor(n.region, 0.85f)));
    ImGui::ProgressBar(static_cast<float>(n.share), ImVec2(-1, 0),
                       fmt("%.1f%%", 100.0 * n.share).c_str());
    ImGui::PopStyleColor();
    ImGui::TableNextColumn();
    if (n.flops > 0.0) {
        ImGui::Text("%.3f", n.flops / 1e9);
    }
    ImGui::TableNextColumn();
    if (n.flops > 0.0 && n.selfMs > 0.0) {
        ImGui::Text("%.3f", n.flops / (n.selfMs * 1e-3) / 1e12);
    }
    if (open && !leaf) {
        for (size_t i = 0; i < n.children.size(); ++i) {
            ImGui::PushID(static_cast<int>(i)); // rows of a corrupt file may repeat a name
            drawNode(n.children[i], openAll);
            ImGui::PopID();
        }
        ImGui::TreePop();
    }
}

// ---------------------------------------------------------------------------------------
// Attention: softmax against QKᵀ and PV, time next to FLOPs.

void OpsView::drawAttentionChart(ViewContext& ctx, ImVec2 size) {
    const std::vector<const RunView*> runs = profiledRuns(ctx);
    if (runs.empty()) {
        ImGui::TextDisabled("No run has an op profile.");
        return;
    }
    const RunView* run = runs.back();
    for (RunView* v : ctx.selectedRuns()) {
        run = v->result.opProfile ? v : run;
    }
    const OpProfile& p = *run->result.opProfile;
    if (m_kindFor !=
        run->result.id) { // the window's choice of kind for its run, else the headline's
        m_kind = p.headline.kind;
    }
    drawAttention(ctx, p, size);
}

void OpsView::drawAttention(ViewContext& ctx, const OpProfile& p, ImVec2 size) {
    const AttentionParts a = attentionParts(p, m_kind);
    if (a.softmaxMs == 0.0 && a.scoresMs == 0.0 && a.valueMs == 0.0) {
        // Said, not drawn as three empty bars: a watched model's profile says why.
        ImGui::TextWrapped("This profile has no attention softmax and matmuls to compare.");
        for (const std::string& note : p.notes) {
            ImGui::TextWrapped("%s", note.c_str());
        }
        return;
    }
    if (auto t = p.headline.timeRatio(), f = p.headline.flopRatio(); t && f) {
        ImGui::TextWrapped("Per forward pass, from %s, softmax takes %.2fx the time of the two "
                           "attention matmuls for %.3fx their FLOPs (%s).",
                           profiledStepsText(p).c_str(), *t, *f,
                           m_kind == OpKind::Kernel ? "GPU kernel time" : "CPU op time");
    }
    if (auto doubt = attentionTimingDoubt(p)) {
        ImGui::PushStyleColor(ImGuiCol_Text, palette().warning);
        ImGui::TextWrapped("%s", doubt->c_str());
        ImGui::PopStyleColor();
    }
    static const char* kParts[] = {"softmax", "QK^T (scores)", "PV (value)"};
    const double ms[] = {a.softmaxMs, a.scoresMs, a.valueMs};
    const double gflop[] = {a.softmaxFlops / 1e9, a.scoresFlops / 1e9, a.valueFlops / 1e9};
    const double positions[] = {0, 1, 2};
    const float w = (size.x > 0 ? size.x : ImGui::GetContentRegionAvail().x) * 0.5f -
                    ImGui::GetStyle().ItemSpacing.x;
    const float h =
        std::max(size.y > 0 ? size.y : ImGui::GetContentRegionAvail().y, ImGui::GetFontSize() * 10);
    auto bars = [&](const char* title, const char* axis, const double* values, const char* stem) {
        if (plot::beginPlot(title, ImVec2(w, h), ImPlotFlags_NoLegend)) {
            // Fixed ranges: room beside the outer bars and above the tallest for its figure.
            const double most = *std::max_element(values, values + 3);
            ImPlot::SetupAxes(nullptr, axis, 0, 0);
            ImPlot::SetupAxisLimits(ImAxis_X1, -0.6, 2.6, ImPlotCond_Always);
            ImPlot::SetupAxisLimits(ImAxis_Y1, 0.0, most > 0.0 ? most * 1.2 : 1.0,
                                    ImPlotCond_Always);
            ImPlot::SetupAxisTicks(ImAxis_X1, positions, 3, kParts);
            for (int i = 0; i < 3; ++i) {
                const std::string region = i == 0   ? region::kSoftmax
                                           : i == 1 ? region::kScores
                                                    : region::kValue;
                ImPlotSpec spec;
                spec.FillColor = ImGui::ColorConvertU32ToFloat4(regionColor(region));
                plot::bars(kParts[i], &values[i], 1, 0.6, positions[i], spec);
                char figure[32];
                std::snprintf(figure, sizeof(figure), "%.3g", values[i]);
                plot::figureText(figure, positions[i], values[i], ImVec2(0, -8));
            }
            plot::endPlot(ctx, stem);
        }
    };
    bars("Time per forward pass", "ms", ms, "ops-attention-time");
    ImGui::SameLine();
    bars("FLOPs per forward pass", "GFLOP", gflop, "ops-attention-flops");
}

// ---------------------------------------------------------------------------------------
// Two runs' regions side by side (fp32 against bf16, yesterday against today).

void OpsView::drawOverlay(ViewContext& ctx, const std::vector<const RunView*>& runs,
                          const RunView& run) {
    const RunView* other = nullptr;
    for (const RunView* v : runs) {
        other = v->result.id == m_otherId && v != &run ? v : other;
    }
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 22);
    if (ImGui::BeginCombo("compare with", other ? m_otherId.c_str() : "(choose a run)")) {
        for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
            if (*it != &run && ImGui::Selectable((*it)->result.id.c_str(), *it == other)) {
                m_otherId = (*it)->result.id;
                other = *it;
            }
        }
        ImGui::EndCombo();
    }
    if (!other) {
        ImGui::TextDisabled(runs.size() > 1 ? "Choose a second profiled run."
                                            : "Profile a second run (e.g. bf16) to compare.");
        return;
    }
    const OpProfile& a = *run.result.opProfile;
    const OpProfile& b = *other->result.opProfile;
    const OpKind kind = a.headline.kind == b.headline.kind ? a.headline.kind : OpKind::Op;
    const RegionOverlay o = overlayRegions(a, b, kind);
    const int n = static_cast<int>(o.regions.size());
    std::vector<double> values(o.a);
    values.insert(values.end(), o.b.begin(), o.b.end());
    std::vector<const char*> labels;
    std::vector<double> positions;
    for (int i = 0; i < n; ++i) {
        labels.push_back(o.regions[static_cast<size_t>(i)].c_str());
        positions.push_back(i);
    }
    const char* items[] = {run.result.id.c_str(), other->result.id.c_str()};
    const std::string title = std::string("Time per step by region (") +
                              (kind == OpKind::Kernel ? "GPU kernels" : "CPU ops") + ", ms)";
    // Each region needs a readable row: a short pane scrolls rather than overlap the labels.
    const float rowsHeight = static_cast<float>(n) * ImGui::GetTextLineHeightWithSpacing() * 1.6f +
                             ImGui::GetFontSize() * 6.0f;
    ImGui::BeginChild("overlay", ImVec2(0, 0));
    const float plotHeight = std::max(ImGui::GetContentRegionAvail().y, rowsHeight);
    if (plot::beginPlot(title.c_str(), ImVec2(-1, plotHeight))) {
        ImPlot::SetupLegend(ImPlotLocation_NorthEast, ImPlotLegendFlags_Outside); // off the bars
        ImPlot::SetupAxes("ms per step", nullptr, ImPlotAxisFlags_AutoFit,
                          ImPlotAxisFlags_AutoFit | ImPlotAxisFlags_Invert);
        ImPlot::SetupAxisTicks(ImAxis_Y1, positions.data(), n, labels.data());
        ImPlotSpec spec;
        spec.Flags = ImPlotBarGroupsFlags_Horizontal;
        ImPlot::PlotBarGroups(items, values.data(), 2, n, 0.7, 0, spec);
        plot::endPlot(ctx, "ops-regions");
    }
    ImGui::EndChild();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry opsWindow() {
    return windowOf<OpsView>(
        DockSlot::Bottom,
        {chart<OpsView>(
            engine::chart::kOpsAttention,
            "Ops: softmax against the attention matmuls, time and FLOPs per forward pass",
            &OpsView::drawAttentionChart)},
        0.55f);
}

} // namespace lmprof::ui
