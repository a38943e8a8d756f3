// The summary views' data without a window: matrix rows, the heatmap grid, the precision
// comparison and the warmup groups.

#include "lmprof/engine/columns.h"
#include "lmprof/engine/report.h"
#include "summary_model.h"
#include "synthetic_runs.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <stdexcept>

using namespace lmprof;
using namespace lmprof::ui;
using namespace lmprof::engine::testing;
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
    const HeatmapGrid g = heatmapGrid(store, engine::runColumn("total_ms_mean"), HeatmapQuery{});
    EXPECT_EQ(g.rows, (std::vector<std::string>{"tiny", "small"}));
    EXPECT_EQ(g.columns, (std::vector<std::string>{"128", "256"}));
    EXPECT_DOUBLE_EQ(g.at(0, 0), 11.0);
    EXPECT_DOUBLE_EQ(g.at(0, 1), 21.0);
    EXPECT_DOUBLE_EQ(g.at(1, 0), 42.0);
    EXPECT_TRUE(std::isnan(g.at(1, 1)));
    EXPECT_EQ(g.marks[3], "oom");
    EXPECT_EQ(g.marks[0], "");
    // Phases the mode lacks have no value.
    auto fwd = finished(cfg("tiny", 128, Precision::Fp32, Mode::Forward), RunStatus::Ok, {3, 3});
    EXPECT_FALSE(metricValue(fwd, engine::runColumn("backward_ms_mean")));
    EXPECT_DOUBLE_EQ(*metricValue(fwd, engine::runColumn("total_ms_mean")), 3.0);
}

// Batch × context scaling: batch on an axis, one model; a variant the runs differ in is
// offered as a filter, and filtering on it picks that variant's runs; metrics such as MFU
// and the busy share colour the grid where the runs have them.
TEST(SummaryModel, HeatmapPutsBatchOnAnAxisAndFiltersByVariant) {
    auto run = [](int64_t ctx, int64_t batch, bool sdpa, double ms) {
        engine::RunConfig c = cfg("tiny", ctx);
        c.batchSize = batch;
        c.attention = sdpa ? engine::AttentionKind::Sdpa : engine::AttentionKind::Naive;
        return finished(c, RunStatus::Ok, {ms, ms});
    };
    RunStore store;
    store.addLoaded({run(128, 1, false, 10), run(128, 8, false, 40), run(256, 1, false, 20),
                     run(256, 8, false, 80), run(128, 8, true, 30)});
    HeatmapQuery q;
    q.rows = HeatmapAxis::Batch;
    q.columns = HeatmapAxis::Context;
    q.settings["attention"] = "naive";
    const auto& step = engine::runColumn("total_ms_mean");
    HeatmapGrid g = heatmapGrid(store, step, q);
    EXPECT_EQ(g.rows, (std::vector<std::string>{"1", "8"}));
    EXPECT_EQ(g.columns, (std::vector<std::string>{"128", "256"}));
    EXPECT_DOUBLE_EQ(g.at(1, 0), 40.0);
    q.settings["attention"] = "sdpa";
    g = heatmapGrid(store, step, q);
    EXPECT_EQ(g.rows, (std::vector<std::string>{"8"}));
    EXPECT_DOUBLE_EQ(g.at(0, 0), 30.0);
    const auto filters = heatmapFilters(store, q); // batch and context are the axes
    ASSERT_EQ(filters.size(), 1u);
    EXPECT_EQ(filters[0].column->key, "attention");
    EXPECT_EQ(filters[0].values, (std::vector<std::string>{"naive", "sdpa"}));
    // The charts' metrics include MFU and the busy share, in percent where a run has them.
    const auto metrics = engine::chartMetrics();
    const auto named = [&](const std::string& name) {
        return std::find_if(metrics.begin(), metrics.end(),
                            [&](const auto* m) { return m->chartName == name; });
    };
    ASSERT_NE(named("GPU busy (%)"), metrics.end());
    ASSERT_NE(named("MFU (%)"), metrics.end());
    engine::RunResult gpu = run(128, 1, false, 10);
    gpu.summary.gpuBusy = 0.25;
    gpu.summary.mfu = 0.1;
    EXPECT_DOUBLE_EQ(*metricValue(gpu, **named("GPU busy (%)")), 25.0);
    EXPECT_DOUBLE_EQ(*metricValue(gpu, **named("MFU (%)")), 10.0);
    EXPECT_FALSE(metricValue(run(128, 1, false, 10), **named("GPU busy (%)")));
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

    // A thread count is a group of its own, named by it.
    engine::RunConfig threaded = cfg("tiny", 64, Precision::Fp32, Mode::Train, 1);
    threaded.threads = 2;
    store.addLoaded({finished(threaded, RunStatus::Ok, {1, 2})});
    const auto more = warmupGroups(store);
    ASSERT_EQ(more.size(), 3u);
    EXPECT_EQ(more[2].label, "tiny-ctx64-fp32-train threads 2");
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

// The numerics table's row: the loss gap to the fp32 run, fp16's skipped updates and the
// range of its loss scale; the fp32 run itself is the reference.
TEST(SummaryModel, NumericsRowsSayTheGapToFp32AndFp16sScaling) {
    const engine::RunResult fp32 = withLosses(cfg("tiny", 64, Precision::Fp32), {9.2, 8.6}, "f");
    engine::RunResult fp16 = withLosses(cfg("tiny", 64, Precision::Fp16), {9.2, 8.7}, "h");
    fp16.steps[0].skippedUpdate = true;
    fp16.steps[0].lossScale = 65536.0;
    fp16.steps[1].lossScale = 32768.0;
    EXPECT_EQ(
        numericsRow(fp16, &fp32),
        (std::vector<std::string>{"h", "fp16", "2", "8.70000", "0.10000", "1", "32768 .. 65536"}));
    EXPECT_EQ(numericsRow(fp32, &fp32),
              (std::vector<std::string>{"f", "fp32", "2", "8.60000", "(reference)", "-", "-"}));
    EXPECT_EQ(numericsRow(fp16, nullptr)[4], "-"); // no fp32 run to compare with
    fp16.steps[0].lossScale = std::numeric_limits<double>::infinity(); // not a scale to show
    EXPECT_EQ(numericsRow(fp16, &fp32)[6], "32768");
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

// A metric is one declaration: a column added to the registry (key, header, unit, kind, how
// a run gives it, a number and a chart name) reaches the CSV and `lmprof-cli columns` (the
// CSV layout), the grid and Markdown tables and the window's Runs table (the tables' layout),
// and the Heatmap's metric list and grid, with nothing else written for it. This test's
// process keeps the column; every other test runs in a process of its own under ctest.
TEST(MetricRegistry, AThrowawayMetricReachesEveryWriterTheMatrixAndTheHeatmap) {
    using R = const engine::RunResult&;
    using S = const engine::RunSummary&;
    engine::RunColumn c;
    c.key = "throwaway_ms_per_layer";
    c.header = "ms/layer";
    c.unit = "ms";
    c.kind = engine::ColumnKind::Real;
    c.value = [](R r, S s) {
        return engine::formatFixed(s.totalMs.mean / static_cast<double>(r.config.model.numLayers),
                                   3);
    };
    c.number = [](R r, S s) {
        return std::optional(s.totalMs.mean / static_cast<double>(r.config.model.numLayers));
    };
    c.chartName = "step ms per layer";
    engine::addRunColumn(c, true);
    EXPECT_THROW(engine::addRunColumn(c, true), std::invalid_argument); // a key is declared once

    const engine::RunResult run = finished(cfg("tiny", 128), RunStatus::Ok, {10, 14});
    const std::string perLayer =
        engine::formatFixed(12.0 / static_cast<double>(run.config.model.numLayers), 3);
    const std::vector<engine::RunResult> runs{run};
    std::ostringstream csv, table, markdown;
    engine::writeCsv(csv, runs);
    engine::writeTable(table, runs);
    engine::writeMarkdown(markdown, runs);
    const std::string header = csv.str().substr(0, csv.str().find('\r'));
    EXPECT_EQ(header.substr(header.rfind(',') + 1), "throwaway_ms_per_layer");
    EXPECT_NE(csv.str().find("," + perLayer + "\r\n"), std::string::npos) << csv.str();
    EXPECT_EQ(engine::csvLayout().back()->key, "throwaway_ms_per_layer");
    for (const std::string& text : {table.str(), markdown.str()}) {
        EXPECT_NE(text.find("ms/layer"), std::string::npos) << text;
        EXPECT_NE(text.find(perLayer), std::string::npos) << text;
    }
    EXPECT_EQ(engine::reportLayout().back()->key, "throwaway_ms_per_layer"); // the Runs table
    const MatrixColumns matrix = matrixColumns({}); // the Summary matrix, among its figures
    EXPECT_EQ(matrix.columns.back()->key, "throwaway_ms_per_layer");
    EXPECT_GT(matrix.columns.size() - 1, matrix.firstFigure);

    const auto metrics = engine::chartMetrics();
    ASSERT_EQ(metrics.back()->chartName, "step ms per layer");
    RunStore store;
    store.addLoaded(runs);
    const HeatmapGrid g = heatmapGrid(store, *metrics.back(), HeatmapQuery{});
    ASSERT_EQ(g.values.size(), 1u);
    EXPECT_DOUBLE_EQ(g.at(0, 0), 12.0 / static_cast<double>(run.config.model.numLayers));
}

TEST(SummaryModel, CompareCanPickAnyTwoRunsFromTheSessionAndBothFiles) {
    RunStore store;
    store.addLoaded({finished(cfg("tiny", 64), RunStatus::Ok, {5, 6, 5}, "engine-tiny"),
                     finished(cfg("small", 64), RunStatus::Oom, {}, "too-big")});
    engine::RunResult watched = finished(cfg("tiny", 64), RunStatus::Ok, {7, 8}, "MyGPT");
    watched.source = engine::RunSource{};
    watched.source->kind = "watched";
    watched.source->modelClass = "MyGPT";
    watched.config.model = engine::ModelConfig{};
    watched.config.model.preset = "watched"; // as the result set's reader makes it
    const std::vector<engine::RunResult> fileA;
    const std::vector<engine::RunResult> fileB = {watched};
    const auto pool = pickableRuns(store.runs(), fileA, "", fileB, "/tmp/mine.json");
    ASSERT_EQ(pool.size(), 3u);
    EXPECT_EQ(pool[0].label.rfind("session \u00b7 engine-tiny \u00b7 tiny, 3 measured steps", 0),
              0u)
        << pool[0].label;
    EXPECT_NE(pool[1].label.find("too-big"), std::string::npos);
    EXPECT_NE(pool[1].label.find("0 measured steps (oom"), std::string::npos) << pool[1].label;
    EXPECT_EQ(pool[2].label.rfind("B mine.json \u00b7 MyGPT", 0), 0u) << pool[2].label;
    // Keys name the same runs next frame; a key whose file was replaced names none.
    EXPECT_EQ(pickedRun(pool, pool[2].key), &fileB[0]);
    EXPECT_EQ(pickedRun(pool, "B mine.json:0:OtherRun"), nullptr);
    // The picked pair compares whatever its configurations: the watched run against the
    // engine's, with its verdict and the settings that differ shown as "A vs B".
    const engine::ComparedRun m = engine::compareTwo(*pool[0].run, *pool[2].run);
    EXPECT_NE(m.verdict, engine::Verdict::Untestable);
    engine::Comparison c;
    c.matched = {m};
    const engine::Rows rows = engine::comparisonRows(c);
    EXPECT_NE(rows[1][0].find(" vs "), std::string::npos) << rows[1][0];
}

// One rule (engine::settingColumns) decides which settings a table shows: every table and
// copy of runs that differ in the batch, the warmup, a variant, data-parallel and the device
// shows each of them, and runs that differ in nothing beyond the identity show none.
TEST(TableColumns, EveryTableAndCopyKeepsTheSettingsThatTellRowsApart) {
    const auto run = [](int64_t batch, int warmup, bool sdpa, bool parallel, const char* device,
                        const std::string& id, Precision p = Precision::Fp32) {
        engine::RunConfig c = cfg("tiny", 64, p, Mode::Train, warmup);
        c.batchSize = batch;
        c.attention = sdpa ? engine::AttentionKind::Sdpa : engine::AttentionKind::Naive;
        if (parallel) {
            c.ddp = engine::DdpRequest{};
        }
        engine::RunResult r = finished(c, RunStatus::Ok, {10, 11, 30, 10}, id);
        r.resolvedDevice = device;
        return r;
    };
    std::vector<engine::RunResult> runs = {run(1, 1, false, false, "cpu", "a"),
                                           run(4, 1, false, false, "cpu", "b"),
                                           run(4, 5, false, false, "cpu", "c"),
                                           run(4, 5, true, false, "cpu", "d"),
                                           run(4, 5, true, true, "cpu", "e"),
                                           run(4, 5, true, true, "cuda", "f"),
                                           run(4, 5, true, true, "cuda", "g", Precision::Bf16)};
    runs.push_back(run(4, 5, true, true, "cuda", "h", Precision::Bf16));
    runs.back().config.threads = 2; // and the plain fields a sweep lists
    runs.back().config.seed = 3;
    const std::vector<std::string> telling = {"batch_size", "attention", "warmup_steps", "parallel",
                                              "device",     "threads",   "seed"};
    const auto keys = [](const auto& columns) {
        std::vector<std::string> out;
        for (const engine::RunColumn* c : columns) {
            out.push_back(c->key);
        }
        return out;
    };
    const auto has = [](const std::vector<std::string>& all, const std::string& key) {
        return std::find(all.begin(), all.end(), key) != all.end();
    };
    const auto settings = keys(engine::settingColumns(runs));
    for (const auto& key : telling) {
        EXPECT_TRUE(has(settings, key)) << key;
    }
    EXPECT_FALSE(has(settings, "measure_steps")) << "every run measured 4 steps";

    // The Runs table and the Summary matrix (and its Markdown copy) lay out reportLayout.
    RunStore store;
    store.addLoaded(runs);
    const auto layout = keys(engine::reportLayout(resultsOf(store.runs())));
    const auto matrix = keys(matrixColumns(resultsOf(store.runs())).columns);
    std::ostringstream markdown, grid, csv;
    engine::writeMarkdown(markdown, runs);
    engine::writeTable(grid, runs);
    engine::writeCsv(csv, runs);
    const std::string csvHeader = csv.str().substr(0, csv.str().find('\n'));
    for (const auto& key : telling) {
        const std::string& header = engine::runColumn(key).header;
        EXPECT_TRUE(has(layout, key)) << key;
        EXPECT_TRUE(has(matrix, key)) << key;
        EXPECT_NE(markdown.str().find("| " + header + " "), std::string::npos) << header;
        EXPECT_NE(grid.str().find(header), std::string::npos) << header;
        EXPECT_NE(csvHeader.find(key), std::string::npos) << key;
    }
    EXPECT_NE(markdown.str().find("| 2 × gloo, naive "), std::string::npos) << markdown.str();

    // Compare: each matched pair's settings; precision: fp32 against bf16 with the rest.
    const engine::Comparison cmp = engine::compareRuns(runs, runs);
    const engine::Rows compared = engine::comparisonRows(cmp);
    for (const auto& key : telling) {
        const std::string& header = engine::runColumn(key).header;
        EXPECT_NE(std::find(compared[0].begin(), compared[0].end(), header), compared[0].end())
            << header;
    }

    // Alike runs show the identity only.
    const std::vector<engine::RunResult> alike = {run(4, 5, false, false, "cpu", "x"),
                                                  run(4, 5, false, false, "cpu", "y")};
    EXPECT_EQ(
        keys(engine::settingColumns(alike)),
        (std::vector<std::string>{"model", "context_length", "batch_size", "precision", "mode"}));
    // One data-parallel run keeps its Parallel column: it is no ordinary run.
    const std::vector<engine::RunResult> one = {run(4, 5, false, true, "cpu", "z")};
    EXPECT_TRUE(has(keys(engine::settingColumns(one)), "parallel"));
}

// Seeds and thread counts make configurations (ValueField::inComparisonKey): the Summary keeps
// a row for each, where runs that differ in nothing keep their newest.
TEST(SummaryModel, ASeedOrAThreadCountIsARowOfItsOwn) {
    const auto run = [](int threads, uint64_t seed, const std::string& id) {
        engine::RunConfig c = cfg("tiny", 64, Precision::Fp32, Mode::Train, 1);
        c.threads = threads;
        c.seed = seed;
        return finished(c, RunStatus::Ok, {10, 11, 30, 10}, id);
    };
    RunStore store;
    store.addLoaded({run(1, 0, "a"), run(2, 0, "b"), run(1, 5, "c"), run(1, 5, "again")});
    std::vector<std::string> shown;
    for (int k : matrixRows(store)) {
        shown.push_back(store.runs()[k].result.id);
    }
    std::sort(shown.begin(), shown.end());
    EXPECT_EQ(shown, (std::vector<std::string>{"a", "again", "b"}));
}

// A Heatmap cell names the run it shows, and when runs share it, how many, in what they
// differ and that the newest shows; filtering on that setting gives each its own grid.
TEST(SummaryModel, HeatmapCellsSayWhichRunTheyShowAndWhoSharesThem) {
    RunStore store;
    store.addLoaded({finished(cfg("tiny", 64, Precision::Fp32, Mode::Train, 0), RunStatus::Ok,
                              {10, 30, 12, 50}, "cold"),
                     finished(cfg("tiny", 64, Precision::Fp32, Mode::Train, 5), RunStatus::Ok,
                              {10, 10, 10, 10}, "warm")});
    HeatmapQuery q;
    const auto& step = engine::runColumn("total_ms_mean");
    HeatmapGrid g = heatmapGrid(store, step, q);
    ASSERT_EQ(g.values.size(), 1u);
    EXPECT_EQ(g.shown[0], 1);
    EXPECT_EQ(g.sharing[0], 2);
    EXPECT_DOUBLE_EQ(g.at(0, 0), 10.0);
    EXPECT_EQ(g.about[0],
              "#2 warm \u00B7 Warmup 5\n2 runs share this cell (Warmup 0, 5), pick one with the "
              "filters above: the newest shows");
    EXPECT_FALSE(g.noisy[0]);
    const auto filters = heatmapFilters(store, q);
    ASSERT_EQ(filters.size(), 1u);
    EXPECT_EQ(filters[0].column->key, "warmup_steps");
    EXPECT_EQ(filters[0].values, (std::vector<std::string>{"0", "5"}));
    q.settings["warmup_steps"] = "0";
    g = heatmapGrid(store, step, q);
    EXPECT_EQ(g.shown[0], 0);
    EXPECT_EQ(g.sharing[0], 1);
    EXPECT_TRUE(g.noisy[0]) << "IQR / median of 10, 12, 30, 50 is far above 10%";
    EXPECT_EQ(g.about[0], "#1 cold \u00B7 Warmup 0");
}

// A watched run has no context or batch (docs/WATCH.md): beside the engine's runs its empty
// cells are a filter value after the numbers, not a crash (stoll("") aborted the window
// that opened such a set).
TEST(SummaryModel, HeatmapFiltersTakeAWatchedRunsEmptyCellsAfterTheNumbers) {
    auto run = [](int64_t ctx, int64_t batch) {
        engine::RunConfig c = cfg("tiny", ctx);
        c.batchSize = batch;
        return finished(c, RunStatus::Ok, {10.0, 10.0});
    };
    engine::RunResult watched = run(0, 0);
    watched.source = engine::RunSource{};
    watched.source->modelClass = "MyGPT";
    RunStore store;
    store.addLoaded({run(256, 4), watched, run(64, 8)});
    HeatmapQuery q;
    q.rows = HeatmapAxis::Model;
    q.columns = HeatmapAxis::Batch;
    std::vector<HeatmapFilter> filters;
    ASSERT_NO_THROW(filters = heatmapFilters(store, q));
    const auto context = std::find_if(filters.begin(), filters.end(), [](const auto& f) {
        return f.column->key == "context_length";
    });
    ASSERT_NE(context, filters.end());
    EXPECT_EQ(context->values, (std::vector<std::string>{"64", "256", ""}));
    // Legends name the engine's run by its context and batch; the watched run has none.
    const engine::RunResult engineRun = run(64, 8);
    const auto names = distinguishingNames({&watched, &engineRun});
    EXPECT_EQ(names[0].find("ctx"), std::string::npos) << names[0];
    EXPECT_NE(names[1].find("ctx 64"), std::string::npos) << names[1];
}

TEST(SummaryModel, ACellLabelFitsItsCellOrIsLeftToTheTooltip) {
    const auto chars = [](const std::string& t) { // a monospaced font: 7 pixels a character
        size_t n = 0;
        for (const unsigned char ch : t) {
            n += (ch & 0xC0) != 0x80 ? 1 : 0; // a UTF-8 character once ("×" is two bytes)
        }
        return 7.0f * static_cast<float>(n);
    };
    using Lines = std::vector<std::string>;
    EXPECT_EQ(ui::cellLabel(78.454, true, 2, 200, 1, chars), Lines{"78.45 ~ \u00D72"});
    EXPECT_EQ(ui::cellLabel(78.454, true, 2, 50, 2, chars), (Lines{"78.45", "~ \u00D72"}));
    EXPECT_EQ(ui::cellLabel(78.454, true, 2, 50, 1, chars), Lines{"78.45"});
    EXPECT_EQ(ui::cellLabel(78.454, false, 1, 30, 1, chars), Lines{"78.5"});
    EXPECT_EQ(ui::cellLabel(1234.5, false, 1, 30, 1, chars), Lines{"1234"});
    EXPECT_EQ(ui::cellLabel(123456.0, false, 1, 30, 1, chars), Lines{"123k"});
    EXPECT_EQ(ui::cellLabel(1234.5, false, 1, 20, 1, chars), Lines{});
    EXPECT_EQ(ui::cellLabel(78.454, false, 1, 200, 0, chars), Lines{}) << "no line's height";
}
