// A result set read on a thread of its own while the window goes on (File > Open, Recent,
// restoring the last session): a night's sweep takes seconds to read. The app owns it, so
// that no view starts a thread (docs/ARCHITECTURE.md, "Threads"); the Files view draws its
// progress and hands the file on when it is done.
#pragma once

#include "lmprof/engine/result_io.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace lmprof::ui {

class FileReading {
public:
    // What a reading ended with: the file, or why not (`cancelled` by the user).
    struct Done {
        std::string path;
        std::optional<engine::ResultsFile> file;
        std::string error;
        bool cancelled = false;
    };

    FileReading() = default;
    FileReading(const FileReading&) = delete;
    FileReading& operator=(const FileReading&) = delete;
    // Cancels a reading in progress and waits for its thread (the reader stops at its next
    // run); nothing is handed on.
    ~FileReading();

    // Starts reading `path`; throws std::logic_error while another reading is in progress.
    void start(const std::string& path);
    bool busy() const { return m_reading != nullptr; }
    // The file in progress ("" when none), the share of it read, and the cancel asked for.
    const std::string& path() const;
    double share() const;
    void cancel();
    bool cancelling() const;
    // The reading's end once it has ended (its thread joined), else nullopt; each end is
    // handed out once.
    std::optional<Done> take();

private:
    struct Reading {
        Done done;
        std::atomic<double> share{0.0};
        std::atomic<bool> cancel{false};
        std::atomic<bool> finished{false};
        std::thread worker;
    };
    std::unique_ptr<Reading> m_reading;
};

} // namespace lmprof::ui
