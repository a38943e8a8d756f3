// GitHub-flavoured Markdown table of the same cells as the grid table.

#include "lmprof/engine/report.h"

namespace lmprof::engine {

namespace {

std::string escapeCell(const std::string& s) {
    std::string out;
    for (char ch : s) {
        if (ch == '|') {
            out += "\\|";
        } else if (ch == '\n') {
            out += ' ';
        } else {
            out += ch;
        }
    }
    return out;
}

void row(std::ostream& out, const std::vector<std::string>& cells) {
    out << '|';
    for (const auto& c : cells) {
        out << ' ' << escapeCell(c) << " |";
    }
    out << '\n';
}

} // namespace

void writeMarkdown(std::ostream& out, std::span<const RunResult> runs) {
    const auto header = summaryHeader();
    row(out, header);
    out << '|';
    for (size_t i = 0; i < header.size(); ++i) {
        // Text columns left, figures right.
        out << (i < 5 || i + 1 == header.size() ? " --- |" : " ---: |");
    }
    out << '\n';
    for (const auto& r : runs) {
        row(out, summaryRow(r));
    }
}

} // namespace lmprof::engine
