// The window's logic without a window: the run store fed synthetic engine events, chart
// decimation, the configure form's validation and estimates, and opening files (settings in
// settings_test.cpp, demo scripts in demo_script_test.cpp).

#include "lmprof/engine/compare.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/session.h"
#include "lmprof/ui/config_form.h"
#include "lmprof/ui/decimate.h"
#include "lmprof/ui/run_selection.h"
#include "lmprof/ui/run_store.h"
#include "views/files_view.h"
#include "views/plot_helpers.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>

using namespace lmprof;
using namespace lmprof::ui;
using engine::SessionEvent;

namespace {

engine::RunConfig config(int warmup, int steps) {
    engine::RunConfig c;
    c.batchSize = 2;
    c.contextLength = 50;
    c.warmupSteps = warmup;
    c.measureSteps = steps;
    return c;
}

std::vector<SessionEvent> syntheticRun(int index, const std::vector<double>& totals, int warmup) {
    std::vector<SessionEvent> events;
    engine::RunResult header;
    header.id = "synthetic-" + std::to_string(index);
    header.config = config(warmup, static_cast<int>(totals.size()) - warmup);
    events.emplace_back(engine::RunStarted{index, header});
    for (size_t i = 0; i < totals.size(); ++i) {
        engine::StepRecord s;
        s.index = static_cast<int>(i);
        s.warmup = static_cast<int>(i) < warmup;
        s.forwardMs = totals[i] / 4;
        s.backwardMs = totals[i] / 2;
        s.optimizerMs = totals[i] / 8;
        s.totalMs = totals[i];
        events.emplace_back(engine::StepFinished{index, s});
        events.emplace_back(engine::MemorySampled{
            index, engine::MemorySample{10.0 * i, 1 << 20, 2 << 20, 3 << 20, 0, 0,
                                        engine::Phase::Forward, static_cast<int>(i), false}});
    }
    return events;
}

} // namespace

TEST(RunStore, BuildsSeriesAndTheRunningBandFromEvents) {
    RunStore store;
    auto events = syntheticRun(0, {100.0, 10.0, 12.0, 14.0}, 1);
    store.apply(events);
    ASSERT_EQ(store.runs().size(), 1u);
    RunView& v = store.runs()[0];
    EXPECT_TRUE(v.started);
    EXPECT_FALSE(v.finished);
    EXPECT_EQ(store.active(), &v);
    EXPECT_EQ(v.series.total.size(), 4u);
    EXPECT_TRUE(std::isnan(v.series.runMean[0])); // warmup: a gap, not part of the band
    EXPECT_DOUBLE_EQ(v.series.runMean[1], 10.0);
    EXPECT_DOUBLE_EQ(v.series.runMean[3], 12.0);
    EXPECT_DOUBLE_EQ(v.series.runHigh[3] - v.series.runMean[3], 2.0); // std of 10,12,14
    EXPECT_DOUBLE_EQ(v.series.runLow[2], 11.0 - std::sqrt(2.0));
    // tokens/s = B*T / step seconds = 100 / 0.010
    EXPECT_DOUBLE_EQ(v.series.tokensPerS[1], 10000.0);
    EXPECT_EQ(v.liveSummary().totalMs.n, 3);
    EXPECT_DOUBLE_EQ(v.liveSummary().totalMs.mean, 12.0);
    EXPECT_DOUBLE_EQ(v.memory.allocatedMiB[0], 1.0);
    EXPECT_TRUE(store.isSelected(0)); // the newest run is selected when it starts
}

// An engine numbers its runs from 1 in each session: after a restore, its first run must not
// take a restored run's id, in the store or in the events the autosave and views read.
TEST(RunStore, RunIdsStayUniqueAcrossRestoresOpensAndNewRuns) {
    RunStore store;
    std::vector<engine::RunResult> restored(3);
    for (int i = 0; i < 3; ++i) {
        restored[i].id = "tiny-ctx128-fp32-train-" + std::to_string(i + 1);
        restored[i].config = config(0, i + 1); // distinct runs, not one file opened twice
    }
    ASSERT_EQ(store.addLoaded(restored), 3u);
    store.selectNewestOf(3);
    EXPECT_EQ(store.selection(), std::vector<int>{2}); // the newest alone, not all three

    auto events = syntheticRun(0, {10.0, 12.0}, 0);
    std::get<engine::RunStarted>(events.front()).header.id = "tiny-ctx128-fp32-train-1";
    engine::RunResult finished;
    finished.id = "tiny-ctx128-fp32-train-1";
    finished.config = config(0, 2);
    events.emplace_back(engine::RunFinished{0, finished});
    store.claimIds(events);
    EXPECT_EQ(std::get<engine::RunStarted>(events.front()).header.id, "tiny-ctx128-fp32-train-4");
    EXPECT_EQ(std::get<engine::RunFinished>(events.back()).result.id, "tiny-ctx128-fp32-train-4");
    store.apply(events);
    EXPECT_EQ(store.runs().back().result.id, "tiny-ctx128-fp32-train-4");

    // A later batch of the same run keeps the id it was given.
    std::vector<SessionEvent> again{engine::RunFinished{0, finished}};
    store.claimIds(again);
    EXPECT_EQ(std::get<engine::RunFinished>(again.front()).result.id, "tiny-ctx128-fp32-train-4");

    // A file opened afterwards whose run has a taken id gets the next free one; an id with no
    // number gains one.
    std::vector<engine::RunResult> opened(2);
    opened[0].id = "tiny-ctx128-fp32-train-2";
    opened[0].config = config(1, 9);
    opened[1].id = "MyGPT";
    opened[1].config = config(1, 9);
    store.addLoaded({opened[1]});
    ASSERT_EQ(store.addLoaded(opened), 1u); // MyGPT itself is already here
    EXPECT_EQ(store.runs().back().result.id, "tiny-ctx128-fp32-train-5");
    opened[1].config.measureSteps = 10;
    store.addLoaded({opened[1]});
    EXPECT_EQ(store.runs().back().result.id, "MyGPT-2");
    std::set<std::string> ids;
    for (const auto& v : store.runs()) {
        EXPECT_TRUE(ids.insert(v.result.id).second) << v.result.id;
    }
}

TEST(RunStore, AWatchedRunCarriesItsDataAndRestPhasesAndItsOwnTokensPerStep) {
    RunStore store;
    engine::RunResult header;
    header.id = "MyGPT";
    header.config = config(0, 2);
    header.config.batchSize = 0; // a watched run has no engine batch or context
    header.config.contextLength = 0;
    header.source = engine::RunSource{};
    header.source->modelClass = "MyGPT";
    header.source->tokensPerStep = 500;
    std::vector<SessionEvent> events{engine::RunStarted{0, header}};
    for (int i = 0; i < 2; ++i) {
        engine::StepRecord s;
        s.index = i;
        s.dataMs = 300.0;
        s.forwardMs = 5.0;
        s.restMs = 1.0;
        s.totalMs = 306.0 + i * 4.0;
        events.emplace_back(engine::StepFinished{0, s});
    }
    store.apply(events);
    const RunView& v = store.runs()[0];
    EXPECT_EQ(v.series.data, (std::vector<double>{300.0, 300.0}));
    EXPECT_EQ(v.series.rest, (std::vector<double>{1.0, 1.0}));
    EXPECT_DOUBLE_EQ(v.series.tokensPerS[1], 500.0 / 0.310);
    // The engine's runs keep no such series.
    RunStore engineStore;
    auto engineEvents = syntheticRun(0, {10.0, 12.0}, 0);
    engineStore.apply(engineEvents);
    EXPECT_TRUE(engineStore.runs()[0].series.data.empty());
}

// One rule decides which steps count (engine::isMeasured): a step recorded under a memory
// snapshot is left out of the summary, Compare's ratio and verdict, the histogram's values
// and the running band alike.
TEST(MeasuredSteps, SummaryCompareHistogramAndBandLeaveOutTheSameSteps) {
    RunStore store;
    auto events = syntheticRun(0, {100.0, 10.0, 50.0, 12.0, 14.0}, 1);
    for (auto& e : events) {
        if (auto* f = std::get_if<engine::StepFinished>(&e); f && f->step.index == 2) {
            f->step.memorySnapshot = true; // its timing is perturbed: 50 ms
        }
    }
    store.apply(events);
    ASSERT_EQ(store.runs().size(), 1u);
    const RunView& v = store.runs()[0];

    const std::vector<double> histogram = engine::measuredStepTimes(v.result.steps);
    EXPECT_EQ(histogram, (std::vector<double>{10.0, 12.0, 14.0}));

    const engine::RunSummary summary =
        engine::summarize(v.result.config, v.result.steps, std::nullopt);
    EXPECT_EQ(summary.totalMs.n, 3);
    EXPECT_DOUBLE_EQ(summary.totalMs.mean, 12.0);

    EXPECT_TRUE(std::isnan(v.series.runMean[2])) << "the snapshot step is a gap in the band";
    EXPECT_DOUBLE_EQ(v.series.runMean.back(), summary.totalMs.mean);
    EXPECT_DOUBLE_EQ(v.series.runHigh.back() - v.series.runMean.back(), summary.totalMs.std);

    // B differs from A only in its snapshot step: the same measured steps, ratio exactly 1.
    engine::RunResult a = v.result;
    engine::RunResult b = a;
    b.steps[2].totalMs = 5000.0;
    const engine::Comparison c = engine::compareRuns({&a, 1}, {&b, 1});
    ASSERT_EQ(c.matched.size(), 1u);
    EXPECT_DOUBLE_EQ(c.matched[0].stepRatio.ratio, 1.0);
    EXPECT_EQ(c.matched[0].verdict, engine::Verdict::Same);
}

TEST(RunStore, FinishedRunsRefusedRunsAndSelection) {
    RunStore store;
    auto first = syntheticRun(0, {5.0, 6.0}, 0);
    store.apply(first);
    engine::RunResult done = store.runs()[0].result; // what the engine sends at the end
    done.status = engine::RunStatus::Ok;
    done.summary = engine::summarize(done.config, done.steps, std::nullopt);
    SessionEvent fin = engine::RunFinished{0, done};
    store.apply(fin);
    EXPECT_TRUE(store.runs()[0].finished);
    EXPECT_EQ(store.active(), nullptr);
    EXPECT_EQ(store.runs()[0].series.total.size(), 2u);
    EXPECT_DOUBLE_EQ(store.runs()[0].liveSummary().totalMs.mean, 5.5);

    // A run refused before it started only sends RunFinished.
    engine::RunResult refused;
    refused.id = "bad";
    refused.status = engine::RunStatus::Error;
    refused.error = "context_length: must be between 1 and 131072, got 0";
    SessionEvent fin2 = engine::RunFinished{1, refused};
    store.apply(fin2);
    ASSERT_EQ(store.runs().size(), 2u);
    EXPECT_EQ(store.runs()[1].result.status, engine::RunStatus::Error);

    store.selectOnly(0);
    store.toggle(1);
    EXPECT_TRUE(store.isSelected(0) && store.isSelected(1));
    store.toggle(0);
    EXPECT_FALSE(store.isSelected(0));
    store.toggle(1); // the last selected run stays selected
    EXPECT_TRUE(store.isSelected(1));

    const auto set = store.toResultSet(engine::Environment{});
    EXPECT_EQ(set.runs.size(), 2u);
}

// Legends name compared runs by what differs between them, not by their ids.
TEST(RunStore, RunsAreNamedByWhatDiffersBetweenThem) {
    engine::RunResult a, b, c;
    a.id = "tiny-ctx16-fp32-train-1";
    b.id = "tiny-ctx16-fp32-train-2";
    c.id = "tiny-ctx16-fp32-train-3";
    a.config.warmupSteps = 0;
    b.config.warmupSteps = 2;
    c.config.warmupSteps = 5;
    EXPECT_EQ(distinguishingNames({&a, &b, &c}), (std::vector<std::string>{"w0", "w2", "w5"}));
    // Two fields differ: both are named, in the order of the configuration.
    b.config.precision = engine::Precision::Bf16;
    b.config.contextLength = 256;
    EXPECT_EQ(distinguishingNames({&a, &b}),
              (std::vector<std::string>{"ctx 128 \u00B7 fp32 \u00B7 w0",
                                        "ctx 256 \u00B7 bf16 \u00B7 w2"}));
    // Execution variants by their short names, as the issue's "sdpa flash / naive".
    engine::RunResult flash = a, graphs = a;
    flash.config.attention = engine::AttentionKind::SdpaFlash;
    graphs.config.cudaGraphs = true;
    EXPECT_EQ(distinguishingNames({&a, &flash, &graphs}),
              (std::vector<std::string>{"naive \u00B7 eager", "sdpa flash \u00B7 eager",
                                        "naive \u00B7 graphs"}));
    // A long name is cut at kMaxNameLength (the tooltip has the whole configuration).
    engine::RunResult custom = a;
    custom.config.model.preset = "custom";
    custom.config.model.dModel = 1536;
    custom.config.seed = 7;
    custom.config.threads = 3;
    const auto cut = distinguishingNames({&a, &custom});
    EXPECT_LE(cut[1].size(), kMaxNameLength + 3) << cut[1]; // "…" is three bytes
    EXPECT_GT(cut[1].size(), kMaxNameLength - 4) << cut[1];
    EXPECT_NE(static_cast<unsigned char>(cut[1][cut[1].size() - 4]), 0xC2) << "a cut character";
    EXPECT_EQ(cut[1].substr(cut[1].size() - 3), "\u2026");
    EXPECT_NE(describeRun(custom).find("seed 7"), std::string::npos);
    engine::RunResult resolved = custom;
    resolved.config.device = "auto";
    resolved.resolvedDevice = "cpu";
    EXPECT_NE(describeRun(resolved).find(" \u00B7 cpu \u00B7 "), std::string::npos)
        << describeRun(resolved); // the device that ran it, not "auto"
    EXPECT_EQ(describeRun(resolved).find("auto"), std::string::npos);
    // The same configuration twice: nothing differs, so the ids tell them apart.
    c.config = a.config;
    EXPECT_EQ(distinguishingNames({&a, &c}), (std::vector<std::string>{a.id, c.id}));
    // One run keeps its id; a run without one is "run".
    EXPECT_EQ(distinguishingNames({&a}), (std::vector<std::string>{a.id}));
    engine::RunResult unnamed;
    EXPECT_EQ(distinguishingNames({&unnamed}), (std::vector<std::string>{"run"}));
    // Names that still repeat (an op profile differs for a and d, d and e are the same)
    // get the id appended.
    engine::RunResult d = a, e = a;
    d.id = "d";
    e.id = "e";
    d.config.opProfile = engine::OpProfileRequest{};
    e.config.opProfile = engine::OpProfileRequest{};
    EXPECT_EQ(distinguishingNames({&a, &d, &e}),
              (std::vector<std::string>{"no op profile", "op profile (d)", "op profile (e)"}));
    // Data-parallel runs by their request: the strategy, a bucket size where it is one, and
    // one process against ranks.
    engine::RunResult naive = a, small = a, large = a;
    naive.config.ddp = engine::DdpRequest{};
    small.config.ddp = engine::DdpRequest{};
    small.config.ddp->strategy = engine::DdpStrategy::Bucketed;
    small.config.ddp->bucketMb = 0.5;
    large.config.ddp = small.config.ddp;
    large.config.ddp->bucketMb = 25;
    EXPECT_EQ(
        distinguishingNames({&naive, &small, &large}),
        (std::vector<std::string>{"naive", "bucketed 0.5 MiB buckets", "bucketed 25 MiB buckets"}));
    EXPECT_EQ(distinguishingNames({&a, &naive}),
              (std::vector<std::string>{"1 process", "2 ranks gloo naive"}));
}

// A run keeps one colour in every chart; selected runs never share one (up to the palette's
// size), and a run keeps its colour while it stays selected.
TEST(RunStore, SelectedRunsGetDistinctColoursThatStay) {
    RunStore store;
    std::vector<engine::RunResult> results(kRunColorCount + 2);
    for (size_t i = 0; i < results.size(); ++i) {
        results[i].id = "run-" + std::to_string(i);
        results[i].config.seed = i; // distinct, so none is left out as already open
    }
    // Two runs whose ids give one colour: the later selected gets another.
    const int twin = kRunColorCount + 1;
    for (int k = 0; colorOfId(results[twin].id, kRunColorCount) !=
                    colorOfId(results[kRunColorCount].id, kRunColorCount);
         ++k) {
        results[twin].id = "twin-" + std::to_string(k);
    }
    ASSERT_EQ(store.addLoaded(results), results.size());
    EXPECT_TRUE(store.runs()[0].fromFile);
    store.selectOnly(twin);
    store.toggle(kRunColorCount);
    store.refreshSelection();
    EXPECT_EQ(store.runs()[twin].color, colorOfId(results[twin].id, kRunColorCount));
    EXPECT_NE(store.runs()[twin].color, store.runs()[kRunColorCount].color);
    store.selectOnly(0);
    store.toggle(kRunColorCount);
    store.refreshSelection();
    EXPECT_NE(store.runs()[0].color, store.runs()[kRunColorCount].color);
    EXPECT_EQ(store.runs()[0].name, "seed 0");
    EXPECT_EQ(store.runs()[kRunColorCount].name, "seed " + std::to_string(kRunColorCount));
    const int kept = store.runs()[kRunColorCount].color;
    // Selecting all: every colour of the palette is used by the first eight selected runs.
    store.selectOnly(0);
    for (int i = 1; i < kRunColorCount; ++i) {
        store.toggle(i);
    }
    store.refreshSelection();
    std::set<int> colours;
    for (int i = 0; i < kRunColorCount; ++i) {
        colours.insert(store.runs()[i].color);
    }
    EXPECT_EQ(colours.size(), static_cast<size_t>(kRunColorCount));
    // Deselecting the others again leaves the reassigned run its colour (no flicker).
    store.selectOnly(kRunColorCount);
    store.refreshSelection();
    EXPECT_EQ(store.runs()[kRunColorCount].color, kept);
}

// The axes' fit: a single value or an empty chart still gets a readable range.
TEST(PlotAxes, FittedRangesAreReadableForOnePointNoPointsAndPositiveData) {
    plot::Range one;
    one.add(1741.2);
    const plot::Range r = plot::fitted(one, 0.06);
    EXPECT_NEAR(r.lo, 1741.2 * 0.95, 1e-9);
    EXPECT_NEAR(r.hi, 1741.2 * 1.05, 1e-9);
    const plot::Range none = plot::fitted(plot::Range{}, 0.06);
    EXPECT_EQ(none.lo, 0.0);
    EXPECT_EQ(none.hi, 1.0);
    plot::Range zero;
    zero.add(0.0);
    EXPECT_EQ(plot::fitted(zero, 0.06).lo, 0.0); // a time axis at its start: 0 to 1
    EXPECT_EQ(plot::fitted(zero, 0.06).hi, 1.0);
    plot::Range negative;
    negative.add(-3.0);
    EXPECT_EQ(plot::fitted(negative, 0.06).lo, -3.5);
    plot::Range positive;
    positive.add(1.0);
    positive.add(101.0);
    positive.add(std::nan("")); // ignored, as are infinities
    positive.add(INFINITY);
    const plot::Range p = plot::fitted(positive, 0.06);
    EXPECT_EQ(p.lo, 0.0); // padding never takes positive data below zero
    EXPECT_DOUBLE_EQ(p.hi, 107.0);
    // The extent over an x window, from a first index on (the measured steps).
    const std::vector<double> xs = {0, 1, 2, 3}, ys = {2400, 110, 120, 117};
    const plot::Range measured = plot::extent(xs, ys, plot::Range{-1, 10}, 1);
    EXPECT_EQ(measured.lo, 110);
    EXPECT_EQ(measured.hi, 120);
    EXPECT_EQ(plot::extent(xs, ys, plot::Range{2.5, 10}).lo, 117);
}

TEST(RunStore, TenThousandStepsStayCheapAndDecimateForDrawing) {
    RunStore store;
    std::vector<double> totals(10000);
    for (size_t i = 0; i < totals.size(); ++i) {
        totals[i] = 20.0 + (i == 7777 ? 500.0 : static_cast<double>(i % 7));
    }
    auto events = syntheticRun(0, totals, 5);
    store.apply(events);
    const StepSeries& s = store.runs()[0].series;
    ASSERT_EQ(s.total.size(), 10000u);
    Decimated d;
    decimateMinMax(s.index, s.total, 1200, d);
    EXPECT_LE(d.x.size(), 1200u);
    EXPECT_GE(d.x.size(), 600u);
    // The spike survives decimation, and so does the minimum.
    EXPECT_DOUBLE_EQ(*std::max_element(d.y.begin(), d.y.end()), 520.0);
    EXPECT_DOUBLE_EQ(*std::min_element(d.y.begin(), d.y.end()), 20.0);
    EXPECT_TRUE(std::is_sorted(d.x.begin(), d.x.end()));
}

TEST(Decimate, ShortSeriesAreCopiedAndGapsKept) {
    const std::vector<double> xs = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const std::vector<double> ys = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    Decimated d;
    decimateMinMax(xs, ys, 100, d);
    EXPECT_EQ(d.y, ys);
    std::vector<double> gappy(100, std::nan(""));
    std::vector<double> gx(100);
    for (int i = 0; i < 100; ++i) {
        gx[i] = i;
    }
    gappy[90] = 3.0;
    decimateMinMax(gx, gappy, 10, d);
    EXPECT_EQ(d.y.size(), 5u);
    EXPECT_TRUE(std::isnan(d.y[0]));
    EXPECT_DOUBLE_EQ(d.y.back(), 3.0);
}

TEST(ConfigForm, ValidationMessagesByFieldAndEstimates) {
    ConfigForm form;
    EXPECT_TRUE(form.valid());
    form.config().model.vocabSize = 5000;
    form.setPreset("small");
    EXPECT_EQ(form.config().model.dModel, 768);
    EXPECT_EQ(form.config().model.vocabSize, 5000); // kept across preset changes
    form.setPreset("custom");
    form.config().model.numHeads = 5;
    auto errors = form.errors();
    ASSERT_TRUE(errors.count("model.num_heads"));
    EXPECT_NE(errors["model.num_heads"].find("not divisible"), std::string::npos);
    form.config().model.numHeads = 12;
    form.config().batchSize = 0;
    errors = form.errors();
    EXPECT_EQ(errors.size(), 1u);
    EXPECT_TRUE(errors.count("batch_size"));

    ConfigForm tiny;
    tiny.config().mode = engine::Mode::Train;
    const int64_t n = tiny.parameterCount();
    EXPECT_EQ(tiny.predictedPeak().parameters, 4 * n);
    EXPECT_EQ(tiny.predictedPeak().staticBytes(), 16 * n); // weights + grads + 2 moments
    tiny.config().mode = engine::Mode::Forward;
    tiny.config().precision = engine::Precision::Bf16Pure;
    EXPECT_EQ(tiny.predictedPeak().staticBytes(), 2 * n);
}

TEST(FilesView, OpeningAForeignOrCorruptFileReportsAndChangesNothing) {
    const auto dir = std::filesystem::temp_directory_path() / "lmprof_ui_files_test";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "foreign.json") << R"({"schema": "other/1", "runs": []})";
    std::ofstream(dir / "corrupt.json") << "{\"schema\": \"lmprof.results/1\", \"runs\": [";

    engine::Session session;
    RunStore store;
    auto events = syntheticRun(0, {5.0}, 0);
    store.apply(events);
    ConfigForm form;
    Settings settings;
    std::string status;
    bool isError = false;
    ViewContext ctx{session, store, form, settings, status, isError};
    FileReading reading;
    FilesView files(reading);

    files.open(ctx, (dir / "foreign.json").string());
    EXPECT_TRUE(isError);
    EXPECT_NE(status.find("not an lmprof result set"), std::string::npos) << status;
    EXPECT_EQ(store.runs().size(), 1u);
    files.open(ctx, (dir / "corrupt.json").string());
    EXPECT_NE(status.find("not valid JSON"), std::string::npos) << status;
    EXPECT_EQ(status.rfind("cannot open " + (dir / "corrupt.json").string(), 0), 0u) << status;
    EXPECT_EQ(store.runs().size(), 1u);
    EXPECT_TRUE(settings.recentFiles.empty());
    std::ofstream(dir / "empty.jsonl").close();
    files.open(ctx, (dir / "empty.jsonl").string());
    EXPECT_TRUE(isError);
    EXPECT_NE(status.find("empty.jsonl: no readable run"), std::string::npos) << status;

    // A real result set opens, adds its runs and becomes a recent file.
    engine::ResultSet set;
    engine::RunResult r;
    r.id = "saved-1";
    r.config = config(0, 1);
    set.runs = {r};
    engine::saveResultSetAtomic(set, dir / "good.json");
    files.open(ctx, (dir / "good.json").string());
    EXPECT_FALSE(isError) << status;
    EXPECT_EQ(store.runs().size(), 2u);
    EXPECT_EQ(settings.recentFiles.size(), 1u);
    EXPECT_EQ(store.selection(), std::vector<int>{1}); // shown at once, not an empty chart
    EXPECT_TRUE(store.runs()[1].fromFile);
    // Opened again: nothing is added twice, and the status says why.
    files.open(ctx, (dir / "good.json").string());
    EXPECT_EQ(store.runs().size(), 2u);
    EXPECT_NE(status.find("opened 0 run(s)"), std::string::npos) << status;
    EXPECT_NE(status.find("1 already open, not added again"), std::string::npos) << status;
    EXPECT_EQ(store.selection(), std::vector<int>{1}); // nothing new: the selection stays

    // An autosave file (by content, whatever its name) opens too: its readable runs come in
    // and every damaged line is counted.
    {
        std::ofstream out(dir / "session.txt");
        out << engine::runToJsonLine(r) << "\nnot a run\n" << engine::runToJsonLine(r) << "\n{";
    }
    r.id = "autosaved-1"; // not open yet
    {
        std::ofstream out(dir / "session.txt", std::ios::app);
        out << "\n" << engine::runToJsonLine(r) << "\n";
    }
    files.open(ctx, (dir / "session.txt").string());
    EXPECT_TRUE(isError); // shown as a warning: lines were skipped
    EXPECT_NE(status.find("opened 1 run(s)"), std::string::npos) << status;
    EXPECT_NE(status.find("2 already open"), std::string::npos) << status;
    EXPECT_NE(status.find("2 damaged line(s) skipped"), std::string::npos) << status;
    EXPECT_EQ(store.runs().size(), 3u);
    std::filesystem::remove_all(dir);
}

// Log-axis ticks: 1, 2, 5 × 10^k inside the range, every multiple when that gives too few.
TEST(PlotAxes, LogTicksCoverTheRangeWithReadableValues) {
    EXPECT_EQ(plot::logTicks(plot::Range{40, 1200}),
              (std::vector<double>{50, 100, 200, 500, 1000}));
    EXPECT_EQ(plot::logTicks(plot::Range{55, 95}), (std::vector<double>{60, 70, 80, 90}));
    EXPECT_TRUE(plot::logTicks(plot::Range{}).empty());
    EXPECT_TRUE(plot::logTicks(plot::Range{-1, 10}).empty());
}

TEST(RunStore, AWatchedRunStreamingPastTheRingIsThinnedAsItsFileWillBe) {
    // A script watched live for 25,000 steps: the window keeps what the saved file keeps
    // (engine::StepTally, docs/WATCH.md "Long runs"), its series match those steps, and its
    // summary covers every one of them.
    std::vector<double> totals;
    for (int i = 0; i < 25'000; ++i) {
        totals.push_back(10.0 + (i * 7919 % 100) / 10.0);
    }
    auto events = syntheticRun(0, totals, 2);
    auto& header = std::get<engine::RunStarted>(events.front()).header;
    header.source = engine::RunSource{};
    RunStore store;
    store.apply(events);
    RunView& v = store.runs()[0];
    ASSERT_TRUE(v.result.thinned);
    EXPECT_EQ(v.result.thinned->every, 4);
    EXPECT_EQ(v.result.thinned->recordedSteps, 25'000);
    EXPECT_EQ(v.result.steps.size(), 2u + 6'249u); // the warmup, and 4, 8, ..., 24,996
    EXPECT_EQ(v.series.total.size(), v.result.steps.size());
    EXPECT_EQ(v.series.index.back(), 24'996);
    EXPECT_EQ(v.liveSummary().totalMs.n, 24'998);
    // The running band is over every measured step up to the last one kept, not over the
    // kept ones only.
    double sum = 0.0;
    for (size_t i = 2; i <= 24'996; ++i) {
        sum += totals[i];
    }
    EXPECT_NEAR(v.series.runMean.back(), sum / 24'995.0, 1e-9);
}
