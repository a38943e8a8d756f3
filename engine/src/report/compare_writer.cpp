// Writes a Comparison through the layouts the run reports use (grid, Markdown, CSV); only
// the comparison's cells are laid out here.

#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace lmprof::engine {

namespace {

std::vector<std::string> header() {
    return {"Model",     "Context", "Batch",  "Precision", "Mode",   "A step ms",
            "B step ms", "B/A",     "95% CI", "p",         "Verdict"};
}

// The configuration cells of a pair: one value where the runs agree, "A vs B" where a pair
// the user named differs (a watched run against the engine's, say). A watched run has no
// context or batch of the engine's: empty.
std::vector<std::string> configCells(const RunResult& a, const RunResult& b) {
    auto cells = [](const RunResult& r) {
        const auto& c = r.config;
        return std::vector<std::string>{
            runModelLabel(r), r.source ? std::string() : std::to_string(c.contextLength),
            r.source ? std::string() : std::to_string(c.batchSize),
            std::string(toString(c.precision)), std::string(toString(c.mode))};
    };
    std::vector<std::string> out = cells(a);
    const std::vector<std::string> other = cells(b);
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] != other[i]) {
            out[i] = (out[i].empty() ? "-" : out[i]) + " vs " + (other[i].empty() ? "-" : other[i]);
        }
    }
    return out;
}

std::vector<std::string> row(const ComparedRun& m) {
    const auto& sa = m.a.summary.totalMs;
    const auto& sb = m.b.summary.totalMs;
    // No ratio without measured steps on both sides (a cancelled run has none).
    const bool ratioKnown = !measuredStepTimes(m.a.steps).empty() &&
                            !measuredStepTimes(m.b.steps).empty() &&
                            std::isfinite(m.stepRatio.ratio) && m.stepRatio.ratio > 0.0;
    std::vector<std::string> cells = configCells(m.a, m.b);
    cells.insert(cells.end(),
                 {formatMeanStd(sa), formatMeanStd(sb),
                  ratioKnown ? formatFixed(m.stepRatio.ratio, 3) + "x" : "-",
                  ratioKnown ? formatFixed(m.stepRatio.low, 3) + " - " +
                                   formatFixed(m.stepRatio.high, 3)
                             : "-",
                  m.verdict == Verdict::Untestable ? "-" : formatFixed(m.welch.p, 4),
                  std::string(toString(m.verdict))});
    return cells;
}

} // namespace

void writeComparison(std::ostream& out, const Comparison& c, ReportFormat format) {
    std::vector<std::vector<std::string>> rows = {header()};
    for (const auto& m : c.matched) {
        rows.push_back(row(m));
    }
    writeRows(out, rows, format, 5);
    if (format == ReportFormat::Csv) {
        return; // CSV carries the matched rows only
    }
    for (const auto& r : c.onlyA) {
        out << "only in A: " << r.id << " (" << toString(r.status) << ")\n";
    }
    for (const auto& r : c.onlyB) {
        out << "only in B: " << r.id << " (" << toString(r.status) << ")\n";
    }
    out << c.matched.size() << " matched, " << c.regressions()
        << " slower beyond noise (t-test of the ratio, p < " << kSignificance << ")\n";
}

} // namespace lmprof::engine
