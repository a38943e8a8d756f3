// The op profile as a grid table, Markdown or CSV (lmprof-cli run --profile-ops, lmprof-cli ops).

#include "lmprof/engine/report.h"

#include <ostream>

namespace lmprof::engine {

namespace {

Rows opRows(const OpProfile& p, const OpReportOptions& o, bool csv) {
    const bool byRegion = o.by == OpGrouping::Region;
    Rows rows;
    std::vector<std::string> header = {"phase"};
    if (o.by != OpGrouping::Op) {
        header.push_back("region");
    }
    if (!byRegion) {
        header.push_back(o.by == OpGrouping::Op ? "op / kernel" : "name");
    }
    for (const char* h :
         {"kind", "calls/step", "self ms", "total ms", "share %", "GFLOP", "TFLOP/s"}) {
        header.emplace_back(h);
    }
    rows.push_back(header);
    int shown = 0;
    std::optional<Phase> current;
    for (const OpRow& r : groupRows(p.rows, o.by)) {
        if (o.phase && r.phase != *o.phase) {
            continue;
        }
        if (r.phase != current) {
            current = r.phase;
            shown = 0;
        }
        if (o.top > 0 && shown >= o.top) {
            continue;
        }
        ++shown;
        const double total = p.phaseTotal(r);
        std::vector<std::string> cells = {std::string(toString(r.phase))};
        if (o.by != OpGrouping::Op) {
            cells.push_back(r.region);
        }
        if (!byRegion) {
            cells.push_back(r.name);
        }
        const int digits = csv ? 6 : 3;
        cells.push_back(std::string(toString(r.kind)));
        cells.push_back(formatFixed(r.calls, csv ? 3 : 1));
        cells.push_back(formatFixed(r.selfMs, digits));
        cells.push_back(formatFixed(r.totalMs, digits));
        cells.push_back(total > 0.0 ? formatFixed(100.0 * r.selfMs / total, csv ? 3 : 1) : "");
        cells.push_back(r.flops > 0.0 ? formatFixed(r.flops / 1e9, digits) : "");
        cells.push_back(r.flops > 0.0 && r.selfMs > 0.0
                            ? formatFixed(r.flops / (r.selfMs * 1e-3) / 1e12, digits)
                            : "");
        rows.push_back(std::move(cells));
    }
    return rows;
}

} // namespace

void writeOpReport(std::ostream& out, const RunResult& run, const OpReportOptions& o,
                   ReportFormat format) {
    if (!run.opProfile) {
        out << run.id << ": no op profile (run with --profile-ops)\n";
        return;
    }
    const OpProfile& p = *run.opProfile;
    const Rows rows = opRows(p, o, format == ReportFormat::Csv);
    if (format == ReportFormat::Csv) {
        for (const auto& row : rows) {
            for (size_t i = 0; i < row.size(); ++i) {
                out << (i ? "," : "") << csvQuote(row[i]);
            }
            out << "\r\n";
        }
        return;
    }
    const bool md = format == ReportFormat::Markdown;
    out << (md ? "### " : "") << "Op profile of " << run.id << ", step"
        << (p.stepCount > 1 ? "s " : " ") << p.firstStep;
    if (p.stepCount > 1) {
        out << ".." << p.firstStep + p.stepCount - 1 << " (means per step)";
    }
    out << (md ? "\n\n" : "\n");
    for (const auto& sentence : headlineSentences(p)) {
        out << (md ? "- " : "  ") << sentence << "\n";
    }
    for (Phase ph : kPhases) {
        if (p.unattributedMs.of(ph) > 0.0) {
            out << (md ? "- " : "  ") << "Unattributed in " << toString(ph) << ": "
                << formatFixed(p.unattributedMs.of(ph), 3) << " ms.\n";
        }
    }
    for (const auto& note : p.notes) {
        out << (md ? "- " : "  ") << "Note: " << note << "\n";
    }
    out << "\n";
    if (md) {
        writeMarkdownRows(out, rows, rows[0].size() - 7);
    } else {
        writeGridRows(out, rows);
    }
    if (!p.trace.empty()) {
        out << (md ? "\n" : "") << "Chrome trace: " << p.trace << "\n";
    }
    if (p.traceError) {
        out << *p.traceError << "\n";
    }
}

} // namespace lmprof::engine
