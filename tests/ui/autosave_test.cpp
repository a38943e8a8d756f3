// The autosave hand-over at launch: the last session's file is moved aside and offered once.

#include "autosave.h"
#include "lmprof/engine/result_io.h"
#include "synthetic_runs.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <stdexcept>

using namespace lmprof;
using namespace lmprof::ui;
using namespace lmprof::ui::testing;
using engine::SessionEvent;

TEST(Autosave, PreviousSessionIsMovedAsideAndOfferedOnce) {
    const auto dir = std::filesystem::temp_directory_path() / "lmprof_autosave_test";
    std::filesystem::remove_all(dir);
    {
        Autosave first(dir);
        EXPECT_FALSE(first.takePrevious()); // nothing saved yet
        EXPECT_NO_THROW(first.append(finished(cfg("tiny", 16), RunStatus::Ok, {1, 2}, "a-1")));
        EXPECT_NO_THROW(first.append(finished(cfg("tiny", 32), RunStatus::Oom, {}, "b-2")));
    }
    // A crash mid-write leaves a cut last line: the runs before it still come back.
    std::ofstream(dir / "autosave.jsonl", std::ios::app) << "{\"id\": \"cut";
    Autosave second(dir);
    const auto previous = second.takePrevious();
    ASSERT_TRUE(previous);
    ASSERT_EQ(previous->runs.size(), 2u);
    EXPECT_EQ(previous->runs[0].id, "a-1");
    EXPECT_EQ(previous->runs[1].status, RunStatus::Oom);
    EXPECT_EQ(previous->warnings.size(), 1u);
    EXPECT_FALSE(previous->savedAt.empty());
    // This session starts a fresh file; the old one waits beside it until the next launch.
    EXPECT_FALSE(std::filesystem::exists(second.path()));
    EXPECT_TRUE(std::filesystem::exists(second.previousPath()));
    EXPECT_NO_THROW(second.append(previous->runs[0]));
    EXPECT_EQ(engine::loadRunsJsonl(second.path()).runs.size(), 1u);
    std::filesystem::remove_all(dir);
}

// An autosave that cannot be written says so with the file's path (the window shows it).
TEST(Autosave, AnUnwritableFileThrowsNamingThePath) {
    const auto blocker = std::filesystem::temp_directory_path() / "lmprof-autosave-not-a-dir";
    std::filesystem::remove_all(blocker);
    std::ofstream(blocker) << "a file where the config directory should be";
    Autosave autosave(blocker);
    try {
        autosave.append(finished(cfg("tiny", 16), RunStatus::Ok, {1, 2}));
        FAIL() << "appending under a regular file must fail";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("lmprof-autosave-not-a-dir/autosave.jsonl"),
                  std::string::npos)
            << e.what();
    }
    std::filesystem::remove(blocker);
}
