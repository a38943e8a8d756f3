// A/B comparison: matching by configuration, ratio and verdict against hand-made samples.

#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace lmprof::engine;

namespace {

RunResult run(const std::string& preset, int64_t ctx, Precision p, std::vector<double> totals,
              RunStatus status = RunStatus::Ok) {
    RunResult r;
    r.id = preset + "-" + std::to_string(ctx) + "-" + std::string(toString(p));
    r.config.model = *presetModel(preset);
    r.config.contextLength = ctx;
    r.config.precision = p;
    r.status = status;
    for (size_t i = 0; i < totals.size(); ++i) {
        StepRecord s;
        s.index = static_cast<int>(i) + 1;
        s.totalMs = totals[i];
        r.steps.push_back(s);
    }
    StepRecord warm; // a slow warmup step must not count
    warm.warmup = true;
    warm.totalMs = 1000.0;
    r.steps.insert(r.steps.begin(), warm);
    r.summary = summarize(r.config, r.steps, std::nullopt);
    return r;
}

} // namespace

TEST(Compare, MatchesByConfigurationAndJudgesBeyondNoise) {
    const std::vector<RunResult> a = {
        run("small", 128, Precision::Fp32, {100, 101, 99, 100, 100}),
        run("small", 256, Precision::Fp32, {200, 202, 198, 200, 200}),
        run("medium", 128, Precision::Fp32, {300, 330, 270, 300, 300}),
        run("xl", 128, Precision::Fp32, {}, RunStatus::Oom),
    };
    const std::vector<RunResult> b = {
        run("small", 256, Precision::Fp32, {180, 181, 179, 180, 180}),  // 10% faster
        run("small", 128, Precision::Fp32, {120, 121, 119, 120, 120}),  // 20% slower
        run("medium", 128, Precision::Fp32, {303, 333, 273, 303, 303}), // +1%, noisy
        run("small", 128, Precision::Bf16, {60, 61, 59, 60, 60}),       // only in B
    };
    const Comparison c = compareRuns(a, b);
    ASSERT_EQ(c.matched.size(), 3u);
    EXPECT_EQ(c.onlyA.size(), 1u); // the OOM run has nothing to compare
    ASSERT_EQ(c.onlyB.size(), 1u);
    EXPECT_EQ(c.onlyB[0].config.precision, Precision::Bf16);

    const ComparedRun& slower = c.matched[0];
    EXPECT_EQ(slower.a.config.contextLength, 128);
    EXPECT_DOUBLE_EQ(slower.stepRatio.ratio, 1.2); // warmup 1000 ms excluded
    EXPECT_EQ(slower.verdict, Verdict::Slower);
    EXPECT_LT(slower.welch.p, 1e-6);
    EXPECT_LT(slower.stepRatio.low, 1.2);
    EXPECT_GT(slower.stepRatio.high, 1.2);
    EXPECT_EQ(c.matched[1].verdict, Verdict::Faster);
    EXPECT_DOUBLE_EQ(c.matched[1].stepRatio.ratio, 0.9);
    // +1% against a std of about 21 ms over 5 steps is not a difference.
    EXPECT_EQ(c.matched[2].verdict, Verdict::Same);
    EXPECT_GT(c.matched[2].welch.p, 0.5);
    EXPECT_LT(c.matched[2].stepRatio.low, 1.0);
    EXPECT_EQ(c.regressions(), 1);

    std::ostringstream out;
    writeComparison(out, c, ReportFormat::Table);
    EXPECT_NE(out.str().find("| 1.200x "), std::string::npos) << out.str();
    EXPECT_NE(out.str().find("SLOWER"), std::string::npos);
    EXPECT_NE(out.str().find("only in B: small-128-bf16"), std::string::npos);
    EXPECT_NE(out.str().find("3 matched, 1 slower beyond noise"), std::string::npos);
}

TEST(Compare, SingleStepRunsCannotBeJudged) {
    const std::vector<RunResult> a = {run("tiny", 64, Precision::Fp32, {10})};
    const std::vector<RunResult> b = {run("tiny", 64, Precision::Fp32, {20})};
    const Comparison c = compareRuns(a, b);
    ASSERT_EQ(c.matched.size(), 1u);
    EXPECT_EQ(c.matched[0].verdict, Verdict::Untestable);
    EXPECT_DOUBLE_EQ(c.matched[0].stepRatio.ratio, 2.0);
    EXPECT_EQ(c.regressions(), 0);
}

TEST(Compare, RowsShowWhatTellsPairsApartAndWhereAPickedPairDiffers) {
    // Matched pairs with other batches and warmups must not read alike: the rows carry
    // batch, warmup and each execution variant a run sets.
    RunResult a1 = run("tiny", 128, Precision::Fp32, {10, 11, 10});
    RunResult a2 = run("tiny", 128, Precision::Fp32, {20, 21, 20});
    a2.config.batchSize = 8;
    a2.config.warmupSteps = 3;
    RunResult b1 = a1, b2 = a2;
    b2.config.attention = AttentionKind::Sdpa;
    Comparison c;
    c.matched = {compareTwo(a1, b1), compareTwo(a2, b2)};
    const Rows rows = comparisonRows(c);
    const auto column = [&](const std::string& header) {
        const auto it = std::find(rows[0].begin(), rows[0].end(), header);
        EXPECT_NE(it, rows[0].end()) << header;
        return static_cast<size_t>(it - rows[0].begin());
    };
    EXPECT_EQ(rows[1][column("Batch")], std::to_string(a1.config.batchSize));
    EXPECT_EQ(rows[2][column("Batch")], "8");
    EXPECT_EQ(rows[2][column("Warmup")], "3");
    EXPECT_EQ(rows[1][column("Attention")], "naive");
    EXPECT_EQ(rows[2][column("Attention")], "naive vs sdpa"); // a pair the user picked
    EXPECT_EQ(rows[0].size() - column("A step ms"), kComparisonFigures);
    EXPECT_EQ(comparisonFiguresAt(c), column("A step ms"));
    // Without a run that sets a variant, its column is left out.
    c.matched.pop_back();
    const Rows plain = comparisonRows(c);
    EXPECT_EQ(std::find(plain[0].begin(), plain[0].end(), "Attention"), plain[0].end());
}

// Seeds and thread counts make configurations (ValueField::inComparisonKey): each run pairs
// with the one of its seed and threads, whatever the order, and a run with no such partner
// stays unpaired.
TEST(Compare, RunsPairByTheirSeedAndThreads) {
    const auto with = [](int threads, uint64_t seed, std::vector<double> totals) {
        RunResult r = run("tiny", 64, Precision::Fp32, std::move(totals));
        r.config.threads = threads;
        r.config.seed = seed;
        r.id += "-t" + std::to_string(threads) + "-s" + std::to_string(seed);
        return r;
    };
    const std::vector<RunResult> a = {with(1, 0, {40, 41, 40}), with(4, 0, {10, 11, 10}),
                                      with(1, 7, {42, 41, 42})};
    const std::vector<RunResult> b = {with(4, 0, {12, 13, 12}), with(1, 0, {44, 45, 44}),
                                      with(2, 7, {20, 21, 20})};
    const Comparison c = compareRuns(a, b);
    ASSERT_EQ(c.matched.size(), 2u);
    for (const ComparedRun& m : c.matched) {
        EXPECT_EQ(m.a.config.threads, m.b.config.threads) << m.a.id << " vs " << m.b.id;
        EXPECT_EQ(m.a.config.seed, m.b.config.seed) << m.a.id << " vs " << m.b.id;
    }
    ASSERT_EQ(c.onlyA.size(), 1u);
    EXPECT_EQ(c.onlyA[0].config.seed, 7u);
    ASSERT_EQ(c.onlyB.size(), 1u);
    EXPECT_EQ(c.onlyB[0].config.threads, 2);
}

// A watched run against the engine's at its size (docs/WATCH.md, "Against the reference"):
// the engine's configuration from the run's dimensions, and the pair phase by phase.
TEST(Compare, AWatchedRunGetsTheReferenceAtItsSizeAndIsComparedPhaseByPhase) {
    RunResult watched = run("tiny", 128, Precision::Bf16, {10, 10.5, 9.5, 10, 10.2});
    watched.source = RunSource{};
    watched.config.device = "cpu";
    std::string why;
    EXPECT_FALSE(referenceConfig(watched, 12, why));
    EXPECT_NE(why.find("dimensions"), std::string::npos) << why;
    watched.source->modelNote = "the model's num_heads could not be found";
    EXPECT_FALSE(referenceConfig(watched, 12, why));
    EXPECT_NE(why.find("num_heads could not be found"), std::string::npos) << why;

    WatchedModel m;
    m.model = *presetModel("tiny");
    m.model.preset = "custom";
    m.contextLength = 64;
    m.batchSize = 2;
    watched.source->model = m;
    const auto config = referenceConfig(watched, 12, why);
    ASSERT_TRUE(config);
    EXPECT_EQ(config->model.preset, "tiny"); // a preset's sizes are named by it
    EXPECT_EQ(config->contextLength, 64);
    EXPECT_EQ(config->batchSize, 2);
    EXPECT_EQ(config->precision, Precision::Bf16);
    EXPECT_EQ(config->measureSteps, 12);
    watched.source->model->model.numHeads = 3; // 128 is no multiple of 3
    EXPECT_FALSE(referenceConfig(watched, 12, why));
    EXPECT_NE(why.find("num_heads"), std::string::npos) << why;

    // Forward alone differs: the phases say which.
    RunResult a = run("tiny", 64, Precision::Bf16, {10, 10, 10, 10, 10});
    RunResult b = a;
    for (size_t i = 0; i < a.steps.size(); ++i) {
        a.steps[i].forwardMs = 4.0 + 0.1 * double(i % 2);
        b.steps[i].forwardMs = 8.0 + 0.1 * double(i % 2);
        a.steps[i].backwardMs = b.steps[i].backwardMs = 5.0 + 0.1 * double(i % 3);
    }
    const auto phases = comparePhases(a, b);
    ASSERT_EQ(phases.size(), 4u);
    EXPECT_EQ(phases[0].phase, "forward");
    EXPECT_EQ(phases[0].verdict, Verdict::Slower);
    EXPECT_NEAR(phases[0].ratio.ratio, 2.0, 0.05);
    EXPECT_EQ(phases[1].verdict, Verdict::Same);
    EXPECT_EQ(phaseComparisonRows(phases)[1][6], "SLOWER");
}
