// The memory sampler on the CPU: the timeline of periodic and phase-boundary samples,
// CPU telemetry, observers, rate validation, throttle-reason names, and the NVML loader
// without a driver.

#include "lmprof/engine/runner.h"
#include "memory_helpers.h"
#include "platform/nvml.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace lmprof::engine;
using namespace lmprof::engine::testing;
namespace fs = std::filesystem;

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
