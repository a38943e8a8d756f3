// The op profile as a grid table, Markdown or CSV (lmprof-cli run --profile-ops, lmprof-cli ops).

#include "lmprof/engine/format.h"
#include "lmprof/engine/op_profile.h"
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
        cells.push_back(csv ? formatFixed(r.calls, 3) : formatCount(r.calls));
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

void writeOpReport(std::ostream& out, std::span<const RunResult> runs, const OpReportOptions& o,
                   ReportFormat format) {
    if (format == ReportFormat::Csv) {
        // One table: the run's id first, one header for every run.
        bool header = true;
        for (const RunResult& run : runs) {
            if (!run.opProfile) {
                continue;
            }
            const Rows rows = opRows(*run.opProfile, o, true);
            for (size_t r = header ? 0 : 1; r < rows.size(); ++r) {
                out << csvQuote(r == 0 ? "run" : run.id);
                for (const auto& cell : rows[r]) {
                    out << "," << csvQuote(cell);
                }
                out << "\r\n";
            }
            header = false;
        }
        return;
    }
    const bool md = format == ReportFormat::Markdown;
    bool first = true;
    for (const RunResult& run : runs) {
        out << (first ? "" : "\n");
        first = false;
        if (!run.opProfile) {
            out << run.id << ": no op profile (run with --profile-ops)\n";
            continue;
        }
        const OpProfile& p = *run.opProfile;
        const int64_t last = int64_t{p.firstStep} + p.stepCount - 1;
        out << (md ? "### " : "") << "Op profile of " << run.id << ", step"
            << (p.stepCount > 1 ? "s " : " ") << p.firstStep;
        if (p.stepCount > 1) {
            out << ".." << last << " (means per step)";
        }
        out << (md ? "\n\n" : "\n");
        const char* bullet = md ? "- " : "  ";
        for (const auto& sentence : headlineSentences(p)) {
            out << bullet << sentence << "\n";
        }
        for (Phase ph : kPhases) {
            if (p.unattributedMs.of(ph) > 0.0) {
                out << bullet << "Unattributed in " << toString(ph) << ": "
                    << formatFixed(p.unattributedMs.of(ph), 3) << " ms.\n";
            }
        }
        for (const auto& note : p.notes) {
            out << bullet << "Note: " << note << "\n";
        }
        out << "\n";
        const Rows rows = opRows(p, o, false);
        writeRows(out, rows, format, rows[0].size() - 7);
        if (!p.trace.empty()) {
            out << (md ? "\n" : "") << "Chrome trace: " << p.trace << "\n";
        }
        if (p.traceError) {
            out << *p.traceError << "\n";
        }
    }
}

Rows moduleRows(const RunResult& run) {
    Rows rows = {{"module", "forward ms", "backward ms", "both ms", "of forward %", "of backward %",
                  "calls/step"}};
    if (!run.moduleTimes) {
        return rows;
    }
    // The phases' means over the same steps the module times are over: the measured ones.
    const auto mean = [&](double StepRecord::*field) {
        return computeStats(measuredStepTimes(run.steps, field)).mean;
    };
    const double forward = mean(&StepRecord::forwardMs);
    const double backward = mean(&StepRecord::backwardMs);
    const auto share = [](double part, double whole) {
        return whole > 0.0 ? formatFixed(100.0 * part / whole, 1) : std::string();
    };
    for (const ModuleTime& m : run.moduleTimes->modules) {
        rows.push_back({m.name, formatFixed(m.forwardMs, 3), formatFixed(m.backwardMs, 3),
                        formatFixed(m.forwardMs + m.backwardMs, 3), share(m.forwardMs, forward),
                        share(m.backwardMs, backward), formatCount(m.forwardCalls)});
    }
    return rows;
}

void writeModuleReport(std::ostream& out, std::span<const RunResult> runs, ReportFormat format) {
    const bool md = format == ReportFormat::Markdown;
    for (const RunResult& run : runs) {
        if (!run.moduleTimes) {
            continue;
        }
        out << "\n"
            << (md ? "### " : "") << "Time per module of " << run.id << " (depth "
            << run.moduleTimes->depth << ", mean of " << run.moduleTimes->steps
            << " measured steps)" << (md ? "\n\n" : "\n");
        writeRows(out, moduleRows(run), format, 1);
    }
}

} // namespace lmprof::engine
