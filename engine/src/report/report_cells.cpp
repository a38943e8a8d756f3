// The cells every human-readable report shares: one header, one row per run, so the
// grid table and the Markdown table cannot drift apart.

#include "enum_names.h"
#include "lmprof/engine/columns.h"
#include "lmprof/engine/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lmprof::engine {

std::string formatMeanStd(const PhaseStats& s) {
    // One step has no spread to show, and none has no mean.
    if (s.n == 0) {
        return "-";
    }
    if (s.n == 1) {
        return formatFixed(s.mean, 2) + " (n = 1)";
    }
    return formatFixed(s.mean, 2) + " ± " + formatFixed(s.std, 2);
}

constexpr EnumNames<ReportFormat, 3> kReportFormatNames{{
    {ReportFormat::Table, "table"},
    {ReportFormat::Markdown, "markdown"},
    {ReportFormat::Csv, "csv"},
}};

std::optional<ReportFormat> parseReportFormat(std::string_view s) {
    for (const auto& [format, name] : kReportFormatNames) {
        if (name == s) {
            return format;
        }
    }
    return std::nullopt;
}

std::vector<std::string> summaryHeader(std::span<const RunColumn* const> layout) {
    std::vector<std::string> out;
    for (const RunColumn* c : layout) {
        out.push_back(c->header);
    }
    return out;
}

std::vector<std::string> summaryRow(const RunResult& run,
                                    std::span<const RunColumn* const> layout) {
    std::vector<std::string> out;
    for (const RunColumn* c : layout) {
        out.push_back(c->cellOf(run, run.summary));
    }
    return out;
}

void writeReport(std::ostream& out, std::span<const RunResult> runs, ReportFormat format) {
    switch (format) {
    case ReportFormat::Table:
        writeTable(out, runs);
        break;
    case ReportFormat::Markdown:
        writeMarkdown(out, runs);
        break;
    case ReportFormat::Csv:
        writeCsv(out, runs);
        break;
    }
}

} // namespace lmprof::engine
