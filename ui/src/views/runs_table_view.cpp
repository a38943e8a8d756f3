// Every run of the session (and runs opened from files, marked "file"): status (its message
// on hover), the settings that tell the runs apart (engine::settingColumns), phase times
// with their std, the step time's CV and noise mark, peak memory and throughput. Click selects a
// run, Ctrl+click adds or removes it from the selection the charts overlay; a selected run's number
// carries its chart colour, and its id shows on hover.

#include "lmprof/engine/columns.h"
#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "table_cells.h"
#include "theme.h"
#include "view.h"

#include <algorithm>
#include <imgui.h>

namespace lmprof::ui {

class RunsTableView final : public View {
public:
    static constexpr const char* kTitle = "Runs";
    void draw(ViewContext& ctx) override;

private:
    void drawRow(ViewContext& ctx, int i, const std::vector<const engine::RunColumn*>& columns);

    std::vector<std::vector<std::string>> m_cells; // the cells of the frame being drawn
};

using namespace lmprof::engine;

namespace {

// The rows the table keeps in view (docs/WINDOW.md, "Layout"): its place grows to them.
constexpr int kRowsWanted = 8;

// A cell as wide as a column's usual values, so widths barely move while a run's figures
// change; a wider current value (a 4-digit mean with a 3-digit std) widens the column.
const char* widthSample(const std::string& unit) {
    if (unit == "ms") {
        return "0000.00 ± 00.00";
    }
    if (unit == "bytes") {
        return "1023.9 MiB";
    }
    if (unit == "tokens/s") {
        return "0000000";
    }
    return "";
}

ImVec4 statusColor(const RunView& v) {
    if (!v.finished) {
        return palette().live;
    }
    switch (v.result.status) {
    case RunStatus::Ok:
        return palette().ok;
    case RunStatus::Cancelled:
    case RunStatus::Skipped:
        return palette().skipped;
    default:
        return palette().error;
    }
}

} // namespace

// Run i's row: its number (selects it; Ctrl+click adds it), its status with the error on
// hover, where it comes from, and the report's columns.
void RunsTableView::drawRow(ViewContext& ctx, int i, const std::vector<const RunColumn*>& columns) {
    RunView& v = ctx.store.runs()[static_cast<size_t>(i)];
    ImGui::TableNextRow();
    ImGui::TableSetColumnIndex(0);
    ImGui::PushID(i);
    const bool selected = ctx.store.isSelected(i);
    if (selected) {
        plot::swatch(v);
    } else {
        ImGui::Dummy(ImVec2(ImGui::GetTextLineHeight() * 0.8f, 0.0f));
        ImGui::SameLine();
    }
    const std::string number = std::to_string(i + 1);
    if (ImGui::Selectable(number.c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
        if (ImGui::GetIO().KeyCtrl) {
            ctx.store.toggle(i);
        } else {
            ctx.store.selectOnly(i);
        }
    }
    if (ImGui::IsItemHovered() && !v.result.id.empty()) {
        ImGui::SetTooltip("%s", v.result.id.c_str());
    }
    ImGui::PopID();
    ImGui::TableNextColumn();
    const std::string status = v.finished ? statusText(v.result) : "running";
    ImGui::TextColored(statusColor(v), "%s", status.c_str());
    if (v.result.error && ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s", v.result.error->c_str());
    }
    ImGui::TableNextColumn();
    if (v.fromFile) {
        ImGui::TextUnformatted("file");
        if (ImGui::IsItemHovered()) {
            ImGui::SetTooltip("opened from a file or restored from the last session");
        }
    } else {
        ImGui::TextDisabled("session");
    }
    for (size_t k = 0; k < columns.size(); ++k) {
        ImGui::TableNextColumn();
        cell::figure(*columns[k], m_cells[i][k], v.result, v.liveSummary());
    }
}

void RunsTableView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_SizingFixedFit;
    // "#" and the status (coloured, its message on hover), then the report's columns
    // (columns.h) with the live summary of a running run.
    auto& runs = ctx.store.runs();
    std::vector<const RunColumn*> columns;
    for (const RunColumn* c : reportLayout(resultsOf(runs))) {
        if (c->key != "status") {
            columns.push_back(c);
        }
    }
    columns.push_back(&runColumn("op_profile")); // the Ops window reads these runs
    m_cells.assign(runs.size(), {});
    for (size_t i = 0; i < runs.size(); ++i) {
        const RunSummary& s = runs[i].liveSummary();
        for (const RunColumn* c : columns) {
            m_cells[i].push_back(c->cellOf(runs[i].result, s));
        }
    }
    if (ImGui::BeginTable("runs", static_cast<int>(columns.size()) + 3, flags)) {
        ImGui::TableSetupScrollFreeze(2, 1);
        ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed,
                                ImGui::CalcTextSize("000").x + ImGui::GetTextLineHeight());
        ImGui::TableSetupColumn("status", ImGuiTableColumnFlags_WidthFixed,
                                ImGui::CalcTextSize("cancelled (optimizer)").x);
        ImGui::TableSetupColumn("From", ImGuiTableColumnFlags_WidthFixed,
                                ImGui::CalcTextSize("session").x);
        for (size_t k = 0; k < columns.size(); ++k) {
            float width = std::max(ImGui::CalcTextSize(columns[k]->header.c_str()).x,
                                   ImGui::CalcTextSize(widthSample(columns[k]->unit)).x);
            for (const auto& row : m_cells) {
                width = std::max(width, ImGui::CalcTextSize(row[k].c_str()).x);
            }
            ImGui::TableSetupColumn(columns[k]->header.c_str(), ImGuiTableColumnFlags_WidthFixed,
                                    width);
        }
        ImGui::TableHeadersRow();
        // Only the rows in view are drawn: a night's sweep has hundreds.
        ImGuiListClipper clipper;
        clipper.Begin(static_cast<int>(runs.size()));
        float rowHeight = 0.0f; // as the clipper measured it
        while (clipper.Step()) {
            for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
                drawRow(ctx, i, columns);
            }
            rowHeight = std::max(rowHeight, clipper.ItemsHeight);
        }
        plot::noteTableRows("runs", static_cast<int>(runs.size()), kRowsWanted, rowHeight);
        ImGui::EndTable();
    }
    ImGui::End();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry runsTableWindow() {
    return windowOf<RunsTableView>(DockSlot::Bottom);
}

} // namespace lmprof::ui
