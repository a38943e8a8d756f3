// LocalSession and the engine module's loader (local_engine.h): without a module every run
// and experiment is answered, refused in words that name the way out; a file that is not
// lmprof's engine is refused by name; the real module answers the form before it is loaded
// and runs once it is. The loader opens a module once per process, so each case runs in a
// child process of its own (EXPECT_EXIT).

#include "lmprof/engine/local_engine.h"
#include "test_configs.h"

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <gtest/gtest.h>

using namespace lmprof::engine;

namespace {

RunConfig tinyRun() {
    return lmprof::engine::testing::tinyCpu(Mode::Train, 1, 2);
}

// Drains until `want` events came or the engine has been idle for 200 waits of 100 ms.
std::vector<SessionEvent> drainUntil(SessionInterface& engine, size_t want) {
    std::vector<SessionEvent> events;
    for (int idle = 0; events.size() < want && idle < 600; ++idle) {
        engine.waitForEvents(std::chrono::milliseconds(100));
        for (auto& e : engine.drain()) {
            if (std::holds_alternative<RunFinished>(e) || std::holds_alternative<LabFinished>(e)) {
                events.push_back(std::move(e));
            }
        }
    }
    return events;
}

// The checks of a child: each failure says which, on stderr, and exits 1.
#define CHILD_CHECK(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "failed: %s\n", #cond);                                           \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

} // namespace

TEST(LocalEngine, WithoutAModuleEveryRunAndExperimentIsRefusedInWords) {
    EXPECT_EXIT(
        {
            ::setenv("LMPROF_ENGINE_MODULE", "/nonexistent/lmprof-engine.so", 1);
            LocalSession engine(3);
            CHILD_CHECK(!engineAvailable());
            CHILD_CHECK(engine.devices().empty());
            CHILD_CHECK(!engine.info().connected);
            CHILD_CHECK(engine.info().problem.find("has no engine") != std::string::npos);
            const auto refusal = engine.checkRunnable(tinyRun());
            CHILD_CHECK(refusal && refusal->field == "device");
            CHILD_CHECK(refusal->reason.find("--connect") != std::string::npos);
            CHILD_CHECK(engine.submit(tinyRun()) == 3); // numbered from where it was told
            CHILD_CHECK(engine.submitLab(DtypeRequest{}) == 0);
            const auto events = drainUntil(engine, 2);
            CHILD_CHECK(events.size() == 2);
            const auto& run = std::get<RunFinished>(events[0]);
            CHILD_CHECK(run.runIndex == 3 && run.result.status == RunStatus::Error);
            CHILD_CHECK(run.result.error->find("has no engine") != std::string::npos);
            const auto& lab = std::get<LabFinished>(events[1]);
            CHILD_CHECK(std::visit([](const auto& r) { return r.error.has_value(); }, lab.report));
            CHILD_CHECK(!engineLoaded() && !engine.busy());
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
}

TEST(LocalEngine, AFileThatIsNotTheEngineIsRefusedByName) {
    EXPECT_EXIT(
        {
            // A real shared library without lmprof's entry: the C math library, by the path
            // this process loaded it from.
            Dl_info math{};
            CHILD_CHECK(::dladdr(reinterpret_cast<void*>(&::cos), &math) && math.dli_fname);
            ::setenv("LMPROF_ENGINE_MODULE", math.dli_fname, 1);
            std::string why;
            CHILD_CHECK(loadEngineModule(&why) == nullptr);
            CHILD_CHECK(why.find(math.dli_fname) != std::string::npos);
            CHILD_CHECK(why.find("is not lmprof's") != std::string::npos);
            LocalSession engine;
            engine.submit(tinyRun()); // the failed load is the run's answer, and the form's
            CHILD_CHECK(!engine.info().connected && !engine.info().problem.empty());
            CHILD_CHECK(engine.checkRunnable(tinyRun()).has_value());
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
}

#ifdef LMPROF_FOREIGN_MODULE_PATH
TEST(LocalEngine, AModuleFromAnotherBuildIsRefusedWithBothVersions) {
    EXPECT_EXIT(
        {
            ::setenv("LMPROF_ENGINE_MODULE", LMPROF_FOREIGN_MODULE_PATH, 1);
            std::string why;
            CHILD_CHECK(loadEngineModule(&why) == nullptr);
            CHILD_CHECK(why.find("another build (0.0.1 (elsewhere)") != std::string::npos);
            CHILD_CHECK(why.find("this program: ") != std::string::npos);
            CHILD_CHECK(why.find("rebuild or reinstall the two together") != std::string::npos);
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
}
#endif

#ifdef LMPROF_ENGINE_MODULE_PATH
TEST(LocalEngine, TheModuleAnswersTheFormUnloadedAndRunsOnceSubmitted) {
    EXPECT_EXIT(
        {
            ::setenv("LMPROF_ENGINE_MODULE", LMPROF_ENGINE_MODULE_PATH, 1);
            LocalSession engine;
            const auto devices = engine.devices();
            CHILD_CHECK(devices.size() >= 2 && devices[0] == "auto" && devices[1] == "cpu");
            CHILD_CHECK(engine.deviceMemoryBytes("cpu") > 0);
            CHILD_CHECK(!engine.checkRunnable(tinyRun()));
            CHILD_CHECK(engine.info().connected && !engine.info().deviceName.empty());
            CHILD_CHECK(!engineLoaded()); // every answer so far came from the preview
            engine.submit(tinyRun());
            CHILD_CHECK(engineLoaded());
            const auto events = drainUntil(engine, 1);
            CHILD_CHECK(events.size() == 1);
            const auto& run = std::get<RunFinished>(events[0]);
            CHILD_CHECK(run.result.status == RunStatus::Ok && run.result.steps.size() == 3);
            CHILD_CHECK(!engine.environment("cpu").torch.empty()); // the engine's own probe now
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
}
#endif
