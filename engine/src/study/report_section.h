// What the study's write-up (study_report.cpp, study_report_scale.cpp) is built from: the
// report being drafted, a section that collects its table, chart and sentences, and the
// helpers that print a run's figures and pick a section's runs.
#pragma once

#include "lmprof/engine/charts.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/config.h"
#include "lmprof/engine/ddp.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/op_profile.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/stats.h"
#include "lmprof/engine/study.h"

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace lmprof::engine::study_report {

// A run's figures as the write-up prints them.
inline std::string ms(const PhaseStats& s) {
    return s.n > 0 ? formatMeanStd(s) : "-";
}
inline std::string fixed(double v, int digits) {
    return formatFixed(v, digits);
}
inline std::string percent(double share) {
    return formatFixed(100.0 * share, 1) + "%";
}
inline std::string outcome(const RunResult& r) {
    return r.status == RunStatus::Ok ? "ok" : std::string(toString(r.status));
}
inline bool measured(const RunResult& r) {
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
// The report being written, and whether its charts are drawn (linked from the Markdown).
struct Draft {
    StudyReport& report;
    bool chartLinks;
    const ResultSet* set = nullptr; // the runs, whose verdicts close each section
};

// The runs of section `s`, in the set's order.
std::vector<const RunResult*> runsOf(const ResultSet& set, StudySection s);
// What bounds a section's runs (docs/VERDICTS.md): each warning, firm, with its run; or
// that none has one. Empty when the section has no runs.
std::string verdictsOf(const std::vector<const RunResult*>& runs);

// Collects a section's table and chart and writes them in Markdown.
class Section {
public:
    Section(Draft& draft, StudySection s)
        : m_draft(draft), m_name(toString(s)),
          m_runs(draft.set ? runsOf(*draft.set, s) : std::vector<const RunResult*>{}) {
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
        m_out << verdictsOf(m_runs) << m_extra;
        m_draft.report.markdown += m_out.str();
    }
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;

private:
    Draft& m_draft;
    std::string m_name;
    std::vector<const RunResult*> m_runs;
    std::ostringstream m_out;
    StudyTable m_table;
    std::optional<StudyChart> m_chart;
    std::vector<std::string> m_sentences;
    std::string m_extra;
};

Ratio ratioOf(const RunResult& a, const RunResult& b);
// Models in size order (by parameters), each once.
std::vector<std::string> modelsOf(const std::vector<const RunResult*>& runs);
// The run of `model` in `mode` (and `precision`, when given); null when there is none.
const RunResult* find(const std::vector<const RunResult*>& runs, const std::string& model,
                      Mode mode, std::optional<Precision> precision = std::nullopt);
void noRuns(Section& s, const char* why);

// One function per section, in the write-up's order: those of timing here
// (study_report.cpp), those of scale in study_report_scale.cpp.
void sizes(Draft& draft, const ResultSet& set);
void warmup(Draft& draft, const ResultSet& set);
void precision(Draft& draft, const ResultSet& set);
void ops(Draft& draft, const ResultSet& set);
void memory(Draft& draft, const ResultSet& set);
void dataParallel(Draft& draft, const ResultSet& set);
void variants(Draft& draft, const ResultSet& set);
void lab(Draft& draft, const ResultSet& set);

} // namespace lmprof::engine::study_report
