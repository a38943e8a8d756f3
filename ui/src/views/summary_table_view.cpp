// Summary: the benchmark table for the whole session, one row per configuration
// (its newest run), in the report's columns (matrixColumns): Model | Context | Batch | ...
// | Fwd / Bwd / Opt / Step ms ± std | peak memory | tokens/s, and any metric added there.
// Rows fill in live as a sweep runs; out-of-memory, failed and skipped cells say so.

#include "lmprof/engine/columns.h"
#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "summary_model.h"
#include "table_cells.h"
#include "theme.h"
#include "view.h"

#include <algorithm>
#include <imgui.h>
#include <sstream>

namespace lmprof::ui {

// The benchmark matrix (model × context rows with phase times ± std, their CV and noise
// mark, peak memory, tokens/s), failed and skipped cells marked, filling live.
class SummaryTableView final : public View {
public:
    static constexpr const char* kTitle = "Summary";
    void draw(ViewContext& ctx) override;
};

using namespace lmprof::engine;

namespace {

// What a run without figures shows in its timing cells: "OOM (backward)", "skipped (after
// oom)", "error", "cancelled".
std::string statusNote(const RunResult& r) {
    switch (r.status) {
    case RunStatus::Oom:
        return "OOM" + statusText(r).substr(toString(RunStatus::Oom).size());
    case RunStatus::Skipped:
        return "skipped (after oom)";
    default:
        return std::string(toString(r.status));
    }
}

} // namespace

void SummaryTableView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const std::vector<int> rows = matrixRows(ctx.store);
    auto& runs = ctx.store.runs();
    if (ImGui::Button("Copy as Markdown")) {
        std::vector<RunResult> finished;
        for (int i : rows) {
            if (runs[i].finished) {
                finished.push_back(runs[i].result);
            }
        }
        std::ostringstream out;
        writeMarkdown(out, finished);
        ImGui::SetClipboardText(out.str().c_str());
        ctx.report("copied " + std::to_string(finished.size()) + " row(s) as Markdown", false);
    }
    ImGui::SameLine();
    ImGui::TextDisabled("%zu configuration(s); the newest run of each", rows.size());

    std::vector<const RunResult*> shown;
    for (int i : rows) {
        shown.push_back(&runs[i].result);
    }
    const auto [columns, firstFigure] = matrixColumns(shown);
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_SizingFixedFit;
    const int count = static_cast<int>(columns.size());
    if (ImGui::BeginTable("summary", count, flags)) {
        ImGui::TableSetupScrollFreeze(2, 1);
        for (size_t k = 0; k < columns.size(); ++k) {
            const RunColumn& c = *columns[k];
            ImGui::TableSetupColumn(
                (k >= firstFigure && c.unit == "ms" ? c.header + " ± std" : c.header).c_str());
        }
        ImGui::TableHeadersRow();
        for (int i : rows) {
            RunView& v = runs[i];
            const RunSummary& s = v.liveSummary();
            const bool failed = v.finished && v.result.status != RunStatus::Ok;
            ImGui::TableNextRow();
            if (!v.finished) {
                ImGui::PushStyleColor(ImGuiCol_Text, palette().live); // live figures, still moving
            }
            for (size_t k = 0; k < columns.size(); ++k) {
                ImGui::TableNextColumn();
                if (failed && k >= firstFigure) {
                    // Mark the figures instead of showing partial ones.
                    const ImVec4 color = v.result.status == RunStatus::Skipped ||
                                                 v.result.status == RunStatus::Cancelled
                                             ? palette().skipped
                                             : palette().error;
                    const std::string note = k == firstFigure ? statusNote(v.result) : "-";
                    ImGui::TextColored(color, "%s", note.c_str());
                    if (k == firstFigure && v.result.error && ImGui::IsItemHovered()) {
                        ImGui::SetTooltip("%s", v.result.error->c_str());
                    }
                    continue;
                }
                cell::figure(*columns[k], columns[k]->cellOf(v.result, s), v.result, s);
            }
            if (!v.finished) {
                ImGui::PopStyleColor();
            }
        }
        noteTableRows("configurations", static_cast<int>(rows.size()), 6);
        ImGui::EndTable();
    }
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry summaryWindow() {
    return windowOf<SummaryTableView>(DockSlot::Bottom);
}

} // namespace lmprof::ui
