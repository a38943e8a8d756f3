// The execution variants on a real GPU (docs/MEASUREMENT.md, "Execution variants"): each
// forced SDPA backend against the naive math, TF32, CUDA graphs against eager, and the GPU's
// busy share. Skipped without a GPU, like gpu_test.cpp; the GPU check kit runs them.

#include "gpu_helpers.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/records.h"

#include <ATen/Context.h>
#include <cmath>
#include <iostream>

using namespace lmprof::engine;
using namespace lmprof::engine::gpu_test;

// Each scaled_dot_product_attention backend trains like the naive math: the same weights
// and batch give per-step losses within bf16's rounding over three steps. A backend the
// GPU cannot run for this configuration must be refused before the run (checkRunnable),
// with its reason printed; math, LibTorch's reference, always runs.
TEST_F(Gpu, EachSdpaBackendTrainsLikeTheNaiveMath) {
    RunConfig naive = gpuConfig("tiny", Precision::Bf16, Mode::Train, 128, 4, 0, 3);
    const RunResult reference = runOn(naive);
    ASSERT_EQ(reference.status, RunStatus::Ok) << reference.error.value_or("");
    for (AttentionKind kind : kAttentionKinds) {
        if (kind == AttentionKind::Naive) {
            continue;
        }
        SCOPED_TRACE(std::string(toString(kind)));
        RunConfig c = naive;
        c.attention = kind;
        if (auto refusal = checkRunnable(c)) {
            std::cout << toString(kind) << " refused: " << refusal->message() << "\n";
            EXPECT_NE(kind, AttentionKind::SdpaMath);
            EXPECT_NE(kind, AttentionKind::Sdpa);
            continue;
        }
        const RunResult r = runOn(c);
        ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
        ASSERT_EQ(r.steps.size(), reference.steps.size());
        for (size_t i = 0; i < r.steps.size(); ++i) {
            ASSERT_TRUE(r.steps[i].loss && reference.steps[i].loss);
            EXPECT_NEAR(*r.steps[i].loss, *reference.steps[i].loss, 2e-2 * *reference.steps[i].loss)
                << "step " << i;
        }
        std::cout << toString(kind) << ": step " << r.summary.totalMs.mean << " ms (naive "
                  << reference.summary.totalMs.mean << " ms)\n";
    }
}

// tf32 on: fp32 matmuls on tensor cores, losses within TF32's rounding of fp32's, MFU
// against the TF32 peak, and cuBLAS's setting back as it was after the run.
TEST_F(Gpu, Tf32RunsOnTensorCoresAndItsMfuUsesTheTf32Peak) {
    RunConfig c = gpuConfig("small", Precision::Fp32, Mode::Train, 256, 8, 1, 3);
    const bool before = at::globalContext().allowTF32CuBLAS();
    const RunResult fp32 = runOn(c);
    c.tf32 = true;
    const RunResult tf32 = runOn(c);
    ASSERT_EQ(fp32.status, RunStatus::Ok) << fp32.error.value_or("");
    ASSERT_EQ(tf32.status, RunStatus::Ok) << tf32.error.value_or("");
    EXPECT_EQ(at::globalContext().allowTF32CuBLAS(), before);
    ASSERT_TRUE(fp32.steps.back().loss && tf32.steps.back().loss);
    EXPECT_NEAR(*tf32.steps.back().loss, *fp32.steps.back().loss, 1e-2 * *fp32.steps.back().loss);
    ASSERT_TRUE(fp32.summary.mfu && tf32.summary.mfu) << "no peak entry for this GPU";
    // tflops / mfu is the peak the MFU was taken against: TF32's is several times fp32's.
    const double fp32Peak = fp32.summary.tflops / *fp32.summary.mfu;
    const double tf32Peak = tf32.summary.tflops / *tf32.summary.mfu;
    EXPECT_GT(tf32Peak, 4.0 * fp32Peak);
    std::cout << "small fp32 ctx 256 b8: " << fp32.summary.totalMs.mean << " ms, tf32 "
              << tf32.summary.totalMs.mean << " ms\n";
}

// cuda_graphs: the measured steps are replays of one capture, each timed by phase with the
// events inside the graph, and train exactly as eager steps do (same losses, 5 steps).
TEST_F(Gpu, CudaGraphReplayTrainsLikeEagerAndTimesItsPhases) {
    RunConfig c = gpuConfig("tiny", Precision::Fp32, Mode::Train, 128, 4, kGraphWarmupSteps, 5);
    const RunResult eager = runOn(c);
    c.cudaGraphs = true;
    const RunResult graphs = runOn(c);
    ASSERT_EQ(eager.status, RunStatus::Ok) << eager.error.value_or("");
    ASSERT_EQ(graphs.status, RunStatus::Ok) << graphs.error.value_or("");
    ASSERT_TRUE(graphs.graph) << "no capture recorded";
    EXPECT_GT(graphs.graph->captureMs, 0.0);
    EXPECT_GT(graphs.graph->poolBytes, 0);
    ASSERT_EQ(graphs.steps.size(), eager.steps.size());
    for (size_t i = 0; i < graphs.steps.size(); ++i) {
        const StepRecord& g = graphs.steps[i];
        EXPECT_EQ(g.graphReplay, !g.warmup) << "step " << i;
        ASSERT_TRUE(g.loss && eager.steps[i].loss);
        EXPECT_NEAR(*g.loss, *eager.steps[i].loss, 1e-4 * std::abs(*eager.steps[i].loss))
            << "step " << i;
        if (g.graphReplay) {
            EXPECT_GT(g.forwardMs, 0.0);
            EXPECT_GT(g.backwardMs, 0.0);
            EXPECT_GT(g.optimizerMs, 0.0);
            EXPECT_LE(g.forwardMs + g.backwardMs + g.optimizerMs, 1.05 * g.totalMs + 0.05);
        }
    }
}

// What graphs are for: a small model's step is launch-bound, and a replay launches once.
TEST_F(Gpu, CudaGraphStepIsFasterThanEagerForSmall) {
    RunConfig c = gpuConfig("small", Precision::Bf16, Mode::Train, 128, 4, 3, 10);
    const RunResult eager = runOn(c);
    c.cudaGraphs = true;
    const RunResult graphs = runOn(c);
    ASSERT_EQ(eager.status, RunStatus::Ok) << eager.error.value_or("");
    ASSERT_EQ(graphs.status, RunStatus::Ok) << graphs.error.value_or("");
    std::cout << "small bf16 ctx 128 b4: eager " << eager.summary.totalMs.mean << " ms, graphs "
              << graphs.summary.totalMs.mean << " ms (capture " << graphs.graph->captureMs
              << " ms)\n";
    EXPECT_LT(graphs.summary.totalMs.median, eager.summary.totalMs.median);
}

// Every CUDA run records the GPU's busy share from CUPTI (and NVML's when telemetry is on);
// a tiny model at batch 1 keeps the GPU waiting on the host, so it is marked host-bound.
TEST_F(Gpu, BusyShareIsRecordedAndATinyBatchIsHostBound) {
    RunConfig c = gpuConfig("tiny", Precision::Bf16, Mode::Train, 128, 1, 2, 10);
    c.telemetryHz = 10.0;
    const RunResult tiny = runOn(c);
    ASSERT_EQ(tiny.status, RunStatus::Ok) << tiny.error.value_or("");
    ASSERT_TRUE(tiny.summary.gpuBusy) << tiny.busyNote.value_or("no note");
    EXPECT_GT(*tiny.summary.gpuBusy, 0.0);
    EXPECT_LE(*tiny.summary.gpuBusy, 1.0);
    for (const auto& s : tiny.steps) {
        ASSERT_TRUE(s.kernelMs);
        EXPECT_LE(*s.kernelMs, s.totalMs);
    }
    EXPECT_EQ(hostBound(tiny.summary), std::optional(true));
    RunConfig big = gpuConfig("small", Precision::Bf16, Mode::Train, 512, 16, 2, 5);
    const RunResult busy = runOn(big);
    ASSERT_EQ(busy.status, RunStatus::Ok) << busy.error.value_or("");
    ASSERT_TRUE(busy.summary.gpuBusy);
    std::cout << "busy share: tiny b1 " << *tiny.summary.gpuBusy << " (NVML "
              << tiny.summary.gpuBusyNvml.value_or(-1) << "), small b16 ctx 512 "
              << *busy.summary.gpuBusy << "\n";
    EXPECT_GT(*busy.summary.gpuBusy, *tiny.summary.gpuBusy);
}
