// The open metric map (docs/RESULTS.md, "Logged scalars"): what a run logs with its steps
// reaches its summary, the CSV, the tables and a comparison as columns, with no code per
// name; a name from a hostile file is bounded.

#include "lmprof/engine/columns.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>

using namespace lmprof::engine;

namespace {

// A run of five steps, the first a warmup step, logging `scalars(step)`.
template <typename Scalars>
RunResult loggingRun(const std::string& id, Scalars scalars) {
    RunResult r;
    r.id = id;
    r.config.model = *presetModel("tiny");
    r.config.warmupSteps = 1;
    r.config.measureSteps = 4;
    for (int i = 0; i < 5; ++i) {
        StepRecord s;
        s.index = i;
        s.warmup = i == 0;
        s.forwardMs = 1.0;
        s.backwardMs = 2.0;
        s.optimizerMs = 0.5;
        s.totalMs = 3.5 + 0.1 * i;
        s.scalars = scalars(i);
        r.steps.push_back(s);
    }
    r.summary = summarize(r.config, r.steps, std::nullopt);
    return r;
}

RunResult lrRun(const std::string& id, double lr) {
    return loggingRun(id, [lr](int i) {
        return std::map<std::string, double>{{"lr", lr * (i + 1)}, {"grad_norm", 1.0 + i}};
    });
}

std::vector<std::string> csvHeader(std::span<const RunResult> runs) {
    std::ostringstream out;
    writeCsv(out, runs);
    const std::string text = out.str();
    std::vector<std::string> header;
    std::string field;
    for (char ch : text.substr(0, text.find("\r\n"))) {
        if (ch == ',') {
            header.push_back(field);
            field.clear();
        } else {
            field += ch;
        }
    }
    header.push_back(field);
    return header;
}

std::vector<std::string> keysOf(const std::vector<const RunColumn*>& columns) {
    std::vector<std::string> keys;
    for (const RunColumn* c : columns) {
        keys.push_back(c->key);
    }
    return keys;
}

} // namespace

TEST(LoggedScalars, SummaryHasTheMeasuredStepsStatisticsAndTheLastValue) {
    const RunResult r = loggingRun("r", [](int i) {
        std::map<std::string, double> s{{"lr", 0.1 * (i + 1)}};
        if (i == 2) {
            s["loss_ema"] = std::numeric_limits<double>::quiet_NaN(); // overflowed: not counted
        } else if (i > 0) {
            s["loss_ema"] = 10.0 - i;
        }
        return s;
    });
    ASSERT_EQ(r.summary.scalars.size(), 2u);
    const ScalarSummary& lr = r.summary.scalars.at("lr");
    EXPECT_DOUBLE_EQ(lr.last, 0.5);
    EXPECT_EQ(lr.measured.n, 4) << "the warmup step's value is not a measured one";
    EXPECT_DOUBLE_EQ(lr.measured.mean, 0.35);
    EXPECT_DOUBLE_EQ(lr.measured.min, 0.2);
    const ScalarSummary& ema = r.summary.scalars.at("loss_ema");
    EXPECT_EQ(ema.measured.n, 3);
    EXPECT_DOUBLE_EQ(ema.measured.mean, (9.0 + 7.0 + 6.0) / 3.0);
    EXPECT_DOUBLE_EQ(ema.last, 6.0);
}

TEST(LoggedScalars, EachNameReachesTheCsvAfterItsStableColumns) {
    const std::vector<RunResult> runs{lrRun("a", 0.001), loggingRun("b", [](int) {
                                          return std::map<std::string, double>{{"tokens", 64.0}};
                                      })};
    const std::vector<std::string> header = csvHeader(runs);
    const auto fixed = csvLayout();
    ASSERT_EQ(header.size(), fixed.size() + 3 * 6);
    for (size_t i = 0; i < fixed.size(); ++i) {
        EXPECT_EQ(header[i], fixed[i]->key) << "the stable columns keep their places";
    }
    const std::vector<std::string> scalars(header.begin() + static_cast<long>(fixed.size()),
                                           header.end());
    EXPECT_EQ(scalars[0], "scalar.grad_norm.last") << "names in order";
    EXPECT_EQ(std::count(scalars.begin(), scalars.end(), "scalar.lr.mean"), 1);
    EXPECT_EQ(scalars.back(), "scalar.tokens.n");

    std::ostringstream out;
    writeCsv(out, runs);
    const std::string text = out.str();
    const std::string rowA = text.substr(text.find("\r\n") + 2);
    // a's lr: last 0.005, over the measured steps 0.002..0.005, mean 0.0035; no tokens.
    EXPECT_NE(rowA.find(",0.005,0.0035,"), std::string::npos) << rowA;
    EXPECT_NE(rowA.find(",,,,,,\r\n"), std::string::npos) << "b's name is empty for a";
}

TEST(LoggedScalars, TablesShowTheLastValueAndExplainTheRest) {
    const std::vector<RunResult> runs{lrRun("a", 0.001)};
    const auto layout = reportLayout(std::span<const RunResult>(runs));
    const auto keys = keysOf(layout);
    const auto lr = std::find(keys.begin(), keys.end(), "scalar.lr");
    ASSERT_NE(lr, keys.end());
    EXPECT_EQ(keys.back(), "status") << "the scalars come before the status";
    const RunColumn& column = **(layout.begin() + (lr - keys.begin()));
    EXPECT_EQ(column.header, "lr");
    EXPECT_EQ(column.cellOf(runs[0], runs[0].summary), "0.005");
    EXPECT_EQ(column.number(runs[0], runs[0].summary), 0.005);
    EXPECT_EQ(column.explain(runs[0], runs[0].summary),
              "lr as the run logged it: 0.005 at the end; over the 4 measured steps that logged "
              "it, 0.0035 ± 0.00129099 (0.002 to 0.005).");

    std::ostringstream table;
    writeTable(table, runs);
    EXPECT_NE(table.str().find("grad_norm"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("0.005"), std::string::npos) << table.str();

    // A run that logged nothing shows no such column, and a "-" beside one that did.
    RunResult plain = loggingRun("p", [](int) { return std::map<std::string, double>{}; });
    const std::vector<RunResult> plainOnly{plain};
    const auto plainKeys = keysOf(reportLayout(std::span<const RunResult>(plainOnly)));
    EXPECT_EQ(std::count_if(plainKeys.begin(), plainKeys.end(),
                            [](const std::string& k) { return k.starts_with("scalar."); }),
              0);
    EXPECT_EQ(column.cellOf(plain, plain.summary), "-");
}

TEST(LoggedScalars, ARunningRunsColumnsComeFromItsLastStep) {
    RunResult live = lrRun("live", 0.01);
    live.summary = RunSummary{}; // not summarized yet
    live.steps.back().loss = 4.5;
    const RunResult* runs[] = {&live};
    const auto keys = keysOf(scalarColumns(runs, false));
    EXPECT_EQ(keys, (std::vector<std::string>{"scalar.grad_norm", "scalar.loss", "scalar.lr"}));
}

TEST(LoggedScalars, AComparisonShowsEachNameAsAVsB) {
    const RunResult a = lrRun("a", 0.001);
    RunResult b = lrRun("b", 0.002);
    b.steps.back().scalars["grad_norm"] = a.steps.back().scalars.at("grad_norm");
    b.summary = summarize(b.config, b.steps, std::nullopt);
    const std::vector<RunResult> sideA{a}, sideB{b};
    const Comparison c = compareRuns(sideA, sideB);
    ASSERT_EQ(c.matched.size(), 1u);
    const Rows rows = comparisonRows(c);
    const auto& header = rows[0];
    const auto at = [&](const std::string& name) {
        const auto it = std::find(header.begin(), header.end(), name);
        EXPECT_NE(it, header.end()) << name;
        return static_cast<size_t>(it - header.begin());
    };
    EXPECT_EQ(rows[1][at("lr (A vs B)")], "0.005 vs 0.01");
    EXPECT_EQ(rows[1][at("grad_norm (A vs B)")], "5") << "one value where they agree";
    EXPECT_LT(at("Verdict"), at("grad_norm (A vs B)"));
    EXPECT_EQ(comparisonFiguresAt(c) + kComparisonFigures - 2, at("p")) << "the window's p";

    std::ostringstream grid;
    writeComparison(grid, c, ReportFormat::Table);
    EXPECT_NE(grid.str().find("0.005 vs 0.01"), std::string::npos) << grid.str();
}

TEST(LoggedScalars, AResultSetReadBackHasItsScalarsSummarizedNotStored) {
    ResultSet set;
    set.runs.push_back(lrRun("a", 0.001));
    const std::string text = toJson(set);
    size_t written = 0;
    for (size_t at = text.find("\"scalars\""); at != std::string::npos;
         at = text.find("\"scalars\"", at + 1)) {
        ++written;
    }
    EXPECT_EQ(written, 5u) << "the five steps' own, not the summary's: it is derived";
    const ResultSet back = parseResultSet(text);
    ASSERT_EQ(back.runs.size(), 1u);
    const auto& scalars = back.runs[0].summary.scalars;
    ASSERT_EQ(scalars.size(), 2u);
    EXPECT_DOUBLE_EQ(scalars.at("lr").last, 0.005);
    EXPECT_EQ(scalars.at("lr").measured.n, 4);
}

// A file is data: a name with a control character or past kMaxScalarNameBytes has no column,
// and past kMaxScalarColumns names the rest have none either (they stay in the steps).
TEST(LoggedScalars, NamesFromAFileAreBounded) {
    RunResult r = loggingRun("h", [](int) {
        std::map<std::string, double> s;
        for (int k = 0; k < 40; ++k) {
            s["m" + std::to_string(100 + k)] = k;
        }
        s["bad\nname"] = 1.0;
        s[std::string(kMaxScalarNameBytes + 1, 'x')] = 1.0;
        return s;
    });
    const RunResult* runs[] = {&r};
    const auto keys = keysOf(scalarColumns(runs, false));
    ASSERT_EQ(keys.size(), kMaxScalarColumns);
    EXPECT_EQ(keys.front(), "scalar.m100");
    EXPECT_EQ(keys.back(), "scalar.m131");
    EXPECT_EQ(scalarColumns(runs, true).size(), kMaxScalarColumns * 6);
    EXPECT_EQ(r.summary.scalars.size(), 42u) << "the summary keeps every name";
}

// The loss has a field of its own in a step (every training step of the engine's records
// it), and is a column as a logged scalar is.
TEST(LoggedScalars, TheLossIsOneOfThem) {
    RunResult r = loggingRun("l", [](int) { return std::map<std::string, double>{}; });
    for (StepRecord& s : r.steps) {
        s.loss = s.index == 3 ? std::numeric_limits<double>::infinity() : 5.0 - 0.5 * s.index;
    }
    r.summary = summarize(r.config, r.steps, std::nullopt);
    const ScalarSummary& loss = r.summary.scalars.at("loss");
    EXPECT_DOUBLE_EQ(loss.last, 3.0);
    EXPECT_EQ(loss.measured.n, 3) << "the overflowed step's loss is not averaged";
    const RunResult* runs[] = {&r};
    EXPECT_EQ(keysOf(scalarColumns(runs, false)), std::vector<std::string>{"scalar.loss"});
}
