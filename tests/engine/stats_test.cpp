// Statistics against values computed by hand (and checked with NumPy's defaults).

#include "lmprof/engine/records.h"
#include "lmprof/engine/stats.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace lmprof::engine;

TEST(Stats, HandComputedValues) {
    // Sorted: 1 2 4 7 10. mean 4.8; deviations² 14.44 7.84 0.64 4.84 27.04 = 54.8;
    // sample var 13.7, std 3.70135...; median 4; p95 at rank 3.8: 7 + 0.8·3 = 9.4;
    // q25 at rank 1: 2, q75 at rank 3: 7, iqr 5.
    const std::vector<double> v = {10, 2, 7, 1, 4};
    const PhaseStats s = computeStats(v);
    EXPECT_EQ(s.n, 5);
    EXPECT_DOUBLE_EQ(s.mean, 4.8);
    EXPECT_NEAR(s.std, std::sqrt(13.7), 1e-12);
    EXPECT_DOUBLE_EQ(s.median, 4.0);
    EXPECT_DOUBLE_EQ(s.min, 1.0);
    EXPECT_DOUBLE_EQ(s.max, 10.0);
    EXPECT_NEAR(s.p95, 9.4, 1e-12);
    EXPECT_NEAR(s.cv, std::sqrt(13.7) / 4.8, 1e-12);
    EXPECT_DOUBLE_EQ(s.iqr, 5.0);
    EXPECT_TRUE(s.noisy); // 5 / 4 > 10%
}

TEST(Stats, EvenCountMedianAndQuietData) {
    const std::vector<double> v = {20.0, 20.2, 20.1, 19.9};
    const PhaseStats s = computeStats(v);
    EXPECT_NEAR(s.median, 20.05, 1e-12);
    EXPECT_NEAR(s.mean, 20.05, 1e-12);
    EXPECT_FALSE(s.noisy);
}

TEST(Stats, DegenerateInputs) {
    EXPECT_EQ(computeStats({}).n, 0);
    const std::vector<double> one = {3.0};
    const PhaseStats s = computeStats(one);
    EXPECT_EQ(s.n, 1);
    EXPECT_DOUBLE_EQ(s.std, 0.0);
    EXPECT_DOUBLE_EQ(s.p95, 3.0);
}

TEST(Stats, SummaryExcludesWarmupAndDerivesThroughput) {
    RunConfig c;
    c.batchSize = 4;
    c.contextLength = 128;
    std::vector<StepRecord> steps;
    for (int i = 0; i < 4; ++i) {
        StepRecord r;
        r.index = i;
        r.warmup = i == 0;
        r.forwardMs = i == 0 ? 1000.0 : 10.0;
        r.backwardMs = 20.0;
        r.optimizerMs = 5.0;
        r.totalMs = i == 0 ? 1100.0 : 40.0;
        r.phasePeakBytes = {100, 200 + i, 300};
        steps.push_back(r);
    }
    const RunSummary s = summarize(c, steps, 1e15);
    EXPECT_EQ(s.forwardMs.n, 3);
    EXPECT_DOUBLE_EQ(s.forwardMs.mean, 10.0); // the 1000 ms warmup step is not in it
    EXPECT_DOUBLE_EQ(s.totalMs.mean, 40.0);
    EXPECT_DOUBLE_EQ(s.tokensPerS, 512.0 / 0.040);
    EXPECT_NEAR(s.tflops, stepFlops(c) / 0.040 / 1e12, 1e-9);
    ASSERT_TRUE(s.mfu);
    EXPECT_NEAR(*s.mfu, stepFlops(c) / 0.040 / 1e15, 1e-12);
    EXPECT_EQ(s.peakBytes.backward, 203);
    EXPECT_FALSE(summarize(c, steps, std::nullopt).mfu);
}
