// Memory snapshots on the CPU: the allocation trace written atomically, parsed back and
// covering the chosen step; entry limits, OOM inside the recorded step, unwritable paths,
// request validation, foreign files and the largest-allocations pairing.

#include "lmprof/engine/alloc_trace.h"
#include "lmprof/engine/result_io.h"
#include "memory_helpers.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace lmprof::engine;
using namespace lmprof::engine::testing;
namespace fs = std::filesystem;

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
