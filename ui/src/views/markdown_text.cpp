// Markdown drawn as ImGui text (markdown_text.h).

#include "markdown_text.h"

#include <imgui.h>
#include <string>
#include <vector>

namespace lmprof::ui {

namespace {

// The text a reader sees: emphasis and code marks dropped.
std::string plain(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '`' || (s[i] == '*' && i + 1 < s.size() && s[i + 1] == '*')) {
            i += s[i] == '*' ? 1 : 0;
            continue;
        }
        out += s[i];
    }
    return out;
}

std::string_view trimmed(std::string_view s) {
    const size_t first = s.find_first_not_of(' ');
    if (first == std::string_view::npos) {
        return {};
    }
    return s.substr(first, s.find_last_not_of(' ') - first + 1);
}

// A pipe table's cells: "| a | b |" -> {"a", "b"}.
std::vector<std::string> cells(std::string_view row) {
    row = trimmed(row);
    row.remove_prefix(row.starts_with('|') ? 1 : 0);
    row.remove_suffix(row.ends_with('|') ? 1 : 0);
    std::vector<std::string> out;
    for (size_t at = 0; at <= row.size();) {
        const size_t bar = std::min(row.find('|', at), row.size());
        out.push_back(plain(trimmed(row.substr(at, bar - at))));
        at = bar + 1;
    }
    return out;
}

bool isRule(const std::vector<std::string>& row) { // | --- | ---: |
    for (const std::string& c : row) {
        if (c.find_first_not_of("-: ") != std::string::npos) {
            return false;
        }
    }
    return true;
}

void drawTable(const std::vector<std::vector<std::string>>& rows, int id) {
    const size_t columns = rows.front().size();
    const ImGuiTableFlags flags =
        ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit;
    if (columns == 0 || !ImGui::BeginTable(("##md" + std::to_string(id)).c_str(),
                                           static_cast<int>(columns), flags)) {
        return;
    }
    for (const std::string& h : rows.front()) {
        ImGui::TableSetupColumn(h.c_str());
    }
    ImGui::TableHeadersRow();
    for (size_t r = 1; r < rows.size(); ++r) {
        if (isRule(rows[r])) {
            continue;
        }
        ImGui::TableNextRow();
        for (size_t c = 0; c < columns; ++c) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(c < rows[r].size() ? rows[r][c].c_str() : "");
        }
    }
    ImGui::EndTable();
}

void drawLine(std::string_view line) {
    const std::string_view body = trimmed(line);
    if (body.empty()) {
        ImGui::Spacing();
        return;
    }
    if (body.starts_with('#')) {
        const size_t level = body.find_first_not_of('#');
        const float scale = level == 1 ? 1.4f : level == 2 ? 1.2f : 1.08f;
        ImGui::Spacing();
        ImGui::PushFont(nullptr, ImGui::GetStyle().FontSizeBase * scale);
        ImGui::TextWrapped("%s", plain(trimmed(body.substr(level))).c_str());
        ImGui::PopFont();
        return;
    }
    if (body.starts_with("![")) { // a chart the report names: its caption and file
        const size_t close = body.find("](");
        const std::string alt =
            plain(body.substr(2, close == std::string_view::npos ? 0 : close - 2));
        const std::string file(close == std::string_view::npos
                                   ? std::string_view{}
                                   : body.substr(close + 2, body.size() - close - 3));
        ImGui::TextDisabled("[chart: %s, %s]", alt.c_str(), file.c_str());
        return;
    }
    if (body.starts_with("- ") || body.starts_with("* ")) {
        const float indent =
            ImGui::GetFontSize() * static_cast<float>(line.find_first_not_of(' ')) / 2.0f;
        if (indent > 0.0f) {
            ImGui::Indent(indent);
        }
        ImGui::Bullet();
        ImGui::TextWrapped("%s", plain(body.substr(2)).c_str());
        if (indent > 0.0f) {
            ImGui::Unindent(indent);
        }
        return;
    }
    ImGui::TextWrapped("%s", plain(body).c_str());
}

} // namespace

void drawMarkdown(std::string_view markdown) {
    std::vector<std::vector<std::string>> table;
    bool code = false;
    int tables = 0;
    size_t at = 0;
    while (at <= markdown.size()) {
        const size_t end = std::min(markdown.find('\n', at), markdown.size());
        const std::string_view line = markdown.substr(at, end - at);
        at = end + 1;
        const bool tableRow = !code && trimmed(line).starts_with('|');
        if (!tableRow && !table.empty()) {
            drawTable(table, tables++);
            table.clear();
        }
        if (trimmed(line).starts_with("```")) {
            code = !code;
        } else if (code) {
            ImGui::TextDisabled("%.*s", static_cast<int>(line.size()), line.data());
        } else if (tableRow) {
            table.push_back(cells(line));
        } else {
            drawLine(line);
        }
    }
    if (!table.empty()) {
        drawTable(table, tables);
    }
}

} // namespace lmprof::ui
