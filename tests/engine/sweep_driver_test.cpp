// The SweepDriver fed synthetic engine events: one run at a time, skip after OOM, cancel,
// and the ETA.

#include "lmprof/engine/session.h"
#include "lmprof/engine/sweep_driver.h"
#include "synthetic_runs.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace lmprof;
using namespace lmprof::engine::testing;
using engine::SessionEvent;
using engine::SweepDriver;

namespace {

// A driver wired to recording submit / skip functions, like App wires it to the Session
// and the RunStore.
struct Harness {
    SweepDriver driver;
    std::vector<engine::RunConfig> submitted;
    std::vector<engine::RunResult> skipped;
    double nowMs = 0.0; // the driver's clock: moved by the runs' steps and what is outside them
    void start(std::vector<engine::RunConfig> configs, bool runAfterOom = false) {
        driver.setClock([this] { return nowMs; });
        driver.start(
            std::move(configs), runAfterOom,
            [this](const engine::RunConfig& c) {
                submitted.push_back(c);
                return static_cast<int>(submitted.size()) - 1;
            },
            [this](const engine::RunResult& r) { skipped.push_back(r); });
    }
    // The session's events for the last submitted run: its steps, then RunFinished, the run
    // taking `outsideMs` beyond its steps.
    void finish(RunStatus status, double stepMs = 10.0, double outsideMs = 0.0) {
        const int index = static_cast<int>(submitted.size()) - 1;
        const engine::RunConfig& c = submitted.back();
        std::vector<SessionEvent> events;
        const int steps = status == RunStatus::Ok ? c.warmupSteps + c.measureSteps : 1;
        for (int i = 0; i < steps; ++i) {
            engine::StepRecord s;
            s.index = i;
            s.totalMs = stepMs;
            events.emplace_back(engine::StepFinished{index, s});
            nowMs += stepMs;
        }
        nowMs += outsideMs;
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

// The walkthrough's sweep said "ETA 1 s" with a 20-second run left: the estimate knew only
// the FLOP rate of the smaller runs before it, and nothing of the time outside the steps.
TEST(SweepDriver, EtaFollowsTheRunInFlightAndCountsTimeOutsideTheSteps) {
    Harness h;
    const auto a = cfg("tiny", 16);
    const auto b = cfg("small", 16);
    const auto c = cfg("tiny", 32);
    h.start({a, b, c});
    h.finish(RunStatus::Ok, 10.0, 400.0); // 5 steps of 10 ms, 400 ms building and writing
    const double rate = engine::stepFlops(a) / 10.0;
    // b is submitted; before its first step it is estimated like any run to come.
    const double estimateB = engine::runFlops(b) / rate + 400.0;
    const double estimateC = engine::runFlops(c) / rate + 400.0;
    h.nowMs += 300.0; // b is building its model
    auto p = h.driver.progress();
    ASSERT_TRUE(p.etaSeconds);
    EXPECT_NEAR(*p.etaSeconds, (estimateB - 300.0 + estimateC) / 1000.0, 1e-9);
    // b's first step takes 5 s, far slower than the rate of a: the rest of b is 4 more such
    // steps (and 100 ms of its outside time not yet spent), whatever the rate said.
    engine::StepRecord first;
    first.totalMs = 5000.0;
    h.nowMs += 5000.0;
    h.driver.observe(engine::SessionEvent{engine::StepFinished{1, first}});
    p = h.driver.progress();
    ASSERT_TRUE(p.etaSeconds);
    const double rateNow = (engine::stepFlops(a) * 5 + engine::stepFlops(b)) / (50.0 + 5000.0);
    EXPECT_NEAR(*p.etaSeconds,
                (4 * 5000.0 + 100.0 + engine::runFlops(c) / rateNow + 400.0) / 1000.0, 1e-9);
    EXPECT_GT(*p.etaSeconds, 20.0);
}
