// GitHub-flavoured Markdown table of the same cells as the grid table.

#include "lmprof/engine/report.h"

#include <algorithm>

namespace lmprof::engine {

std::string markdownText(std::string_view s) {
    std::string out;
    for (char ch : s) {
        if (ch == '\n' || ch == '\r') {
            out += ' ';
            continue;
        }
        // What Markdown would read as markup: emphasis, code, links and images, HTML,
        // headings, table cells. Escaped, each shows as itself.
        if (std::string_view("\\`*_[]<>#!|").find(ch) != std::string_view::npos) {
            out += '\\';
        }
        out += ch;
    }
    return out;
}

namespace {

void row(std::ostream& out, const std::vector<std::string>& cells) {
    out << '|';
    for (const auto& c : cells) {
        out << ' ' << markdownText(c) << " |";
    }
    out << '\n';
}

} // namespace

void writeMarkdownRows(std::ostream& out, const Rows& rows, size_t textColumns) {
    row(out, rows.at(0));
    out << '|';
    for (size_t i = 0; i < rows[0].size(); ++i) {
        out << (i < textColumns || i + 1 == rows[0].size() ? " --- |" : " ---: |");
    }
    out << '\n';
    for (size_t r = 1; r < rows.size(); ++r) {
        row(out, rows[r]);
    }
}

void writeMarkdown(std::ostream& out, std::span<const RunResult> runs) {
    const auto layout = reportLayout(runs);
    Rows rows = {summaryHeader(layout)};
    for (const auto& r : runs) {
        rows.push_back(summaryRow(r, layout));
    }
    // The configuration is text; the figures align right.
    writeMarkdownRows(out, rows, firstFigure(layout));
}

} // namespace lmprof::engine
