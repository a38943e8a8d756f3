// Writes a Comparison through the layouts the run reports use (grid, Markdown, CSV); only
// the comparison's cells are laid out here.

#include "lmprof/engine/columns.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace lmprof::engine {

namespace {

// Both sides' matched runs.
std::vector<const RunResult*> runsOf(const Comparison& c) {
    std::vector<const RunResult*> runs;
    for (const ComparedRun& m : c.matched) {
        runs.push_back(&m.a);
        runs.push_back(&m.b);
    }
    return runs;
}

// The settings a comparison shows: the tables' rule (settingColumns) over both sides' runs.
std::vector<const RunColumn*> comparedSettings(const Comparison& c) {
    return settingColumns(runsOf(c));
}

// One value where the two runs agree, "A vs B" where a pair the user named differs (a
// watched run against the engine's, say). A watched run has no context or batch: "-".
std::string settingCell(const RunColumn& column, const ComparedRun& m) {
    const std::string a = column.cellOf(m.a, m.a.summary);
    const std::string b = column.cellOf(m.b, m.b.summary);
    return a == b ? a : (a.empty() ? "-" : a) + " vs " + (b.empty() ? "-" : b);
}

} // namespace

Rows comparisonRows(const Comparison& c) {
    const std::vector<const RunColumn*> settings = comparedSettings(c);
    Rows rows(1);
    for (const RunColumn* column : settings) {
        rows[0].push_back(column->header);
    }
    rows[0].insert(rows[0].end(), {"A step ms", "B step ms", "B/A", "95% CI", "p", "Verdict"});
    // Then what the runs logged (scalarColumns): the last values, "A vs B" where they differ.
    const std::vector<const RunColumn*> scalars = scalarColumns(runsOf(c), false);
    for (const RunColumn* column : scalars) {
        rows[0].push_back(column->header + " (A vs B)");
    }
    for (const ComparedRun& m : c.matched) {
        std::vector<std::string> cells;
        for (const RunColumn* column : settings) {
            cells.push_back(settingCell(*column, m));
        }
        const auto& sa = m.a.summary.totalMs;
        const auto& sb = m.b.summary.totalMs;
        // No ratio without measured steps on both sides (a cancelled run has none).
        const bool ratioKnown = !measuredStepTimes(m.a.steps).empty() &&
                                !measuredStepTimes(m.b.steps).empty() &&
                                std::isfinite(m.stepRatio.ratio) && m.stepRatio.ratio > 0.0;
        cells.insert(
            cells.end(),
            {formatMeanStd(sa), formatMeanStd(sb),
             ratioKnown ? formatFixed(m.stepRatio.ratio, 3) + "x" : "-",
             ratioKnown ? formatFixed(m.stepRatio.low, 3) + " - " + formatFixed(m.stepRatio.high, 3)
                        : "-",
             m.verdict == Verdict::Untestable ? "-" : formatFixed(m.welch.p, 4),
             std::string(toString(m.verdict))});
        for (const RunColumn* column : scalars) {
            cells.push_back(settingCell(*column, m));
        }
        rows.push_back(std::move(cells));
    }
    return rows;
}

size_t comparisonFiguresAt(const Comparison& c) {
    return comparedSettings(c).size();
}

void writeComparison(std::ostream& out, const Comparison& c, ReportFormat format) {
    writeRows(out, comparisonRows(c), format, comparisonFiguresAt(c));
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

Rows phaseComparisonRows(const std::vector<PhaseComparison>& phases) {
    Rows rows = {{"phase", "A ms", "B ms", "B/A", "95% CI", "p", "Verdict"}};
    for (const PhaseComparison& p : phases) {
        const bool known = p.verdict != Verdict::Untestable;
        rows.push_back(
            {p.phase, formatFixed(p.aMs, 3), formatFixed(p.bMs, 3),
             known ? formatFixed(p.ratio.ratio, 3) + "x" : "-",
             known ? formatFixed(p.ratio.low, 3) + " - " + formatFixed(p.ratio.high, 3) : "-",
             known ? formatFixed(p.ratio.test.p, 4) : "-", std::string(toString(p.verdict))});
    }
    return rows;
}

} // namespace lmprof::engine
