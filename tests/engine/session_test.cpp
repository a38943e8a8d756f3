// Session: events in order, cancel within one step keeping finished steps, failures that
// leave the session working, queued runs answered when cancelled, and lab experiments
// queued with the runs.

#include "lmprof/engine/session.h"
#include "session_helpers.h"
#include "test_configs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <thread>

using namespace lmprof::engine;
using lmprof::engine::testing::collect;
using lmprof::engine::testing::labReports;
using lmprof::engine::testing::results;
using lmprof::engine::testing::tinyCpu;
using namespace std::chrono_literals;

TEST(Session, PublishesStartedStepsAndFinishedInOrder) {
    Session session;
    EXPECT_EQ(session.submit(tinyCpu(Mode::Train, 1, 2)), 0);
    const auto events = collect(session, 1);
    ASSERT_FALSE(events.empty());
    EXPECT_TRUE(std::holds_alternative<RunStarted>(events.front()));
    EXPECT_TRUE(std::holds_alternative<RunFinished>(events.back()));
    int steps = 0;
    int samples = 0;
    for (const auto& e : events) {
        if (auto* s = std::get_if<StepFinished>(&e)) {
            EXPECT_EQ(s->step.index, steps++);
        }
        samples += std::holds_alternative<MemorySampled>(e);
    }
    EXPECT_EQ(steps, 3);
    EXPECT_GT(samples, 0);
    const auto r = results(events);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, RunStatus::Ok);
    EXPECT_EQ(r[0].steps.size(), 3u);
    EXPECT_EQ(r[0].id, "tiny-ctx32-fp32-train-1");
    EXPECT_FALSE(session.busy());
}

TEST(Session, CancelStopsWithinAStepAndKeepsFinishedSteps) {
    Session session;
    session.submit(tinyCpu(Mode::Train, 0, 10000)); // would take minutes
    session.submit(tinyCpu(Mode::Train, 0, 1));     // queued behind it
    // Wait for two finished steps, then cancel.
    int steps = 0;
    std::vector<SessionEvent> events;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (steps < 2 && std::chrono::steady_clock::now() < deadline) {
        session.waitForEvents(20ms);
        for (auto& e : session.drain()) {
            steps += std::holds_alternative<StepFinished>(e);
            events.push_back(std::move(e));
        }
    }
    ASSERT_GE(steps, 2);
    const auto cancelAt = std::chrono::steady_clock::now();
    session.cancel();
    auto rest = collect(session, 2);
    const auto latency = std::chrono::steady_clock::now() - cancelAt;
    events.insert(events.end(), rest.begin(), rest.end());
    const auto r = results(events);
    ASSERT_EQ(r.size(), 2u);
    // Index order: the queued run was answered first (cancel() publishes it at once).
    const RunResult& longRun = r[0].config.measureSteps == 10000 ? r[0] : r[1];
    const RunResult& queued = r[0].config.measureSteps == 10000 ? r[1] : r[0];
    EXPECT_EQ(longRun.status, RunStatus::Cancelled);
    EXPECT_GE(longRun.steps.size(), 2u);
    EXPECT_LT(longRun.steps.size(), 10000u);
    EXPECT_EQ(queued.status, RunStatus::Cancelled);
    EXPECT_TRUE(queued.steps.empty());
    // A tiny step takes well under a second here; cancel must not wait for the run's end.
    EXPECT_LT(std::chrono::duration<double>(latency).count(), 10.0);
}

// The precision lab's experiments are engine work like runs: queued behind them, numbered
// apart, answered once each, dropped (and said so) by a cancel.
TEST(Session, LabExperimentsQueueBehindRunsAndACancelAnswersEachOnce) {
    Session session;
    const int run = session.submit(tinyCpu(Mode::Train, 0, 2));
    AccumulationRequest accumulation;
    accumulation.device = "cpu";
    accumulation.maxTerms = 1000;
    const int lab = session.submitLab(accumulation);
    EXPECT_EQ(lab, 0); // labs have their own numbering
    DtypeRequest dtypes;
    dtypes.precision = Precision::Fp16;
    dtypes.device = "cpu";
    EXPECT_EQ(session.submitLab(dtypes), 1);
    EXPECT_TRUE(session.busy());
    const auto events = collect(session, 3);
    ASSERT_EQ(results(events).size(), 1u);
    const auto labs = labReports(events);
    ASSERT_EQ(labs.size(), 2u);
    // In submission order, after the run.
    const auto finishedAt = [&](auto pick) {
        return std::find_if(events.begin(), events.end(), pick) - events.begin();
    };
    EXPECT_LT(
        finishedAt([&](const SessionEvent& e) {
            const auto* f = std::get_if<RunFinished>(&e);
            return f && f->runIndex == run;
        }),
        finishedAt([](const SessionEvent& e) { return std::holds_alternative<LabFinished>(e); }));
    EXPECT_EQ(labs[0].labIndex, 0);
    const auto& a = std::get<AccumulationReport>(labs[0].report);
    EXPECT_FALSE(a.error) << a.error.value_or("");
    EXPECT_EQ(a.device, "cpu");
    EXPECT_EQ(a.seedLoops.size(), 4u);
    const auto& d = std::get<DtypeReport>(labs[1].report);
    EXPECT_FALSE(d.error) << d.error.value_or("");
    EXPECT_FALSE(d.rows.empty());
    EXPECT_FALSE(session.busy());

    // Queued behind a long run, a cancel answers the experiment as not started.
    session.submit(tinyCpu(Mode::Train, 0, 10000));
    accumulation.maxTerms = kMaxGridTerms;
    const int queued = session.submitLab(accumulation);
    session.cancel();
    const auto rest = collect(session, 2);
    const auto dropped = labReports(rest);
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(dropped[0].labIndex, queued);
    const auto& c = std::get<AccumulationReport>(dropped[0].report);
    EXPECT_TRUE(c.cancelled);
    EXPECT_EQ(c.error.value_or(""), "cancelled before it started");
    EXPECT_EQ(c.maxTerms, kMaxGridTerms);
}

// A window asleep until something happens is woken by the engine: once per event that ends
// waitForEvents (not per memory sample), from the engine's thread.
TEST(Session, TheWakerHearsEveryEventThatEndsAWait) {
    Session session;
    std::atomic<int> wakes{0};
    session.setWaker([&wakes] { ++wakes; });
    session.submit(tinyCpu(Mode::Train, 0, 3));
    AccumulationRequest lab;
    lab.device = "cpu";
    lab.maxTerms = 1000;
    session.submitLab(lab);
    const auto events = collect(session, 2);
    int waking = 0;
    for (const auto& e : events) {
        waking += !std::holds_alternative<MemorySampled>(e) &&
                  !std::holds_alternative<TelemetrySampled>(e);
    }
    // The wake follows the event's publication: it may come just after the drain.
    const auto settle = [&wakes](int expected) {
        const auto until = std::chrono::steady_clock::now() + 5s;
        while (wakes.load() < expected && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(1ms);
        }
        std::this_thread::sleep_for(20ms); // and no more than that
    };
    settle(waking);
    EXPECT_EQ(wakes.load(), waking); // started, 3 steps, finished, the lab's report
    EXPECT_EQ(waking, 6);
    session.setWaker({});
    session.submitLab(lab);
    collect(session, 1);
    std::this_thread::sleep_for(50ms); // long enough for a wake that should not come
    EXPECT_EQ(wakes.load(), waking);
}

TEST(Session, KeepsWorkingAfterOomAndInvalidConfig) {
    Session session;
    RunConfig oom = tinyCpu(Mode::Train, 0, 1);
    oom.faultOomPhase = Phase::Backward;
    RunConfig invalid = tinyCpu();
    invalid.contextLength = -5;
    session.submit(oom);
    session.submit(invalid);
    session.submit(tinyCpu(Mode::Forward, 0, 1));
    const auto r = results(collect(session, 3));
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].status, RunStatus::Oom);
    EXPECT_EQ(r[0].failedPhase, Phase::Backward);
    EXPECT_EQ(r[1].status, RunStatus::Error);
    EXPECT_NE(r[1].error->find("context_length"), std::string::npos);
    EXPECT_EQ(r[2].status, RunStatus::Ok);
}

TEST(Session, DestructorStopsARunningRun) {
    const auto start = std::chrono::steady_clock::now();
    {
        Session session;
        session.submit(tinyCpu(Mode::Train, 0, 10000));
        std::this_thread::sleep_for(200ms);
    }
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              15.0);
}

// Data-parallel runs (docs/DISTRIBUTED.md): the session starts lmprof-cli ranks through the
// engine's launcher and relays rank 0's steps as they finish.
namespace {

RunConfig ddpTiny(DdpStrategy strategy, int warmup, int steps) {
    RunConfig c = tinyCpu(Mode::Train, warmup, steps);
    c.contextLength = 16;
    c.sampleHz = 0;
    c.telemetryHz = 0;
    c.ddp = DdpRequest{};
    c.ddp->strategy = strategy;
    c.ddp->bucketMb = 0.1;
    c.ddp->timeoutS = 20;
    return c;
}

Session& ddpSession(Session& session) {
    session.setRankProgram({LMPROF_CLI_PATH, {"ddp"}});
    return session;
}

} // namespace

TEST(SessionDdp, RunsTheRanksAndRelaysRankZerosStepsAsTheyFinish) {
    Session session;
    ddpSession(session).submit(ddpTiny(DdpStrategy::Bucketed, 1, 2));
    const auto events = collect(session, 1);
    ASSERT_FALSE(events.empty());
    EXPECT_TRUE(std::holds_alternative<RunStarted>(events.front()));
    std::vector<int> relayed;
    for (const auto& e : events) {
        if (auto* s = std::get_if<StepFinished>(&e)) {
            relayed.push_back(s->step.index);
        }
    }
    EXPECT_EQ(relayed, (std::vector<int>{0, 1, 2}));
    const auto r = results(events);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(r[0].status, RunStatus::Ok) << r[0].error.value_or("");
    EXPECT_EQ(r[0].id, "tiny-ctx16-fp32-train-ddp2-bucketed-1");
    EXPECT_EQ(r[0].steps.size(), 3u);
    ASSERT_TRUE(r[0].ddp.has_value());
    EXPECT_EQ(r[0].ddp->ranks.size(), 2u);
    EXPECT_EQ(r[0].ddp->parametersIdentical, true);
    EXPECT_GT(r[0].ddp->buckets, 1);
}

TEST(SessionDdp, CancelStopsEveryRankAndKeepsTheFinishedSteps) {
    Session session;
    ddpSession(session).submit(ddpTiny(DdpStrategy::Flat, 0, 10000));
    int steps = 0;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (steps < 2 && std::chrono::steady_clock::now() < deadline) {
        session.waitForEvents(20ms);
        for (auto& e : session.drain()) {
            steps += std::holds_alternative<StepFinished>(e);
        }
    }
    ASSERT_GE(steps, 2);
    const auto cancelAt = std::chrono::steady_clock::now();
    session.cancel();
    const auto r = results(collect(session, 1));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - cancelAt).count();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, RunStatus::Cancelled) << r[0].error.value_or("");
    EXPECT_GE(r[0].steps.size(), 2u);
    EXPECT_LT(r[0].steps.size(), 10000u);
    ASSERT_TRUE(r[0].ddp.has_value());
    EXPECT_EQ(r[0].ddp->ranks.size(), 2u) << "both ranks stopped together and reported";
    EXPECT_LT(seconds, 20.0);
}

TEST(SessionDdp, ARankProgramThatCannotRunIsAClearError) {
    Session session;
    session.setRankProgram({"/nonexistent/lmprof-cli", {"ddp"}});
    session.submit(ddpTiny(DdpStrategy::Naive, 0, 1));
    auto r = results(collect(session, 1));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, RunStatus::Error);
    EXPECT_NE(r[0].error->find("/nonexistent/lmprof-cli cannot be run"), std::string::npos)
        << *r[0].error;

    // Ranks that exit at once: both named with how they ended, nothing waits for them.
    session.setRankProgram({"/bin/sh", {"-c", "exit 3"}});
    const auto start = std::chrono::steady_clock::now();
    session.submit(ddpTiny(DdpStrategy::Naive, 0, 1));
    r = results(collect(session, 1));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, RunStatus::Error);
    EXPECT_NE(r[0].error->find("rank 0 exited with code 3 before it wrote a result"),
              std::string::npos)
        << *r[0].error;
    EXPECT_NE(r[0].error->find("rank 1 exited with code 3"), std::string::npos) << *r[0].error;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              10.0);

    // An invalid request is refused before any process starts, naming the field.
    RunConfig bad = ddpTiny(DdpStrategy::Naive, 0, 1);
    bad.ddp->worldSize = 0;
    session.submit(bad);
    r = results(collect(session, 1));
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NE(r[0].error->find("ddp.world_size"), std::string::npos) << *r[0].error;
}
