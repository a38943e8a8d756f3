// The autosave hand-over at launch: the runs not yet answered for are offered, and no file
// of runs is replaced or deleted before the user has answered for it.

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
using namespace lmprof::engine::testing;
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
    // Counted and sized, not read: the cut line is a line too.
    EXPECT_EQ(previous->runs, 3u);
    EXPECT_EQ(previous->bytes, std::filesystem::file_size(second.previousPath()));
    EXPECT_FALSE(previous->savedAt.empty());
    // This session starts a fresh file; the old one waits beside it until it is answered.
    EXPECT_FALSE(std::filesystem::exists(second.path()));
    EXPECT_TRUE(std::filesystem::exists(second.previousPath()));
    const auto read = engine::loadRunsJsonl(second.previousPath());
    ASSERT_EQ(read.runs.size(), 2u);
    EXPECT_EQ(read.runs[1].status, RunStatus::Oom);
    EXPECT_EQ(read.warnings.size(), 1u);
    EXPECT_NO_THROW(second.append(read.runs[0]));
    EXPECT_EQ(engine::loadRunsJsonl(second.path()).runs.size(), 1u);
    EXPECT_EQ(second.answer(true), "");
    EXPECT_FALSE(std::filesystem::exists(second.previousPath()));
    std::filesystem::remove_all(dir);
}

// Restored without damage, the last session's lines become the start of this session's
// file, before the runs this session finished while the offer waited.
TEST(Autosave, AdoptedRunsStartThisSessionsFile) {
    const auto dir = std::filesystem::temp_directory_path() / "lmprof_autosave_adopt";
    std::filesystem::remove_all(dir);
    {
        Autosave first(dir);
        first.append(finished(cfg("tiny", 16), RunStatus::Ok, {1, 2}, "a-1"));
        first.append(finished(cfg("tiny", 32), RunStatus::Ok, {1, 2}, "a-2"));
    }
    Autosave second(dir);
    ASSERT_EQ(second.takePrevious()->runs, 2u);
    second.append(finished(cfg("tiny", 64), RunStatus::Ok, {1, 2}, "b-1"));
    EXPECT_EQ(second.adopt(), "");
    EXPECT_FALSE(std::filesystem::exists(second.previousPath()));
    const auto runs = engine::loadRunsJsonl(second.path()).runs;
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0].id, "a-1");
    EXPECT_EQ(runs[2].id, "b-1");
    second.append(finished(cfg("tiny", 128), RunStatus::Ok, {1, 2}, "b-2"));
    EXPECT_EQ(engine::loadRunsJsonl(second.path()).runs.size(), 4u);
    std::filesystem::remove_all(dir);
}

namespace {
std::filesystem::path freshDir(const char* name) {
    const auto dir = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(dir);
    return dir;
}
} // namespace

// The window crashed (or closed) with the offer open: nothing is replaced at the next
// launch; the runs of the session in between are offered together with the old ones.
TEST(Autosave, AnUnansweredOfferIsNeverReplacedAndIsOfferedAgainWithLaterRuns) {
    const auto dir = freshDir("lmprof_autosave_unanswered");
    {
        Autosave first(dir);
        for (const char* id : {"a-1", "a-2", "a-3"}) {
            first.append(finished(cfg("tiny", 16), RunStatus::Ok, {1, 2}, id));
        }
    }
    {
        Autosave second(dir); // offered, never answered; this session finishes one run
        ASSERT_EQ(second.takePrevious()->runs, 3u);
        second.append(finished(cfg("tiny", 32), RunStatus::Ok, {1, 2}, "b-1"));
        std::ofstream(dir / "autosave.jsonl", std::ios::app) << "{\"cut"; // then a crash
    }
    Autosave third(dir);
    const auto previous = third.takePrevious();
    ASSERT_TRUE(previous);
    EXPECT_EQ(previous->runs, 5u); // four runs and the cut line
    const auto read = engine::loadRunsJsonl(third.previousPath());
    ASSERT_EQ(read.runs.size(), 4u);
    EXPECT_EQ(read.runs[0].id, "a-1");
    EXPECT_EQ(read.runs[3].id, "b-1");
    EXPECT_EQ(read.warnings.size(), 1u);
    EXPECT_EQ(third.problem(), "");
    EXPECT_FALSE(std::filesystem::exists(third.path()));
    // Discard keeps them one more time, under their own name.
    EXPECT_EQ(third.answer(false), "");
    EXPECT_FALSE(std::filesystem::exists(third.previousPath()));
    EXPECT_EQ(engine::loadRunsJsonl(third.discardedPath()).runs.size(), 4u);
    std::filesystem::remove_all(dir);
}

// Readable runs of a partly damaged file come back, and every skipped line is reported.
TEST(Autosave, EverySkippedLineIsCountedAndNamed) {
    const auto dir = freshDir("lmprof_autosave_damaged");
    {
        Autosave first(dir);
        first.append(finished(cfg("tiny", 16), RunStatus::Ok, {1, 2}, "a-1"));
        std::ofstream(dir / "autosave.jsonl", std::ios::app) << "garbage\n{}\n";
        first.append(finished(cfg("tiny", 32), RunStatus::Ok, {1, 2}, "a-2"));
        std::ofstream(dir / "autosave.jsonl", std::ios::app) << "[1,2]\n";
    }
    Autosave second(dir);
    const auto previous = second.takePrevious();
    ASSERT_TRUE(previous);
    EXPECT_EQ(previous->runs, 5u);
    const auto read = engine::loadRunsJsonl(second.previousPath());
    EXPECT_EQ(read.runs.size(), 2u);
    ASSERT_EQ(read.warnings.size(), 3u);
    EXPECT_EQ(skippedLines(read.warnings), "3 damaged line(s) skipped: line 2, line 3, line 5");
    EXPECT_EQ(skippedLines(read.warnings, 1), "3 damaged line(s) skipped: line 2 and 2 more");
    std::filesystem::remove_all(dir);
}

// A file found to hold no readable run is not offered again, and not lost: it is moved
// aside and named.
TEST(Autosave, AnUnreadableFileIsKeptAsideAndNamed) {
    const auto dir = freshDir("lmprof_autosave_unreadable");
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "autosave.jsonl") << "not json\nnor this\n";
    Autosave autosave(dir);
    EXPECT_EQ(autosave.takePrevious()->runs, 2u); // not read yet
    const std::string problem =
        autosave.setAside(skippedLines(engine::loadRunsJsonl(autosave.previousPath()).warnings));
    EXPECT_NE(problem.find("2 damaged line(s) skipped"), std::string::npos) << problem;
    EXPECT_NE(problem.find("previous-session.unreadable-"), std::string::npos) << problem;
    EXPECT_FALSE(std::filesystem::exists(autosave.previousPath()));
    int kept = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        kept += e.path().filename().string().rfind("previous-session.unreadable-", 0) == 0;
    }
    EXPECT_EQ(kept, 1);
    // An empty file holds nothing to lose and is simply dropped.
    std::ofstream(dir / "autosave.jsonl").close();
    Autosave again(dir);
    EXPECT_FALSE(again.takePrevious());
    EXPECT_EQ(again.problem(), "");
    EXPECT_FALSE(std::filesystem::exists(again.previousPath()));
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
