// The study's report agrees with its charts (docs/STUDY.md, "The write-up"): each chart is
// drawn as the report draws it, by the window's own views, with a FigureLog keeping what it
// drew; every figure of the report's tables and sentences that a chart also shows must be the
// figure the chart draws, formatted as the report formats it. The study folders are real
// ones (tests/fuzz/corpus/study_folder, from studies run on the CPU) and one op-profiled run
// measured here.

#include "../engine/session_helpers.h"
#include "lmprof/engine/config.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/session.h"
#include "lmprof/engine/study.h"
#include "lmprof/ui/study_charts.h"
#include "views/plot_helpers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace lmprof::engine;
using namespace lmprof::ui;
namespace fs = std::filesystem;

namespace {

// A corpus file's plan.json, runs.jsonl and lab.json (cut by "----8<----" lines) as a folder.
void unpack(const fs::path& corpus, const fs::path& dir) {
    std::ifstream in(corpus);
    std::stringstream text;
    text << in.rdbuf();
    const std::string all = text.str();
    const std::string cut = "----8<----\n";
    size_t at = 0;
    for (const char* file : {"plan.json", "runs.jsonl", "lab.json"}) {
        const size_t end = all.find(cut, at);
        const std::string part = all.substr(at, end == std::string::npos ? end : end - at);
        if (!part.empty()) {
            std::ofstream(dir / file) << part;
        }
        at = end == std::string::npos ? all.size() : end + cut.size();
    }
}

// `value` written with as many decimals as `figure` has: "7.9" against 7.91 is "7.9".
bool sameFigure(const std::string& figure, double value) {
    const size_t point = figure.find('.');
    const int decimals =
        point == std::string::npos ? 0 : static_cast<int>(figure.size() - point - 1);
    char text[64];
    std::snprintf(text, sizeof(text), "%.*f", decimals, value);
    return figure == text;
}

struct Drawn {
    StudyChart chart;
    plot::DrawnFigures figures;
};

// A table of the report as Markdown writes it: the header line and the rows below it.
struct MarkdownTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    for (size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '|' && line[i - 1] != '\\') {
            const size_t a = cell.find_first_not_of(' ');
            const size_t b = cell.find_last_not_of(' ');
            out.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
            cell.clear();
        } else {
            cell += line[i];
        }
    }
    return out;
}

std::optional<MarkdownTable> tableWithColumn(const std::string& markdown,
                                             const std::string& column) {
    std::istringstream in(markdown);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("| ", 0) == 0 && line.find("| " + column + " |") != std::string::npos) {
            MarkdownTable t{cells(line), {}};
            std::getline(in, line); // the rule
            while (std::getline(in, line) && line.rfind("| ", 0) == 0) {
                t.rows.push_back(cells(line));
            }
            return t;
        }
    }
    return std::nullopt;
}

size_t columnOf(const std::vector<std::string>& header, const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
}

// What a study chart's checks found: how many figures were held to the chart.
struct Checked {
    std::map<std::string, int> byChart;
};

// Step-time charts draw each run's mean and mean ± std band (the last point: over every
// measured step) and each step: a table's "mean ± std" step figure is one run's band, and its
// slowest step is a step the chart draws.
void checkStepTimes(const Drawn& d, const StudyTable& table, Checked& checked) {
    const std::regex meanStd(R"(^([0-9.]+) ± ([0-9.]+)$)");
    for (size_t c = 0; c < table.header.size(); ++c) {
        std::string h = table.header[c];
        std::transform(h.begin(), h.end(), h.begin(), ::tolower);
        const bool stepColumn = h.size() >= 8 && h.compare(h.size() - 8, 8, "step, ms") == 0;
        const bool slowest = h.rfind("slowest", 0) == 0;
        if (!stepColumn && !slowest) {
            continue;
        }
        for (const auto& row : table.rows) {
            std::smatch m;
            if (stepColumn && std::regex_match(row[c], m, meanStd)) {
                bool found = false;
                const auto& series = d.figures.series;
                for (size_t i = 0; i < series.size() && !found; ++i) {
                    const std::string& label = series[i].label;
                    if (label.size() < 7 || label.compare(label.size() - 7, 7, " [high]") != 0) {
                        continue;
                    }
                    const std::string band = label.substr(0, label.size() - 7);
                    for (size_t j = i + 1; j < series.size(); ++j) {
                        if (series[j].label == band && !series[j].y.empty()) {
                            const double mean = series[j].y.back();
                            const double std = series[i].y.back() - mean;
                            found = sameFigure(m[1], mean) && sameFigure(m[2], std);
                            break;
                        }
                    }
                }
                EXPECT_TRUE(found) << d.chart.file << ": " << table.header[c] << " " << row[c]
                                   << " is no run's mean ± std in the chart";
                ++checked.byChart[d.chart.chart];
            } else if (slowest && row[c] != "-") {
                bool found = false;
                for (const auto& s : d.figures.series) {
                    for (double y : s.y) {
                        found = found || sameFigure(row[c], y);
                    }
                }
                EXPECT_TRUE(found)
                    << d.chart.file << ": slowest step " << row[c] << " is no step the chart draws";
                ++checked.byChart[d.chart.chart];
            }
        }
    }
}

// The strategies' chart writes each overhead over its bar: the table's and the sentences'
// overheads are those bars.
void checkDataParallel(const Drawn& d, const StudyTable& table, const std::string& markdown,
                       Checked& checked) {
    std::vector<double> bars;
    for (const auto& s : d.figures.series) {
        if (s.label == "overhead %") {
            bars = s.y;
        }
    }
    const size_t column = columnOf(table.header, "Overhead");
    ASSERT_LT(column, table.header.size());
    std::vector<std::string> figures;
    for (const auto& row : table.rows) {
        if (row[column] != "-") {
            figures.push_back(row[column]);
        }
    }
    const std::regex sentence(R"(([0-9.]+)% of each measured step)");
    for (std::sregex_iterator it(markdown.begin(), markdown.end(), sentence), end; it != end;
         ++it) {
        figures.push_back((*it)[1].str() + "%");
    }
    EXPECT_EQ(bars.size(), table.rows.size()) << "a bar per strategy in the table";
    for (const std::string& f : figures) {
        const std::string number = f.substr(0, f.size() - 1);
        EXPECT_TRUE(
            std::any_of(bars.begin(), bars.end(), [&](double v) { return sameFigure(number, v); }))
            << d.chart.file << ": overhead " << f << " is no bar of the chart";
        EXPECT_NE(std::find(d.figures.texts.begin(), d.figures.texts.end(), f),
                  d.figures.texts.end())
            << d.chart.file << ": " << f << " is not written on the chart";
        ++checked.byChart[d.chart.chart];
    }
}

// The attention chart draws softmax's and the two matmuls' time and FLOPs per forward pass:
// the sentence's ratios are those bars'.
void checkAttention(const Drawn& d, const std::string& markdown, Checked& checked) {
    const std::regex sentence(
        R"(softmax takes ([0-9.]+)x the time of its two matmuls \(QK\^T, PV\) for ([0-9.]+)x)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(markdown, m, sentence)) << markdown;
    ASSERT_EQ(d.figures.series.size(), 6u) << "time and FLOPs of softmax, QK^T and PV";
    const auto ratio = [&](size_t first) {
        const auto& s = d.figures.series;
        return s[first].y[0] / (s[first + 1].y[0] + s[first + 2].y[0]);
    };
    EXPECT_TRUE(sameFigure(m[1], ratio(0))) << m[1] << " against the chart's " << ratio(0);
    EXPECT_TRUE(sameFigure(m[2], ratio(3))) << m[2] << " against the chart's " << ratio(3);
    checked.byChart[d.chart.chart] += 2;
}

// The memory chart writes the first run's peak; the table has it among that run's peaks.
void checkMemory(const Drawn& d, const StudyTable& table, Checked& checked) {
    for (const std::string& text : d.figures.texts) {
        if (text.rfind("peak ", 0) != 0) {
            continue;
        }
        const std::string figure = text.substr(5);
        bool found = false;
        for (const auto& row : table.rows) {
            found = found || std::find(row.begin(), row.end(), figure) != row.end();
        }
        EXPECT_TRUE(found) << d.chart.file << ": the chart's " << text << " is in no row";
        ++checked.byChart[d.chart.chart];
    }
}

// The accumulation chart draws each series' relative error against its terms: the table's
// error at 1e6 terms is the line's point there.
void checkAccumulation(const Drawn& d, const std::string& markdown, Checked& checked) {
    const auto table = tableWithColumn(markdown, "rel. error @1e6");
    ASSERT_TRUE(table);
    const size_t column = columnOf(table->header, "rel. error @1e6");
    for (const auto& row : table->rows) {
        const auto line = std::find_if(
            d.figures.series.begin(), d.figures.series.end(),
            [&](const plot::DrawnSeries& s) { return s.label.rfind(row[0] + " ", 0) == 0; });
        const double error = std::stod(row[column]);
        if (line == d.figures.series.end()) {
            EXPECT_EQ(error, 0.0) << row[0] << ": a nonzero error the chart does not draw";
            continue;
        }
        const auto at = std::find(line->x.begin(), line->x.end(), 1e6);
        if (at == line->x.end()) { // drawn on a log axis: no point where the error is 0
            EXPECT_EQ(error, 0.0) << row[0];
            continue;
        }
        char text[32];
        std::snprintf(text, sizeof(text), "%.2e",
                      line->y[static_cast<size_t>(at - line->x.begin())]);
        EXPECT_EQ(row[column], text) << row[0];
        ++checked.byChart[d.chart.chart];
    }
}

// One op-profiled training step of tiny, measured here, as the study's ops section runs it.
RunResult opsRun() {
    RunConfig c;
    c.model = *presetModel("tiny");
    c.device = "cpu";
    c.warmupSteps = 2;
    c.measureSteps = 2;
    c.opProfile = defaultOpProfileRequest(c.warmupSteps);
    Session session;
    session.submit(c);
    const auto done =
        lmprof::engine::testing::results(lmprof::engine::testing::collect(session, 1));
    EXPECT_EQ(done.size(), 1u);
    RunResult r = done.at(0);
    r.id = "ops-" + runLabel(c);
    return r;
}

} // namespace

TEST(StudyFigures, EveryFigureTheReportSharesWithAChartIsTheChartsFigure) {
    const fs::path corpus = fs::path(LMPROF_SOURCE_DIR) / "tests/fuzz/corpus/study_folder";
    const fs::path root =
        fs::temp_directory_path() / ("lmprof_study_figures_" + std::to_string(::getpid()));
    fs::remove_all(root);
    Checked checked;
    const RunResult ops = opsRun();
    ASSERT_EQ(ops.status, RunStatus::Ok) << ops.error.value_or("");
    for (const auto& entry : fs::directory_iterator(corpus)) {
        const fs::path dir = root / entry.path().stem();
        fs::create_directories(dir);
        unpack(entry.path(), dir);
        if (entry.path().stem() == "sizes-precision") {
            appendRunJsonl(dir / "runs.jsonl", ops);
        }
        std::vector<Drawn> drawn;
        const StudyChartDrawer draw =
            [&](const ResultSet& set, const std::vector<StudyChart>& charts, const fs::path& out) {
                plot::FigureLog log;
                for (const StudyChart& chart : charts) {
                    drawStudyChartsHeadless(set, {chart}, out);
                    drawn.push_back({chart, log.take()});
                }
            };
        const StudyReport report = writeStudyFolder(dir, "test", draw);
        ASSERT_TRUE(report.chartsMissing.empty()) << report.chartsMissing;
        ASSERT_EQ(drawn.size(), report.charts.size());
        for (const Drawn& d : drawn) {
            SCOPED_TRACE(entry.path().filename().string() + ", " + d.chart.file);
            const std::string stem = fs::path(d.chart.file).stem().string();
            const auto table =
                std::find_if(report.tables.begin(), report.tables.end(),
                             [&](const StudyTable& t) { return fs::path(t.file).stem() == stem; });
            if (d.chart.chart == "step-times") {
                ASSERT_NE(table, report.tables.end());
                checkStepTimes(d, *table, checked);
            } else if (d.chart.chart == "ddp-strategies") {
                ASSERT_NE(table, report.tables.end());
                checkDataParallel(d, *table, report.markdown, checked);
            } else if (d.chart.chart == "ops-attention") {
                checkAttention(d, report.markdown, checked);
            } else if (d.chart.chart == "memory") {
                ASSERT_NE(table, report.tables.end());
                checkMemory(d, *table, checked);
            } else if (d.chart.chart == "accumulation") {
                checkAccumulation(d, report.markdown, checked);
            } else {
                ADD_FAILURE() << d.chart.chart << ": a chart this test does not hold the report to";
            }
        }
    }
    fs::remove_all(root);
    // Every kind of chart the report draws was held to its figures, several times over.
    EXPECT_GE(checked.byChart["step-times"], 7);
    EXPECT_GE(checked.byChart["ddp-strategies"], 2);
    EXPECT_GE(checked.byChart["ops-attention"], 2);
    EXPECT_GE(checked.byChart["memory"], 1);
    EXPECT_GE(checked.byChart["accumulation"], 6);
}
