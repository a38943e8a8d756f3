// The Memory and Telemetry views' data: phase spans from boundary samples, the measured
// phase peaks drawn over them, and telemetry series with gaps where readings are missing.
// Driven with synthetic engine events, no window.

#include "lmprof/ui/run_store.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace lmprof;
using ui::RunStore;

namespace {

engine::MemorySample sample(double tMs, engine::Phase phase, int step, bool boundary,
                            int64_t allocated = 1 << 20) {
    engine::MemorySample s;
    s.tMs = tMs;
    s.allocated = allocated;
    s.phase = phase;
    s.step = step;
    s.boundary = boundary;
    return s;
}

} // namespace

TEST(MemorySeries, BoundaryPairsBecomeSpansAndStepPeaksCoverThem) {
    RunStore store;
    std::vector<engine::SessionEvent> events;
    engine::RunResult header;
    header.config.mode = engine::Mode::ForwardBackward;
    events.emplace_back(engine::RunStarted{0, header});
    using engine::Phase;
    // Step 0: forward 0-100 ms with a periodic sample inside, backward 100-300 ms.
    events.emplace_back(engine::MemorySampled{0, sample(0, Phase::Forward, 0, true)});
    events.emplace_back(engine::MemorySampled{0, sample(50, Phase::Forward, 0, false)});
    events.emplace_back(engine::MemorySampled{0, sample(100, Phase::Forward, 0, true)});
    events.emplace_back(engine::MemorySampled{0, sample(100, Phase::Backward, 0, true)});
    events.emplace_back(engine::MemorySampled{0, sample(300, Phase::Backward, 0, true)});
    engine::StepRecord step;
    step.index = 0;
    step.endMs = 310;
    step.phasePeakBytes = {2 << 20, 3 << 20, 0};
    events.emplace_back(engine::StepFinished{0, step});
    engine::TelemetrySample t;
    t.tMs = 200;
    t.cpuPercent = 180;
    t.rss = 64 << 20;
    events.emplace_back(engine::TelemetrySampled{0, t});
    t.tMs = 300;
    t.smClockMHz = 1200;
    t.throttleReasons = 0x4; // sw power cap
    events.emplace_back(engine::TelemetrySampled{0, t});
    store.apply(events);

    ui::RunView& v = store.runs().at(0);
    ASSERT_EQ(v.spans.size(), 2u);
    EXPECT_DOUBLE_EQ(v.spans[0].t0S, 0.0);
    EXPECT_DOUBLE_EQ(v.spans[0].t1S, 0.1);
    EXPECT_EQ(v.spans[1].phase, Phase::Backward);
    EXPECT_DOUBLE_EQ(v.spans[1].t1S, 0.3);
    EXPECT_EQ(v.memory.tS.size(), 5u);
    EXPECT_TRUE(std::isnan(v.memory.deviceUsedMiB[0])); // CPU: no device-wide figure
    // Peaks: a flat segment (a pair of points) per span.
    ASSERT_EQ(v.peaks.tS.size(), 4u);
    EXPECT_DOUBLE_EQ(v.peaks.peakMiB[0], 2.0);
    EXPECT_DOUBLE_EQ(v.peaks.peakMiB[1], 2.0);
    EXPECT_DOUBLE_EQ(v.peaks.tS[1], 0.1);
    EXPECT_DOUBLE_EQ(v.peaks.tS[2], 0.1);
    EXPECT_DOUBLE_EQ(v.peaks.peakMiB[2], 3.0);
    EXPECT_DOUBLE_EQ(v.peaks.tS[3], 0.3);
    ASSERT_EQ(v.stepEndS.size(), 1u);
    EXPECT_DOUBLE_EQ(v.stepEndS[0], 0.31);
    // Telemetry: NaN for what a sample did not have; throttled samples listed.
    ASSERT_EQ(v.telemetry.tS.size(), 2u);
    EXPECT_TRUE(std::isnan(v.telemetry.smClockMHz[0]));
    EXPECT_DOUBLE_EQ(v.telemetry.smClockMHz[1], 1200.0);
    EXPECT_TRUE(v.telemetry.anyGpu);
    EXPECT_EQ(v.telemetry.throttledS, std::vector<double>{0.3});

    // The final result rebuilds the same series when loaded from a file, its memory
    // timeline once a chart asks for it.
    engine::RunResult fin = v.result;
    RunStore loaded;
    loaded.addLoaded({fin});
    ui::RunView& l = loaded.runs().at(0);
    EXPECT_EQ(l.telemetry.tS.size(), 2u);
    EXPECT_TRUE(l.memory.tS.empty());
    l.ensureTimeline();
    EXPECT_EQ(l.memory.allocatedMiB, v.memory.allocatedMiB);
    EXPECT_EQ(l.spans.size(), 2u);
    EXPECT_EQ(l.peaks.tS, v.peaks.tS);
    EXPECT_EQ(l.peaks.peakMiB, v.peaks.peakMiB);
}

// Of the runs opened from files, only the timelines asked for last stay built.
TEST(MemorySeries, FileRunsKeepOnlyTheTimelinesUsedLast) {
    std::vector<engine::RunResult> runs;
    for (int i = 0; i < 20; ++i) {
        engine::RunResult r;
        r.id = "run-" + std::to_string(i);
        r.memoryTimeline = {sample(0, engine::Phase::Forward, 0, true),
                            sample(10, engine::Phase::Forward, 0, true)};
        engine::StepRecord s;
        s.totalMs = 10;
        r.steps = {s};
        runs.push_back(r);
    }
    RunStore store;
    ASSERT_EQ(store.addLoaded(runs), 20u);
    for (auto& v : store.runs()) {
        v.ensureTimeline();
        EXPECT_EQ(v.spans.size(), 1u);
    }
    store.refreshSelection();
    size_t built = 0;
    for (size_t i = 0; i < store.runs().size(); ++i) {
        const bool has = !store.runs()[i].memory.tS.empty();
        built += has;
        EXPECT_EQ(has, i >= 20 - ui::kKeptTimelines) << i; // the last asked for
    }
    EXPECT_EQ(built, ui::kKeptTimelines);
    ui::RunView& first = store.runs().front();
    first.ensureTimeline(); // built again when asked
    EXPECT_EQ(first.peaks.tS.size(), 2u);
}

TEST(MemorySeries, StepEndTimesOfOlderFilesAreRebuiltFromStepDurations) {
    engine::RunResult r; // as read from a file written before t_end_ms existed
    for (int i = 0; i < 3; ++i) {
        engine::StepRecord s;
        s.index = i;
        s.totalMs = 100.0 * (i + 1);
        r.steps.push_back(s);
    }
    RunStore store;
    store.addLoaded({r});
    const auto& ends = store.runs().at(0).stepEndS;
    ASSERT_EQ(ends.size(), 3u);
    EXPECT_DOUBLE_EQ(ends[0], 0.1);
    EXPECT_DOUBLE_EQ(ends[1], 0.3);
    EXPECT_NEAR(ends[2], 0.6, 1e-12);
}
