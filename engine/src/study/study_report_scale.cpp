// The study's write-up, its scale sections (report_section.h): the memory of the largest
// model by context, data-parallel training's overhead by strategy, the execution variants,
// and the precision lab's accumulation.

#include "study/report_section.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

namespace lmprof::engine::study_report {

void memory(Draft& draft, const ResultSet& set) {
    Section s(draft, StudySection::Memory);
    auto runs = runsOf(set, StudySection::Memory);
    if (runs.empty()) {
        return noRuns(s, " (cut from the plan, or left out by the device's memory)");
    }
    std::sort(runs.begin(), runs.end(), [](const auto* a, const auto* b) {
        return std::pair(a->config.contextLength, a->config.mode) <
               std::pair(b->config.contextLength, b->config.mode);
    });
    s.header(
        {"Model", "Context", "Mode", "Forward peak", "Backward peak", "Optimizer peak", "Outcome"});
    std::map<Mode, const RunResult*> largestFit;
    std::map<Mode, const RunResult*> firstOom;
    for (const auto* r : runs) {
        const PeakBytes& p = r->summary.peakBytes;
        const auto bytes = [](int64_t b) { return b > 0 ? formatBytes(b) : std::string("-"); };
        s.row({modelLabel(r->config.model), std::to_string(r->config.contextLength),
               std::string(toString(r->config.mode)), bytes(p.forward), bytes(p.backward),
               bytes(p.optimizer), outcome(*r)});
        if (measured(*r)) {
            largestFit[r->config.mode] = r;
        } else if (r->status == RunStatus::Oom && !firstOom.count(r->config.mode)) {
            firstOom[r->config.mode] = r;
        }
    }
    for (Mode mode : {Mode::Forward, Mode::Train}) {
        const char* what = mode == Mode::Train ? "a full training step" : "a forward pass";
        if (const auto it = largestFit.find(mode); it != largestFit.end()) {
            const RunResult& r = *it->second;
            std::string sentence = "The largest context at which " + std::string(what) + " of " +
                                   modelLabel(r.config.model) +
                                   " fit: " + std::to_string(r.config.contextLength) + " (peak " +
                                   formatBytes(r.summary.peakBytes.max()) + ")";
            if (const auto oom = firstOom.find(mode); oom != firstOom.end()) {
                sentence += "; at " + std::to_string(oom->second->config.contextLength) +
                            " it ran out of memory";
            }
            s.say(sentence + ".");
        } else if (const auto oom = firstOom.find(mode); oom != firstOom.end()) {
            s.say("Not even context " + std::to_string(oom->second->config.contextLength) +
                  " fit " + what + ": it ran out of memory.");
        }
    }
    std::vector<const RunResult*> steps;
    for (const auto* r : runs) {
        if (r->config.mode == Mode::Train) {
            steps.push_back(r);
        }
    }
    s.chart(chart::kMemory, "Memory over the training steps, by context", steps);
}

void dataParallel(Draft& draft, const ResultSet& set) {
    Section s(draft, StudySection::DataParallel);
    const auto runs = runsOf(set, StudySection::DataParallel);
    if (runs.empty()) {
        return noRuns(s, " (cut from the plan, or not run yet)");
    }
    // One definition with the Distributed window and its chart (summarizeDdp): the means
    // over every rank's measured steps, with each rank's own overhead beside them.
    s.header({"Strategy", "Ranks", "Step, ms", "Exposed communication, ms", "Overhead",
              "Overhead by rank", "Outcome"});
    const RunResult* best = nullptr;
    double bestShare = 2.0;
    std::vector<std::pair<std::string, double>> shares;
    for (const auto* r : runs) {
        if (!r->config.ddp) { // named as this section's, but not a data-parallel run
            s.row(
                {"-", "-", "-", "-", "-", "-", r->id + ": not a data-parallel run (no ddp block)"});
            continue;
        }
        const DdpRequest& q = *r->config.ddp;
        const auto summary = r->ddp ? summarizeDdp(*r->ddp, q.worldSize) : std::nullopt;
        if (!measured(*r) || !summary) {
            s.row({std::string(toString(q.strategy)), std::to_string(q.worldSize), "-", "-", "-",
                   "-", outcome(*r)});
            continue;
        }
        std::string byRank;
        for (size_t k = 0; k < summary->rankOverhead.size(); ++k) {
            const auto& share = summary->rankOverhead[k];
            byRank += (k ? ", " : "") + std::to_string(k) + ": " + (share ? percent(*share) : "-");
        }
        s.row({std::string(toString(q.strategy)),
               std::to_string(q.worldSize) + " " + std::string(toString(q.backend)),
               fixed(summary->stepMs, 2), fixed(summary->exposedCommMs, 2),
               percent(summary->overhead), byRank, outcome(*r)});
        shares.emplace_back(std::string(toString(q.strategy)), summary->overhead);
        if (summary->overhead < bestShare) {
            bestShare = summary->overhead;
            best = r;
        }
    }
    for (const auto& [strategy, share] : shares) {
        s.say("With the " + strategy + " strategy communication the step waits for takes " +
              percent(share) + " of each measured step (the mean over the ranks).");
    }
    if (best && shares.size() > 1) {
        s.say("The " + std::string(toString(best->config.ddp->strategy)) +
              " strategy hides the most communication.");
    }
    s.chart(chart::kDdpStrategies, "Communication overhead and bus bandwidth by strategy", runs);
}

void variants(Draft& draft, const ResultSet& set) {
    Section s(draft, StudySection::Variants);
    const auto runs = runsOf(set, StudySection::Variants);
    if (runs.empty()) {
        return noRuns(s, " (cut from the plan, or not run yet)");
    }
    const RunResult* reference = nullptr; // naive attention, eager
    for (const auto* r : runs) {
        if (r->config.attention == AttentionKind::Naive && !r->config.cudaGraphs) {
            reference = r;
        }
    }
    s.header({"Attention", "CUDA graphs", "Step, ms", "Against naive eager [95%]", "Verdict",
              "GPU busy"});
    for (const auto* r : runs) {
        const std::string busy =
            busyShare(r->summary) ? percent(*busyShare(r->summary)) : std::string("-");
        if (!measured(*r)) {
            s.row({std::string(toString(r->config.attention)), r->config.cudaGraphs ? "on" : "off",
                   outcome(*r), "-", "-", busy});
            continue;
        }
        if (r == reference || !reference || !measured(*reference)) {
            s.row({std::string(toString(r->config.attention)), r->config.cudaGraphs ? "on" : "off",
                   ms(r->summary.totalMs), r == reference ? "reference" : "-", "-", busy});
            continue;
        }
        const Ratio ratio = ratioOf(*reference, *r);
        s.row({std::string(toString(r->config.attention)), r->config.cudaGraphs ? "on" : "off",
               ms(r->summary.totalMs), ratio.text(), ratio.verdictWords(), busy});
        const std::string name = std::string(toString(r->config.attention)) +
                                 (r->config.cudaGraphs ? " with CUDA graphs" : "");
        s.say(name + " takes " + ratio.text() + " the naive eager step's time: " +
              (ratio.verdict == Verdict::Faster   ? "faster."
               : ratio.verdict == Verdict::Slower ? "slower."
                                                  : "the two " + ratio.verdictWords() + "."));
    }
    s.chart(chart::kStepTimes, "Step times of the execution variants", runs);
}

void lab(Draft& draft, const ResultSet& set) {
    StudyReport& report = draft.report;
    report.markdown += "## Mixed-precision accumulation and autocast dtypes\n\n";
    const PrecisionLab& lab = set.precisionLab;
    if (lab.empty()) {
        report.markdown += "No precision-lab experiments are in the result set.\n\n";
        return;
    }
    std::ostringstream out;
    if (lab.accumulation) {
        writeAccumulationReport(out, *lab.accumulation, ReportFormat::Markdown);
        out << "\n";
        for (const auto& series : lab.accumulation->series) {
            if (series.stallTerms) {
                out << series.label() << " stops growing at " << *series.stallTerms
                    << " terms (sum " << fixed(*series.stallSum, 4) << ").\n";
            }
        }
        out << "\n";
        StudyChart chart{"lab-accumulation.png",
                         "accumulation",
                         "Relative error of a sum against its number of terms",
                         {}};
        if (draft.chartLinks) {
            out << "![" << chart.title << "](" << chart.file << ")\n\n";
        }
        report.charts.push_back(std::move(chart));
    }
    for (size_t i = 0; i < lab.dtypes.size(); ++i) {
        writeDtypeReport(out, lab.dtypes[i], ReportFormat::Markdown, i == 0);
        out << "\n";
    }
    report.markdown += out.str();
}

} // namespace lmprof::engine::study_report
