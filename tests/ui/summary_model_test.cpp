// The summary views' data without a window: matrix rows, the heatmap grid, the precision
// comparison and the warmup groups.

#include "summary_model.h"
#include "synthetic_runs.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace lmprof;
using namespace lmprof::ui;
using namespace lmprof::ui::testing;
using engine::SessionEvent;

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

namespace {

// A finished run whose steps recorded these losses (step i, loss[i]).
engine::RunResult withLosses(engine::RunConfig c, const std::vector<double>& losses,
                             const std::string& id, const std::string& device = "cpu") {
    c.warmupSteps = 0;
    c.measureSteps = static_cast<int>(losses.size());
    engine::RunResult r = finished(c, RunStatus::Ok, std::vector<double>(losses.size(), 10.0), id);
    r.resolvedDevice = device;
    for (size_t i = 0; i < losses.size(); ++i) {
        r.steps[i].loss = losses[i];
    }
    return r;
}

} // namespace

TEST(SummaryModel, LossGroupsJoinRunsThatDifferOnlyInPrecision) {
    RunStore store;
    store.addLoaded({withLosses(cfg("tiny", 64, Precision::Fp16), {9.2, 8.9, 8.7}, "h"),
                     withLosses(cfg("tiny", 64, Precision::Fp32), {9.2, 8.95, 8.6}, "f"),
                     withLosses(cfg("tiny", 32, Precision::Bf16), {9.1}, "other ctx"),
                     withLosses(cfg("tiny", 64, Precision::Bf16), {9.2, 8.9}, "b", "cuda:0"),
                     finished(cfg("tiny", 64, Precision::Bf16), RunStatus::Ok, {1, 2}, "no loss")});
    const auto groups = lossGroups(store);
    ASSERT_EQ(groups.size(), 3u); // the cuda run's weights differ: a group of its own
    EXPECT_EQ(groups[0].runs, (std::vector<int>{1, 0})); // fp32 first
    EXPECT_EQ(groups[0].label, "tiny ctx 64 batch 2 train, cpu: fp32 fp16");
    EXPECT_EQ(groups[1].runs, (std::vector<int>{2}));
    EXPECT_EQ(groups[2].runs, (std::vector<int>{3}));

    const auto& runs = store.runs();
    const auto d = engine::maxLossDifference(runs[1].result, runs[0].result);
    ASSERT_TRUE(d);
    EXPECT_NEAR(*d, 0.1, 1e-12); // step 2: 8.7 against 8.6
    EXPECT_FALSE(engine::maxLossDifference(runs[1].result, runs[4].result)); // no loss there
    engine::RunResult diverged = runs[0].result;
    diverged.steps[1].loss = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(std::isnan(*engine::maxLossDifference(runs[1].result, diverged)));
}

TEST(SummaryModel, TheLabTravelsWithTheStoreIntoResultSets) {
    RunStore store;
    engine::DtypeReport a;
    a.model = "toy";
    a.precision = Precision::Fp16;
    a.device = "cpu";
    a.rows.push_back({"fc1", "Linear", 1, "fp32", "fp32", "fp16", "fp32", "why"});
    store.addDtypeReport(a);
    a.rows.front().output = "bf16";
    store.addDtypeReport(a); // the same model, precision and device: replaced
    a.precision = Precision::Bf16;
    engine::PrecisionLab opened;
    opened.dtypes.push_back(a);
    opened.accumulation.emplace();
    opened.accumulation->device = "cpu";
    EXPECT_TRUE(store.mergeLab(opened));
    EXPECT_FALSE(store.mergeLab({}));
    ASSERT_EQ(store.lab().dtypes.size(), 2u);
    EXPECT_EQ(store.lab().dtypes[0].rows.front().output, "bf16");
    const engine::ResultSet set = store.toResultSet({});
    EXPECT_EQ(set.precisionLab.dtypes.size(), 2u);
    ASSERT_TRUE(set.precisionLab.accumulation);
    EXPECT_EQ(set.precisionLab.accumulation->device, "cpu");
}
