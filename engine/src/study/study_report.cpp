// The study's write-up (study.h, docs/STUDY.md): one section per question of the seeds,
// each a table and sentences stated from the runs. No sentence is written that the numbers
// under it do not carry: comparisons say faster, slower or "cannot be told apart" from the
// ratio's 95% interval, and a section without runs says why.
//
// Sections: helpers · the timing sections (sizes, warmup, precision, ops) · the report. The
// scale sections (memory, data-parallel, variants, the lab) are in study_report_scale.cpp.

#include "lmprof/engine/verdicts.h"
#include "study/report_section.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

namespace lmprof::engine {

namespace study_report {

// ---------------------------------------------------------------------------------------
// Helpers

Ratio ratioOf(const RunResult& a, const RunResult& b) {
    const auto ta = measuredStepTimes(a.steps);
    const auto tb = measuredStepTimes(b.steps);
    Ratio r;
    r.interval = meanRatio(ta, tb);
    r.verdict = verdictOf(r.interval, ta.size(), tb.size());
    return r;
}

std::vector<const RunResult*> runsOf(const ResultSet& set, StudySection s) {
    std::vector<const RunResult*> out;
    for (const auto& r : set.runs) {
        if (sectionOf(r) == s) {
            out.push_back(&r);
        }
    }
    return out;
}

std::string verdictsOf(const std::vector<const RunResult*>& runs) {
    if (runs.empty()) {
        return {};
    }
    constexpr size_t kListed = 8;
    std::vector<std::string> lines;
    size_t unlisted = 0;
    for (const auto* r : runs) {
        const auto verdicts = r->verdicts.empty() ? judgeRun(*r) : r->verdicts;
        for (const auto& v : verdicts) {
            if (v.severity == Severity::Info || v.certainty != Certainty::Firm) {
                continue;
            }
            if (lines.size() == kListed) {
                ++unlisted;
                continue;
            }
            lines.push_back("- `" + markdownText(r->id) + "`: " + markdownText(verdictLine(v)) +
                            ". Next: " + markdownText(v.advice) + ".");
        }
    }
    if (lines.empty()) {
        return "What bounds these runs (docs/VERDICTS.md): no run of this section has a "
               "warning.\n\n";
    }
    std::string out = "What bounds these runs (docs/VERDICTS.md):\n\n";
    for (const auto& l : lines) {
        out += l + "\n";
    }
    if (unlisted > 0) {
        out += "- and " + std::to_string(unlisted) +
               " more warning(s): `lmprof-cli show` lists "
               "each run's\n";
    }
    return out + "\n";
}

// Models in size order (by parameters), each once.
std::vector<std::string> modelsOf(const std::vector<const RunResult*>& runs) {
    std::vector<std::pair<int64_t, std::string>> models;
    for (const auto* r : runs) {
        const std::pair m{r->parameterCount, modelLabel(r->config.model)};
        if (std::find(models.begin(), models.end(), m) == models.end()) {
            models.push_back(m);
        }
    }
    std::sort(models.begin(), models.end());
    std::vector<std::string> out;
    for (auto& m : models) {
        out.push_back(m.second);
    }
    return out;
}

const RunResult* find(const std::vector<const RunResult*>& runs, const std::string& model,
                      Mode mode, std::optional<Precision> precision) {
    for (const auto* r : runs) {
        if (modelLabel(r->config.model) == model && r->config.mode == mode &&
            (!precision || r->config.precision == *precision)) {
            return r;
        }
    }
    return nullptr;
}

void noRuns(Section& s, const char* why) {
    s.say(std::string("No runs of this section are in the result set") + why + ".");
}

// ---------------------------------------------------------------------------------------
// The sections

void sizes(Draft& draft, const ResultSet& set) {
    Section s(draft, StudySection::Sizes);
    const auto runs = runsOf(set, StudySection::Sizes);
    if (runs.empty()) {
        return noRuns(s, " (cut from the plan, or not run yet)");
    }
    // "Step, ms" is the forward-backward step the chart draws (forward, backward and the
    // time around them).
    s.header({"Model", "Parameters", "Forward only, ms", "Forward, ms", "Backward, ms", "Step, ms",
              "Backward / forward"});
    double lowest = 1e300, highest = 0.0;
    std::vector<std::string> failures;
    std::vector<std::string> unread; // models with runs of neither mode read here
    std::vector<const RunResult*> charted;
    for (const auto& model : modelsOf(runs)) {
        const RunResult* fwd = find(runs, model, Mode::Forward);
        const RunResult* both = find(runs, model, Mode::ForwardBackward);
        if (!fwd && !both) { // a folder's runs are data: this section reads these two modes
            unread.push_back(model);
            continue;
        }
        if (both) {
            charted.push_back(both);
        }
        std::string ratio = "-";
        if (both && measured(*both) && both->summary.forwardMs.mean > 0.0) {
            const double r = both->summary.backwardMs.mean / both->summary.forwardMs.mean;
            lowest = std::min(lowest, r);
            highest = std::max(highest, r);
            ratio = fixed(r, 2) + "\u00D7";
        }
        const int64_t params = (fwd ? fwd : both)->parameterCount;
        s.row({model, formatFixed(static_cast<double>(params) / 1e6, 1) + "M",
               fwd ? (measured(*fwd) ? ms(fwd->summary.forwardMs) : outcome(*fwd)) : "-",
               both ? (measured(*both) ? ms(both->summary.forwardMs) : outcome(*both)) : "-",
               both && measured(*both) ? ms(both->summary.backwardMs) : "-",
               both && measured(*both) ? ms(both->summary.totalMs) : "-", ratio});
        for (const auto* r : {fwd, both}) {
            if (r && !measured(*r)) {
                failures.push_back(model + " " + std::string(toString(r->config.mode)) + " (" +
                                   outcome(*r) + ")");
            }
        }
    }
    if (highest > 0.0) {
        s.say(lowest == highest
                  ? "The backward pass takes " + fixed(lowest, 2) + "\u00D7 the forward pass."
                  : "The backward pass takes between " + fixed(lowest, 2) + "\u00D7 and " +
                        fixed(highest, 2) + "\u00D7 the forward pass across the sizes measured.");
    }
    for (const auto& f : failures) {
        s.say("Not measured: " + f + ".");
    }
    for (const auto& model : unread) {
        s.say(model + ": no forward or forward-backward run in this folder.");
    }
    s.chart(chart::kStepTimes, "Forward-backward step time by size, every step", charted);
}

void warmup(Draft& draft, const ResultSet& set) {
    Section s(draft, StudySection::Warmup);
    auto runs = runsOf(set, StudySection::Warmup);
    if (runs.empty()) {
        return noRuns(s, " (cut from the plan, or not run yet)");
    }
    std::sort(runs.begin(), runs.end(), [](const auto* a, const auto* b) {
        return a->config.warmupSteps < b->config.warmupSteps;
    });
    // Noisy is the tables' noise mark (noiseRule(), docs/MEASUREMENT.md), stated below the
    // table; the CV beside it counts slow outliers too.
    s.header(
        {"Warmup steps", "Step, ms", "CV", "IQR / median", "Slowest measured step, ms", "Noisy"});
    const RunResult* firstQuiet = nullptr;
    const RunResult* none = nullptr;
    for (const auto* r : runs) {
        if (!measured(*r)) {
            s.row({std::to_string(r->config.warmupSteps), outcome(*r), "-", "-", "-", "-"});
            continue;
        }
        const PhaseStats& t = r->summary.totalMs;
        s.row({std::to_string(r->config.warmupSteps), ms(t), percent(t.cv),
               t.median > 0.0 ? percent(t.iqr / t.median) : "-", fixed(t.max, 2),
               t.noisy ? "yes" : "no"});
        if (!firstQuiet && !t.noisy) {
            firstQuiet = r;
        }
        if (r->config.warmupSteps == 0) {
            none = r;
        }
    }
    s.say("A run is " + noiseRule() + "; the CV also counts slow outliers.");
    if (none) {
        const PhaseStats& t = none->summary.totalMs;
        s.say("Without warmup the measured steps vary with a CV of " + percent(t.cv) +
              ": the slowest takes " + fixed(t.max, 2) + " ms against a median of " +
              fixed(t.median, 2) + " ms.");
    }
    if (firstQuiet) {
        s.say(firstQuiet->config.warmupSteps == 0
                  ? "Even without warmup the steps are not noisy."
                  : "With " + std::to_string(firstQuiet->config.warmupSteps) +
                        " warmup step(s) the steps are first not noisy (IQR / median " +
                        percent(firstQuiet->summary.totalMs.iqr /
                                firstQuiet->summary.totalMs.median) +
                        ").");
    } else {
        s.say("Every warmup count tried leaves the steps noisy.");
    }
    std::vector<const RunResult*> charted; // the runs with steps to draw, named in the title
    for (const auto* r : runs) {
        if (!r->steps.empty()) {
            charted.push_back(r);
        }
    }
    std::string counts;
    for (size_t i = 0; i < charted.size(); ++i) {
        counts += (i == 0                    ? ""
                   : i + 1 == charted.size() ? " and "
                                             : ", ") +
                  std::to_string(charted[i]->config.warmupSteps);
    }
    s.chart(chart::kStepTimes, "Every step of the runs with " + counts + " warmup steps", charted);
}

void precision(Draft& draft, const ResultSet& set) {
    Section s(draft, StudySection::Precision);
    const auto bf16 = runsOf(set, StudySection::Precision);
    const auto fp32 = runsOf(set, StudySection::Sizes);
    if (bf16.empty()) {
        return noRuns(s, " (cut from the plan, or not run yet)");
    }
    s.header({"Model", "fp32 step, ms", "bf16 step, ms", "bf16 / fp32 [95%]", "Verdict"});
    int faster = 0, slower = 0, same = 0;
    std::vector<const RunResult*> charted;
    for (const auto& model : modelsOf(bf16)) {
        const RunResult* b = find(bf16, model, Mode::ForwardBackward, Precision::Bf16);
        const RunResult* a = find(fp32, model, Mode::ForwardBackward, Precision::Fp32);
        for (const auto* r : {a, b}) {
            if (r) {
                charted.push_back(r);
            }
        }
        if (!b || !a || !measured(*a) || !measured(*b)) {
            s.row({model, a ? (measured(*a) ? ms(a->summary.totalMs) : outcome(*a)) : "-",
                   b ? (measured(*b) ? ms(b->summary.totalMs) : outcome(*b)) : "-", "-",
                   "not compared"});
            continue;
        }
        const Ratio r = ratioOf(*a, *b);
        s.row({model, ms(a->summary.totalMs), ms(b->summary.totalMs), r.text(), r.verdictWords()});
        std::string sentence = "For " + model + " a bf16 forward-backward step takes " + r.text() +
                               " the fp32 step's time: ";
        switch (r.verdict) {
        case Verdict::Faster:
            ++faster;
            sentence += "bf16 is faster, by " + percent(1.0 - r.interval.ratio) + ".";
            break;
        case Verdict::Slower:
            ++slower;
            // "slower, by 1437.5%" reads badly: from twice the time on, a factor.
            sentence +=
                r.interval.ratio >= 2.0
                    ? "bf16 is slower, taking " + fixed(r.interval.ratio, 1) + "\u00D7 the time."
                    : "bf16 is slower, by " + percent(r.interval.ratio - 1.0) + ".";
            break;
        default:
            ++same;
            sentence += "the two " + r.verdictWords() + ".";
        }
        s.say(sentence);
    }
    if (faster + slower + same > 1) {
        s.say("Across the sizes bf16 was faster for " + std::to_string(faster) + ", slower for " +
              std::to_string(slower) + " and indistinguishable for " + std::to_string(same) + ".");
    }
    s.chart(chart::kStepTimes, "fp32 and bf16 forward-backward step times by size", charted);
}

void ops(Draft& draft, const ResultSet& set) {
    Section s(draft, StudySection::Ops);
    const RunResult* profiled = nullptr;
    for (const auto* r : runsOf(set, StudySection::Ops)) {
        if (r->opProfile) {
            profiled = r;
        }
    }
    if (!profiled) {
        return noRuns(s, " with an op profile");
    }
    const OpProfile& p = *profiled->opProfile;
    std::vector<OpRow> forward;
    for (const auto& row : groupRows(p.rows, OpGrouping::Op)) {
        if (row.phase == Phase::Forward && row.kind == p.headline.kind) {
            forward.push_back(row);
        }
    }
    s.header({"Forward " + std::string(toString(p.headline.kind)), "Calls per pass",
              "Self time, ms", "Share of the forward"});
    const double total = p.phaseTotal(forward.empty() ? OpRow{} : forward.front());
    for (size_t i = 0; i < std::min<size_t>(8, forward.size()); ++i) {
        const OpRow& row = forward[i];
        s.row({row.name, formatCount(row.calls), fixed(row.selfMs, 3),
               total > 0.0 ? percent(row.selfMs / total) : "-"});
    }
    s.say("Profiled: " + markdownText(profiled->id) + ", step " + std::to_string(p.firstStep) +
          ".");
    for (const auto& sentence : headlineSentences(p)) {
        s.say(sentence);
    }
    s.chart(chart::kOpsAttention, "Softmax against the attention matmuls, per forward pass",
            {profiled});
}

} // namespace study_report

// ---------------------------------------------------------------------------------------
// The report

StudyReport writeStudyReport(const ResultSet& set, const StudyHeader& h) {
    using namespace study_report;
    StudyReport report;
    report.chartsMissing = h.chartsMissing;
    std::ostringstream head;
    // Every field of the header comes from the folder's files: shown as text, not markup.
    const auto text = [](const std::string& s) { return s.empty() ? "-" : markdownText(s); };
    head << "# The CS336 systems study on "
         << (h.device.empty() ? "this machine" : markdownText(h.device)) << "\n\n";
    head << "- Device: " << text(h.device)
         << (h.driver.empty() ? "" : ", driver " + markdownText(h.driver)) << "\n";
    head << "- LibTorch " << text(h.torch) << ", lmprof " << text(h.commit) << "\n";
    head << "- Runs: " << set.runs.size() << ", planned " << text(h.date) << " with a budget of "
         << fixed(h.budgetS / 60.0, 1) << " min\n";
    head << "- Cut to fit the budget: " << (h.cuts.empty() ? "nothing" : "") << "\n";
    for (const auto& c : h.cuts) {
        head << "  - " << markdownText(c) << "\n";
    }
    head << "- Left out, beyond the device's memory: " << (h.leftOut.empty() ? "nothing" : "")
         << "\n";
    for (const auto& l : h.leftOut) {
        head << "  - " << markdownText(l) << "\n";
    }
    if (!h.damaged.empty()) {
        head << "- Damaged, skipped (the report is without them):\n";
        for (const auto& d : h.damaged) {
            head << "  - " << markdownText(d) << "\n";
        }
    }
    if (!h.chartsMissing.empty()) {
        head << "- Charts: not drawn (" << markdownText(h.chartsMissing) << ")\n";
    }
    if (!h.command.empty()) {
        head << "- Regenerate this report: `" << h.command << "`\n";
    }
    head << "\n";
    report.markdown = head.str();
    Draft draft{report, h.chartsMissing.empty(), &set};
    sizes(draft, set);
    warmup(draft, set);
    precision(draft, set);
    ops(draft, set);
    memory(draft, set);
    dataParallel(draft, set);
    variants(draft, set);
    lab(draft, set);
    return report;
}

} // namespace lmprof::engine
