// Sweeps: the product of the lists (warmup counts included), cheapest-first order, and the
// skip-after-OOM rule, on plain configs (no run needed).

#include "lmprof/engine/sweep.h"
#include "throwaway_field.h"

#include <gtest/gtest.h>
#include <set>
#include <stdexcept>
#include <tuple>

using namespace lmprof::engine;

namespace {

ModelConfig preset(const char* name) {
    return *presetModel(name);
}

SweepSpec spec() {
    SweepSpec s;
    s.base.batchSize = 4;
    s.base.measureSteps = 10;
    s.models = {preset("small"), preset("tiny")};
    s.contexts = {256, 128};
    s.precisions = {Precision::Fp32, Precision::Bf16};
    s.modes = {Mode::Train, Mode::Forward};
    s.warmups = {5, 0, 1};
    return s;
}

// One configuration (tiny, 128, fp32, train) for a test's own axes to multiply.
SweepSpec oneConfig() {
    SweepSpec s;
    s.base.measureSteps = 2;
    s.models = {preset("tiny")};
    s.contexts = {128};
    s.precisions = {Precision::Fp32};
    s.modes = {Mode::Train};
    return s;
}

RunResult oomRun(const RunConfig& c, const std::string& id) {
    RunResult r;
    r.id = id;
    r.config = c;
    r.status = RunStatus::Oom;
    r.failedPhase = Phase::Backward;
    return r;
}

} // namespace

TEST(Sweep, ProductOfEveryListIncludingWarmupCounts) {
    const SweepSpec s = spec();
    EXPECT_EQ(sweepSize(s), 2u * 2 * 2 * 2 * 3);
    const auto configs = expandSweep(s);
    ASSERT_EQ(configs.size(), 48u);
    // Every combination exactly once, with the base's fields kept.
    int tinyCtx128Bf16ForwardWarmup1 = 0;
    for (const auto& c : configs) {
        EXPECT_EQ(c.batchSize, 4);
        EXPECT_EQ(c.measureSteps, 10);
        tinyCtx128Bf16ForwardWarmup1 += c.model.preset == "tiny" && c.contextLength == 128 &&
                                        c.precision == Precision::Bf16 && c.mode == Mode::Forward &&
                                        c.warmupSteps == 1;
    }
    EXPECT_EQ(tinyCtx128Bf16ForwardWarmup1, 1);

    // No warmup list: the base's warmup count, one run per other combination.
    SweepSpec noWarmups = s;
    noWarmups.warmups.clear();
    noWarmups.base.warmupSteps = 3;
    EXPECT_EQ(sweepSize(noWarmups), 16u);
    for (const auto& c : expandSweep(noWarmups)) {
        EXPECT_EQ(c.warmupSteps, 3);
    }
    SweepSpec none = s;
    none.contexts.clear();
    EXPECT_EQ(sweepSize(none), 0u);
    EXPECT_TRUE(expandSweep(none).empty());
}

TEST(Sweep, CheaperRunsComeFirst) {
    const auto configs = expandSweep(spec());
    for (size_t i = 1; i < configs.size(); ++i) {
        const double prev = stepFlops(configs[i - 1]), cur = stepFlops(configs[i]);
        ASSERT_LE(prev, cur) << "at " << i;
        if (prev == cur) {
            EXPECT_LE(configs[i - 1].warmupSteps, configs[i].warmupSteps) << "at " << i;
        }
    }
    // The very first: tiny, ctx 128, forward, fewest warmup steps; the last: small, 256,
    // a backward mode, most warmup steps.
    EXPECT_EQ(configs.front().model.preset, "tiny");
    EXPECT_EQ(configs.front().contextLength, 128);
    EXPECT_EQ(configs.front().mode, Mode::Forward);
    EXPECT_EQ(configs.front().warmupSteps, 0);
    EXPECT_EQ(configs.back().model.preset, "small");
    EXPECT_EQ(configs.back().contextLength, 256);
    EXPECT_EQ(configs.back().mode, Mode::Train);
    EXPECT_EQ(configs.back().warmupSteps, 5);
    // Equal cost keeps the order given (precision does not change the FLOPs).
    EXPECT_EQ(configs[0].precision, Precision::Fp32);
    EXPECT_EQ(configs[1].precision, Precision::Bf16);
}

TEST(Sweep, RunFlopsCountWarmupAndMeasuredSteps) {
    RunConfig c;
    c.warmupSteps = 2;
    c.measureSteps = 3;
    EXPECT_DOUBLE_EQ(runFlops(c), 5 * stepFlops(c));
    const std::vector<RunConfig> two = {c, c};
    EXPECT_DOUBLE_EQ(totalFlops(two), 10 * stepFlops(c));
}

TEST(Sweep, AnOomSkipsLargerConfigsOfTheSameFamilyOnly) {
    RunConfig failed;
    failed.model = preset("small");
    failed.contextLength = 256;
    failed.precision = Precision::Fp32;
    failed.mode = Mode::Train;
    failed.batchSize = 4;

    OomSkipper skipper;
    RunResult ok = oomRun(failed, "fine");
    ok.status = RunStatus::Ok;
    skipper.record(ok); // only OOMs count
    EXPECT_TRUE(skipper.empty());
    EXPECT_FALSE(skipper.skip(failed));

    skipper.record(oomRun(failed, "small-ctx256-fp32-train-7"));
    auto variant = [&](auto change) {
        RunConfig c = failed;
        change(c);
        return c;
    };
    // Same or larger in every dimension, any warmup count: skipped, naming the OOM run.
    const auto same = skipper.skip(variant([](RunConfig& c) { c.warmupSteps = 0; }));
    ASSERT_TRUE(same);
    EXPECT_EQ(same->status, RunStatus::Skipped);
    EXPECT_EQ(same->error, "skipped after out-of-memory in small-ctx256-fp32-train-7");
    EXPECT_EQ(same->config.warmupSteps, 0);
    EXPECT_EQ(same->parameterCount, parameterCount(failed.model));
    EXPECT_TRUE(skipper.skip(variant([](RunConfig& c) { c.contextLength = 512; })));
    EXPECT_TRUE(skipper.skip(variant([](RunConfig& c) { c.model = preset("medium"); })));
    EXPECT_TRUE(skipper.skip(variant([](RunConfig& c) { c.batchSize = 8; })));
    // Smaller in one dimension, or another family: still run.
    EXPECT_FALSE(skipper.skip(variant([](RunConfig& c) { c.contextLength = 128; })));
    EXPECT_FALSE(skipper.skip(variant([](RunConfig& c) { c.model = preset("tiny"); })));
    EXPECT_FALSE(skipper.skip(variant([](RunConfig& c) { c.batchSize = 2; })));
    EXPECT_FALSE(skipper.skip(variant([](RunConfig& c) { c.precision = Precision::Bf16; })));
    EXPECT_FALSE(skipper.skip(variant([](RunConfig& c) { c.mode = Mode::Forward; })));
    EXPECT_FALSE(skipper.skip(
        variant([](RunConfig& c) { c.model = preset("large"), c.contextLength = 128; })));
}

TEST(Sweep, OpProfileKeepsItsPlaceAfterEachWarmup) {
    SweepSpec s;
    s.base.warmupSteps = 2;
    s.base.opProfile = defaultOpProfileRequest(2);
    s.base.opProfile->firstStep = 3; // one step after the warmup
    s.models = {*presetModel("tiny")};
    s.contexts = {16};
    s.precisions = {Precision::Fp32};
    s.modes = {Mode::Train};
    s.warmups = {0, 2, 5};
    for (const RunConfig& c : expandSweep(s)) {
        ASSERT_TRUE(c.opProfile);
        EXPECT_EQ(c.opProfile->firstStep, c.warmupSteps + 1) << c.warmupSteps;
    }
}

TEST(Sweep, BatchSizesAndExecutionVariantsAreAxesAndPartOfTheOomFamily) {
    SweepSpec s = oneConfig();
    s.batches = {1, 8, 64};
    s.choices = {{"attention", {"naive", "sdpa"}}, {"tf32", {"off", "on"}}};
    EXPECT_EQ(sweepSize(s), 3u * 2 * 2);
    const auto configs = expandSweep(s);
    ASSERT_EQ(configs.size(), 12u);
    std::set<std::tuple<int64_t, AttentionKind, bool>> seen;
    for (const auto& c : configs) {
        seen.insert({c.batchSize, c.attention, c.tf32});
    }
    EXPECT_EQ(seen.size(), 12u); // every combination once
    // Cheapest first: the batch-1 runs before any batch-64 one.
    EXPECT_EQ(configs.front().batchSize, 1);
    EXPECT_EQ(configs.back().batchSize, 64);

    // An OOM at batch 8 with naive attention says nothing about sdpa (another memory
    // profile), nor about batch 1; it covers batch 64 with the same variants.
    RunConfig failed = configs.front();
    failed.batchSize = 8;
    failed.attention = AttentionKind::Naive;
    failed.tf32 = false;
    RunConfig larger = failed;
    larger.batchSize = 64;
    EXPECT_TRUE(exceedsOom(failed, larger));
    larger.attention = AttentionKind::Sdpa;
    EXPECT_FALSE(exceedsOom(failed, larger));
    RunConfig smaller = failed;
    smaller.batchSize = 1;
    EXPECT_FALSE(exceedsOom(failed, smaller));

    s.choices = {{"no_such_field", {"x"}}};
    EXPECT_THROW(expandSweep(s), std::invalid_argument);
}

// A plain field a sweep can list (ValueField::sweepAxis) is an axis like the others: seeds
// and threads, and a field declared by a test alone. A field that is no such axis (or none at
// all) is refused by name.
TEST(Sweep, PlainFieldsASweepCanListAreAxes) {
    SweepSpec s = oneConfig();
    s.values = {{"seed", {0, 1, 2}}, {"threads", {1, 2}}};
    EXPECT_EQ(sweepSize(s), 6u);
    std::set<std::pair<uint64_t, int>> seen;
    for (const auto& c : expandSweep(s)) {
        seen.insert({c.seed, c.threads});
    }
    EXPECT_EQ(seen.size(), 6u);
    EXPECT_TRUE(seen.count({2, 2}));

    const ExtraValueField declared(test::throwawayField());
    s.values = {{"throwaway_steps", {1, 3}}};
    std::set<int> warmups;
    for (const auto& c : expandSweep(s)) {
        warmups.insert(c.warmupSteps); // the throwaway field stands on warmup_steps
    }
    EXPECT_EQ(warmups, (std::set<int>{1, 3}));

    s.values = {{"sample_hz", {10}}};
    try {
        expandSweep(s);
        ADD_FAILURE() << "sample_hz is no sweep axis";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("sample_hz"), std::string::npos) << e.what();
    }
    s.values = {{"no_such_field", {1}}};
    EXPECT_THROW(expandSweep(s), std::invalid_argument);

    // A value the field cannot hold is refused by name, never narrowed to one it can.
    for (const auto& [values, why] : std::vector<std::pair<SweepSpec::ValueList, std::string>>{
             {{"threads", {1, 4294967297}}, "threads: must be between 0 and 4096, got 4294967297"},
             {{"threads", {5000}}, "threads: must be between 0 and 4096, got 5000"},
             {{"seed", {0, -1}}, "seed: must not be negative, got -1"}}) {
        s.values = {values};
        try {
            expandSweep(s);
            ADD_FAILURE() << why;
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()), why);
        }
    }
}

// A sweep lists whole numbers: a flag or a decimal declared as a sweep axis is refused where
// it is declared, before any list could be made of it.
TEST(Sweep, OnlyAWholeNumberFieldCanBeASweepAxis) {
    ValueField flag = test::throwawayField();
    flag.member = &RunConfig::gradNorms;
    EXPECT_THROW(ExtraValueField{flag}, std::logic_error);
    ValueField decimal = test::throwawayField();
    decimal.member = &RunConfig::sampleHz;
    EXPECT_THROW(ExtraValueField{decimal}, std::logic_error);
    EXPECT_EQ(valueField("throwaway_steps"), nullptr); // neither was declared
}
