// Runs watched in a PyTorch script (docs/WATCH.md): the result set's source block read and
// written, their place in reports and comparisons, and the step journal read as it grows.

#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/verdicts.h"
#include "lmprof/engine/watch_journal.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace lmprof::engine;
using nlohmann::json;

namespace {

// A step as the Python package writes it (python/src/lmprof/_steps.py).
json watchedStep(int index, bool warmup, double forward) {
    return {
        {"index", index},
        {"warmup", warmup},
        {"data_ms", 1.0},
        {"forward_ms", forward},
        {"backward_ms", 2.0 * forward},
        {"optimizer_ms", 0.5},
        {"rest_ms", 0.25},
        {"total_ms", 1.75 + 3.0 * forward},
        {"peak_allocated_bytes", 4096},
        {"peak_reserved_bytes", 8192},
        {"peak_allocated_by_phase",
         {{"data", 0}, {"forward", 4096}, {"backward", 2048}, {"optimizer", 1024}, {"rest", 0}}},
        {"t_end_ms", 10.0 * (index + 1)},
        {"micro_batches", 2},
        {"loss", 3.5}};
}

json watchedRun(const std::string& id, const std::string& modelClass, int steps) {
    json run = {{"id", id},
                {"config",
                 {{"mode", "train"},
                  {"precision", "bf16"},
                  {"warmup_steps", std::min(steps, 1)},
                  {"measure_steps", std::max(steps - 1, 0)},
                  {"device", "cpu"}}},
                {"source",
                 {{"kind", "watched"},
                  {"script", "train.py"},
                  {"model_class", modelClass},
                  {"parameter_count", 1234},
                  {"device", "cpu"},
                  {"autocast", "bfloat16"},
                  {"tokens_per_step", 64},
                  {"optimizer", "AdamW"},
                  {"torch_compile", false},
                  {"pid", 42}}},
                {"parameter_count", 1234},
                {"status", "ok"},
                {"error", nullptr},
                {"failed_phase", nullptr},
                {"steps", json::array()}};
    for (int i = 0; i < steps; ++i) {
        run["steps"].push_back(watchedStep(i, i == 0, 4.0 + i % 2));
    }
    return run;
}

json watchedSet(json runs) {
    return {{"schema", "lmprof.results/1.7"},
            {"created", "2026-11-25T12:00:00Z"},
            {"tool", {{"name", "lmprof-python"}, {"version", "0.1.0"}, {"git", ""}}},
            {"environment",
             {{"torch", "2.11.0"},
              {"cuda", ""},
              {"device", {{"type", "cpu"}, {"name", "x86"}}},
              {"cpu", {{"model", "x86"}, {"threads", 2}}},
              {"host", "desk"}}},
            {"runs", std::move(runs)}};
}

std::string refusal(const json& document) {
    try {
        parseResultSet(document.dump());
    } catch (const ResultFormatError& e) {
        return e.what();
    }
    return "accepted";
}

} // namespace

TEST(WatchedRun, ReadsTheSourceStepsAndTheirExtraPhases) {
    const ResultSet set = parseResultSet(watchedSet({watchedRun("MyGPT", "MyGPT", 4)}).dump());
    ASSERT_EQ(set.runs.size(), 1u);
    const RunResult& r = set.runs[0];
    ASSERT_TRUE(r.source.has_value());
    EXPECT_EQ(r.source->modelClass, "MyGPT");
    EXPECT_EQ(r.source->tokensPerStep, 64);
    EXPECT_EQ(r.source->autocast, "bfloat16");
    EXPECT_EQ(r.parameterCount, 1234); // the file's, not a model of the engine's
    EXPECT_EQ(r.config.precision, Precision::Bf16);
    EXPECT_EQ(r.config.model.preset, "watched");
    EXPECT_EQ(r.config.warmupSteps + r.config.measureSteps, 4);
    ASSERT_EQ(r.steps.size(), 4u);
    EXPECT_EQ(r.steps[1].dataMs, 1.0);
    EXPECT_EQ(r.steps[1].restMs, 0.25);
    EXPECT_EQ(r.steps[1].microBatches, 2);
    EXPECT_EQ(r.steps[1].phasePeakBytes.backward, 2048);
    EXPECT_EQ(runModelLabel(r), "MyGPT (watched)");
    EXPECT_EQ(tokensPerStep(r), 64);
}

TEST(WatchedRun, RoundTripsThroughTheEnginesWriter) {
    const ResultSet set = parseResultSet(watchedSet({watchedRun("MyGPT", "MyGPT", 3)}).dump());
    const json written = json::parse(toJson(set));
    EXPECT_EQ(written["schema"], "lmprof.results/1.7");
    const json& run = written["runs"][0];
    EXPECT_FALSE(run["config"].contains("model")) << "no model of the engine's is made up";
    EXPECT_EQ(run["source"]["model_class"], "MyGPT");
    EXPECT_EQ(run["steps"][0]["data_ms"], 1.0);
    const ResultSet again = parseResultSet(written.dump());
    EXPECT_EQ(again.runs[0].source->pid, 42);
    EXPECT_EQ(again.runs[0].steps[2].restMs, 0.25);
    EXPECT_EQ(again.runs[0].parameterCount, 1234);
}

// One rulebook for statistics (docs/RESULTS.md, on watched runs): a watched run's summary
// is the engine's summarize() over its steps when read, whatever the file says.
TEST(WatchedRun, ItsSummaryIsTheEnginesOverItsSteps) {
    const ResultSet set = parseResultSet(watchedSet({watchedRun("MyGPT", "MyGPT", 4)}).dump());
    const RunSummary& s = set.runs[0].summary;
    // Measured steps 1..3: forward 5, 4, 5 ms; a step is 1.75 + 3 forward.
    EXPECT_EQ(s.totalMs.n, 3);
    EXPECT_DOUBLE_EQ(s.totalMs.mean, 1.75 + 3.0 * 14.0 / 3.0);
    EXPECT_DOUBLE_EQ(s.forwardMs.median, 5.0);
    ASSERT_TRUE(s.dataMs && s.restMs);
    EXPECT_DOUBLE_EQ(s.dataMs->mean, 1.0);
    EXPECT_EQ(s.peakBytes.forward, 4096);
    EXPECT_DOUBLE_EQ(s.tokensPerS, 64.0 / (s.totalMs.mean / 1000.0));

    json edited = json::parse(toJson(set));
    edited["runs"][0]["summary"]["total_ms"]["mean"] = 999.0;
    edited["runs"][0]["summary"]["peak_bytes"]["forward"] = 1;
    const RunSummary again = parseResultSet(edited.dump()).runs[0].summary;
    EXPECT_DOUBLE_EQ(again.totalMs.mean, s.totalMs.mean) << "the steps' figures, not the file's";
    EXPECT_EQ(again.peakBytes.forward, 4096);
}

TEST(WatchedRun, HostileSourcesAndPhasesAreRefusedWithTheirPath) {
    json run = watchedRun("x", "X", 2);
    run["source"]["kind"] = "alien";
    EXPECT_NE(refusal(watchedSet({run})).find("$.runs[0].source.kind"), std::string::npos);
    run = watchedRun("x", "X", 2);
    run["steps"][1]["data_ms"] = -1.0;
    EXPECT_NE(refusal(watchedSet({run})).find("$.runs[0].steps[1].data_ms"), std::string::npos);
    run = watchedRun("x", "X", 2);
    run["steps"][1]["rest_ms"] = 1e6; // more than the whole step
    EXPECT_NE(refusal(watchedSet({run})).find("rest_ms"), std::string::npos);
    run = watchedRun("x", "X", 2);
    run["source"]["tokens_per_step"] = -5;
    EXPECT_NE(refusal(watchedSet({run})).find("tokens_per_step"), std::string::npos);
    run = watchedRun("x", "X", 2);
    run["config"]["measure_steps"] = 2000000000;
    EXPECT_NE(refusal(watchedSet({run})).find("measure_steps"), std::string::npos);
    run = watchedRun("x", "X", 2);
    run["steps"][0]["index"] = 7; // beyond the run's two steps
    EXPECT_NE(refusal(watchedSet({run})).find("index"), std::string::npos);
}

// Evaluation passes between steps (docs/WATCH.md, "Evaluation passes"): read from a step
// and from the run, written back, summed in `show`'s line, and refused with their path
// when half there or hostile.
TEST(WatchedRun, EvaluationPassesAreReadWrittenAndSummed) {
    json run = watchedRun("MyGPT", "MyGPT", 3);
    run["steps"][2]["evaluation_ms"] = 30.0;
    run["steps"][2]["evaluation_forwards"] = 3;
    run["final_evaluation_ms"] = 20.0;
    run["final_evaluation_forwards"] = 2;
    const ResultSet set = parseResultSet(watchedSet({run}).dump());
    const RunResult& r = set.runs[0];
    ASSERT_TRUE(r.steps[2].evaluation.has_value());
    EXPECT_EQ(r.steps[2].evaluation->forwards, 3);
    EXPECT_FALSE(r.steps[1].evaluation.has_value());
    ASSERT_TRUE(r.finalEvaluation.has_value());
    EXPECT_EQ(r.finalEvaluation->ms, 20.0);
    const EvaluationTotals totals = evaluationTotals(r);
    EXPECT_EQ(totals.passes, 2);
    EXPECT_EQ(totals.forwards, 5);
    EXPECT_DOUBLE_EQ(totals.ms, 50.0);
    // The steps' time outside their data phases: 3 × (1.75 + 3 × forward) − 3 × 1.0.
    double stepsMs = 0.0;
    for (const StepRecord& s : r.steps) {
        stepsMs += s.totalMs - 1.0;
    }
    EXPECT_DOUBLE_EQ(totals.share, 50.0 / (50.0 + stepsMs));
    std::ostringstream table;
    writeTable(table, set.runs);
    EXPECT_NE(table.str().find("MyGPT: 2 evaluation passes (5 forwards): 50.0 ms"),
              std::string::npos)
        << table.str();

    const json written = json::parse(toJson(set));
    EXPECT_EQ(written["runs"][0]["steps"][2]["evaluation_forwards"], 3);
    EXPECT_FALSE(written["runs"][0]["steps"][0].contains("evaluation_ms"));
    EXPECT_EQ(written["runs"][0]["final_evaluation_ms"], 20.0);

    json half = run;
    half["steps"][2].erase("evaluation_forwards");
    EXPECT_NE(refusal(watchedSet({half})).find("$.runs[0].steps[2].evaluation_forwards"),
              std::string::npos);
    json hostile = run;
    hostile["final_evaluation_forwards"] = 0;
    EXPECT_NE(refusal(watchedSet({hostile})).find("$.runs[0].final_evaluation_forwards"),
              std::string::npos);
    hostile = run;
    hostile["steps"][2]["evaluation_ms"] = -1.0;
    EXPECT_NE(refusal(watchedSet({hostile})).find("$.runs[0].steps[2].evaluation_ms"),
              std::string::npos);
}

// A watched run's time per module (docs/WATCH.md): read, written back, refused with its
// path when hostile, and printed as a table with each module's share of its phase.
TEST(WatchedRun, TimePerModuleIsReadWrittenAndTabled) {
    json run = watchedRun("MyGPT", "MyGPT", 3);
    run["module_times"] = {{"depth", 2},
                           {"steps", 2},
                           {"modules",
                            {{{"name", "blocks.0"},
                              {"forward_ms", 2.0},
                              {"backward_ms", 4.0},
                              {"forward_calls", 1.0},
                              {"backward_calls", 1.0}},
                             {{"name", "head"},
                              {"forward_ms", 1.0},
                              {"backward_ms", 3.0},
                              {"forward_calls", 1.0},
                              {"backward_calls", 1.0}}}}};
    const ResultSet set = parseResultSet(watchedSet({run}).dump());
    const auto& times = set.runs[0].moduleTimes;
    ASSERT_TRUE(times.has_value());
    EXPECT_EQ(times->depth, 2);
    ASSERT_EQ(times->modules.size(), 2u);
    EXPECT_EQ(times->modules[1].name, "head");
    EXPECT_DOUBLE_EQ(times->modules[0].backwardMs, 4.0);
    const ResultSet again = parseResultSet(toJson(set));
    ASSERT_TRUE(again.runs[0].moduleTimes);
    EXPECT_DOUBLE_EQ(again.runs[0].moduleTimes->modules[1].forwardMs, 1.0);

    // The measured steps' forward is 4.0 and 5.0 ms (mean 4.5): blocks.0 is 44.4% of it.
    const Rows rows = moduleRows(set.runs[0]);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[1][0], "blocks.0");
    EXPECT_EQ(rows[1][4], "44.4");
    std::ostringstream out;
    writeModuleReport(out, set.runs, ReportFormat::Table);
    EXPECT_NE(out.str().find("Time per module of MyGPT (depth 2, mean of 2 measured steps)"),
              std::string::npos)
        << out.str();

    run["module_times"]["modules"][1]["backward_ms"] = -3.0;
    EXPECT_NE(refusal(watchedSet({run})).find("$.runs[0].module_times.modules[1].backward_ms"),
              std::string::npos);
    run["module_times"]["modules"] = nullptr;
    EXPECT_NE(refusal(watchedSet({run})).find("$.runs[0].module_times.modules: expected an array"),
              std::string::npos);
}

TEST(WatchedRun, PairsWithRunsOfItsOwnModelOrWithAnyRunByName) {
    const ResultSet a = parseResultSet(
        watchedSet({watchedRun("mine", "MyGPT", 5), watchedRun("other", "OtherNet", 5)}).dump());
    const ResultSet b = parseResultSet(watchedSet({watchedRun("mine-2", "MyGPT", 5)}).dump());
    const Comparison c = compareRuns(a.runs, b.runs);
    ASSERT_EQ(c.matched.size(), 1u);
    EXPECT_EQ(c.matched[0].a.id, "mine");
    EXPECT_EQ(c.onlyA.size(), 1u); // OtherNet pairs with nothing of B

    RunResult engine;
    engine.id = "tiny-ctx128-fp32-train-1";
    for (int i = 0; i < 4; ++i) {
        StepRecord s;
        s.index = i;
        s.totalMs = 20.0 + i;
        engine.steps.push_back(s);
    }
    const ComparedRun named = compareTwo(engine, a.runs[0]);
    EXPECT_LT(named.stepRatio.ratio, 1.0); // the watched steps are about 15 ms
    EXPECT_NE(named.verdict, Verdict::Untestable);
}

TEST(WatchedRun, ReportsShowTheModelClassAndLeaveTheEnginesDimensionsEmpty) {
    const ResultSet set = parseResultSet(watchedSet({watchedRun("mine", "MyGPT", 4)}).dump());
    std::ostringstream table, csv;
    writeReport(table, set.runs, ReportFormat::Table);
    EXPECT_NE(table.str().find("MyGPT (watched)"), std::string::npos) << table.str();
    writeReport(csv, set.runs, ReportFormat::Csv);
    const std::string text = csv.str();
    const std::string header = text.substr(0, text.find('\r'));
    const std::string row = text.substr(text.find('\n') + 1);
    // d_model is the third column: empty for a watched run.
    EXPECT_EQ(header.substr(0, header.find(",d_ff")), "id,model,d_model");
    EXPECT_EQ(row.substr(0, row.find(",,") + 2), "mine,watched,,");
}

namespace {

struct JournalFile {
    std::filesystem::path path;
    explicit JournalFile(const std::string& tag)
        : path(std::filesystem::temp_directory_path() /
               ("lmprof-journal-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + tag +
                ".steps.jsonl")) {
        std::filesystem::remove(path);
    }
    ~JournalFile() { std::filesystem::remove(path); }
    void append(const std::string& text) {
        std::ofstream out(path, std::ios::app | std::ios::binary);
        out << text;
    }
};

std::string headerLine() {
    json run = watchedRun("MyGPT", "MyGPT", 0);
    run.erase("steps");
    return json{{"kind", "header"},
                {"schema", "lmprof.watch-journal/1"},
                {"created", "2026-11-25T12:00:00Z"},
                {"environment", watchedSet(json::array())["environment"]},
                {"run", run}}
               .dump() +
           "\n";
}

std::string stepLine(int index) {
    return json{{"kind", "step"}, {"step", watchedStep(index, index < 1, 4.0)}}.dump() + "\n";
}

} // namespace

TEST(WatchJournal, ReadsStepsAsTheyAreAppendedAndWaitsForACutLine) {
    JournalFile file("grows");
    WatchJournal journal(file.path);
    EXPECT_TRUE(journal.poll().empty()); // not written yet
    file.append(headerLine() + stepLine(0));
    EXPECT_EQ(journal.poll().size(), 1u);
    ASSERT_TRUE(journal.started());
    EXPECT_EQ(journal.runId(), "MyGPT");
    const std::string next = stepLine(1);
    file.append(next.substr(0, 40)); // being written
    EXPECT_TRUE(journal.poll().empty());
    file.append(next.substr(40) + stepLine(2));
    const auto steps = journal.poll();
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[1].index, 2);
    file.append("{\"kind\": \"step\", \"st"); // the kill came mid-line
    const RunResult run = journal.run("the watched script was killed by signal 9");
    EXPECT_EQ(run.status, RunStatus::Cancelled);
    EXPECT_EQ(run.error, "the watched script was killed by signal 9");
    EXPECT_EQ(run.steps.size(), 3u);
    EXPECT_EQ(run.config.warmupSteps, 1);
    EXPECT_EQ(run.config.measureSteps, 2);
    EXPECT_EQ(run.summary.totalMs.n, 2);
    EXPECT_DOUBLE_EQ(run.summary.tokensPerS, 64.0 / (13.75 / 1000.0));
    // The run it makes is one the result set's reader takes back.
    ResultSet set;
    set.runs = {run};
    EXPECT_EQ(parseResultSet(toJson(set)).runs[0].steps.size(), 3u);
}

TEST(WatchJournal, AForeignFileIsRefusedAndBadLinesAreCountedNotFatal) {
    JournalFile foreign("foreign");
    foreign.append("{\"schema\": \"lmprof.results/1.7\"}\n");
    WatchJournal notOurs(foreign.path);
    try {
        notOurs.poll();
        FAIL() << "a result set is not a journal";
    } catch (const ResultFormatError& e) {
        EXPECT_NE(std::string(e.what()).find("not an lmprof watch journal"), std::string::npos);
    }
    JournalFile file("bad-lines");
    file.append(headerLine() + "not json\n" + stepLine(0) + "{\"kind\": \"step\", \"step\": 7}\n" +
                std::string(WatchJournal::kMaxLineBytes + 10, 'x') + "\n" + stepLine(1));
    WatchJournal journal(file.path);
    EXPECT_EQ(journal.poll().size(), 2u);
    EXPECT_EQ(journal.skipped(), 3);
}

TEST(WatchJournal, AnEndLineSaysHowTheScriptClosedItsRun) {
    // The script closed its run (status and error written) but its result set is missing,
    // e.g. a full disk: the run ends as the script said, not as a killed one.
    JournalFile file("ended");
    file.append(
        headerLine() + stepLine(0) + stepLine(1) +
        json{{"kind", "end"}, {"status", "error"}, {"error", "RuntimeError: diverged"}}.dump() +
        "\n");
    WatchJournal journal(file.path);
    EXPECT_EQ(journal.poll().size(), 2u);
    const RunResult run = journal.run("the watched script exited with status 1");
    EXPECT_EQ(run.status, RunStatus::Error);
    EXPECT_EQ(run.error, "RuntimeError: diverged");
    EXPECT_EQ(run.steps.size(), 2u);
    // An end line with a status this reader does not know is skipped, not trusted.
    JournalFile odd("odd-end");
    odd.append(headerLine() + stepLine(0) + "{\"kind\": \"end\", \"status\": \"exploded\"}\n");
    WatchJournal oddJournal(odd.path);
    oddJournal.poll();
    EXPECT_EQ(oddJournal.skipped(), 1);
    EXPECT_EQ(oddJournal.run("killed").status, RunStatus::Cancelled);
}

TEST(WatchJournal, AScalarsLineGivesTheLastStepTheLossLoggedAfterIt) {
    // run.log(loss=...) after a step's `with` block: the step was journaled as it ended, its
    // loss follows on a `scalars` line. A line about another step, or a loss that is no
    // number, is skipped.
    JournalFile file("scalars");
    const auto scalars = [](int index, const json& loss) {
        return json{{"kind", "scalars"}, {"index", index}, {"scalars", {{"loss", loss}}}}.dump() +
               "\n";
    };
    file.append(headerLine() + stepLine(0) + scalars(0, 2.5) + stepLine(1) + scalars(0, 9.0) +
                scalars(1, "nan") + stepLine(2) + scalars(2, json::array()));
    WatchJournal journal(file.path);
    const auto read = journal.poll();
    ASSERT_EQ(read.size(), 3u);
    EXPECT_EQ(journal.skipped(), 2);
    const RunResult run = journal.run("killed");
    EXPECT_EQ(run.steps[0].loss, 2.5);
    ASSERT_TRUE(run.steps[1].loss.has_value());
    EXPECT_TRUE(std::isnan(*run.steps[1].loss));
    EXPECT_EQ(run.steps[2].loss, read[2].loss); // as its own line had it
}

TEST(WatchJournal, AFifoInTheJournalsPlaceIsRefusedOnceAndNeverBlocks) {
    // A plain open of a FIFO for reading waits for a writer: lmprof-cli watch hung 10 min.
    JournalFile file("fifo");
    ASSERT_EQ(mkfifo(file.path.c_str(), 0600), 0);
    WatchJournal journal(file.path);
    try {
        journal.poll();
        FAIL() << "a FIFO is no journal";
    } catch (const ResultFormatError& e) {
        EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(journal.poll().empty()); // said once
    EXPECT_FALSE(journal.started());
}

TEST(WatchJournal, ALongRunIsKeptThinnedWithItsSummaryOverEveryStep) {
    // 30,000 steps, past StepTally::kKeptSteps twice: lmprof-cli watch holds between 5,000
    // and 10,000 of them (every 4th), the warmup step and a profiled one whatever their
    // index, and a summary over all 29,998 measured ones (docs/WATCH.md, "Long runs").
    JournalFile file("long");
    std::string lines = headerLine();
    std::vector<double> totals;
    for (int i = 0; i < 30'000; ++i) {
        json step = watchedStep(i, i < 1, 4.0 + (i * 7919 % 1000) / 100.0);
        if (i == 4'001) {
            step["op_profiled"] = true; // perturbed: kept, and not in the statistics
        } else if (i >= 1) {
            totals.push_back(step["total_ms"].get<double>());
        }
        lines += json{{"kind", "step"}, {"step", step}}.dump() + "\n";
    }
    file.append(lines);
    WatchJournal journal(file.path);
    while (!journal.poll().empty()) {
    }
    EXPECT_EQ(journal.stepCount(), 30'000u);
    const RunResult run = journal.run("killed");
    ASSERT_TRUE(run.thinned);
    EXPECT_EQ(run.thinned->every, 4);
    EXPECT_EQ(run.thinned->recordedSteps, 30'000);
    EXPECT_EQ(run.steps.size(), 7'500u + 1u); // indices 0, 4, ..., 29,996, and 4,001
    EXPECT_EQ(run.config.warmupSteps + run.config.measureSteps, 30'000);
    const PhaseStats exact = computeStats(totals);
    EXPECT_EQ(run.summary.totalMs.n, exact.n);
    EXPECT_NEAR(run.summary.totalMs.mean, exact.mean, 1e-9 * exact.mean);
    EXPECT_NEAR(run.summary.totalMs.std, exact.std, 1e-9 * exact.std);
    EXPECT_EQ(run.summary.totalMs.min, exact.min);
    EXPECT_EQ(run.summary.totalMs.max, exact.max);
    // Within the bin of the order statistic the quantile starts from (0.27% wide).
    std::sort(totals.begin(), totals.end());
    const double order = totals[static_cast<size_t>(std::floor(0.5 * (totals.size() - 1)))];
    EXPECT_NEAR(run.summary.totalMs.median, order, 0.003 * order);

    // Every 4th step cannot show a period: the verdict abstains, saying why.
    const auto verdicts = judgeRun(run);
    const auto period = std::find_if(verdicts.begin(), verdicts.end(), [](const RunVerdict& v) {
        return v.kind == VerdictKind::PeriodicStalls;
    });
    ASSERT_NE(period, verdicts.end());
    EXPECT_EQ(period->certainty, Certainty::Abstained);
    EXPECT_NE(period->evidence.find("keeps 1 step in 4 of the run's 30000"), std::string::npos)
        << period->evidence;

    // Written and read back, it keeps its thinning; `show` says what it kept.
    ResultSet set;
    set.runs = {run};
    const ResultSet back = parseResultSet(toJson(set));
    ASSERT_TRUE(back.runs[0].thinned);
    EXPECT_EQ(back.runs[0].thinned->every, 4);
    EXPECT_EQ(back.runs[0].steps.size(), run.steps.size());
    EXPECT_EQ(thinnedLine(back.runs[0]),
              "7501 of 30000 steps kept (the warmup, any profiled step, and 1 in 4 of the "
              "others); the summary covers all of them");
}

TEST(WatchedRun, AThinnedRunMustCountEveryStepItRecorded) {
    json run = watchedRun("MyGPT", "MyGPT", 3);
    run["thinned"] = {{"every", 2}, {"recorded_steps", 5}};
    EXPECT_NE(
        refusal(watchedSet({run}))
            .find("$.runs[0].thinned.recorded_steps: 5 steps recorded, but the config counts 3"),
        std::string::npos)
        << refusal(watchedSet({run}));
    run["thinned"] = {{"every", 1}, {"recorded_steps", 3}};
    EXPECT_NE(refusal(watchedSet({run})).find("$.runs[0].thinned.every"), std::string::npos)
        << refusal(watchedSet({run}));
    run["thinned"] = {{"every", 2}, {"recorded_steps", 3}};
    EXPECT_EQ(refusal(watchedSet({run})), "accepted");
}

TEST(PhaseTally, IsComputeStatsWhileFewAndWithinABinPastThat) {
    PhaseTally few;
    std::vector<double> values;
    for (int i = 0; i < 1'000; ++i) {
        values.push_back(i % 3 == 0 ? 0.0 : 1.0 + (i * 37 % 101) / 10.0);
        few.add(values.back());
    }
    const PhaseStats a = few.stats(), b = computeStats(values);
    EXPECT_FALSE(few.binned());
    EXPECT_EQ(a.median, b.median);
    EXPECT_EQ(a.iqr, b.iqr);
    EXPECT_EQ(a.noisy, b.noisy);
    PhaseTally many;
    std::vector<double> all;
    for (int i = 0; i < 25'000; ++i) {
        all.push_back(values[i % values.size()] * (1.0 + i / 1e6));
        many.add(all.back());
    }
    EXPECT_TRUE(many.binned());
    const PhaseStats c = many.stats(), d = computeStats(all);
    EXPECT_EQ(c.n, 25'000);
    EXPECT_EQ(c.min, 0.0); // the bin of zeros
    EXPECT_NEAR(c.mean, d.mean, 1e-9 * d.mean);
    EXPECT_NEAR(c.std, d.std, 1e-9 * d.std);
    // Within the bin of the order statistic each quantile starts from (0.27% wide).
    std::sort(all.begin(), all.end());
    for (const auto& [got, q] : {std::pair{c.median, 0.5}, std::pair{c.p95, 0.95}}) {
        const double order = all[static_cast<size_t>(std::floor(q * (all.size() - 1)))];
        EXPECT_NEAR(got, order, 0.003 * order) << q;
    }
}
