// CSV, RFC 4180: one row per run, CRLF line ends, fields quoted when they contain a comma,
// quote or line break. The columns are csvLayout(runs) (columns.h): stable names, one
// table, then the runs' logged scalars.

#include "lmprof/engine/columns.h"
#include "lmprof/engine/report.h"

namespace lmprof::engine {

void writeRows(std::ostream& out, const Rows& rows, ReportFormat format, size_t textColumns) {
    switch (format) {
    case ReportFormat::Table:
        writeGridRows(out, rows);
        return;
    case ReportFormat::Markdown:
        writeMarkdownRows(out, rows, textColumns);
        return;
    case ReportFormat::Csv:
        for (const auto& row : rows) {
            for (size_t i = 0; i < row.size(); ++i) {
                out << (i ? "," : "") << csvQuote(row[i]);
            }
            out << "\r\n";
        }
        return;
    }
}

void writeCsv(std::ostream& out, std::span<const RunResult> runs) {
    const auto columns = csvLayout(runs);
    auto emit = [&](auto&& field) {
        for (size_t i = 0; i < columns.size(); ++i) {
            out << (i ? "," : "") << csvQuote(field(*columns[i]));
        }
        out << "\r\n";
    };
    emit([](const RunColumn& c) { return c.key; });
    for (const auto& r : runs) {
        emit([&](const RunColumn& c) { return c.value(r, r.summary); });
    }
}

} // namespace lmprof::engine
