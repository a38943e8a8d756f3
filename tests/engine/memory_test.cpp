// Memory profiling on the CPU: the sampler's timeline, telemetry, the analytic breakdown
// against measured peaks, the NVML loader without a driver, and memory snapshots (written
// atomically, parsed back, largest allocations).

#include "lmprof/engine/alloc_trace.h"
#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/runner.h"
#include "platform/nvml.h"
#include "test_configs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace lmprof::engine;
using lmprof::engine::testing::tinyCpu;
namespace fs = std::filesystem;

namespace {

RunResult run(const RunConfig& c) {
    return runBenchmark(c, "memory-test", nullptr, nullptr);
}

// Steps long enough (tens of ms) for the 100 Hz sampler to land inside them.
RunConfig tinyLonger(Mode mode, int warmup, int steps) {
    RunConfig c = tinyCpu(mode, warmup, steps);
    c.contextLength = 128;
    c.batchSize = 4;
    return c;
}

fs::path freshDir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("lmprof-memory-test-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

// ---------------------------------------------------------------------------------------
// Sampler and telemetry

TEST(MemorySampler, TimelineHasPeriodicAndBoundarySamplesTaggedWithStepAndPhase) {
    const RunConfig c = tinyLonger(Mode::Train, 1, 3);
    const RunResult r = run(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    const double runMs = r.steps.back().endMs;
    ASSERT_GT(runMs, 0.0);

    int boundary = 0;
    int periodic = 0;
    bool phaseSeen[3] = {false, false, false};
    for (size_t i = 0; i < r.memoryTimeline.size(); ++i) {
        const auto& m = r.memoryTimeline[i];
        if (i > 0) {
            EXPECT_GE(m.tMs, r.memoryTimeline[i - 1].tMs) << "timeline out of order at " << i;
        }
        ASSERT_GE(m.step, 0);
        ASSERT_LT(m.step, static_cast<int>(r.steps.size()));
        // A sample tagged with step k was taken during step k or in the gap before the
        // next step (the position changes at the next step's first phase).
        if (m.step > 0) {
            EXPECT_GE(m.tMs, r.steps[m.step - 1].endMs);
        }
        if (m.step + 1 < static_cast<int>(r.steps.size())) {
            EXPECT_LE(m.tMs, r.steps[m.step + 1].endMs);
        }
        EXPECT_GT(m.allocated, 0);
        EXPECT_GT(m.rss, 0);
        EXPECT_EQ(m.deviceTotal, 0); // no device-wide figure on the CPU
        (m.boundary ? boundary : periodic) += 1;
        phaseSeen[static_cast<int>(m.phase)] = true;
    }
    EXPECT_TRUE(phaseSeen[0] && phaseSeen[1] && phaseSeen[2]);
    // Two boundary samples per phase per step.
    EXPECT_EQ(boundary, 2 * 3 * static_cast<int>(r.steps.size()));
    // 100 Hz over the run, allowing for a loaded machine (late wakeups are not made up).
    EXPECT_GE(periodic, static_cast<int>(runMs / 10.0 * 0.5)) << "over " << runMs << " ms";
    EXPECT_LE(periodic, static_cast<int>(runMs / 10.0) + 2);
}

TEST(MemorySampler, ZeroRateKeepsOnlyPhaseBoundarySamples) {
    RunConfig c = tinyCpu(Mode::ForwardBackward, 0, 2);
    c.sampleHz = 0.0;
    c.telemetryHz = 0.0;
    const RunResult r = run(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    ASSERT_EQ(r.memoryTimeline.size(), 2u * 2u * 2u);
    for (const auto& m : r.memoryTimeline) {
        EXPECT_TRUE(m.boundary);
    }
    EXPECT_TRUE(r.telemetry.empty());
}

TEST(MemorySampler, CpuTelemetryHasProcessUseAndNoGpuFields) {
    const RunConfig c = tinyLonger(Mode::Train, 1, 4);
    const RunResult r = run(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    const double runMs = r.steps.back().endMs;
    ASSERT_GE(r.telemetry.size(), 1u) << "a " << runMs << " ms run at 10 Hz";
    EXPECT_LE(static_cast<double>(r.telemetry.size()), runMs / 100.0 + 2);
    double busiest = 0.0;
    for (const auto& t : r.telemetry) {
        EXPECT_GT(t.rss, 0);
        EXPECT_GE(t.cpuPercent, 0.0);
        busiest = std::max(busiest, t.cpuPercent);
        EXPECT_FALSE(t.gpuUtilPercent || t.powerW || t.smClockMHz || t.throttleReasons);
    }
    // The engine thread computes flat out between samples.
    EXPECT_GT(busiest, 30.0);
}

TEST(MemorySampler, ObserverReceivesSamplesAsTheyAreTaken) {
    struct Counter : RunObserver {
        std::atomic<int> memory{0}, telemetry{0};
        void onMemorySample(const MemorySample&) override { ++memory; }
        void onTelemetrySample(const TelemetrySample&) override { ++telemetry; }
    } counter;
    const RunConfig c = tinyLonger(Mode::Train, 0, 3);
    const RunResult r = runBenchmark(c, "observed", &counter, nullptr);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    EXPECT_EQ(counter.memory.load(), static_cast<int>(r.memoryTimeline.size()));
    EXPECT_EQ(counter.telemetry.load(), static_cast<int>(r.telemetry.size()));
}

TEST(MemorySampler, RatesAreValidatedWithTheFieldName) {
    RunConfig c = tinyCpu();
    c.sampleHz = -1.0;
    c.telemetryHz = 50.0;
    const auto errors = validate(c);
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_EQ(errors[0].field, "sample_hz");
    EXPECT_EQ(errors[1].field, "telemetry_hz");
}

TEST(Telemetry, ThrottleReasonsAreNamedAndBenignOnesHidden) {
    EXPECT_TRUE(throttleReasonNames(0x1).empty()); // idle only
    const auto names = throttleReasonNames(0x1 | 0x4 | 0x40);
    ASSERT_EQ(names.size(), 2u);
    EXPECT_EQ(names[0], "sw power cap");
    EXPECT_EQ(names[1], "hw thermal slowdown");
    EXPECT_EQ(throttleReasonNames(0x1, true).at(0), "gpu idle");
    EXPECT_EQ(throttleReasonNames(0x10000).at(0), "0x10000");
}

// ---------------------------------------------------------------------------------------
// NVML loader

TEST(Nvml, MissingLibraryFailsCleanlyWithTheReason) {
    std::string error;
    auto nvml = lmprof::engine::platform::Nvml::load(error, "libnvidia-ml-lmprof-absent.so.1");
    EXPECT_EQ(nvml, nullptr);
    EXPECT_NE(error.find("libnvidia-ml-lmprof-absent.so.1"), std::string::npos) << error;
}

TEST(Nvml, LibraryWithoutTheSymbolsIsRefused) {
    std::string error;
    auto nvml = lmprof::engine::platform::Nvml::load(error, "libm.so.6");
    EXPECT_EQ(nvml, nullptr);
    EXPECT_NE(error.find("nvmlInit_v2"), std::string::npos) << error;
}

TEST(Nvml, DefaultLoadEitherWorksOrSaysWhy) {
    std::string error;
    auto nvml = lmprof::engine::platform::Nvml::load(error);
    if (nvml) {
        // A machine with a driver: device 0 exists and reports something.
        ASSERT_TRUE(nvml->selectDevice("", 0, error)) << error;
        TelemetrySample t;
        nvml->read(t);
        EXPECT_TRUE(t.gpuUtilPercent || t.smClockMHz || t.temperatureC);
    } else {
        EXPECT_FALSE(error.empty());
    }
}

// ---------------------------------------------------------------------------------------
// Breakdown and prediction

TEST(MemoryModel, MeasuredBreakdownSumsToThePeakWithExactStaticParts) {
    const RunConfig c = tinyCpu(Mode::Train, 1, 1);
    const RunResult r = run(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    const int64_t n = parameterCount(c.model);
    const int64_t peak = r.summary.peakBytes.max();
    const MemoryBreakdown b = measuredBreakdown(c, peak);
    EXPECT_EQ(b.parameters, 4 * n);
    EXPECT_EQ(b.gradients, 4 * n);
    EXPECT_EQ(b.optimizerState, 8 * n);
    EXPECT_GT(b.activations, 0);
    EXPECT_EQ(b.total(), peak);

    RunConfig fwd = c;
    fwd.mode = Mode::Forward;
    const MemoryBreakdown f = measuredBreakdown(fwd, 5 * n);
    EXPECT_EQ(f.gradients, 0);
    EXPECT_EQ(f.optimizerState, 0);
    EXPECT_EQ(f.total(), 5 * n);
    RunConfig pure = c;
    pure.precision = Precision::Bf16Pure;
    EXPECT_EQ(predictPeak(pure).parameters, 2 * n);
}

// The prediction against CPU measurements (exact tensor bytes) of the same configurations.
// Tolerance 10% (measured: 0.97-1.07): the analytic model counts saved tensors and the
// largest transients, not every temporary.
TEST(MemoryModel, PredictedPeakIsWithinTenPercentOfTheMeasuredPeak) {
    struct Case {
        Mode mode;
        Precision precision;
        int64_t ctx;
    };
    for (const Case& k :
         {Case{Mode::Train, Precision::Fp32, 128}, Case{Mode::Forward, Precision::Fp32, 256},
          Case{Mode::ForwardBackward, Precision::Fp32, 64}, Case{Mode::Train, Precision::Bf16, 128},
          Case{Mode::Forward, Precision::Bf16, 256}, Case{Mode::Train, Precision::Bf16Pure, 128}}) {
        RunConfig c = tinyCpu(k.mode, 1, 1);
        c.contextLength = k.ctx;
        c.batchSize = 4;
        c.precision = k.precision;
        c.sampleHz = 0.0;
        const RunResult r = run(c);
        ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
        const double measured = static_cast<double>(r.summary.peakBytes.max());
        const double predicted = static_cast<double>(predictPeak(c).total());
        EXPECT_NEAR(predicted / measured, 1.0, 0.10)
            << runLabel(c) << ": predicted " << predicted << " measured " << measured;
    }
}

TEST(MemoryModel, FitWarningNamesBothSizes) {
    RunConfig c = tinyCpu();
    c.model = *presetModel("xl");
    c.contextLength = 1024;
    c.batchSize = 4;
    const std::string w = fitWarning(c, int64_t{8} << 30);
    EXPECT_NE(w.find("exceeds the device's 8.00 GiB"), std::string::npos) << w;
    EXPECT_TRUE(fitWarning(tinyCpu(), int64_t{8} << 30).empty());
    EXPECT_TRUE(fitWarning(c, 0).empty()); // unknown device size: no claim
}

// ---------------------------------------------------------------------------------------
// Snapshots

TEST(MemorySnapshot, CpuTraceIsWrittenAtomicallyParsesAndCoversTheChosenStep) {
    const fs::path dir = freshDir("cpu");
    RunConfig c = tinyCpu(Mode::Train, 2, 2);
    c.memorySnapshot = SnapshotRequest{(dir / "trace.json").string(), 1, 1, 100000};
    const RunResult r = run(c);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    ASSERT_TRUE(r.memorySnapshot);
    const auto& info = *r.memorySnapshot;
    EXPECT_FALSE(info.error) << *info.error;
    EXPECT_EQ(info.format, kAllocTraceSchema);
    // Only the file itself: the temporary it was written through is gone.
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) {
        names.push_back(e.path().filename().string());
    }
    ASSERT_EQ(names, std::vector<std::string>{"trace.json"});

    const AllocationTrace t = parseAllocationTrace(slurp(dir / "trace.json"));
    EXPECT_EQ(t.runId, "memory-test");
    EXPECT_EQ(static_cast<int64_t>(t.events.size()), info.entries);
    ASSERT_GT(t.events.size(), 10u);
    bool phaseSeen[3] = {false, false, false};
    int64_t allocated = 0;
    for (const auto& e : t.events) {
        EXPECT_EQ(e.step, 1);
        phaseSeen[static_cast<int>(e.phase)] = true;
        allocated += std::max<int64_t>(e.bytes, 0);
    }
    EXPECT_TRUE(phaseSeen[0] && phaseSeen[1] && phaseSeen[2]);
    // The step allocates at least its activations: more than the parameters' bytes.
    EXPECT_GT(allocated, 4 * parameterCount(c.model));
    // The largest allocation is the logits (B·T·V) or the gradient of an embedding-sized
    // matrix (V·d), in fp32.
    ASSERT_FALSE(info.largest.empty());
    const int64_t v = c.model.vocabSize;
    EXPECT_EQ(info.largest.front().bytes,
              4 * std::max(c.batchSize * c.contextLength * v, v * c.model.dModel));
    EXPECT_EQ(info.largest.front().step, 1);
    // The snapshot step is flagged and left out of the statistics.
    EXPECT_TRUE(r.steps[1].memorySnapshot);
    EXPECT_FALSE(r.steps[2].memorySnapshot);
    EXPECT_EQ(r.summary.totalMs.n, 2);
}

TEST(MemorySnapshot, EntryLimitTruncatesAndSaysSo) {
    const fs::path dir = freshDir("limit");
    RunConfig c = tinyCpu(Mode::Train, 0, 2);
    c.memorySnapshot = SnapshotRequest{(dir / "t.json").string(), 1, 1, 5};
    const RunResult r = run(c);
    ASSERT_TRUE(r.memorySnapshot);
    EXPECT_TRUE(r.memorySnapshot->truncated);
    EXPECT_EQ(r.memorySnapshot->entries, 5);
    const AllocationTrace t = parseAllocationTrace(slurp(dir / "t.json"));
    EXPECT_TRUE(t.truncated);
    EXPECT_EQ(t.events.size(), 5u);
}

TEST(MemorySnapshot, OomInsideTheRecordedStepStillWritesTheTrace) {
    const fs::path dir = freshDir("oom");
    RunConfig c = tinyCpu(Mode::Train, 0, 2);
    c.faultOomPhase = Phase::Backward;
    c.memorySnapshot = SnapshotRequest{(dir / "t.json").string(), 0, 2, 100000};
    const RunResult r = run(c);
    EXPECT_EQ(r.status, RunStatus::Oom);
    ASSERT_TRUE(r.memorySnapshot);
    EXPECT_FALSE(r.memorySnapshot->error);
    const AllocationTrace t = parseAllocationTrace(slurp(dir / "t.json"));
    // The forward of step 0 is in it; nothing reached the optimizer.
    EXPECT_TRUE(std::any_of(t.events.begin(), t.events.end(), [](const AllocationEvent& e) {
        return e.phase == Phase::Forward && e.step == 0 && e.bytes > 0;
    }));
    EXPECT_TRUE(std::none_of(t.events.begin(), t.events.end(),
                             [](const AllocationEvent& e) { return e.phase == Phase::Optimizer; }));
}

TEST(MemorySnapshot, UnwritablePathIsReportedAndTheRunKept) {
    RunConfig c = tinyCpu(Mode::Forward, 0, 1);
    c.memorySnapshot = SnapshotRequest{"/nonexistent-lmprof-dir/t.json", 0, 1, 1000};
    const RunResult r = run(c);
    EXPECT_EQ(r.status, RunStatus::Ok);
    ASSERT_TRUE(r.memorySnapshot && r.memorySnapshot->error);
    EXPECT_NE(r.memorySnapshot->error->find("/nonexistent-lmprof-dir"), std::string::npos)
        << *r.memorySnapshot->error;
}

TEST(MemorySnapshot, RequestIsValidatedAgainstTheRunsSteps) {
    RunConfig c = tinyCpu(Mode::Train, 1, 2); // steps 0..2
    c.memorySnapshot = SnapshotRequest{"x.json", 3, 1, 10};
    auto errors = validate(c);
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors[0].field, "memory_snapshot.first_step");
    c.memorySnapshot = SnapshotRequest{"", 2, 2, 10};
    errors = validate(c);
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_EQ(errors[0].field, "memory_snapshot.path");
    EXPECT_EQ(errors[1].field, "memory_snapshot.step_count");
}

TEST(AllocationTrace, ForeignOrCorruptFilesAreRejectedWithThePath) {
    EXPECT_THROW(parseAllocationTrace("{\"schema\": \"lmprof.results/1\"}"), ResultFormatError);
    EXPECT_THROW(parseAllocationTrace("[1, 2"), ResultFormatError);
    try {
        parseAllocationTrace(R"({"schema": "lmprof.alloc-trace/1", "events": [
            {"t_ms": 1, "action": "alloc", "bytes": 8, "address": "0x10", "phase": "forward", "step": 0},
            {"t_ms": 2, "action": "grow", "bytes": 8, "address": "0x10", "phase": "forward", "step": 0}]})");
        FAIL() << "an unknown action was accepted";
    } catch (const ResultFormatError& e) {
        EXPECT_NE(std::string(e.what()).find("$.events[1].action"), std::string::npos) << e.what();
    }
}

TEST(AllocationTrace, LargestAllocationsPairFreesByAddress) {
    const std::vector<AllocationEvent> events = {
        {0.0, 100, 0xa, Phase::Forward, 0},   {1.0, 300, 0xb, Phase::Forward, 0},
        {2.0, -100, 0xa, Phase::Forward, 0},  {3.0, 200, 0xa, Phase::Backward, 0},
        {7.0, -300, 0xb, Phase::Backward, 0}, {8.0, -999, 0xc, Phase::Backward, 0},
    };
    const auto top = largestAllocations(events, 2);
    ASSERT_EQ(top.size(), 2u);
    EXPECT_EQ(top[0].bytes, 300);
    EXPECT_DOUBLE_EQ(top[0].lifetimeMs, 6.0);
    EXPECT_EQ(top[1].bytes, 200);
    EXPECT_EQ(top[1].phase, Phase::Backward);
    EXPECT_DOUBLE_EQ(top[1].lifetimeMs, -1.0); // never freed
    EXPECT_EQ(largestAllocations(events, 10).size(), 3u);
}

TEST(ResultJson, MemoryTimelineTelemetryAndSnapshotRoundTrip) {
    RunResult r;
    r.id = "x";
    r.memoryTimeline.push_back({1.5, 10, 20, 30, 40, 50, Phase::Backward, 3, true});
    TelemetrySample t;
    t.tMs = 2.0;
    t.cpuPercent = 150.0;
    t.rss = 7;
    t.smClockMHz = 1410.0;
    t.throttleReasons = 0x44;
    r.telemetry.push_back(t);
    r.telemetryNote = "no NVML";
    MemorySnapshotInfo s;
    s.path = "/tmp/s.pickle";
    s.format = "cuda-pickle";
    s.entries = 12;
    s.largest.push_back({4096, 1.0, 2.0, Phase::Optimizer, 3});
    r.memorySnapshot = s;
    r.config.memorySnapshot = SnapshotRequest{"/tmp/s.pickle", 4, 2, 5000};
    r.samplerError = "the memory sampler stopped: test";
    const RunResult back = parseRun(runToJsonLine(r));
    ASSERT_TRUE(back.config.memorySnapshot);
    EXPECT_EQ(back.config.memorySnapshot->firstStep, 4);
    EXPECT_EQ(back.config.memorySnapshot->stepCount, 2);
    EXPECT_EQ(back.config.memorySnapshot->maxEntries, 5000);
    EXPECT_EQ(back.samplerError, r.samplerError);
    ASSERT_EQ(back.memoryTimeline.size(), 1u);
    EXPECT_EQ(back.memoryTimeline[0].deviceTotal, 50);
    EXPECT_TRUE(back.memoryTimeline[0].boundary);
    EXPECT_EQ(back.memoryTimeline[0].phase, Phase::Backward);
    ASSERT_EQ(back.telemetry.size(), 1u);
    EXPECT_EQ(back.telemetry[0].smClockMHz, 1410.0);
    EXPECT_EQ(back.telemetry[0].throttleReasons, 0x44u);
    EXPECT_FALSE(back.telemetry[0].powerW);
    EXPECT_EQ(back.telemetryNote, "no NVML");
    ASSERT_TRUE(back.memorySnapshot);
    EXPECT_EQ(back.memorySnapshot->format, "cuda-pickle");
    ASSERT_EQ(back.memorySnapshot->largest.size(), 1u);
    EXPECT_EQ(back.memorySnapshot->largest[0].phase, Phase::Optimizer);
}
