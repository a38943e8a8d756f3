// A run's verdicts under the runs' table (docs/VERDICTS.md): one line each with the next
// thing to try below it; the kinds that abstained for want of steps share one line.

#include "lmprof/engine/report.h"
#include "lmprof/engine/verdicts.h"

namespace lmprof::engine {

namespace {

// "memory-creep, drift (needs 20 measured steps; has 10)": the abstentions of one run.
std::string abstentionsText(const std::vector<RunVerdict>& verdicts) {
    std::string kinds;
    std::string why;
    for (const auto& v : verdicts) {
        if (v.certainty != Certainty::Abstained) {
            continue;
        }
        kinds += (kinds.empty() ? "" : ", ") + std::string(toString(v.kind));
        why = why.empty() || why == v.evidence ? v.evidence : "too few measured steps";
    }
    return kinds.empty() ? kinds : kinds + " (" + why + ")";
}

} // namespace

void writeVerdictReport(std::ostream& out, std::span<const RunResult> runs, ReportFormat format) {
    if (format == ReportFormat::Csv) {
        return; // the CSV's verdicts column (columns.cpp) holds them
    }
    const bool md = format == ReportFormat::Markdown;
    const auto section = [&](const std::string& heading, const std::vector<RunVerdict>& verdicts) {
        if (verdicts.empty()) {
            return;
        }
        out << "\n" << (md ? "### " : "") << printable(heading) << (md ? "\n\n" : "\n");
        for (const auto& v : verdicts) {
            if (v.certainty == Certainty::Abstained) {
                continue;
            }
            const std::string line = printable(verdictLine(v));
            const std::string next = printable(v.advice);
            if (md) {
                out << "- " << markdownText(line) << "\n  Next: " << markdownText(next) << "\n";
            } else {
                out << "  " << line << "\n      next: " << next << "\n";
            }
        }
        if (const std::string a = abstentionsText(verdicts); !a.empty()) {
            out << (md ? "- abstains: " + markdownText(a) : "  abstains: " + a) << "\n";
        }
    };
    for (const RunResult& run : runs) {
        // A run just measured is judged here; one read from a file was judged as it was read.
        section("Verdicts for " + run.id, run.verdicts.empty() ? judgeRun(run) : run.verdicts);
    }
    for (const RunVerdict& v : judgeRuns(runs)) {
        std::string ids;
        for (const std::string& id : v.runs) {
            ids += (ids.empty() ? "" : ", ") + id;
        }
        section("Verdicts across " + ids, {v});
    }
}

} // namespace lmprof::engine
