// The verdicts a GPU run alone can give (docs/VERDICTS.md): host-bound from CUPTI's kernel
// time, and memory pressure against the device's capacity. Skipped without a GPU, like
// gpu_test.cpp; the GPU check kit runs them.

#include "gpu_helpers.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/verdicts.h"

#include <iostream>
#include <optional>

using namespace lmprof::engine;
using namespace lmprof::engine::gpu_test;

namespace {

std::optional<RunVerdict> verdictOf(const RunResult& run, VerdictKind kind) {
    for (const auto& v : judgeRun(run)) {
        if (v.kind == kind) {
            return v;
        }
    }
    return std::nullopt;
}

} // namespace

// The host-bound verdict (docs/VERDICTS.md) from CUPTI's kernel time: `tiny` at batch 1
// keeps the GPU idle most of each step (launches bound it), `small` at 16 × 512 in fp32
// keeps it busy (on an H200: 97%), so only the first is host-bound, and firmly.
TEST_F(Gpu, HostBoundVerdictOnATinyBatchAndNotOnALargeOne) {
    const RunResult tiny = runOn(gpuConfig("tiny", Precision::Fp32, Mode::Train, 32, 1, 3, 20));
    ASSERT_EQ(tiny.status, RunStatus::Ok) << tiny.error.value_or("");
    if (!tiny.summary.gpuBusy) {
        GTEST_SKIP() << "no kernel times: " << tiny.busyNote.value_or("?");
    }
    const auto small = judgeRun(tiny);
    const auto it = std::find_if(small.begin(), small.end(), [](const RunVerdict& v) {
        return v.kind == VerdictKind::HostBound;
    });
    ASSERT_NE(it, small.end());
    EXPECT_EQ(it->certainty, Certainty::Firm) << verdictLine(*it);
    EXPECT_NE(it->severity, Severity::Info) << verdictLine(*it);
    std::cout << verdictLine(*it) << "\n";

    const RunResult busy = runOn(gpuConfig("small", Precision::Fp32, Mode::Train, 512, 16, 2, 8));
    ASSERT_EQ(busy.status, RunStatus::Ok) << busy.error.value_or("");
    for (const auto& v : judgeRun(busy)) {
        EXPECT_NE(v.kind, VerdictKind::HostBound) << verdictLine(v);
        std::cout << verdictLine(v) << "\n";
    }
}

// Memory pressure from the per-step reserved peak over the device's capacity: a tiny run has
// room to spare; the same run beside a tensor holding all but about 3% of the device (in
// this process's caching allocator, so every step's reserved peak includes it) is at 90% or
// more, and is warned.
TEST_F(Gpu, MemoryPressureNearTheDevicesCapacityAndNotWithRoomToSpare) {
    const RunConfig c = gpuConfig("tiny", Precision::Fp32, Mode::Train, 64, 2, 1, 3);
    const RunResult roomy = runOn(c);
    ASSERT_EQ(roomy.status, RunStatus::Ok) << roomy.error.value_or("");
    EXPECT_FALSE(verdictOf(roomy, VerdictKind::MemoryPressure));
    const int64_t total = cuda::deviceMemory(0).total;
    ASSERT_GT(total, 0);
    const auto reservedPeak = [](const RunResult& r) {
        int64_t peak = 0;
        for (const auto& s : r.steps) {
            peak = std::max(peak, s.peakReservedBytes);
        }
        return peak;
    };
    const int64_t needed = reservedPeak(roomy);
    // Another process's memory on the device leaves less: hold what is free but the run's
    // own peak and a margin, and at least 93% of the device in all.
    cuda::emptyCache();
    const cuda::DeviceMemory now = cuda::deviceMemory(0);
    const int64_t hold = total - now.used - needed - 512 * kMiB;
    if (now.used + hold < total * 93 / 100) {
        GTEST_SKIP() << "the device is too busy for the test: " << now.used / kMiB
                     << " MiB used of " << total / kMiB;
    }
    at::Tensor blocker = at::empty({hold}, onGpu(at::kByte));
    const RunResult tight = runOn(c);
    blocker.reset();
    cuda::emptyCache();
    ASSERT_EQ(tight.status, RunStatus::Ok) << tight.error.value_or("");
    const std::optional<RunVerdict> v = verdictOf(tight, VerdictKind::MemoryPressure);
    ASSERT_TRUE(v) << "reserved peak " << reservedPeak(tight) / kMiB << " MiB of " << total / kMiB;
    EXPECT_NE(v->severity, Severity::Info) << verdictLine(*v);
    EXPECT_GE(v->value, 0.90) << verdictLine(*v);
    std::cout << verdictLine(*v) << "\n";
}
