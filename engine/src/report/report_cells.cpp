// The cells every human-readable report shares: one header, one row per run, so the
// grid table and the Markdown table cannot drift apart.

#include "lmprof/engine/report.h"

#include <algorithm>
#include <cstdio>

namespace lmprof::engine {

namespace {

// "22.11 ± 0.09", or why there is no figure: the phase is not part of the mode ("-"),
// or the run ended without measured steps ("OOM", "error", "cancelled").
std::string timeCell(const RunResult& run, const PhaseStats& stats, bool phaseRuns) {
    if (!phaseRuns) {
        return "-";
    }
    if (stats.n == 0) {
        return run.status == RunStatus::Ok
                   ? "-"
                   : (run.status == RunStatus::Oom ? "OOM" : std::string(toString(run.status)));
    }
    return formatMeanStd(stats);
}

} // namespace

std::string formatFixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
    return buf;
}

std::string formatMeanStd(const PhaseStats& s) {
    return formatFixed(s.mean, 2) + " ± " + formatFixed(s.std, 2);
}

std::optional<ReportFormat> parseReportFormat(std::string_view s) {
    if (s == "table")
        return ReportFormat::Table;
    if (s == "markdown")
        return ReportFormat::Markdown;
    if (s == "csv")
        return ReportFormat::Csv;
    return std::nullopt;
}

std::string formatBytes(int64_t bytes) {
    const double b = static_cast<double>(bytes);
    if (b >= 1024.0 * 1024.0 * 1024.0)
        return formatFixed(b / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
    if (b >= 1024.0 * 1024.0)
        return formatFixed(b / (1024.0 * 1024.0), 1) + " MiB";
    if (b >= 1024.0)
        return formatFixed(b / 1024.0, 1) + " KiB";
    return std::to_string(bytes) + " B";
}

std::vector<std::string> summaryHeader() {
    return {"Model",  "Context", "Batch",   "Precision", "Mode",     "Fwd ms",
            "Bwd ms", "Opt ms",  "Step ms", "Peak mem",  "Tokens/s", "Status"};
}

std::vector<std::string> summaryRow(const RunResult& run) {
    const auto& c = run.config;
    const auto& s = run.summary;
    const auto phases = phasesOf(c.mode);
    auto has = [&](Phase p) { return std::find(phases.begin(), phases.end(), p) != phases.end(); };
    const int64_t peak = s.peakBytes.max();
    const std::string status = statusText(run);
    return {c.model.preset,
            std::to_string(c.contextLength),
            std::to_string(c.batchSize),
            std::string(toString(c.precision)),
            std::string(toString(c.mode)),
            timeCell(run, s.forwardMs, true),
            timeCell(run, s.backwardMs, has(Phase::Backward)),
            timeCell(run, s.optimizerMs, has(Phase::Optimizer)),
            timeCell(run, s.totalMs, true),
            peak > 0 ? formatBytes(peak) : "-",
            s.tokensPerS > 0 ? formatFixed(s.tokensPerS, 0) : "-",
            status};
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
