// The precision lab's tables (lmprof-cli precision, the window's Precision lab): the seeds'
// loops, the accumulation grid at each decade, and the dtypes of a model's modules.

#include "lmprof/engine/report.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>

namespace lmprof::engine {

namespace {

std::string formatG(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
    return buf;
}

std::string formatE(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.2e", v);
    return buf;
}

// "1e6" for powers of ten, else the number.
std::string termsLabel(int64_t terms) {
    const double e = std::log10(static_cast<double>(terms));
    if (std::fabs(e - std::round(e)) < 1e-12) {
        return "1e" + std::to_string(static_cast<int>(std::lround(e)));
    }
    return std::to_string(terms);
}

bool isDecade(int64_t terms, int64_t maxTerms) {
    const double e = std::log10(static_cast<double>(terms));
    return terms == maxTerms || std::fabs(e - std::round(e)) < 1e-12;
}

} // namespace

Rows seedLoopRows(const AccumulationReport& report) {
    Rows rows{
        {"loop (1000 × 0.01)", "result", "exact sum of the addends", "error", "ulps", "off 10 by"}};
    for (const SeedLoop& l : report.seedLoops) {
        rows.push_back({l.label, formatFixed(l.result, 4), formatG(l.exactSum(), 9),
                        formatE(l.error()), formatFixed(l.ulps(), 1),
                        formatE(l.result - l.intendedSum())});
    }
    return rows;
}

Rows accumulationRows(const AccumulationReport& report, bool allPoints) {
    Rows rows;
    if (report.series.empty()) {
        return rows;
    }
    std::vector<std::string> header{"series", "0.01 stored as"};
    const auto& terms = report.series.front().points;
    for (const auto& p : terms) {
        if (allPoints || isDecade(p.terms, report.maxTerms)) {
            header.push_back("sum @" + termsLabel(p.terms));
        }
    }
    header.push_back("rel. error @" + termsLabel(report.maxTerms));
    header.push_back("stops growing at");
    rows.push_back(header);
    for (const AccumulationSeries& s : report.series) {
        std::vector<std::string> cells{s.label(), formatG(s.addendValue, 9)};
        for (const auto& p : s.points) {
            if (allPoints || isDecade(p.terms, report.maxTerms)) {
                cells.push_back(formatG(p.sum, 7));
            }
        }
        cells.push_back(s.points.empty() ? "" : formatE(relativeError(s, s.points.back())));
        cells.push_back(s.stallTerms ? std::to_string(*s.stallTerms) + " terms (sum " +
                                           formatG(*s.stallSum, 6) + ")"
                                     : "-");
        rows.push_back(std::move(cells));
    }
    return rows;
}

Rows dtypeRows(const DtypeReport& report, bool withNotes, bool indent) {
    Rows rows{{"module", "kind", "parameters", "input", "output", "gradients"}};
    if (withNotes) {
        rows.front().push_back("why");
    }
    for (const DtypeRow& r : report.rows) {
        std::vector<std::string> cells{
            std::string(indent ? static_cast<size_t>(2 * r.depth) : 0, ' ') + r.name,
            r.kind,
            r.parameters,
            r.input,
            r.output,
            r.gradients};
        if (withNotes) {
            cells.push_back(r.note);
        }
        rows.push_back(std::move(cells));
    }
    return rows;
}

void writeAccumulationReport(std::ostream& out, const AccumulationReport& report,
                             ReportFormat format) {
    if (format == ReportFormat::Csv) {
        // One row per series and point: what a plotting script wants.
        Rows rows{{"series", "accumulator", "addend", "addend_value", "terms", "sum",
                   "relative_error", "relative_error_vs_0.01", "stall_terms"}};
        for (const AccumulationSeries& s : report.series) {
            for (const auto& p : s.points) {
                rows.push_back(
                    {s.label(), s.accumulator ? std::string(toString(*s.accumulator)) : "sum()",
                     std::string(toString(s.addend)), formatG(s.addendValue, 17),
                     std::to_string(p.terms), formatG(p.sum, 17), formatG(relativeError(s, p), 6),
                     formatG(relativeError(s, p, true), 6),
                     s.stallTerms ? std::to_string(*s.stallTerms) : ""});
            }
        }
        writeRows(out, rows, format, 0);
        return;
    }
    const bool md = format == ReportFormat::Markdown;
    out << (md ? "### " : "") << "Accumulating 0.01 on " << report.device << "\n\n";
    if (report.error) {
        out << "Not run: " << *report.error << "\n";
        if (report.seedLoops.empty()) {
            return;
        }
    }
    writeRows(out, seedLoopRows(report), format, 1);
    if (report.series.empty()) {
        return;
    }
    out << "\n"
        << (md ? "### " : "") << "Sum against the number of terms (relative error against "
        << "terms × 0.01 as stored; sum() reduces in fp32)\n\n";
    writeRows(out, accumulationRows(report, false), format, 2);
}

void writeDtypeReport(std::ostream& out, const DtypeReport& report, ReportFormat format,
                      bool csvHeader) {
    if (format == ReportFormat::Csv) {
        // Which report a row belongs to in its first columns, so reports can follow each
        // other under one header.
        Rows rows = dtypeRows(report, true, false);
        for (size_t r = 0; r < rows.size(); ++r) {
            const std::vector<std::string> lead =
                r == 0 ? std::vector<std::string>{"model", "precision", "device"}
                       : std::vector<std::string>{
                             report.model, std::string(toString(report.precision)), report.device};
            rows[r].insert(rows[r].begin(), lead.begin(), lead.end());
        }
        if (!csvHeader) {
            rows.erase(rows.begin());
        }
        writeRows(out, rows, format, 0);
        return;
    }
    const bool md = format == ReportFormat::Markdown;
    out << (md ? "### " : "") << "Dtypes of " << report.model << " under "
        << toString(report.precision) << " on " << report.device << " (autocast " << report.autocast
        << ")\n\n";
    if (report.error) {
        out << "Not run: " << *report.error << "\n";
        return;
    }
    writeRows(out, dtypeRows(report, false, !md), format, 6);
    // Each distinct note once, with the rows it explains.
    std::vector<std::pair<std::string, std::vector<std::string>>> notes;
    std::map<std::string, size_t> index;
    for (const DtypeRow& r : report.rows) {
        if (r.note.empty()) {
            continue;
        }
        auto [it, added] = index.emplace(r.note, notes.size());
        if (added) {
            notes.push_back({r.note, {}});
        }
        notes[it->second].second.push_back(r.name);
    }
    out << "\n" << (md ? "" : "Why:\n");
    for (const auto& [note, names] : notes) {
        std::string who;
        const size_t shown = std::min<size_t>(names.size(), 3);
        for (size_t i = 0; i < shown; ++i) {
            who += (i ? ", " : "") + names[i];
        }
        if (names.size() > shown) {
            who += " and " + std::to_string(names.size() - shown) + " more";
        }
        out << "- " << who << ": " << note << "\n";
    }
}

} // namespace lmprof::engine
