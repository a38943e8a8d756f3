// Summary: the benchmark table for the whole session, one row per configuration
// (its newest run): Model | Context | Fwd / Bwd / Opt ms ± std | peak memory | tokens/s.
// Rows fill in live as a sweep runs; out-of-memory, failed and skipped cells say so.

#include "lmprof/engine/report.h"
#include "summary_model.h"
#include "table_cells.h"
#include "theme.h"
#include "plot_helpers.h"
#include "view.h"

#include <algorithm>
#include <imgui.h>
#include <sstream>

namespace lmprof::ui {

// The benchmark matrix (model × context rows with phase times ± std, peak memory,
// tokens/s), failed and skipped cells marked, filling live.
class SummaryTableView final : public View {
public:
    static constexpr const char* kTitle = "Summary";
    void draw(ViewContext& ctx) override;
};

using namespace lmprof::engine;

namespace {

void statsCell(const PhaseStats& s, bool hasPhase) {
    ImGui::TableNextColumn();
    if (!hasPhase || s.n == 0) {
        ImGui::TextDisabled("-");
    } else {
        ImGui::TextUnformatted(formatMeanStd(s).c_str());
    }
}

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

    // Data-parallel runs add a column saying how they ran (world size, backend, strategy);
    // their times are rank 0's.
    const bool parallel = std::any_of(rows.begin(), rows.end(),
                                      [&](int i) { return runs[i].result.config.ddp.has_value(); });
    std::vector<const char*> headers = {"Model", "Context", "Precision", "Mode"};
    if (parallel) {
        headers.push_back("Parallel");
    }
    for (const char* h : {"Warmup", "Fwd ms ± std", "Bwd ms ± std", "Opt ms ± std", "Step ms ± std",
                          "Peak memory", "Tokens/s"}) {
        headers.push_back(h);
    }
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("summary", static_cast<int>(headers.size()), flags)) {
        ImGui::TableSetupScrollFreeze(2, 1);
        for (const char* h : headers) {
            ImGui::TableSetupColumn(h);
        }
        ImGui::TableHeadersRow();
        for (int i : rows) {
            RunView& v = runs[i];
            const RunConfig& c = v.result.config;
            ImGui::TableNextRow();
            cell::text(modelLabel(c.model));
            cell::integer(c.contextLength);
            cell::text(toString(c.precision));
            cell::text(toString(c.mode));
            if (parallel) {
                cell::text(c.ddp ? describe(*c.ddp) : "-");
            }
            cell::integer(c.warmupSteps);
            const bool failed = v.finished && v.result.status != RunStatus::Ok;
            if (failed) {
                // Mark the timing cells instead of showing partial figures.
                const ImVec4 color =
                    v.result.status == RunStatus::Skipped || v.result.status == RunStatus::Cancelled
                        ? palette().skipped
                        : palette().error;
                const std::string note = statusNote(v.result);
                for (int col = 0; col < 6; ++col) {
                    ImGui::TableNextColumn();
                    ImGui::TextColored(color, "%s", col == 0 ? note.c_str() : "-");
                    if (col == 0 && v.result.error && ImGui::IsItemHovered()) {
                        ImGui::SetTooltip("%s", v.result.error->c_str());
                    }
                }
                continue;
            }
            const RunSummary& s = v.liveSummary();
            const size_t phases = phasesOf(c.mode).size();
            if (!v.finished) {
                ImGui::PushStyleColor(ImGuiCol_Text, palette().live); // live figures, still moving
            }
            statsCell(s.forwardMs, true);
            statsCell(s.backwardMs, phases > 1);
            statsCell(s.optimizerMs, phases > 2);
            statsCell(s.totalMs, true);
            cell::peakAndTokens(s);
            if (!v.finished) {
                ImGui::PopStyleColor();
            }
        }
        ImGui::EndTable();
    }
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry summaryWindow() {
    return windowOf<SummaryTableView>(DockSlot::Bottom);
}

} // namespace lmprof::ui
