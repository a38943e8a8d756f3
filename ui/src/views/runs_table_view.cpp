// Every run of the session (and runs opened from files, marked "file"): status (its message
// on hover), the settings that tell the runs apart (engine::settingColumns), phase times
// with their std, the step time's CV and noise mark, peak memory and throughput. Selecting
// is as in a file manager (docs/WINDOW.md, "Runs"): click selects a run, Ctrl+click adds or
// removes one, Shift+click a range, Ctrl+A every run the filter shows, and a row's menu
// "Only this one". A selected run's number carries its chart colour; its id shows on hover.

#include "lmprof/engine/columns.h"
#include "lmprof/engine/report.h"
#include "lmprof/ui/run_selection.h"
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
    // The cells of every run this frame (m_cells) and the rows the filter keeps (m_shown).
    void buildRows(ViewContext& ctx, const std::vector<const engine::RunColumn*>& columns);
    // The filter, the count shown and the buttons that select what is shown.
    void drawToolbar(ViewContext& ctx);
    void drawTable(ViewContext& ctx, const std::vector<const engine::RunColumn*>& columns);
    void drawRow(ViewContext& ctx, int i, const std::vector<const engine::RunColumn*>& columns);
    // A click on run i's number: alone, Ctrl adds or removes, Shift selects the range from
    // the last click (m_anchor) over the rows shown.
    void click(ViewContext& ctx, int i);
    void rowMenu(ViewContext& ctx, int i);

    std::vector<std::vector<std::string>> m_cells; // the cells of the frame being drawn
    std::vector<int> m_shown;                      // the runs the filter keeps, in order
    char m_filter[128] = "";
    int m_anchor = -1; // the run last clicked without Shift
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
        click(ctx, i);
    }
    if (ImGui::IsItemHovered() && !v.result.id.empty()) {
        ImGui::SetTooltip("%s", v.result.id.c_str());
    }
    rowMenu(ctx, i);
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

void RunsTableView::click(ViewContext& ctx, int i) {
    const ImGuiIO& io = ImGui::GetIO();
    if (io.KeyShift && m_anchor >= 0) {
        ctx.store.select(rangeOfRows(m_shown, m_anchor, i));
        return;
    }
    m_anchor = i;
    if (io.KeyCtrl) {
        ctx.store.toggle(i);
    } else {
        ctx.store.selectOnly(i);
    }
}

void RunsTableView::rowMenu(ViewContext& ctx, int i) {
    if (!ImGui::BeginPopupContextItem("row")) {
        return;
    }
    if (ImGui::MenuItem("Only this one")) {
        ctx.store.selectOnly(i);
        m_anchor = i;
    }
    const bool selected = ctx.store.isSelected(i);
    if (ImGui::MenuItem(selected ? "Leave out of the selection" : "Add to the selection", nullptr,
                        false, !selected || ctx.store.selection().size() > 1)) {
        ctx.store.toggle(i);
    }
    if (ImGui::MenuItem("Select every run shown", "Ctrl+A")) {
        ctx.store.select(m_shown);
    }
    ImGui::EndPopup();
}

void RunsTableView::buildRows(ViewContext& ctx, const std::vector<const RunColumn*>& columns) {
    auto& runs = ctx.store.runs();
    m_cells.assign(runs.size(), {});
    m_shown.clear();
    for (size_t i = 0; i < runs.size(); ++i) {
        const RunSummary& s = runs[i].liveSummary();
        for (const RunColumn* c : columns) {
            m_cells[i].push_back(c->cellOf(runs[i].result, s));
        }
        // The filter reads the id, the status and where it comes from besides the columns.
        std::vector<std::string> words = m_cells[i];
        words.push_back(runs[i].result.id);
        words.push_back(runs[i].finished ? statusText(runs[i].result) : "running");
        words.emplace_back(runs[i].fromFile ? "file" : "session");
        if (matchesFilter(m_filter, words)) {
            m_shown.push_back(static_cast<int>(i));
        }
    }
}

void RunsTableView::drawToolbar(ViewContext& ctx) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 18.0f);
    ImGui::InputTextWithHint("##filter", "filter, e.g. bf16 -forward", m_filter, sizeof m_filter);
    ImGui::SameLine();
    const size_t total = ctx.store.runs().size();
    const std::string label = m_shown.size() == total
                                  ? "Select all " + std::to_string(total)
                                  : "Select the " + std::to_string(m_shown.size()) + " shown";
    ImGui::BeginDisabled(m_shown.empty());
    // Ctrl+A while Runs has the focus (the filter keeps Ctrl+A for its text).
    const bool ctrlA = ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
                       !ImGui::GetIO().WantTextInput &&
                       ImGui::IsKeyChordPressed(ImGuiMod_Ctrl | ImGuiKey_A);
    if (ImGui::SmallButton(label.c_str()) || (ctrlA && !m_shown.empty())) {
        ctx.store.select(m_shown);
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled(
        "%zu selected%s; Shift+click a range, Ctrl+click one more", ctx.store.selection().size(),
        m_shown.size() == total
            ? ""
            : (", " + std::to_string(total - m_shown.size()) + " hidden by the filter").c_str());
}

void RunsTableView::draw(ViewContext& ctx) {
    if (!ImGui::Begin(kTitle)) {
        ImGui::End();
        return;
    }
    // "#" and the status (coloured, its message on hover), then the report's columns
    // (columns.h) with the live summary of a running run.
    std::vector<const RunColumn*> columns;
    for (const RunColumn* c : reportLayout(resultsOf(ctx.store.runs()))) {
        if (c->key != "status") {
            columns.push_back(c);
        }
    }
    columns.push_back(&runColumn("op_profile")); // the Ops window reads these runs
    buildRows(ctx, columns);
    drawToolbar(ctx);
    drawTable(ctx, columns);
    ImGui::End();
}

void RunsTableView::drawTable(ViewContext& ctx, const std::vector<const RunColumn*>& columns) {
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("runs", static_cast<int>(columns.size()) + 3, flags)) {
        return;
    }
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
    clipper.Begin(static_cast<int>(m_shown.size()));
    float rowHeight = 0.0f; // as the clipper measured it
    while (clipper.Step()) {
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            drawRow(ctx, m_shown[static_cast<size_t>(r)], columns);
        }
        rowHeight = std::max(rowHeight, clipper.ItemsHeight);
    }
    noteTableRows("runs", static_cast<int>(m_shown.size()), kRowsWanted, rowHeight);
    ImGui::EndTable();
}

// The window's place in the registry (registry.cpp) and the charts it exports.
WindowEntry runsTableWindow() {
    return windowOf<RunsTableView>(DockSlot::Bottom);
}

} // namespace lmprof::ui
