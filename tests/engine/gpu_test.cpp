// The engine's CUDA paths on a real GPU: event timing against the host clock, allocator
// peaks and their per-phase reset, a real out-of-memory in each phase followed by a clean
// run, autocast dtypes, fused AdamW against the CPU, cudaMemGetInfo samples, NVML
// telemetry matched by PCI bus id, the allocator trace behind snapshots, and MFU.
// Every test skips (saying why) where LibTorch has no CUDA or no GPU is present; the GPU
// check kit (scripts/gpu/check.sh) runs them on a lent GPU machine.

#include "bench/adamw.h"
#include "bench/autocast_scope.h"
#include "bench/device_peaks.h"
#include "bench/step_context.h"
#include "gpu_helpers.h"
#include "lmprof/engine/data_parallel.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/local_engine.h"
#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/precision_lab.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/runner.h"
#include "lmprof/engine/session.h"
#include "model/transformer.h"
#include "platform/cuda_backend.h"
#include "platform/nvml.h"
#include "session_helpers.h"

#include <ATen/ATen.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <iostream>
#include <map>

using namespace lmprof::engine;
using namespace lmprof::engine::gpu_test;

// --- timing -------------------------------------------------------------------------------

TEST_F(Gpu, EventTimerAgreesWithTheHostClockAroundSynchronizedWork) {
    const at::Tensor a = at::randn({4096, 4096}, onGpu());
    at::Tensor c = at::matmul(a, a); // warm up cuBLAS outside the timed region
    cuda::synchronize(0);
    cuda::EventTimer timer;
    const auto t0 = std::chrono::steady_clock::now();
    timer.start();
    for (int i = 0; i < 40; ++i) {
        c = at::matmul(a, c) * (1.0 / 64.0);
    }
    timer.stop();
    cuda::synchronize(0);
    const double hostMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double eventMs = timer.elapsedMs();
    EXPECT_GT(eventMs, 5.0) << "the work is too short to compare clocks";
    EXPECT_LT(relativeGap(eventMs, hostMs), 0.05) << "events " << eventMs << " ms, host " << hostMs;
}

TEST_F(Gpu, PhaseEventTimesAddUpToTheSynchronizedStepWallTime) {
    // small at context 512: every phase is GPU-bound, so the host launches far ahead and
    // the step's wall time (ending in a synchronize) is the GPU's time plus launch latency.
    RunConfig c = gpuConfig("small", Precision::Fp32, Mode::Train, 512, 8, 2, 4);
    c.telemetryHz = 0;
    const RunResult r = runOn(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    for (const auto& s : r.steps) {
        if (s.warmup) {
            continue;
        }
        const double events = s.forwardMs + s.backwardMs + s.optimizerMs;
        EXPECT_GT(s.forwardMs, 0.0);
        EXPECT_GT(s.backwardMs, s.forwardMs) << "backward does about twice the forward's work";
        EXPECT_GT(s.optimizerMs, 0.0);
        EXPECT_LT(relativeGap(events, s.totalMs), 0.05)
            << "step " << s.index << ": events " << events << " ms, wall " << s.totalMs << " ms";
    }
}

// --- allocator statistics -----------------------------------------------------------------

TEST_F(Gpu, PhasePeakCoversAKnownAllocationAndTheResetIsolatesTheNextPhase) {
    bench::MemoryMeter meter(DeviceTarget{true, 0}, nullptr);
    cuda::synchronize(0);
    const int64_t base = meter.allocated();

    meter.resetPeak(); // "phase 1": a 512 MiB temporary
    {
        at::Tensor big = at::empty({512 * kMiB}, onGpu(at::kByte));
        big.fill_(1);
    }
    const int64_t peak1 = meter.peakAllocated();
    EXPECT_GE(peak1 - base, 512 * kMiB);
    EXPECT_GE(meter.peakReserved(), peak1);
    EXPECT_EQ(meter.allocated(), base) << "the temporary was freed";

    meter.resetPeak(); // "phase 2": only 16 MiB; phase 1's peak must not leak into it
    {
        at::Tensor small = at::empty({16 * kMiB}, onGpu(at::kByte));
        small.fill_(1);
    }
    const int64_t peak2 = meter.peakAllocated();
    EXPECT_GE(peak2 - base, 16 * kMiB);
    EXPECT_LT(peak2 - base, 512 * kMiB);
}

TEST_F(Gpu, TrainingPhasePeaksHoldTheTrainingStateOnTheDevice) {
    const RunConfig c = gpuConfig("tiny", Precision::Fp32, Mode::Train, 128, 4, 1, 2);
    const RunResult r = runOn(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    const int64_t params = parameterCount(c.model) * 4;
    const auto& last = r.steps.back();
    // forward: parameters resident; backward: + gradients; optimizer: + both AdamW moments.
    EXPECT_GE(last.phasePeakBytes.forward, params);
    EXPECT_GE(last.phasePeakBytes.backward, 2 * params);
    EXPECT_GE(last.phasePeakBytes.optimizer, 4 * params);
    // The logits (B, T, V) fp32 live in the forward phase, on top of the parameters.
    EXPECT_GE(last.phasePeakBytes.forward,
              params + c.batchSize * c.contextLength * c.model.vocabSize * 4);
    EXPECT_GE(last.peakReservedBytes, last.peakAllocatedBytes);
}

TEST_F(Gpu, MemorySamplesCarryTheDevicesUsedAndTotalBytes) {
    RunConfig c = gpuConfig("tiny", Precision::Fp32, Mode::Train, 128, 4, 1, 3);
    c.sampleHz = 200;
    const RunResult r = runOn(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    ASSERT_FALSE(r.memoryTimeline.empty());
    const int64_t total = cuda::deviceInfo(0).memoryBytes;
    for (const auto& s : r.memoryTimeline) {
        EXPECT_GT(s.deviceTotal, total / 2);
        EXPECT_LE(s.deviceTotal, total);
        EXPECT_GE(s.deviceUsed, s.reserved) << "the driver sees at least the allocator's cache";
        EXPECT_GE(s.reserved, s.allocated);
    }
}

// --- out of memory ------------------------------------------------------------------------

namespace {

// Submits one run and waits for its result (up to five minutes).
RunResult runInSession(Session& session, const RunConfig& config) {
    session.submit(config);
    const std::vector<RunResult> done = lmprof::engine::testing::results(
        lmprof::engine::testing::collect(session, 1, std::chrono::minutes(5)));
    if (done.empty()) {
        ADD_FAILURE() << "the run did not finish within five minutes";
        return {};
    }
    return done.front();
}

} // namespace

TEST_F(Gpu, RealOutOfMemoryInEachPhaseEndsTheRunOomAndTheNextRunSucceeds) {
    // The failing run holds a lot of the card when it fails: 2.7B training keeps 13 GiB of
    // parameters from the forward on, 27 GiB with gradients, 54 GiB once the optimizer
    // has created its moments. The run after it needs more than half the card, so memory
    // the failed run kept would make it fail too.
    const int64_t card = cuda::deviceInfo(0).memoryBytes;
    RunConfig next = gpuConfig("2.7B", Precision::Fp32, Mode::Forward, 512, 1, 0, 1);
    next.telemetryHz = 0;
    // The smallest batch the memory model predicts at 60% of the card or more.
    while (predictPeak(next).total() < card * 6 / 10 && next.batchSize < 64) {
        ++next.batchSize;
    }
    Session session;
    for (const Phase phase : kPhases) {
        SCOPED_TRACE(std::string(toString(phase)));
        RunConfig bad = gpuConfig("2.7B", Precision::Fp32, Mode::Train, 128, 4, 0, 1);
        bad.telemetryHz = 0;
        bad.faultOomPhase = phase;
        const RunResult oom = runInSession(session, bad);
        EXPECT_EQ(oom.status, RunStatus::Oom) << oom.error.value_or("");
        EXPECT_EQ(oom.failedPhase, phase);
        // The allocator's own message, not the CPU fallback's "simulated" one.
        EXPECT_NE(oom.error.value_or("").find("CUDA out of memory"), std::string::npos)
            << oom.error.value_or("");
        // Straight after the failed run: its tensors are gone and the cache was handed back
        // (what stays allocated is cuBLAS's workspaces, kept for the process).
        const auto stats = cuda::allocatorStats(0);
        EXPECT_LE(stats.allocated, 256 * kMiB);
        EXPECT_EQ(stats.reserved, stats.allocated) << "free cached blocks were not released";

        const RunResult after = runInSession(session, next);
        EXPECT_EQ(after.status, RunStatus::Ok) << after.error.value_or("");
        EXPECT_GT(after.summary.peakBytes.forward, card / 2) << "the next run needs half the card";
    }
}

// --- precision ----------------------------------------------------------------------------

TEST_F(Gpu, AutocastGivesTheSeedsDtypesOnCuda) {
    const RunConfig c = gpuConfig("tiny", Precision::Fp32, Mode::Train, 64, 2, 0, 1);
    bench::StepContext ctx(c, DeviceTarget{true, 0});
    for (const auto dtype : {at::kBFloat16, at::kHalf}) {
        SCOPED_TRACE(c10::toString(dtype));
        at::Tensor loss;
        {
            bench::AutocastScope autocast(at::kCUDA, dtype);
            const at::Tensor x = ctx.model->embedding->forward(ctx.inputs);
            EXPECT_EQ(x.scalar_type(), at::kFloat) << "the embedding is a lookup, not a matmul";
            const at::Tensor q = ctx.model->blocks[0]->attn->qProj(x);
            EXPECT_EQ(q.scalar_type(), dtype) << "linear layers run in the autocast dtype";
            EXPECT_EQ(ctx.model->lnFinal(q).scalar_type(), dtype)
                << "RMSNorm computes in fp32 and returns its input's dtype";
            const at::Tensor logits = ctx.model->forward(ctx.inputs);
            EXPECT_EQ(logits.scalar_type(), dtype);
            loss = model::lmLoss(logits, ctx.targets);
            EXPECT_EQ(loss.scalar_type(), at::kFloat);
        }
        EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCUDA)) << "the scope restored it";
        loss.backward();
        for (const auto& p : ctx.model->parameters()) {
            EXPECT_EQ(p.scalar_type(), at::kFloat) << "master weights stay fp32";
            ASSERT_TRUE(p.grad().defined());
            EXPECT_EQ(p.grad().scalar_type(), at::kFloat);
            p.mutable_grad() = at::Tensor();
        }
    }
}

TEST_F(Gpu, EveryPrecisionRunsATrainingStepOnCuda) {
    for (const auto precision :
         {Precision::Fp32, Precision::Bf16, Precision::Fp16, Precision::Bf16Pure}) {
        SCOPED_TRACE(std::string(toString(precision)));
        const RunResult r = runOn(gpuConfig("tiny", precision, Mode::Train, 128, 4, 1, 2));
        ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
        EXPECT_GT(r.summary.totalMs.mean, 0.0);
        if (precision == Precision::Fp16) {
            ASSERT_TRUE(r.steps.front().lossScale.has_value());
            EXPECT_EQ(*r.steps.front().lossScale, 65536.0);
        }
    }
}

TEST_F(Gpu, FusedAdamWOnCudaMatchesTheCpuUpdate) {
    at::manual_seed(7);
    std::vector<at::Tensor> initial, cpuParams, gpuParams;
    for (const auto& shape : std::vector<std::vector<int64_t>>{{256, 128}, {1000}, {64, 64}}) {
        const at::Tensor p = at::randn(shape);
        initial.push_back(p.clone());
        cpuParams.push_back(p.clone());
        gpuParams.push_back(p.to(at::Device(at::kCUDA, 0)));
    }
    bench::FusedAdamW onCpu(cpuParams);
    bench::FusedAdamW onGpu(gpuParams);
    for (int step = 0; step < 5; ++step) {
        for (size_t i = 0; i < cpuParams.size(); ++i) {
            const at::Tensor g = at::randn(cpuParams[i].sizes());
            cpuParams[i].mutable_grad() = g.clone();
            gpuParams[i].mutable_grad() = g.to(gpuParams[i].device());
        }
        onCpu.step();
        onGpu.step();
    }
    for (size_t i = 0; i < cpuParams.size(); ++i) {
        const double diff = (gpuParams[i].cpu() - cpuParams[i]).abs().max().item<double>();
        EXPECT_LT(diff, 1e-5) << "parameter " << i;
        const double moved = (cpuParams[i] - initial[i]).abs().max().item<double>();
        EXPECT_GT(moved, 1e-3) << "five AdamW steps at lr 1e-3 must move parameter " << i;
    }
}

// --- telemetry ----------------------------------------------------------------------------

// The window's device list before its engine is loaded (LocalSession's preview, from NVML)
// is the engine's own: the same devices, memory and name (local_engine.cpp).
TEST_F(Gpu, TheDevicePreviewBeforeTheEngineLoadsIsWhatTheEngineSees) {
    ::setenv("LMPROF_ENGINE_MODULE", LMPROF_ENGINE_MODULE_PATH, 1); // available, never loaded
    const LocalSession preview;
    EXPECT_EQ(preview.devices(), availableDevices());
    for (int i = 0; i < cuda::deviceCount(); ++i) {
        const std::string name = "cuda:" + std::to_string(i);
        EXPECT_TRUE(preview.isCuda(name));
        // NVML counts the whole framebuffer, CUDA what it can allocate: within 2%.
        const double engine = static_cast<double>(cuda::deviceInfo(i).memoryBytes);
        EXPECT_NEAR(static_cast<double>(preview.deviceMemoryBytes(name)), engine, 0.02 * engine)
            << name;
    }
    EXPECT_TRUE(preview.isCuda("auto"));
    EXPECT_EQ(preview.info().deviceName, cuda::deviceInfo(0).name);
    EXPECT_FALSE(engineLoaded());
}

TEST_F(Gpu, NvmlMatchesTheDeviceByBusIdAndReadsPlausibleValues) {
    std::string error;
    auto nvml = platform::Nvml::load(error);
    ASSERT_TRUE(nvml) << "NVML did not load on a GPU machine: " << error;
    const std::string busId = cuda::pciBusId(0);
    ASSERT_FALSE(busId.empty());
    // An index NVML does not have: only the bus id can find the device.
    ASSERT_TRUE(nvml->selectDevice(busId, 999, error)) << error;
    EXPECT_FALSE(nvml->selectDevice("0000:FF:1F.7", 0, error)) << "a bus id nobody has";

    ASSERT_TRUE(nvml->selectDevice(busId, 999, error)) << error;
    const at::Tensor a = at::randn({8192, 8192}, onGpu());
    for (int i = 0; i < 20; ++i) {
        (void)at::matmul(a, a);
    }
    TelemetrySample t;
    nvml->read(t); // while the products run
    cuda::synchronize(0);
    ASSERT_TRUE(t.powerW && t.smClockMHz && t.memClockMHz && t.temperatureC);
    EXPECT_GT(*t.powerW, 0.0);
    EXPECT_LT(*t.powerW, 2000.0);
    EXPECT_GT(*t.smClockMHz, 0.0);
    EXPECT_GT(*t.memClockMHz, 0.0);
    EXPECT_GT(*t.temperatureC, 0.0);
    EXPECT_LT(*t.temperatureC, 120.0);
}

TEST_F(Gpu, RunTelemetryHasGpuFieldsFromNvml) {
    RunConfig c = gpuConfig("small", Precision::Bf16, Mode::Train, 256, 8, 2, 6);
    c.telemetryHz = 10;
    const RunResult r = runOn(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    EXPECT_FALSE(r.telemetryNote) << *r.telemetryNote;
    ASSERT_FALSE(r.telemetry.empty());
    int withGpu = 0;
    for (const auto& t : r.telemetry) {
        withGpu += t.powerW && *t.powerW > 0 && t.smClockMHz && *t.smClockMHz > 0;
    }
    EXPECT_EQ(withGpu, static_cast<int>(r.telemetry.size()));
}

// --- snapshots and MFU --------------------------------------------------------------------

TEST_F(Gpu, SnapshotRecordsTheAllocatorHistoryAndItsLargestAllocations) {
    const auto path = std::filesystem::temp_directory_path() / "lmprof_gpu_test_snapshot.pickle";
    std::filesystem::remove(path);
    RunConfig c = gpuConfig("tiny", Precision::Fp32, Mode::Train, 128, 4, 1, 2);
    c.memorySnapshot = SnapshotRequest{path.string(), 1, 1, 100000};
    const RunResult r = runOn(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    ASSERT_TRUE(r.memorySnapshot);
    const auto& snap = *r.memorySnapshot;
    EXPECT_FALSE(snap.error) << *snap.error;
    EXPECT_EQ(snap.format, "cuda-pickle");
    EXPECT_GT(std::filesystem::file_size(path), 1000u);
    EXPECT_GT(snap.entries, 0);
    ASSERT_FALSE(snap.largest.empty()) << "the allocator trace tracker saw no allocation";
    // The largest block of a step is at least the fp32 logits (B, T, V).
    EXPECT_GE(snap.largest.front().bytes, c.batchSize * c.contextLength * c.model.vocabSize * 4);
    EXPECT_EQ(snap.largest.front().step, 1);
    std::filesystem::remove(path);
}

TEST_F(Gpu, MfuOfSmallInBf16LiesBetweenZeroAndOne) {
    const RunResult r = runOn(gpuConfig("small", Precision::Bf16, Mode::Train, 512, 8, 2, 4));
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    ASSERT_TRUE(r.summary.mfu) << "no peak FLOP/s entry for " << cuda::deviceInfo(0).name;
    EXPECT_GT(*r.summary.mfu, 0.0);
    EXPECT_LT(*r.summary.mfu, 1.0);
    EXPECT_GT(r.summary.tflops, 1.0);
}

// The op profile on a GPU (docs/OP_PROFILE.md): CUPTI's kernels, each placed through the
// runtime call that launched it, so the forward kernels fall in named regions and the
// headline counts kernels. The kernel table of `small` is printed for bench/README.md.
TEST_F(Gpu, OpProfileAttributesKernelsToRegions) {
    RunConfig c = gpuConfig("small", Precision::Bf16, Mode::Train, 128, 4, 2, 2);
    c.opProfile = defaultOpProfileRequest(c.warmupSteps);
    const RunResult r = runOn(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    ASSERT_TRUE(r.opProfile);
    const OpProfile& p = *r.opProfile;
    for (const auto& note : p.notes) {
        ADD_FAILURE() << "note: " << note;
    }
    EXPECT_EQ(p.headline.kind, OpKind::Kernel);
    ASSERT_GT(p.kernelMs.forward, 0.0);
    EXPECT_LT(p.unattributedMs.forward, 0.02 * p.kernelMs.forward);
    // Every forward GEMM op hands its FLOPs to one of its kernels, and those kernels take at
    // least the time the FLOPs need at the GPU's peak: a GEMM kernel left unmatched would
    // lose its op's FLOPs or make the matched ones impossibly fast.
    double matmulKernelMs = 0.0;
    double kernelGemmFlops = 0.0;
    double opGemmFlops = 0.0;
    for (const auto& row : p.rows) {
        if (row.phase != Phase::Forward || !row.matmul) {
            continue;
        }
        if (row.kind == OpKind::Kernel) {
            matmulKernelMs += row.selfMs;
            kernelGemmFlops += row.flops;
        } else {
            opGemmFlops += row.flops; // the profiler counts FLOPs on mm/bmm/addmm only
        }
    }
    EXPECT_GT(matmulKernelMs, 0.0) << "GEMM kernels are matched to their aten::mm";
    EXPECT_GT(opGemmFlops, 0.0);
    EXPECT_NEAR(kernelGemmFlops, opGemmFlops, 0.01 * opGemmFlops);
    const auto peak = bench::peakFlops(cuda::deviceInfo(0), Precision::Bf16);
    ASSERT_TRUE(peak) << "no peak FLOP/s entry for " << cuda::deviceInfo(0).name;
    EXPECT_GE(matmulKernelMs * 1e-3 * *peak, kernelGemmFlops)
        << "forward GEMMs at " << kernelGemmFlops / (matmulKernelMs * 1e-3) / 1e12
        << " TFLOP/s, above the peak";
    // Not a majority: this model's naive attention and fp32 norms are elementwise work that
    // an H100's matmuls outpace (measured 2026-11-27: 23% of the forward kernel time, 17%
    // at 8 x 512).
    EXPECT_GT(p.headline.matmulForwardShare, 0.05);
    EXPECT_FALSE(p.headline.topForwardName.empty());
    OpReportOptions options;
    options.by = OpGrouping::Op;
    options.top = 15;
    writeOpReport(std::cout, std::span(&r, 1), options, ReportFormat::Markdown);
}

// The precision lab on the GPU: the seeds' loops, and the seeds' full ToyModel answer under
// CUDA autocast (where, unlike the CPU's, layer_norm is on the fp32 list).
TEST_F(Gpu, PrecisionLabReproducesTheSeedsOnCuda) {
    AccumulationRequest acc;
    acc.device = "cuda:0";
    acc.maxTerms = 100000;
    const AccumulationReport a = runAccumulation(acc);
    ASSERT_FALSE(a.error) << *a.error;
    const char* expected[] = {"10.0001", "9.9531", "10.0021", "10.0021"};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(formatFixed(a.seedLoops[i].result, 4), expected[i]) << a.seedLoops[i].label;
    }
    std::cout << "[ lab      ] fp16 += fp16 stalls after " << a.series[4].stallTerms.value_or(-1)
              << " terms at " << a.series[4].stallSum.value_or(-1) << "\n";
    for (Precision p : {Precision::Fp16, Precision::Bf16}) {
        DtypeRequest request;
        request.device = "cuda:0";
        request.precision = p;
        const DtypeReport r = inspectDtypes(request);
        ASSERT_FALSE(r.error) << *r.error;
        std::map<std::string, DtypeRow> rows;
        for (const auto& row : r.rows) {
            rows[row.name] = row;
        }
        const std::string reduced(toString(*traitsOf(p).autocast));
        EXPECT_EQ(rows["fc1"].parameters, "fp32");
        EXPECT_EQ(rows["fc1"].output, reduced);
        EXPECT_EQ(rows["ln"].output, "fp32") << rows["ln"].note;
        EXPECT_EQ(rows["logits"].output, reduced);
        EXPECT_EQ(rows["loss"].output, "fp32");
        EXPECT_EQ(rows["fc1"].gradients, "fp32");
        writeDtypeReport(std::cout, r, ReportFormat::Markdown);
    }
}

// --- paths added since the first GPU run (docs/GPU_CHECK.md) ------------------------------

// The devices module on a GPU machine: the choices list every GPU, "auto" picks cuda:0, the
// environment names the GPU with its memory, and the precision probe accepts what an H100
// runs (bf16 and fp16 matmuls) while a device index past the last is refused by name.
TEST_F(Gpu, DevicesListTheGpuAndTheProbeAcceptsItsPrecisions) {
    const auto choices = availableDevices();
    EXPECT_NE(std::find(choices.begin(), choices.end(), "cuda:0"), choices.end());
    EXPECT_EQ(resolveDevice("auto"), (DeviceTarget{true, 0}));
    const Environment env = probeEnvironment(DeviceTarget{true, 0});
    EXPECT_EQ(env.device.type, "cuda");
    EXPECT_FALSE(env.device.name.empty());
    EXPECT_GT(env.device.memoryBytes, int64_t{1} << 30);
    EXPECT_EQ(deviceMemoryBytes(DeviceTarget{true, 0}), env.device.memoryBytes);
    for (Precision p : {Precision::Fp32, Precision::Bf16, Precision::Fp16}) {
        RunConfig c = gpuConfig("tiny", p, Mode::Train, 32, 2, 0, 1);
        const auto refusal = checkRunnable(c);
        EXPECT_FALSE(refusal) << toString(p) << ": " << (refusal ? refusal->message() : "");
    }
    RunConfig past = gpuConfig("tiny", Precision::Fp32, Mode::Train, 32, 2, 0, 1);
    past.device = "cuda:" + std::to_string(cuda::deviceCount());
    const auto refusal = checkRunnable(past);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->field, "device");
}

// A Session starts a data-parallel run's ranks on its own GPUs, one each: more ranks than
// GPUs is refused by its field before any rank starts (lmprof-cli ddp, locally or on a
// server, and the window ask the same check); as many as there are GPUs is accepted.
TEST_F(Gpu, SessionRefusesMoreNcclRanksThanGpus) {
    Session session;
    RunConfig c = gpuConfig("tiny", Precision::Fp32, Mode::Train, 32, 2, 0, 1);
    c.device = "cuda";
    c.ddp = DdpRequest{};
    c.ddp->backend = DdpBackend::Nccl;
    c.ddp->worldSize = cuda::deviceCount() + 1;
    const auto refusal = session.checkRunnable(c);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->field, "ddp.world_size");
    EXPECT_NE(refusal->reason.find("one GPU each"), std::string::npos) << refusal->reason;
    c.ddp->worldSize = cuda::deviceCount();
    const auto accepted = session.checkRunnable(c);
    EXPECT_FALSE(accepted) << accepted->message();
}

// NCCL data parallelism on one GPU, each strategy: the run completes and every step has
// the GPU duration of its all-reduces as its communication time (ProcessGroupNCCL keeps
// those durations only when timing is enabled; without it every strategy failed).
TEST_F(Gpu, NcclDataParallelTimesEachStepsCollectives) {
    for (auto strategy : kDdpStrategies) {
        SCOPED_TRACE(std::string(toString(strategy)));
        RunConfig c = gpuConfig("tiny", Precision::Fp32, Mode::Train, 32, 2, 1, 2);
        c.ddp = DdpRequest{1, DdpBackend::Nccl, strategy, 1.0, 20.0};
        RankEndpoint e;
        e.masterPort = 29500 + static_cast<int>(strategy) + 17;
        const RunResult r = runDataParallel(c, e, "nccl-one", nullptr, nullptr);
        ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
        ASSERT_TRUE(r.ddp);
        ASSERT_EQ(r.ddp->ranks.size(), 1u);
        ASSERT_FALSE(r.ddp->ranks[0].error) << *r.ddp->ranks[0].error;
        ASSERT_EQ(r.ddp->ranks[0].steps.size(), 3u);
        for (const auto& s : r.ddp->ranks[0].steps) {
            EXPECT_GT(s.commMs, 0.0);
            EXPECT_LT(s.commMs, s.stepMs);
        }
    }
}

// RoPE as a complex product and the tables built on the device: the same weights give the
// same logits on the GPU as on the CPU (fp32, TF32 off: LibTorch's default for matmuls).
TEST_F(Gpu, ModelOnCudaMatchesTheSameWeightsOnTheCpu) {
    const ModelConfig cfg = *presetModel("tiny");
    const int64_t ctx = 64;
    at::manual_seed(0);
    model::TransformerLM cpuModel(cfg, ctx, at::kCPU);
    model::TransformerLM gpuModel(cfg, ctx, at::Device(at::kCUDA, 0));
    {
        at::NoGradGuard noGrad;
        const auto src = cpuModel->parameters();
        const auto dst = gpuModel->parameters();
        ASSERT_EQ(src.size(), dst.size());
        for (size_t i = 0; i < src.size(); ++i) {
            dst[i].copy_(src[i]);
        }
    }
    const at::Tensor ids = at::randint(cfg.vocabSize, {2, ctx}, at::kLong);
    at::NoGradGuard noGrad;
    const at::Tensor onCpu = cpuModel->forward(ids);
    const at::Tensor onGpu = gpuModel->forward(ids.to(at::Device(at::kCUDA, 0))).cpu();
    const double worst = (onCpu - onGpu).abs().max().item<double>();
    EXPECT_LT(worst, 2e-3) << "largest logit difference between the CPU and the GPU";
    EXPECT_TRUE(gpuModel->rotary.cos.is_cuda());
    EXPECT_TRUE(gpuModel->causalMask.is_cuda());
}

// Per-step loss and gradient norms on CUDA: every step has a finite loss that starts near
// ln(V) (uniform predictions) and falls over a few AdamW steps on the same batch, and a
// finite, positive norm per layer group.
TEST_F(Gpu, LossAndGradientNormsAreRecordedEveryStepOnCuda) {
    for (Precision p : {Precision::Fp32, Precision::Bf16}) {
        RunConfig c = gpuConfig("tiny", p, Mode::Train, 64, 4, 1, 5);
        c.gradNorms = true;
        const RunResult r = runOn(c);
        ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
        ASSERT_EQ(r.steps.size(), 6u);
        for (const auto& s : r.steps) {
            ASSERT_TRUE(s.loss) << "step " << s.index;
            EXPECT_TRUE(std::isfinite(*s.loss));
            ASSERT_EQ(s.gradNorms.size(), gradNormNames(c.model).size());
            for (double n : s.gradNorms) {
                EXPECT_TRUE(std::isfinite(n) && n > 0.0) << "step " << s.index << ": " << n;
            }
        }
        EXPECT_NEAR(*r.steps.front().loss, std::log(double(c.model.vocabSize)), 1.0);
        EXPECT_LT(*r.steps.back().loss, *r.steps.front().loss) << toString(p);
    }
}
