// NVTX ranges (docs/NVTX.md): runs one tiny training step with the test injection library
// attached (ctest sets NVTX_INJECTION64_PATH) and checks names, domain and nesting.

#include "lmprof/engine/runner.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace lmprof::engine;

namespace {

std::vector<std::string> probeEvents() {
    const char* path = std::getenv("NVTX_INJECTION64_PATH");
    if (!path) {
        return {};
    }
    void* lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!lib) {
        return {};
    }
    using Fn = void (*)(std::vector<std::string>*);
    auto fn = reinterpret_cast<Fn>(dlsym(lib, "lmprofNvtxProbeEvents"));
    std::vector<std::string> events;
    if (fn) {
        fn(&events);
    }
    dlclose(lib);
    return events;
}

// The names of the ranges open when `needle` was pushed, outermost first.
std::vector<std::string> stackAt(const std::vector<std::string>& events,
                                 const std::string& needle) {
    std::vector<std::string> stack;
    for (const auto& e : events) {
        if (e.rfind("push ", 0) == 0) {
            if (e == "push " + needle) {
                return stack;
            }
            stack.push_back(e.substr(5));
        } else {
            stack.pop_back();
        }
    }
    return {"<" + needle + " never pushed>"};
}

} // namespace

TEST(Nvtx, TrainingStepEmitsNestedRangesInTheLmprofDomain) {
    ASSERT_NE(std::getenv("NVTX_INJECTION64_PATH"), nullptr) << "run this test through ctest";
    RunConfig c;
    c.contextLength = 16;
    c.batchSize = 1;
    c.warmupSteps = 1;
    c.measureSteps = 1;
    c.device = "cpu";
    const RunResult r = runBenchmark(c, "nvtx", nullptr, nullptr);
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");

    const auto events = probeEvents();
    ASSERT_FALSE(events.empty()) << "the injection library recorded nothing";
    // Every push is popped.
    const auto pushes = std::count_if(events.begin(), events.end(),
                                      [](const std::string& e) { return e.rfind("push", 0) == 0; });
    EXPECT_EQ(pushes, static_cast<long>(events.size()) - pushes);

    using V = std::vector<std::string>;
    EXPECT_EQ(stackAt(events, "lmprof/forward"), V({"lmprof/warmup"}));
    EXPECT_EQ(stackAt(events, "lmprof/optimizer"), V({"lmprof/warmup"}));
    EXPECT_EQ(stackAt(events, "lmprof/attention.softmax"), V({"lmprof/warmup", "lmprof/forward"}));
    EXPECT_EQ(stackAt(events, "lmprof/attention.scores"), V({"lmprof/warmup", "lmprof/forward"}));
    EXPECT_EQ(stackAt(events, "lmprof/attention.value"), V({"lmprof/warmup", "lmprof/forward"}));
    EXPECT_EQ(stackAt(events, "lmprof/step"), V({}));

    // One step of a 2-layer model: 2 attention calls per forward, per step.
    const auto softmaxes =
        std::count(events.begin(), events.end(), "push lmprof/attention.softmax");
    EXPECT_EQ(softmaxes, 2 * 2);
    EXPECT_EQ(std::count(events.begin(), events.end(), "push lmprof/backward"), 2);
}
