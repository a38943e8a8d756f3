// The app's background reading of a result set (FileReading): the thread the Files view
// shows instead of starting one of its own (issue 61).

#include "file_reading.h"
#include "lmprof/engine/result_io.h"

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <stdexcept>
#include <thread>
#include <unistd.h>

using namespace lmprof;
using lmprof::ui::FileReading;
namespace fs = std::filesystem;

namespace {

// The reading's end, waited for without a time limit that a busy machine could miss: the
// test's own timeout (ctest's) bounds it.
FileReading::Done waitFor(FileReading& reading) {
    for (;;) {
        if (auto done = reading.take()) {
            return *done;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

fs::path savedSet() {
    const fs::path path =
        fs::temp_directory_path() / ("lmprof-reading-" + std::to_string(getpid()) + ".json");
    engine::ResultSet set;
    engine::RunResult run;
    run.id = "read-1";
    set.runs = {run};
    engine::saveResultSetAtomic(set, path);
    return path;
}

} // namespace

TEST(FileReading, ReadsAFileAndHandsItOnOnce) {
    const fs::path path = savedSet();
    FileReading reading;
    EXPECT_FALSE(reading.busy());
    reading.start(path.string());
    EXPECT_TRUE(reading.busy());
    EXPECT_EQ(reading.path(), path.string());
    // One reading at a time: a second start is a caller's mistake, said at once.
    EXPECT_THROW(reading.start(path.string()), std::logic_error);
    const FileReading::Done done = waitFor(reading);
    ASSERT_TRUE(done.file) << done.error;
    ASSERT_EQ(done.file->runs.size(), 1u);
    EXPECT_EQ(done.file->runs[0].id, "read-1");
    EXPECT_FALSE(reading.busy());
    EXPECT_FALSE(reading.take()); // handed out once
    EXPECT_EQ(reading.path(), "");
    fs::remove(path);
}

TEST(FileReading, AFileThatCannotBeReadSaysWhy) {
    FileReading reading;
    const std::string missing = "/nonexistent/lmprof-reading.json";
    reading.start(missing);
    const FileReading::Done done = waitFor(reading);
    EXPECT_FALSE(done.file);
    EXPECT_FALSE(done.cancelled);
    EXPECT_EQ(done.error.rfind("cannot open", 0), 0u) << done.error;
    EXPECT_NE(done.error.find(missing), std::string::npos) << done.error;
}

// Destroyed mid-reading (the window closing): the reading is cancelled and its thread
// joined, with nothing handed on.
TEST(FileReading, DestroyedWhileReadingCancelsAndJoins) {
    const fs::path path = savedSet();
    {
        FileReading reading;
        reading.start(path.string());
        reading.cancel();
        EXPECT_TRUE(reading.cancelling());
    }
    fs::remove(path);
}
