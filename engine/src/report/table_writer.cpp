// Grid table with +---+ borders and = under the header (the layout benchmark write-ups use),
// with columns sized to their widest cell counted in characters, not bytes.

#include "lmprof/engine/format.h"
#include "lmprof/engine/report.h"

#include <algorithm>

namespace lmprof::engine {

namespace {

size_t displayWidth(const std::string& s) {
    size_t n = 0;
    for (unsigned char ch : s) {
        n += (ch & 0xC0) != 0x80; // count UTF-8 lead bytes only ("±" is two bytes)
    }
    return n;
}

void rule(std::ostream& out, const std::vector<size_t>& widths, char fill) {
    out << '+';
    for (size_t w : widths) {
        out << std::string(w + 2, fill) << '+';
    }
    out << '\n';
}

void line(std::ostream& out, const std::vector<size_t>& widths,
          const std::vector<std::string>& cells) {
    out << '|';
    for (size_t i = 0; i < cells.size(); ++i) {
        out << ' ' << cells[i] << std::string(widths[i] - displayWidth(cells[i]), ' ') << " |";
    }
    out << '\n';
}

} // namespace

void writeGridRows(std::ostream& out, const Rows& unsafe) {
    // Cells hold names from files (run ids, labels): no control character reaches the terminal.
    Rows rows = unsafe;
    for (auto& row : rows) {
        for (auto& cell : row) {
            cell = printable(cell);
        }
    }
    size_t columns = 0;
    for (const auto& row : rows) {
        columns = std::max(columns, row.size());
    }
    std::vector<size_t> widths(columns, 0);
    for (const auto& row : rows) {
        for (size_t i = 0; i < row.size(); ++i) {
            widths[i] = std::max(widths[i], displayWidth(row[i]));
        }
    }
    rule(out, widths, '-');
    for (size_t r = 0; r < rows.size(); ++r) {
        line(out, widths, rows[r]);
        rule(out, widths, r == 0 ? '=' : '-');
    }
}

void writeTable(std::ostream& out, std::span<const RunResult> runs) {
    const auto layout = reportLayout(runs);
    Rows rows = {summaryHeader(layout)};
    for (const auto& r : runs) {
        rows.push_back(summaryRow(r, layout));
    }
    writeGridRows(out, rows);
    for (const auto& r : runs) {
        if (r.error) {
            out << printable(r.id) << ": " << toString(r.status) << ": " << printable(*r.error)
                << '\n';
        } else if (const PhaseStats& t = r.summary.totalMs; t.noisy) {
            // A file may hold a median of 0 with a spread (found by fuzzing): no ratio then.
            out << printable(r.id) << ": noisy (step-time IQR is "
                << (t.median > 0.0 ? formatFixed(100.0 * t.iqr / t.median, 0) + "% of the median"
                                   : formatFixed(t.iqr, 3) + " ms with a median of 0")
                << ")\n";
        }
        for (const std::string& line : {thinnedLine(r), evaluationLine(r)}) {
            if (!line.empty()) {
                out << printable(r.id) << ": " << line << '\n';
            }
        }
    }
}

} // namespace lmprof::engine
