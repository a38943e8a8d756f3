// The verdict rules (docs/VERDICTS.md) at their boundaries, on synthetic steps: each kind
// fires firm when its interval is past the threshold, says "likely" when only the estimate
// is, abstains with too few steps, and stays silent on a clean loop; and the verdicts
// survive the result set both ways, refused with their path when hostile.

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/verdicts.h"
#include "synthetic_runs.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <gtest/gtest.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

using namespace lmprof::engine;

namespace {

// A steady run: `n` measured steps of about 50 ms (±2% jitter from a fixed seed), split
// 30/60/10 between forward, backward and the optimizer, after two warmup steps.
RunResult steady(int n, unsigned seed = 7) {
    RunConfig c = lmprof::engine::testing::cfg("tiny", 64, Precision::Fp32, Mode::Train, 2);
    c.measureSteps = n;
    std::vector<double> ms;
    std::mt19937 gen(seed);
    std::normal_distribution<double> jitter(0.0, 1.0);
    for (int i = 0; i < n; ++i) {
        ms.push_back(50.0 + jitter(gen));
    }
    RunResult r = lmprof::engine::testing::finished(c, RunStatus::Ok, ms);
    for (auto& s : r.steps) {
        s.forwardMs = 0.3 * s.totalMs;
        s.backwardMs = 0.6 * s.totalMs;
        s.optimizerMs = 0.1 * s.totalMs;
        s.peakAllocatedBytes = int64_t{100} << 20;
    }
    return r;
}

// Recomputes the summary after the steps were changed.
RunResult& resummarize(RunResult& r) {
    r.summary = summarize(r.config, r.steps, std::nullopt);
    return r;
}

// A copy, so that it may be taken from a temporary list.
std::optional<RunVerdict> find(const std::vector<RunVerdict>& all, VerdictKind kind) {
    for (const auto& v : all) {
        if (v.kind == kind) {
            return v;
        }
    }
    return std::nullopt;
}

// Every verdict but info ones: what a person is warned about.
std::vector<std::string> warnings(const std::vector<RunVerdict>& all) {
    std::vector<std::string> out;
    for (const auto& v : all) {
        if (v.severity != Severity::Info) {
            out.push_back(std::string(toString(v.kind)));
        }
    }
    return out;
}

// A watched run: every step waits `dataShare` of its time for the loader, give or take
// `spread` (alternating above and below).
RunResult watchedWithData(int n, double dataShare, double spread = 0.0) {
    RunResult r = steady(n);
    r.source = RunSource{};
    for (auto& s : r.steps) {
        const double share = dataShare + (s.index % 2 ? spread : -spread);
        s.dataMs = share * s.totalMs;
        s.forwardMs = 0.3 * (1 - share) * s.totalMs;
        s.backwardMs = 0.6 * (1 - share) * s.totalMs;
        s.optimizerMs = 0.1 * (1 - share) * s.totalMs;
    }
    return resummarize(r);
}

} // namespace

TEST(Verdicts, ACleanLoopIsComputeBoundAndGetsNoWarning) {
    for (unsigned seed : {1u, 2u, 3u}) {
        for (int n : {12, 40, 200}) {
            const auto all = judgeRun(steady(n, seed));
            EXPECT_TRUE(warnings(all).empty()) << n << " steps: " << warnings(all).front();
            const std::optional<RunVerdict> v = find(all, VerdictKind::ComputeBound);
            ASSERT_TRUE(v) << n;
            EXPECT_EQ(v->severity, Severity::Info);
            EXPECT_NEAR(v->value, 1.0, 1e-9);
        }
    }
}

TEST(Verdicts, InputBoundFiresOnTheIntervalAndSaysLikelyOnTheEstimateAlone) {
    const std::optional<RunVerdict> none =
        find(judgeRun(watchedWithData(30, 0.08)), VerdictKind::InputBound);
    EXPECT_FALSE(none) << "8% is below the 10% threshold";

    const auto firm = judgeRun(watchedWithData(30, 0.30));
    const std::optional<RunVerdict> v = find(firm, VerdictKind::InputBound);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->certainty, Certainty::Firm);
    EXPECT_EQ(v->severity, Severity::Critical) << "30% with a tight interval is past 20%";
    EXPECT_NEAR(v->value, 0.30, 1e-6);
    EXPECT_LE(v->low, v->value);
    EXPECT_GE(v->high, v->value);
    EXPECT_NE(v->evidence.find("data wait"), std::string::npos) << v->evidence;
    EXPECT_EQ(warnings(firm), std::vector<std::string>{"input-bound"});
    EXPECT_FALSE(find(firm, VerdictKind::ComputeBound)) << "the loader bounds the step";

    // 12% on average, but 2% and 22% by turns: only likely, at info.
    const auto noisy = judgeRun(watchedWithData(6, 0.12, 0.10));
    const std::optional<RunVerdict> likely = find(noisy, VerdictKind::InputBound);
    ASSERT_TRUE(likely);
    EXPECT_LT(likely->low, 0.10);
    EXPECT_EQ(likely->certainty, Certainty::Likely);
    EXPECT_EQ(likely->severity, Severity::Info);

    const std::optional<RunVerdict> abstained =
        find(judgeRun(watchedWithData(3, 0.5)), VerdictKind::InputBound);
    ASSERT_TRUE(abstained);
    EXPECT_EQ(abstained->certainty, Certainty::Abstained);
    EXPECT_EQ(abstained->evidence, "needs 5 measured steps; has 3");
}

TEST(Verdicts, OptimizerBoundNamesTheScriptsOptimizer) {
    RunResult r = steady(20);
    r.source = RunSource{};
    r.source->optimizer = "Adam";
    for (auto& s : r.steps) {
        s.optimizerMs = 0.45 * s.totalMs;
        s.forwardMs = 0.2 * s.totalMs;
        s.backwardMs = 0.35 * s.totalMs;
    }
    const auto all = judgeRun(resummarize(r));
    const std::optional<RunVerdict> v = find(all, VerdictKind::OptimizerBound);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->severity, Severity::Critical);
    EXPECT_NE(v->advice.find("Adam "), std::string::npos) << v->advice;
    EXPECT_NE(v->advice.find("foreach=True"), std::string::npos) << v->advice;
}

TEST(Verdicts, HostBoundReadsTheKernelTimeOfCudaSteps) {
    RunResult r = steady(20);
    r.resolvedDevice = "cuda:0";
    for (auto& s : r.steps) {
        s.kernelMs = 0.9 * s.totalMs;
    }
    EXPECT_FALSE(find(judgeRun(r), VerdictKind::HostBound)) << "busy 90%";
    for (auto& s : r.steps) {
        s.kernelMs = 0.3 * s.totalMs;
    }
    const std::optional<RunVerdict> v = find(judgeRun(r), VerdictKind::HostBound);
    ASSERT_TRUE(v);
    EXPECT_NEAR(v->value, 0.7, 1e-6);
    EXPECT_EQ(v->severity, Severity::Critical);
    r.resolvedDevice = "cpu";
    EXPECT_FALSE(find(judgeRun(r), VerdictKind::HostBound)) << "no GPU, no host-bound";
}

TEST(Verdicts, MemoryCreepIsASlopeWithItsIntervalAndTheStepItReachesTheDevice) {
    RunResult r = steady(40);
    MemorySample m;
    m.deviceTotal = int64_t{1} << 30;
    r.memoryTimeline.push_back(m);
    EXPECT_FALSE(find(judgeRun(r), VerdictKind::MemoryCreep)) << "a flat peak";
    for (auto& s : r.steps) {
        s.peakAllocatedBytes += int64_t{s.index} << 20; // 1 MiB a step
    }
    const std::optional<RunVerdict> v = find(judgeRun(r), VerdictKind::MemoryCreep);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->certainty, Certainty::Firm);
    EXPECT_NEAR(v->value, 100.0 * (1 << 20), 1.0) << "bytes per 100 steps";
    EXPECT_NE(v->evidence.find("reaches the device's 1.00 GiB near step"), std::string::npos)
        << v->evidence;
    EXPECT_EQ(v->severity, Severity::Critical) << "it fills the device in under 10,000 steps";

    RunResult few = steady(10);
    const std::optional<RunVerdict> a = find(judgeRun(few), VerdictKind::MemoryCreep);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->certainty, Certainty::Abstained);
}

// A process's resident set (a watched script on the CPU): flat but for the allocator trimming
// and mapping a few MiB at a time. A least-squares line through the later half tilts up by
// about 2% per 100 steps here; the median of the pairwise slopes stays flat.
TEST(Verdicts, MemoryCreepIgnoresTheResidentSetsDipsAndJumps) {
    RunResult r = steady(60);
    constexpr int64_t kMiB = int64_t{1} << 20;
    for (auto& s : r.steps) {
        s.peakAllocatedBytes = 750 * kMiB;
    }
    for (int i : {31, 32, 34, 37}) {
        r.steps[static_cast<size_t>(i)].peakAllocatedBytes -= 8 * kMiB;
    }
    for (int i = 55; i < 60; ++i) {
        r.steps[static_cast<size_t>(i)].peakAllocatedBytes += 3 * kMiB;
    }
    const std::optional<RunVerdict> v = find(judgeRun(r), VerdictKind::MemoryCreep);
    EXPECT_TRUE(!v || v->severity == Severity::Info) << v->evidence;
    EXPECT_TRUE(!v || v->certainty != Certainty::Firm);
}

TEST(Verdicts, MemoryPressureAtNinetyAndNinetySevenPercent) {
    RunResult r = steady(10);
    MemorySample m;
    m.deviceTotal = int64_t{1000} << 20;
    r.memoryTimeline.push_back(m);
    for (auto& s : r.steps) {
        s.peakReservedBytes = int64_t{890} << 20;
    }
    EXPECT_FALSE(find(judgeRun(r), VerdictKind::MemoryPressure));
    r.steps.back().peakReservedBytes = int64_t{950} << 20;
    ASSERT_TRUE(find(judgeRun(r), VerdictKind::MemoryPressure));
    EXPECT_EQ(find(judgeRun(r), VerdictKind::MemoryPressure)->severity, Severity::Warn);
    r.steps.back().peakReservedBytes = int64_t{980} << 20;
    EXPECT_EQ(find(judgeRun(r), VerdictKind::MemoryPressure)->severity, Severity::Critical);
}

TEST(Verdicts, RecompilesAfterTheFirstCompileAndAtTheLimit) {
    RunResult r = steady(20);
    r.source = RunSource{};
    r.source->torchCompile = true;
    // The first compile, and one more as a second shape makes the graph dynamic.
    for (int i : {0, 3}) {
        r.steps[static_cast<size_t>(i)].compiled = true;
    }
    EXPECT_FALSE(find(judgeRun(r), VerdictKind::Recompiles));
    // Compiled steps count as warmup, and the script's warmup grows by them (as the watcher
    // writes it): the rule does not read the warmup.
    for (int i = 5; i < 11; ++i) {
        r.steps[static_cast<size_t>(i)].compiled = true;
        r.steps[static_cast<size_t>(i)].warmup = true;
    }
    r.config.warmupSteps = 11;
    const std::optional<RunVerdict> v = find(judgeRun(resummarize(r)), VerdictKind::Recompiles);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->value, 7.0);
    EXPECT_EQ(v->severity, Severity::Critical);
    EXPECT_EQ(v->firstStep, 3);
    r.steps[10].compiled = false;
    const std::optional<RunVerdict> w = find(judgeRun(resummarize(r)), VerdictKind::Recompiles);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->severity, Severity::Warn) << "6 recompiles";
}

TEST(Verdicts, PeriodicStallsNameTheirPeriodAndNothingElse) {
    RunResult r = steady(60);
    for (auto& s : r.steps) {
        if (!s.warmup && s.index % 10 == 9) {
            s.totalMs = 250.0; // a checkpoint every 10 steps
            s.optimizerMs = 205.0;
        }
    }
    const auto all = judgeRun(resummarize(r));
    const std::optional<RunVerdict> v = find(all, VerdictKind::PeriodicStalls);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->certainty, Certainty::Firm);
    EXPECT_NE(v->evidence.find("1 step in 10 takes"), std::string::npos) << v->evidence;
    EXPECT_EQ(warnings(all), std::vector<std::string>{"periodic-stalls"});
    // Slow steps off the period (a busy neighbour) leave the period as it is.
    for (int i : {13, 26, 27, 44}) {
        r.steps[static_cast<size_t>(i)].totalMs = 120.0;
    }
    const auto busy = find(judgeRun(resummarize(r)), VerdictKind::PeriodicStalls);
    ASSERT_TRUE(busy);
    EXPECT_NE(busy->evidence.find("1 step in 10 takes 250.0 ms"), std::string::npos)
        << busy->evidence;
    // Stalls on two steps in five, anywhere (a machine far busier): some line up by chance on
    // a long period, but the steps off it stall nearly as often, so there is no period.
    std::mt19937 gen(5);
    std::bernoulli_distribution slow(0.4);
    for (auto& s : r.steps) {
        s.totalMs = !s.warmup && slow(gen) ? 180.0 : 50.0;
    }
    EXPECT_FALSE(find(judgeRun(resummarize(r)), VerdictKind::PeriodicStalls));
    const std::optional<RunVerdict> a = find(judgeRun(steady(20)), VerdictKind::PeriodicStalls);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->certainty, Certainty::Abstained);
}

TEST(Verdicts, NoisyAndDriftSayHowManyStepsWouldSettleThem) {
    RunResult r = steady(30);
    std::mt19937 gen(11);
    std::lognormal_distribution<double> wide(0.0, 0.4);
    for (auto& s : r.steps) {
        if (!s.warmup) {
            s.totalMs = 50.0 * wide(gen);
            s.forwardMs = 0.3 * s.totalMs;
            s.backwardMs = 0.6 * s.totalMs;
            s.optimizerMs = 0.1 * s.totalMs;
        }
    }
    const std::optional<RunVerdict> noisy = find(judgeRun(resummarize(r)), VerdictKind::Noisy);
    ASSERT_TRUE(noisy);
    EXPECT_NE(noisy->evidence.find("steps would pin it to ±2%"), std::string::npos);

    RunResult d = steady(40);
    for (auto& s : d.steps) {
        s.totalMs *= 1.0 + 0.01 * s.index; // +40% across the run
    }
    const std::optional<RunVerdict> drift = find(judgeRun(resummarize(d)), VerdictKind::Drift);
    ASSERT_TRUE(drift);
    EXPECT_EQ(drift->severity, Severity::Critical);
    EXPECT_GT(drift->value, 0.3);
}

TEST(Verdicts, SurviveTheResultSetAndAreComputedForOldFiles) {
    ResultSet set;
    set.runs.push_back(watchedWithData(30, 0.3));
    set.runs.back().source->script = "train.py";
    const std::string text = toJson(set);
    const ResultSet back = parseResultSet(text);
    ASSERT_EQ(back.runs.size(), 1u);
    const auto expected = judgeRun(set.runs[0]);
    ASSERT_EQ(back.runs[0].verdicts.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(back.runs[0].verdicts[i].kind, expected[i].kind);
        EXPECT_EQ(back.runs[0].verdicts[i].evidence, expected[i].evidence);
        EXPECT_DOUBLE_EQ(back.runs[0].verdicts[i].low, expected[i].low);
    }
    // A file from before verdicts: judged as it is read.
    auto doc = nlohmann::json::parse(text);
    doc["runs"][0].erase("verdicts");
    EXPECT_EQ(parseResultSet(doc.dump()).runs[0].verdicts.size(), expected.size());
}

TEST(Verdicts, HostileVerdictsAreRefusedWithTheirPath) {
    ResultSet set;
    set.runs.push_back(watchedWithData(30, 0.3));
    const auto doc = nlohmann::json::parse(toJson(set));
    const auto refused = [&](const char* key, const nlohmann::json& value) {
        auto bad = doc;
        bad["runs"][0]["verdicts"][0][key] = value;
        try {
            parseResultSet(bad.dump());
        } catch (const ResultFormatError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(refused("kind", "gpu-on-fire").find("$.runs[0].verdicts[0].kind"), std::string::npos);
    EXPECT_NE(refused("interval", nlohmann::json::array({2, 1})).find("low end is above"),
              std::string::npos);
    EXPECT_NE(refused("interval", nlohmann::json::array({1})).find("expected [low, high]"),
              std::string::npos);
    EXPECT_NE(refused("chart", "../../etc").find("not a chart"), std::string::npos);
    EXPECT_NE(refused("value", "inf").find("verdicts[0].value"), std::string::npos);
    EXPECT_NE(refused("severity", 3).find("verdicts[0].severity"), std::string::npos);
}

// A long run is judged in one linear pass. The time is printed for bench/README.md ("The
// verdicts' cost"), never asserted: a test may not depend on the machine's speed.
TEST(Verdicts, AHundredThousandStepsAreJudgedLikeAHundred) {
    const RunResult r = steady(100'000);
    const auto t0 = std::chrono::steady_clock::now();
    const auto all = judgeRun(r);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "judgeRun: 100,000 steps in " << ms << " ms\n";
    EXPECT_TRUE(warnings(all).empty());
    ASSERT_TRUE(find(all, VerdictKind::ComputeBound));
}

// A file may hold its steps in any order (the fuzzer found one with step 1 before step 0):
// the rules read them in index order, so the verdicts are those of the ordered run and the
// run they are written with reads back (a verdict whose first step is after its last is
// refused).
TEST(Verdicts, StepsOutOfOrderGiveARangeThatReadsBack) {
    const RunResult ordered = steady(12);
    RunResult r = ordered;
    std::reverse(r.steps.begin(), r.steps.end());
    resummarize(r);
    const auto all = judgeRun(r);
    const auto expected = judgeRun(ordered);
    ASSERT_FALSE(all.empty());
    ASSERT_EQ(all.size(), expected.size());
    for (size_t i = 0; i < all.size(); ++i) {
        const RunVerdict& v = all[i];
        EXPECT_LE(v.firstStep, v.lastStep) << toString(v.kind);
        EXPECT_EQ(v.kind, expected[i].kind);
        EXPECT_EQ(v.firstStep, expected[i].firstStep) << toString(v.kind);
        EXPECT_EQ(v.lastStep, expected[i].lastStep) << toString(v.kind);
        EXPECT_EQ(v.evidence, expected[i].evidence) << toString(v.kind);
    }
    const RunResult back = parseRun(runToJsonLine(r));
    EXPECT_EQ(back.id, r.id);
    EXPECT_EQ(back.verdicts.size(), all.size());
}
