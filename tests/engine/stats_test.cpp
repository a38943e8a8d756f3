// Statistics against values computed by hand (and checked with NumPy's defaults).

#include "lmprof/engine/records.h"
#include "lmprof/engine/stats.h"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <vector>

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

TEST(Stats, RunningStatsAgreeWithTheSummaryAtEveryStep) {
    // The window's live band (RunningStats) and the summary (computeStats) must show the
    // same mean and std for the same steps, one at a time.
    const std::vector<double> v = {12.5, 11.0, 30.25, 10.0, 10.5, 1e-3, 9.75};
    RunningStats running;
    EXPECT_EQ(running.std(), 0.0);
    for (size_t n = 1; n <= v.size(); ++n) {
        running.add(v[n - 1]);
        const PhaseStats s = computeStats(std::span(v).first(n));
        EXPECT_EQ(running.n(), static_cast<int>(n));
        EXPECT_NEAR(running.mean(), s.mean, 1e-12 * s.mean);
        EXPECT_NEAR(running.std(), s.std, 1e-9 * (s.std + 1.0));
    }
    RunConfig c;
    c.batchSize = 4;
    c.contextLength = 128;
    EXPECT_DOUBLE_EQ(tokensPerSecond(c, 256.0), 2000.0);
    EXPECT_EQ(tokensPerSecond(c, 0.0), 0.0);
}

TEST(Stats, StudentTMatchesTableValues) {
    // Two-sided 95% critical values from the t table: df 10 -> 2.228, df 9 -> 2.262.
    EXPECT_NEAR(studentTCdf(2.228, 10), 0.975, 1e-4);
    EXPECT_NEAR(studentTQuantile(0.975, 10), 2.228, 1e-3);
    EXPECT_NEAR(studentTQuantile(0.975, 9), 2.262, 1e-3);
    EXPECT_NEAR(studentTCdf(0.0, 7), 0.5, 1e-12);
    EXPECT_NEAR(studentTCdf(-1.5, 4) + studentTCdf(1.5, 4), 1.0, 1e-12);
    // df 1 is the Cauchy distribution: CDF(1) = 3/4.
    EXPECT_NEAR(studentTCdf(1.0, 1), 0.75, 1e-10);
}

TEST(Stats, WelchTestOnTheTextbookExample) {
    // Welch's example (as in the Wikipedia article): t = -2.46, df = 24.99, p = 0.021,
    // here as mean(b) - mean(a) with a = A2 and b = A1.
    const std::vector<double> a1 = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
                                    21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
    const std::vector<double> a2 = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
                                    24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
    const WelchTest w = welchTest(a2, a1);
    EXPECT_NEAR(w.t, -2.46, 0.01);
    EXPECT_NEAR(w.df, 24.99, 0.01);
    EXPECT_NEAR(w.p, 0.021, 0.001);

    // Ratio of means: hand-computed from the same samples.
    const RatioInterval r = meanRatio(a2, a1);
    EXPECT_NEAR(r.ratio, 20.82 / 22.9866667, 1e-4);
    EXPECT_LT(r.high, 1.0); // significantly below 1, as the p-value says
    EXPECT_GT(r.low, 0.8);

    const std::vector<double> same = {5.0, 5.0, 5.0};
    EXPECT_EQ(welchTest(same, same).p, 1.0);
}

// The verdict and the interval come from one test: for any samples, p < 0.05 exactly when
// the 95% interval of the ratio excludes 1 (the Precision window once showed "0.34x [0.19,
// 1.61]" next to "slower"). The interval is positive and brackets the ratio.
TEST(Stats, RatioIntervalAndItsPAgreeOnEverySample) {
    uint64_t state = 12345;
    auto uniform = [&] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
    };
    int significant = 0, tested = 0;
    for (int trial = 0; trial < 2000; ++trial) {
        const size_t na = 2 + trial % 6, nb = 2 + (trial / 6) % 6;
        const double scale = 0.5 + 2.0 * uniform();
        std::vector<double> a, b;
        for (size_t i = 0; i < na; ++i) {
            a.push_back(100.0 * (1.0 + 0.6 * uniform()));
        }
        for (size_t i = 0; i < nb; ++i) {
            b.push_back(100.0 * scale * (1.0 + 0.6 * uniform()));
        }
        const RatioInterval r = meanRatio(a, b);
        ASSERT_GT(r.low, 0.0);
        ASSERT_LE(r.low, r.ratio);
        ASSERT_GE(r.high, r.ratio);
        const bool excludesOne = r.low > 1.0 || r.high < 1.0;
        if (std::abs(r.test.p - 0.05) > 1e-9) { // exactly at the edge either reading is fair
            ASSERT_EQ(r.test.p < 0.05, excludesOne)
                << "p " << r.test.p << " interval [" << r.low << ", " << r.high << "]";
        }
        significant += excludesOne;
        ++tested;
    }
    // Both outcomes happen, so the agreement above is not vacuous.
    EXPECT_GT(significant, 100);
    EXPECT_LT(significant, tested - 100);
}

// The busy share: kernel time over step time of the measured, unperturbed steps only; NVML's
// mean over the telemetry read while those steps ran; host-bound below kHostBoundBelow,
// judged by CUPTI's share before NVML's.
TEST(Stats, BusyShareCountsMeasuredStepsAndNvmlSamplesWithinThem) {
    RunConfig config;
    std::vector<StepRecord> steps(4);
    double end = 0.0;
    for (int i = 0; i < 4; ++i) {
        steps[i].index = i;
        steps[i].warmup = i == 0;
        steps[i].totalMs = 10.0;
        end += 10.0;
        steps[i].endMs = end;
        steps[i].kernelMs = i == 0 ? 10.0 : 5.0; // the warmup step's share does not count
    }
    steps[3].opProfiled = true; // perturbed: left out
    steps[3].kernelMs = 0.0;
    RunSummary s = summarize(config, steps, std::nullopt);
    ASSERT_TRUE(s.gpuBusy);
    EXPECT_DOUBLE_EQ(*s.gpuBusy, 0.5);
    EXPECT_EQ(hostBound(s), std::optional(true));
    s.gpuBusy = kHostBoundBelow;
    EXPECT_EQ(hostBound(s), std::optional(false));

    RunResult run;
    run.steps = steps;
    // At 5 ms (warmup), 15 and 25 ms (measured), 35 ms (the profiled step) and one without GPU.
    for (double t : {5.0, 15.0, 25.0, 35.0}) {
        TelemetrySample sample;
        sample.tMs = t;
        sample.gpuUtilPercent = t == 15.0 ? 60.0 : (t == 25.0 ? 100.0 : 0.0);
        run.telemetry.push_back(sample);
    }
    run.telemetry.push_back(TelemetrySample{});
    run.telemetry.back().tMs = 20.0;
    ASSERT_TRUE(nvmlBusyShare(run));
    EXPECT_NEAR(*nvmlBusyShare(run), 0.8, 1e-12);
    RunSummary nvmlOnly;
    nvmlOnly.gpuBusyNvml = 0.3;
    EXPECT_EQ(busyShare(nvmlOnly), std::optional(0.3));
    EXPECT_EQ(hostBound(nvmlOnly), std::optional(true));
    // The CPU: no kernel time, no share, no mark.
    for (auto& step : steps) {
        step.kernelMs.reset();
    }
    EXPECT_FALSE(summarize(config, steps, std::nullopt).gpuBusy);
    EXPECT_EQ(hostBound(RunSummary{}), std::nullopt);
}
