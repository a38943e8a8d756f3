// Many runs drawn as one band (ui/src/runs_band.h): per step, the median and spread across the
// runs that reached it, and a cache that follows the runs as they grow.

#include "runs_band.h"
#include "views/plot_helpers.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace lmprof::ui;

namespace {

RunView runOf(const std::string& id, const std::vector<double>& totals) {
    RunView v;
    v.result.id = id;
    for (size_t i = 0; i < totals.size(); ++i) {
        v.series.index.push_back(static_cast<double>(i));
        v.series.total.push_back(totals[i]);
    }
    return v;
}

} // namespace

TEST(RunsBand, EachStepSummarisesTheRunsThatReachedIt) {
    const double nan = std::nan("");
    std::vector<RunView> runs{runOf("a", {10, 20, 30}), runOf("b", {14, nan, 34}),
                              runOf("c", {12, 22}), runOf("d", {11, 21, 31}),
                              runOf("e", {13, 23, 33})};
    std::vector<const RunView*> of;
    for (const RunView& r : runs) {
        of.push_back(&r);
    }
    const RunsBand band = bandAcross(of, &StepSeries::total);
    EXPECT_EQ(band.runs, 5u);
    ASSERT_EQ(band.x, (std::vector<double>{0, 1, 2}));
    // Step 0: 10 11 12 13 14.
    EXPECT_DOUBLE_EQ(band.median[0], 12);
    EXPECT_DOUBLE_EQ(band.low[0], 10.4); // 10 + 0.4 * (11 - 10)
    EXPECT_DOUBLE_EQ(band.high[0], 13.6);
    EXPECT_DOUBLE_EQ(band.least[0], 10);
    EXPECT_DOUBLE_EQ(band.most[0], 14);
    // Step 1: b's NaN left out: 20 21 22 23.
    EXPECT_DOUBLE_EQ(band.median[1], 21.5);
    EXPECT_DOUBLE_EQ(band.least[1], 20);
    EXPECT_DOUBLE_EQ(band.most[1], 23);
    // Step 2: c never reached it: 30 31 33 34.
    EXPECT_DOUBLE_EQ(band.median[2], 32);
    EXPECT_DOUBLE_EQ(band.most[2], 34);
}

TEST(RunsBand, TheCacheFollowsNewStepsAndOtherRuns) {
    std::vector<RunView> runs{runOf("a", {10, 20}), runOf("b", {12, 22})};
    std::vector<RunView*> shown{&runs[0], &runs[1]};
    RunsBandCache cache;
    EXPECT_EQ(cache.of(shown, &StepSeries::total).x.size(), 2u);
    runs[0].series.index.push_back(2);
    runs[0].series.total.push_back(40);
    const RunsBand& grown = cache.of(shown, &StepSeries::total);
    ASSERT_EQ(grown.x.size(), 3u);
    EXPECT_DOUBLE_EQ(grown.median[2], 40);
    shown.pop_back();
    EXPECT_DOUBLE_EQ(cache.of(shown, &StepSeries::total).median[0], 10);
    EXPECT_TRUE(cache.of(shown, &StepSeries::tokensPerS).x.empty());
}

// The step axis reaches the steps a run plans while it runs, and the steps it holds once it
// has finished: a file claiming 10^8 measured steps with 14 gets an axis to step 13.
TEST(StepRange, AFinishedRunSpansTheStepsItHolds) {
    RunView claims = runOf("claims", std::vector<double>(14, 10.0));
    claims.result.config.warmupSteps = 0;
    claims.result.config.measureSteps = 100'000'000;
    claims.finished = true;
    EXPECT_EQ(plot::stepRange({&claims}).hi, 13.0);
    claims.finished = false; // still running: its plan shows how far it has to go
    EXPECT_EQ(plot::stepRange({&claims}).hi, 99'999'999.0);
    RunView past = runOf("past", std::vector<double>(30, 10.0)); // more steps than planned
    past.result.config.warmupSteps = 2;
    past.result.config.measureSteps = 10;
    EXPECT_EQ(plot::stepRange({&past}).hi, 29.0);
}
