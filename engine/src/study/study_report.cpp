// The study's write-up (study.h, docs/STUDY.md): one section per question of the seeds,
// each a table and sentences stated from the runs. No sentence is written that the numbers
// under it do not carry: comparisons say faster, slower or "cannot be told apart" from the
// ratio's 95% interval, and a section without runs says why.
//
// Sections: helpers · one function per section · the report.

#include "lmprof/engine/charts.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/config.h"
#include "lmprof/engine/ddp.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/op_profile.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/stats.h"
#include "lmprof/engine/study.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

namespace lmprof::engine {

namespace {

// ---------------------------------------------------------------------------------------
// Helpers

// A run's figures as the write-up prints them.
std::string ms(const PhaseStats& s) {
    return s.n > 0 ? formatMeanStd(s) : "-";
}
std::string fixed(double v, int digits) {
    return formatFixed(v, digits);
}
std::string percent(double share) {
    return formatFixed(100.0 * share, 1) + "%";
}
std::string outcome(const RunResult& r) {
    return r.status == RunStatus::Ok ? "ok" : std::string(toString(r.status));
}
bool measured(const RunResult& r) {
    return r.status == RunStatus::Ok && r.summary.totalMs.n > 0;
}

// "0.55× [0.52, 0.58], faster": B over A with its interval and the verdict behind it.
struct Ratio {
    RatioInterval interval;
    Verdict verdict = Verdict::Untestable;
    std::string text() const {
        return fixed(interval.ratio, 2) + "\u00D7 [" + fixed(interval.low, 2) + ", " +
               fixed(interval.high, 2) + "]";
    }
    // "faster", "slower" or "cannot be told apart" (within noise, or too few steps).
    std::string verdictWords() const {
        switch (verdict) {
        case Verdict::Faster:
            return "faster";
        case Verdict::Slower:
            return "slower";
        case Verdict::Same:
            return "cannot be told apart (within noise)";
        case Verdict::Untestable:
            return "cannot be told apart (too few measured steps)";
        }
        return "";
    }
};
Ratio ratioOf(const RunResult& a, const RunResult& b) {
    const auto ta = measuredStepTimes(a.steps);
    const auto tb = measuredStepTimes(b.steps);
    Ratio r;
    r.interval = meanRatio(ta, tb);
    r.verdict = verdictOf(r.interval, ta.size(), tb.size());
    return r;
}

// The report being written, and whether its charts are drawn (linked from the Markdown).
struct Draft {
    StudyReport& report;
    bool chartLinks;
};

// Collects a section's table and chart and writes them in Markdown.
class Section {
public:
    Section(Draft& draft, StudySection s) : m_draft(draft), m_name(toString(s)) {
        m_out << "## " << sectionTitle(s) << "\n\n";
        m_table.file = m_name + ".csv";
    }
    void header(std::vector<std::string> columns) { m_table.header = std::move(columns); }
    void row(std::vector<std::string> cells) { m_table.rows.push_back(std::move(cells)); }
    void say(const std::string& sentence) { m_sentences.push_back(sentence); }
    void text(const std::string& markdown) { m_extra += markdown; }
    // The section's chart: the window's chart `chart` of those of `runs` with steps to draw.
    void chart(ChartId chart, const std::string& title, const std::vector<const RunResult*>& runs) {
        StudyChart c{m_name + ".png", chart.name, title, {}};
        for (const auto* r : runs) {
            if (!r->steps.empty()) {
                c.runs.push_back(r->id);
            }
        }
        if (!c.runs.empty()) {
            m_chart = std::move(c);
        }
    }
    ~Section() {
        if (!m_table.rows.empty()) {
            Rows rows{m_table.header};
            rows.insert(rows.end(), m_table.rows.begin(), m_table.rows.end());
            writeMarkdownRows(m_out, rows, 1);
            m_out << "\n(Table: `" << m_table.file << "`.)\n\n";
            m_draft.report.tables.push_back(std::move(m_table));
        }
        if (m_chart) {
            if (m_draft.chartLinks) {
                m_out << "![" << m_chart->title << "](" << m_chart->file << ")\n\n";
            }
            m_draft.report.charts.push_back(std::move(*m_chart));
        }
        for (const auto& s : m_sentences) {
            m_out << s << "\n";
        }
        if (!m_sentences.empty()) {
            m_out << "\n";
        }
        m_out << m_extra;
        m_draft.report.markdown += m_out.str();
    }
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;

private:
    Draft& m_draft;
    std::string m_name;
    std::ostringstream m_out;
    StudyTable m_table;
    std::optional<StudyChart> m_chart;
    std::vector<std::string> m_sentences;
    std::string m_extra;
};

std::vector<const RunResult*> runsOf(const ResultSet& set, StudySection s) {
    std::vector<const RunResult*> out;
    for (const auto& r : set.runs) {
        if (sectionOf(r) == s) {
            out.push_back(&r);
        }
    }
    return out;
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
                      Mode mode, std::optional<Precision> precision = std::nullopt) {
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

} // namespace

// ---------------------------------------------------------------------------------------
// The report

StudyReport writeStudyReport(const ResultSet& set, const StudyHeader& h) {
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
    Draft draft{report, h.chartsMissing.empty()};
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
