// Many runs drawn as one band (ui/src/runs_band.h): per step, the median and spread across the
// runs that reached it, and a cache that follows the runs as they grow.

#include "runs_band.h"
#include "views/plot_helpers.h"

#include <cmath>
#include <gtest/gtest.h>
#include <set>

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
    const auto band = [&](StepValues values) -> const RunsBand& {
        const GroupedBands& bands = cache.of(shown, values);
        EXPECT_EQ(bands.groups.size(), 1u); // one configuration
        return bands.groups.front().band;
    };
    EXPECT_EQ(band(&StepSeries::total).x.size(), 2u);
    runs[0].series.index.push_back(2);
    runs[0].series.total.push_back(40);
    const RunsBand& grown = band(&StepSeries::total);
    ASSERT_EQ(grown.x.size(), 3u);
    EXPECT_DOUBLE_EQ(grown.median[2], 40);
    shown.pop_back();
    EXPECT_DOUBLE_EQ(band(&StepSeries::total).median[0], 10);
    EXPECT_TRUE(band(&StepSeries::tokensPerS).x.empty());
}

// A sweep stays a comparison (issue 60): runs of one configuration are one band, runs that
// differ are apart, each in its own colour; past kBandGroups configurations the smallest are
// merged into one "other" group, which says how many it holds.
TEST(RunsBand, RunsAreBandedByConfigurationAndTheSmallestMergedPastEight) {
    std::vector<RunView> runs;
    for (int repeat = 0; repeat < 4; ++repeat) {
        for (const int64_t ctx : {16, 32}) {
            for (const int warmup : {0, 2}) {
                RunView v = runOf("r" + std::to_string(runs.size()), {10.0 + repeat, 20});
                v.result.config.contextLength = ctx;
                v.result.config.warmupSteps = warmup;
                runs.push_back(std::move(v));
            }
        }
    }
    std::vector<const RunView*> all;
    for (const RunView& v : runs) {
        all.push_back(&v);
    }
    const GroupedBands four = groupedBands(all, &StepSeries::total);
    EXPECT_EQ(four.runs, 16u);
    EXPECT_EQ(four.configurations, 4u);
    ASSERT_EQ(four.groups.size(), 4u);
    std::set<int> colours;
    for (const BandGroup& g : four.groups) {
        EXPECT_EQ(g.runs, 4u);
        EXPECT_FALSE(g.merged);
        EXPECT_DOUBLE_EQ(g.band.median[0], 11.5); // repeats 10, 11, 12, 13
        colours.insert(g.color);
    }
    EXPECT_EQ(colours.size(), 4u);
    EXPECT_EQ(four.groups[0].name, "ctx 16 · w0");
    EXPECT_EQ(four.groups[3].name, "ctx 32 · w2");

    // Ten configurations: two of 4 runs and eight of one; the 7 largest stay.
    for (int i = 0; i < 8; ++i) {
        RunView v = runOf("single" + std::to_string(i), {50, 60});
        v.result.config.contextLength = 64 + i;
        runs.push_back(std::move(v));
    }
    std::vector<const RunView*> some{&runs[0], &runs[4], &runs[8], &runs[12],
                                     &runs[1], &runs[5], &runs[9], &runs[13]};
    for (size_t i = 16; i < runs.size(); ++i) {
        some.push_back(&runs[i]);
    }
    const GroupedBands ten = groupedBands(some, &StepSeries::total);
    EXPECT_EQ(ten.configurations, 10u);
    ASSERT_EQ(ten.groups.size(), kBandGroups);
    EXPECT_EQ(ten.groups[0].runs, 4u);
    EXPECT_EQ(ten.groups[1].runs, 4u);
    const BandGroup& other = ten.groups.back();
    EXPECT_TRUE(other.merged);
    EXPECT_EQ(other.configurations, 3u); // 10 - 7
    EXPECT_EQ(other.runs, 3u);
    EXPECT_EQ(other.name, "other 3 configurations");
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
