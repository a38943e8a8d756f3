// Data-parallel tables (lmprof-cli ddp and show, the window's Distributed view): the
// strategies side by side, and the seeds' per-step table (step, communication, overhead).

#include "lmprof/engine/report.h"

#include <algorithm>
#include <ostream>

namespace lmprof::engine {

namespace {

std::string optionalFixed(const std::optional<double>& v, int digits) {
    return v ? formatFixed(*v, digits) : "–";
}

std::string percent(double share) {
    return formatFixed(100.0 * share, 1) + "%";
}

std::string identical(const DdpReport& r) {
    return !r.parametersIdentical ? "unknown" : *r.parametersIdentical ? "yes" : "NO";
}

int worldOf(const RunResult& run) {
    return run.config.ddp ? run.config.ddp->worldSize : 1;
}

} // namespace

Rows ddpSummaryRows(std::span<const RunResult> runs) {
    Rows rows{{"run", "ranks", "backend", "strategy", "bucket MiB", "all-reduces/step", "step ms",
               "compute ms", "comm ms", "exposed ms", "hidden ms", "overhead", "algbw GB/s",
               "busbw GB/s", "params identical"}};
    for (const auto& run : runs) {
        if (!run.ddp || !run.config.ddp) {
            continue;
        }
        const DdpRequest& q = *run.config.ddp;
        const auto s = summarizeDdp(*run.ddp, q.worldSize);
        const auto fixed = [&](double DdpSummary::*field) {
            return s ? formatFixed((*s).*field, 2) : "–";
        };
        rows.push_back({run.id, std::to_string(q.worldSize), std::string(toString(q.backend)),
                        std::string(toString(q.strategy)),
                        q.strategy == DdpStrategy::Bucketed ? formatFixed(q.bucketMb, 1) : "–",
                        std::to_string(run.ddp->buckets), fixed(&DdpSummary::stepMs),
                        fixed(&DdpSummary::computeMs), fixed(&DdpSummary::commMs),
                        fixed(&DdpSummary::exposedCommMs),
                        s ? formatFixed(std::max(0.0, s->commMs - s->exposedCommMs), 2) : "–",
                        s ? percent(s->overhead) : "–",
                        optionalFixed(s ? s->algbwGBps : std::nullopt, 3),
                        optionalFixed(s ? s->busbwGBps : std::nullopt, 3), identical(*run.ddp)});
    }
    return rows;
}

Rows ddpStepRows(const RunResult& run) {
    Rows rows{{"step", "rank", "step ms", "compute ms", "comm ms", "exposed ms", "overhead",
               "busbw GB/s"}};
    if (!run.ddp) {
        return rows;
    }
    const int steps = run.config.warmupSteps + run.config.measureSteps;
    for (int i = 0; i < steps; ++i) {
        for (const auto& rank : run.ddp->ranks) {
            for (const auto& s : rank.steps) {
                if (s.index != i) {
                    continue;
                }
                rows.push_back({std::to_string(i + 1) + (s.warmup ? " (warmup)" : ""),
                                std::to_string(rank.rank), formatFixed(s.stepMs, 2),
                                formatFixed(computeMs(s), 2), formatFixed(s.commMs, 2),
                                formatFixed(s.exposedCommMs, 2), percent(overheadShare(s)),
                                optionalFixed(busBandwidthGBps(s, worldOf(run)), 3)});
            }
        }
    }
    return rows;
}

void writeDdpReport(std::ostream& out, std::span<const RunResult> runs, ReportFormat format) {
    if (format == ReportFormat::Csv) {
        Rows rows;
        for (const auto& run : runs) {
            Rows steps = ddpStepRows(run);
            if (rows.empty()) {
                rows.push_back(steps.front());
                rows.front().insert(rows.front().begin(), "run");
            }
            for (size_t i = 1; i < steps.size(); ++i) {
                steps[i].insert(steps[i].begin(), run.id);
                rows.push_back(std::move(steps[i]));
            }
        }
        writeRows(out, rows, format, 1);
        return;
    }
    const bool md = format == ReportFormat::Markdown;
    const Rows summary = ddpSummaryRows(runs);
    if (summary.size() < 2) {
        return;
    }
    out << (md ? "### " : "")
        << "Data-parallel overhead (means over every rank's measured steps)\n\n";
    writeRows(out, summary, format, 4);
    for (const auto& run : runs) {
        if (!run.ddp) {
            continue;
        }
        out << "\n" << (md ? "#### " : "") << run.id << ": per step and rank\n\n";
        writeRows(out, ddpStepRows(run), format, 2);
        if (const std::string problem = firstRankError(*run.ddp); !problem.empty()) {
            out << "\n" << problem << "\n";
        }
    }
}

} // namespace lmprof::engine
