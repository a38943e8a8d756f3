// The shared table cells (see table_cells.h).

#include "table_cells.h"

#include "lmprof/engine/report.h"
#include "plot_helpers.h"
#include "theme.h"

#include <algorithm>
#include <imgui.h>
#include <imgui_internal.h>
#include <sstream>

namespace lmprof::ui::cell {

void text(std::string_view s) {
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(s.data(), s.data() + s.size());
}

void integer(long long v) {
    ImGui::TableNextColumn();
    ImGui::Text("%lld", v);
}

void figure(const engine::RunColumn& column, const std::string& text, const engine::RunResult& run,
            const engine::RunSummary& summary) {
    if (text == "-") {
        ImGui::TextDisabled("-");
        return;
    }
    if (column.warns && column.warns(run, summary)) {
        ImGui::TextColored(palette().warning, "%s", text.c_str());
    } else {
        ImGui::TextUnformatted(text.c_str());
    }
    if (column.explain && ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s", column.explain(run, summary).c_str());
    }
}

void peakAndTokens(const engine::RunSummary& s) {
    const int64_t peak = s.peakBytes.max();
    text(peak > 0 ? engine::formatBytes(peak) : "-");
    ImGui::TableNextColumn();
    if (s.tokensPerS > 0) {
        ImGui::Text("%.0f", s.tokensPerS);
    } else {
        ImGui::TextDisabled("-");
    }
}

void pAndVerdict(const engine::WelchTest& welch, engine::Verdict verdict, std::string_view text) {
    using engine::Verdict;
    ImGui::TableNextColumn();
    if (verdict == Verdict::Untestable) {
        ImGui::TextDisabled("-");
    } else {
        ImGui::Text("%.3g", welch.p);
    }
    ImGui::TableNextColumn();
    const ImVec4 color = verdict == Verdict::Slower ? palette().error
                         : verdict == Verdict::Faster
                             ? palette().ok
                             : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled);
    const std::string_view words = text.empty() ? engine::toString(verdict) : text;
    ImGui::TextColored(color, "%.*s", static_cast<int>(words.size()), words.data());
}

} // namespace lmprof::ui::cell

namespace lmprof::ui {

void drawRowsBody(const engine::Rows& rows,
                  const std::function<std::optional<ImVec4>(size_t, size_t)>& tint, size_t wrap) {
    for (size_t r = 1; r < rows.size(); ++r) {
        ImGui::TableNextRow();
        for (size_t c = 0; c < rows[r].size(); ++c) {
            ImGui::TableNextColumn();
            if (const auto t = tint ? tint(r, c) : std::nullopt) {
                ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg,
                                       ImGui::GetColorU32(withAlpha(*t, 0.35f)));
            }
            if (c == wrap) {
                ImGui::TextWrapped("%s", rows[r][c].c_str());
            } else {
                ImGui::TextUnformatted(rows[r][c].c_str());
            }
        }
    }
}

void drawRowsTable(const char* id, const engine::Rows& rows, float maxHeight) {
    if (rows.empty()) {
        return;
    }
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                  ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_ScrollY;
    // A table that scrolls sideways takes every line left unless told its height: its rows
    // (and the scrollbar), so what follows stays in view.
    const ImGuiStyle& style = ImGui::GetStyle();
    const float rowHeight = ImGui::GetTextLineHeight() + 2.0f * style.CellPadding.y;
    float height = rowHeight * static_cast<float>(rows.size()) + style.ScrollbarSize + 2.0f;
    if (maxHeight > 0.0f) {
        height = std::min(height, maxHeight);
    }
    if (!ImGui::BeginTable(id, static_cast<int>(rows[0].size()), flags, ImVec2(0.0f, height))) {
        return;
    }
    ImGui::TableSetupScrollFreeze(1, 1);
    for (const auto& h : rows[0]) {
        ImGui::TableSetupColumn(h.c_str());
    }
    ImGui::TableHeadersRow();
    drawRowsBody(rows);
    ImGui::EndTable();
}

void copyMarkdownButton(const char* label, const engine::Rows& rows, size_t textColumns) {
    if (ImGui::SmallButton(label)) {
        std::ostringstream out;
        engine::writeMarkdownRows(out, rows, textColumns);
        ImGui::SetClipboardText(out.str().c_str());
    }
}

void noteTableRows(const char* name, int rows, int wanted, float rowHeight) {
    const ImGuiTable* table = ImGui::GetCurrentTable();
    if (!table || plot::exporting()) {
        return;
    }
    // A row: as given, or the last one's height (a tree's rows hold framed items); at least
    // a text line and its cell padding. The header row is one more. What shows is the table's
    // visible part, cut by the window it lies in (a table that does not scroll ends where its
    // window's does).
    rowHeight = std::max(rowHeight > 0.0f ? rowHeight : table->RowPosY2 - table->RowPosY1,
                         ImGui::GetTextLineHeight() + 2.0f * ImGui::GetStyle().CellPadding.y);
    const ImRect clip = table->OuterWindow->ClipRect;
    const float top = std::max(table->OuterRect.Min.y, clip.Min.y);
    const float bottom = std::min({table->InnerClipRect.Max.y, table->OuterRect.Max.y, clip.Max.y});
    const float fit = std::max(0.0f, (bottom - top) / rowHeight - 1.0f);
    ChartBook::current().tables.push_back({table->OuterWindow->RootWindow->Name, name, rows,
                                           std::min(rows, wanted), fit, rowHeight,
                                           table->OuterRect.Min});
}

} // namespace lmprof::ui
