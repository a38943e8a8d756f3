// The sweep and summary logic of the window without a window: the SweepDriver fed
// synthetic engine events (one run at a time, skip after OOM, cancel, ETA), the summary
// views' data (matrix rows, heatmap grid, precision comparison, warmup groups) and the
// autosave hand-over at launch.

#include "autosave.h"
#include "lmprof/engine/result_io.h"
#include "summary_model.h"
#include "sweep_driver.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace lmprof;
using namespace lmprof::ui;
using engine::Mode;
using engine::Precision;
using engine::RunStatus;
using engine::SessionEvent;

namespace {

engine::RunConfig cfg(const char* preset, int64_t ctx, Precision p = Precision::Fp32,
                      Mode m = Mode::Train, int warmup = 1) {
    engine::RunConfig c;
    c.model = *engine::presetModel(preset);
    c.contextLength = ctx;
    c.precision = p;
    c.mode = m;
    c.warmupSteps = warmup;
    c.measureSteps = 4;
    c.batchSize = 2;
    return c;
}

engine::RunResult finished(const engine::RunConfig& c, RunStatus status,
                           const std::vector<double>& measured, const std::string& id = "run") {
    engine::RunResult r;
    r.id = id;
    r.config = c;
    r.status = status;
    int index = 0;
    for (int w = 0; w < c.warmupSteps; ++w) {
        engine::StepRecord s;
        s.index = index++;
        s.warmup = true;
        s.totalMs = s.forwardMs = 100.0;
        r.steps.push_back(s);
    }
    for (double ms : measured) {
        engine::StepRecord s;
        s.index = index++;
        s.totalMs = ms;
        s.forwardMs = ms / 3;
        s.backwardMs = ms / 2;
        s.optimizerMs = ms / 6;
        r.steps.push_back(s);
    }
    r.summary = engine::summarize(c, r.steps, std::nullopt);
    return r;
}

// A driver wired to recording submit / skip functions, like App wires it to the Session
// and the RunStore.
struct Harness {
    SweepDriver driver;
    std::vector<engine::RunConfig> submitted;
    std::vector<engine::RunResult> skipped;
    void start(std::vector<engine::RunConfig> configs, bool runAfterOom = false) {
        driver.start(
            std::move(configs), runAfterOom,
            [this](const engine::RunConfig& c) {
                submitted.push_back(c);
                return static_cast<int>(submitted.size()) - 1;
            },
            [this](const engine::RunResult& r) { skipped.push_back(r); });
    }
    // The session's events for the last submitted run: its steps, then RunFinished.
    void finish(RunStatus status, double stepMs = 10.0) {
        const int index = static_cast<int>(submitted.size()) - 1;
        const engine::RunConfig& c = submitted.back();
        std::vector<SessionEvent> events;
        const int steps = status == RunStatus::Ok ? c.warmupSteps + c.measureSteps : 1;
        for (int i = 0; i < steps; ++i) {
            engine::StepRecord s;
            s.index = i;
            s.totalMs = stepMs;
            events.emplace_back(engine::StepFinished{index, s});
        }
        engine::RunResult r = finished(c, status, {stepMs, stepMs});
        r.id = engine::runLabel(c) + "-" + std::to_string(index + 1);
        events.emplace_back(engine::RunFinished{index, r});
        driver.observe(events);
    }
};

} // namespace

TEST(SweepDriver, SubmitsOneRunAtATimeInOrder) {
    Harness h;
    h.start({cfg("tiny", 16), cfg("tiny", 32), cfg("small", 16)});
    ASSERT_EQ(h.submitted.size(), 1u); // only the first: the next waits for its RunFinished
    EXPECT_TRUE(h.driver.running());
    // Events of another run (e.g. one started from Configure) do not advance the sweep.
    std::vector<SessionEvent> other;
    other.emplace_back(engine::RunFinished{42, finished(cfg("tiny", 16), RunStatus::Ok, {1, 1})});
    h.driver.observe(other);
    EXPECT_EQ(h.submitted.size(), 1u);
    h.finish(RunStatus::Ok);
    ASSERT_EQ(h.submitted.size(), 2u);
    EXPECT_EQ(h.submitted[1].contextLength, 32);
    h.finish(RunStatus::Ok);
    h.finish(RunStatus::Ok);
    EXPECT_EQ(h.submitted.size(), 3u);
    EXPECT_FALSE(h.driver.running());
    const auto p = h.driver.progress();
    EXPECT_EQ(p.finished, 3u);
    EXPECT_EQ(p.total, 3u);
    EXPECT_DOUBLE_EQ(p.fraction(), 1.0);
    ASSERT_TRUE(p.etaSeconds);
    EXPECT_DOUBLE_EQ(*p.etaSeconds, 0.0);
}

TEST(SweepDriver, AfterAnOomLargerConfigsOfTheFamilyBecomeSkippedResults) {
    Harness h;
    const auto configs =
        engine::expandSweep({cfg("tiny", 16),
                             {*engine::presetModel("tiny"), *engine::presetModel("small")},
                             {16, 32},
                             {Precision::Fp32},
                             {Mode::Train},
                             {}});
    ASSERT_EQ(configs.size(), 4u); // tiny@16, tiny@32, small@16, small@32 by FLOPs
    h.start(configs);
    h.finish(RunStatus::Ok);  // tiny@16
    h.finish(RunStatus::Oom); // tiny@32: small@32 is at least as large, small@16 is not
    ASSERT_EQ(h.submitted.size(), 3u);
    EXPECT_EQ(h.submitted[2].model.preset, "small");
    EXPECT_EQ(h.submitted[2].contextLength, 16);
    h.finish(RunStatus::Ok);
    ASSERT_EQ(h.skipped.size(), 1u);
    EXPECT_EQ(h.skipped[0].status, RunStatus::Skipped);
    EXPECT_EQ(h.skipped[0].config.model.preset, "small");
    EXPECT_EQ(h.skipped[0].config.contextLength, 32);
    EXPECT_EQ(h.skipped[0].error, "skipped after out-of-memory in tiny-ctx32-fp32-train-2");
    EXPECT_FALSE(h.driver.running());
    const auto p = h.driver.progress();
    EXPECT_EQ(p.finished, 3u);
    EXPECT_EQ(p.skipped, 1u);
    EXPECT_EQ(p.failed, 1u);
    EXPECT_DOUBLE_EQ(p.fraction(), 1.0);

    // "run after OOM" runs everything.
    Harness all;
    all.start(configs, true);
    all.finish(RunStatus::Ok);
    all.finish(RunStatus::Oom);
    all.finish(RunStatus::Ok);
    all.finish(RunStatus::Ok);
    EXPECT_EQ(all.submitted.size(), 4u);
    EXPECT_TRUE(all.skipped.empty());
}

TEST(SweepDriver, CancelStopsSubmittingAndACancelledRunEndsTheSweep) {
    Harness h;
    h.start({cfg("tiny", 16), cfg("tiny", 32), cfg("tiny", 64)});
    h.driver.cancel();
    EXPECT_FALSE(h.driver.running());
    h.finish(RunStatus::Cancelled); // the run in flight still ends, and is counted
    EXPECT_EQ(h.submitted.size(), 1u);
    EXPECT_EQ(h.driver.progress().finished, 1u);

    // A cancel from elsewhere (the Configure panel's button) ends the sweep as well.
    Harness g;
    g.start({cfg("tiny", 16), cfg("tiny", 32)});
    g.finish(RunStatus::Cancelled);
    EXPECT_EQ(g.submitted.size(), 1u);
    EXPECT_FALSE(g.driver.running());
}

TEST(SweepDriver, EtaIsTheRemainingFlopsAtTheObservedRate) {
    Harness h;
    const auto a = cfg("tiny", 16);
    const auto b = cfg("tiny", 32);
    h.start({a, b});
    EXPECT_FALSE(h.driver.progress().etaSeconds);    // no step measured yet
    h.finish(RunStatus::Ok, 20.0);                   // every step of a took 20 ms
    const double rate = engine::stepFlops(a) / 20.0; // FLOPs per ms
    const auto p = h.driver.progress();
    ASSERT_TRUE(p.etaSeconds);
    EXPECT_NEAR(*p.etaSeconds, engine::runFlops(b) / rate / 1000.0, 1e-9);
    EXPECT_NEAR(p.fraction(), 0.5, 1e-12);
}

TEST(SweepDriver, ParsesEditableLists) {
    std::string error;
    EXPECT_EQ(parseIntList(" 0, 1,2 ,5 ", 0, &error), (std::vector<int64_t>{0, 1, 2, 5}));
    EXPECT_EQ(parseIntList("128,", 1, &error), (std::vector<int64_t>{128}));
    EXPECT_FALSE(parseIntList("1, x", 0, &error));
    EXPECT_EQ(error, "'x' is not a whole number");
    EXPECT_FALSE(parseIntList("16, 0", 1, &error));
    EXPECT_EQ(error, "0 is below 1");
    EXPECT_FALSE(parseIntList(" , ", 0, &error));
    EXPECT_EQ(error, "the list is empty");
}

TEST(SummaryModel, MatrixRowsKeepTheNewestRunOfEachConfigurationInOrder) {
    RunStore store;
    store.addLoaded({finished(cfg("small", 128), RunStatus::Ok, {5, 6}, "old"),
                     finished(cfg("tiny", 256), RunStatus::Ok, {1, 2}),
                     finished(cfg("tiny", 128), RunStatus::Oom, {}),
                     finished(cfg("small", 128), RunStatus::Ok, {7, 8}, "new"),
                     finished(cfg("tiny", 128, Precision::Bf16), RunStatus::Skipped, {})});
    const auto rows = matrixRows(store);
    ASSERT_EQ(rows.size(), 4u);
    // fp32 first; within it the smaller model, then the context.
    EXPECT_EQ(rows[0], 2); // tiny 128 (oom: still a row, marked)
    EXPECT_EQ(rows[1], 1); // tiny 256
    EXPECT_EQ(rows[2], 3); // small 128: the newer of its two runs
    EXPECT_EQ(rows[3], 4); // bf16
}

TEST(SummaryModel, HeatmapGridOverModelsAndContextsMarksFailedCells) {
    RunStore store;
    store.addLoaded({finished(cfg("tiny", 128), RunStatus::Ok, {10, 12}),
                     finished(cfg("tiny", 256), RunStatus::Ok, {20, 22}),
                     finished(cfg("small", 256), RunStatus::Oom, {}),
                     finished(cfg("small", 128), RunStatus::Ok, {40, 44}),
                     finished(cfg("tiny", 128, Precision::Bf16), RunStatus::Ok, {1, 1})});
    const HeatmapGrid g = heatmapGrid(store, Metric::StepMs, Precision::Fp32, Mode::Train);
    EXPECT_EQ(g.models, (std::vector<std::string>{"tiny", "small"}));
    EXPECT_EQ(g.contexts, (std::vector<int64_t>{128, 256}));
    EXPECT_DOUBLE_EQ(g.at(0, 0), 11.0);
    EXPECT_DOUBLE_EQ(g.at(0, 1), 21.0);
    EXPECT_DOUBLE_EQ(g.at(1, 0), 42.0);
    EXPECT_TRUE(std::isnan(g.at(1, 1)));
    EXPECT_EQ(g.marks[3], "oom");
    EXPECT_EQ(g.marks[0], "");
    // Phases the mode lacks have no value.
    auto fwd = finished(cfg("tiny", 128, Precision::Fp32, Mode::Forward), RunStatus::Ok, {3, 3});
    EXPECT_FALSE(metricValue(fwd, Metric::BackwardMs));
    EXPECT_DOUBLE_EQ(*metricValue(fwd, Metric::StepMs), 3.0);
}

TEST(SummaryModel, PrecisionSpeedupIsFp32OverOtherWithWelchVerdict) {
    RunStore store;
    // fp32 ≈ 20 ms, bf16 ≈ 10 ms: a 2x speedup far beyond the noise.
    store.addLoaded({finished(cfg("tiny", 128), RunStatus::Ok, {19, 20, 21, 20}),
                     finished(cfg("tiny", 128, Precision::Bf16), RunStatus::Ok, {9, 10, 11, 10}),
                     // fp16 indistinguishable from fp32.
                     finished(cfg("tiny", 128, Precision::Fp16), RunStatus::Ok, {21, 19, 20, 20}),
                     // A bf16 run of a context without an fp32 partner is left out.
                     finished(cfg("tiny", 512, Precision::Bf16), RunStatus::Ok, {5, 6})});
    const auto cells = precisionComparison(store);
    ASSERT_EQ(cells.size(), 2u);
    const PrecisionCell* bf16 = nullptr;
    const PrecisionCell* fp16 = nullptr;
    for (const auto& c : cells) {
        (c.other.config.precision == Precision::Bf16 ? bf16 : fp16) = &c;
    }
    ASSERT_TRUE(bf16 && fp16);
    EXPECT_DOUBLE_EQ(bf16->speedup, 2.0);
    EXPECT_LT(bf16->low, 2.0);
    EXPECT_GT(bf16->high, 2.0);
    EXPECT_EQ(bf16->verdict, engine::Verdict::Faster);
    EXPECT_LT(bf16->welch.p, 0.001);
    EXPECT_EQ(bf16->fp32.config.precision, Precision::Fp32);
    EXPECT_DOUBLE_EQ(fp16->speedup, 1.0);
    EXPECT_EQ(fp16->verdict, engine::Verdict::Same);
}

TEST(SummaryModel, WarmupGroupsCollectRunsDifferingOnlyInWarmupCount) {
    RunStore store;
    store.addLoaded(
        {finished(cfg("tiny", 64, Precision::Fp32, Mode::Train, 5), RunStatus::Ok, {1, 2}),
         finished(cfg("tiny", 64, Precision::Fp32, Mode::Train, 0), RunStatus::Ok, {1, 9}),
         finished(cfg("tiny", 64, Precision::Bf16, Mode::Train, 0), RunStatus::Ok, {1, 1}),
         finished(cfg("tiny", 64, Precision::Fp32, Mode::Train, 2), RunStatus::Ok, {1, 3})});
    const auto groups = warmupGroups(store);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].label, "tiny-ctx64-fp32-train");
    EXPECT_EQ(groups[0].runs, (std::vector<int>{1, 3, 0})); // warmup 0, 2, 5
    EXPECT_EQ(groups[1].runs, (std::vector<int>{2}));
}

TEST(Autosave, PreviousSessionIsMovedAsideAndOfferedOnce) {
    const auto dir = std::filesystem::temp_directory_path() / "lmprof_autosave_test";
    std::filesystem::remove_all(dir);
    {
        Autosave first(dir);
        EXPECT_FALSE(first.takePrevious()); // nothing saved yet
        EXPECT_EQ(first.append(finished(cfg("tiny", 16), RunStatus::Ok, {1, 2}, "a-1")), "");
        EXPECT_EQ(first.append(finished(cfg("tiny", 32), RunStatus::Oom, {}, "b-2")), "");
    }
    // A crash mid-write leaves a cut last line: the runs before it still come back.
    std::ofstream(dir / "autosave.jsonl", std::ios::app) << "{\"id\": \"cut";
    Autosave second(dir);
    const auto previous = second.takePrevious();
    ASSERT_TRUE(previous);
    ASSERT_EQ(previous->runs.size(), 2u);
    EXPECT_EQ(previous->runs[0].id, "a-1");
    EXPECT_EQ(previous->runs[1].status, RunStatus::Oom);
    EXPECT_EQ(previous->warnings.size(), 1u);
    EXPECT_FALSE(previous->savedAt.empty());
    // This session starts a fresh file; the old one waits beside it until the next launch.
    EXPECT_FALSE(std::filesystem::exists(second.path()));
    EXPECT_TRUE(std::filesystem::exists(second.previousPath()));
    EXPECT_EQ(second.append(previous->runs[0]), "");
    EXPECT_EQ(engine::loadRunsJsonl(second.path()).runs.size(), 1u);
    std::filesystem::remove_all(dir);
}
