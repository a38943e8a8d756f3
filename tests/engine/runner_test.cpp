// The measurement loop on the CPU: modes and phases, warmup records, memory physics,
// precisions, faults turned into data, refusals before a run.

#include "lmprof/engine/devices.h"
#include "lmprof/engine/runner.h"
#include "test_configs.h"

#include <gtest/gtest.h>

using namespace lmprof::engine;
using lmprof::engine::testing::tinyCpu;

namespace {

RunResult run(const RunConfig& c) {
    return runBenchmark(c, "test", nullptr, nullptr);
}

int64_t fp32ParamBytes(const RunConfig& c) {
    return parameterCount(c.model) * 4;
}

} // namespace

TEST(Runner, TrainRecordsWarmupAndMeasuredStepsWithAllPhases) {
    const RunConfig c = tinyCpu(Mode::Train, 2, 3);
    const RunResult r = run(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    EXPECT_EQ(r.resolvedDevice, "cpu");
    ASSERT_EQ(r.steps.size(), 5u);
    for (size_t i = 0; i < r.steps.size(); ++i) {
        const auto& s = r.steps[i];
        EXPECT_EQ(s.index, static_cast<int>(i));
        EXPECT_EQ(s.warmup, i < 2);
        EXPECT_GT(s.forwardMs, 0.0);
        EXPECT_GT(s.backwardMs, 0.0);
        EXPECT_GT(s.optimizerMs, 0.0);
        // The step's wall time contains its phases.
        EXPECT_GE(s.totalMs, s.forwardMs + s.backwardMs + s.optimizerMs);
    }
    EXPECT_EQ(r.summary.forwardMs.n, 3);
    EXPECT_GT(r.summary.tokensPerS, 0.0);
    EXPECT_FALSE(r.summary.mfu); // unknown peak on a CPU
}

TEST(Runner, ForwardModeRunsOnlyTheForwardPhase) {
    const RunResult r = run(tinyCpu(Mode::Forward, 0, 2));
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    for (const auto& s : r.steps) {
        EXPECT_GT(s.forwardMs, 0.0);
        EXPECT_EQ(s.backwardMs, 0.0);
        EXPECT_EQ(s.optimizerMs, 0.0);
    }
    EXPECT_EQ(r.summary.backwardMs.mean, 0.0);
}

TEST(Runner, CpuMemoryPeaksFollowTheTrainingStepsPhysics) {
    const RunConfig c = tinyCpu(Mode::Train, 1, 1);
    const RunResult r = run(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    const int64_t params = fp32ParamBytes(c);
    const auto& peaks = r.summary.peakBytes;
    // Weights are resident throughout; the forward adds activations on top.
    EXPECT_GT(peaks.forward, params);
    // The optimizer phase holds weights, gradients and both AdamW moments.
    EXPECT_GE(peaks.optimizer, 4 * params);
    // Backward holds weights and gradients at least.
    EXPECT_GE(peaks.backward, 2 * params);
    // Memory samples exist for every phase and step.
    bool seen[3] = {false, false, false};
    for (const auto& m : r.memoryTimeline) {
        seen[static_cast<int>(m.phase)] = true;
        EXPECT_GT(m.allocated, 0);
        EXPECT_GT(m.rss, 0);
    }
    EXPECT_TRUE(seen[0] && seen[1] && seen[2]);
}

TEST(Runner, ReducedPrecisionsRunOnTheCpu) {
    for (Precision p : {Precision::Bf16, Precision::Fp16, Precision::Bf16Pure}) {
        RunConfig c = tinyCpu(Mode::Train, 1, 1);
        c.precision = p;
        const RunResult r = run(c);
        if (auto refusal = checkRunnable(c)) {
            // A build that cannot run it refuses up front, naming the precision.
            EXPECT_EQ(refusal->field, "precision");
            EXPECT_EQ(r.status, RunStatus::Error);
            continue;
        }
        ASSERT_EQ(r.status, RunStatus::Ok) << toString(p) << ": " << r.error.value_or("");
        if (p == Precision::Fp16) {
            ASSERT_TRUE(r.steps[0].lossScale);
            EXPECT_EQ(*r.steps[0].lossScale, 65536.0);
        }
        if (p == Precision::Bf16Pure) {
            // bf16 weights: the forward peak is far below the fp32 weight bytes + activations.
            EXPECT_LT(r.summary.peakBytes.optimizer, 4 * fp32ParamBytes(c));
        }
    }
}

TEST(Runner, InjectedOutOfMemoryEndsTheRunAsOomInThatPhase) {
    for (Phase phase : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
        RunConfig c = tinyCpu(Mode::Train, 1, 2);
        c.faultOomPhase = phase;
        const RunResult r = run(c);
        EXPECT_EQ(r.status, RunStatus::Oom) << toString(phase);
        ASSERT_TRUE(r.failedPhase);
        EXPECT_EQ(*r.failedPhase, phase);
        ASSERT_TRUE(r.error);
        EXPECT_NE(r.error->find("out of memory"), std::string::npos) << *r.error;
        EXPECT_TRUE(r.steps.empty()); // the fault hits the first step
    }
    // The next run on the same thread is unaffected (autocast, memory hook, NVTX all reset).
    const RunResult ok = run(tinyCpu(Mode::Train, 0, 1));
    EXPECT_EQ(ok.status, RunStatus::Ok) << ok.error.value_or("");
}

TEST(Runner, InvalidConfigAndMissingDeviceAreRefusedWithTheField) {
    RunConfig c = tinyCpu();
    c.model.numHeads = 3;
    RunResult r = run(c);
    EXPECT_EQ(r.status, RunStatus::Error);
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->find("model.num_heads"), std::string::npos) << *r.error;

    // checkRunnable validates first: an invalid field is refused before any device probe.
    c = tinyCpu();
    c.batchSize = 0;
    const auto invalid = checkRunnable(c);
    ASSERT_TRUE(invalid);
    EXPECT_EQ(invalid->field, "batch_size");

    c = tinyCpu();
    c.device = "cuda:7";
    const auto refusal = checkRunnable(c);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->field, "device");
    r = run(c);
    EXPECT_EQ(r.status, RunStatus::Error);
    EXPECT_TRUE(r.steps.empty());
}

TEST(Runner, CancelBeforeTheFirstStepKeepsNothingAndSaysCancelled) {
    std::atomic<bool> cancel{true};
    const RunResult r = runBenchmark(tinyCpu(), "c", nullptr, &cancel);
    EXPECT_EQ(r.status, RunStatus::Cancelled);
    EXPECT_TRUE(r.steps.empty());
}

// A run's thread count is its own: the next run that asks for none (0) has LibTorch's
// default again, and says so in its environment.
TEST(Runner, AThreadCountLastsOnlyItsRun) {
    const auto threadsNow = [] { return probeEnvironment(resolveDevice("cpu")).cpuThreads; };
    const int byDefault = threadsNow();
    RunConfig c = tinyCpu();
    c.threads = byDefault == 1 ? 2 : 1;
    ASSERT_EQ(run(c).status, RunStatus::Ok);
    EXPECT_EQ(threadsNow(), byDefault);
}

TEST(Runner, DevicesResolveAndTheEnvironmentIsDescribed) {
    EXPECT_EQ(resolveDevice("cuda"), (DeviceTarget{true, 0}));
    EXPECT_EQ(resolveDevice("cuda:3").name(), "cuda:3");
    EXPECT_EQ(resolveDevice("cpu"), DeviceTarget{});
    EXPECT_EQ(resolveDevice("cpu").name(), "cpu");
    const std::string autoDevice = resolveDevice("auto").name();
    EXPECT_TRUE(autoDevice == "cpu" || autoDevice == "cuda:0") << autoDevice;
    const Environment env = probeEnvironment(resolveDevice("cpu"));
    EXPECT_FALSE(env.torch.empty());
    EXPECT_EQ(env.device.type, "cpu");
    EXPECT_GT(env.device.memoryBytes, 0);
    EXPECT_GT(env.cpuThreads, 0);
}
