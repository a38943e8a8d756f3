// The window's crash-safe autosave: every finished run is appended (fsynced) to
// <config dir>/autosave.jsonl as it ends. At the next launch the previous session's file
// becomes previous-session.jsonl and its runs are offered for restore: the offer gives their
// count and size, and the window reads them only if the user restores them.
//
// No file of runs is deleted or replaced before the user has answered for it:
//  - previous-session.jsonl stays until the offer is answered. A window that closes (or
//    crashes) with the offer open leaves it, and the next launch offers it again, with
//    the runs of the session in between appended after its own.
//  - Restore makes its lines the start of this session's file (or, when some were damaged,
//    appends the readable runs to this session's file first, and only then removes it);
//    Discard renames it to discarded-session.jsonl (replacing the last discarded one).
//  - A file that cannot be read, or holds no readable run, is moved aside under a name of
//    its own (previous-session.unreadable-<time>.jsonl) and the user is told where.
#pragma once

#include "lmprof/engine/records.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::ui {

class Autosave {
public:
    explicit Autosave(std::filesystem::path configDir);

    // The runs not yet answered for, as the offer shows them before any is read: a year of
    // autosave is thousands of runs and gigabytes, read only if the user restores them.
    struct Previous {
        size_t runs = 0;     // lines of runs in the file (a damaged one counts too)
        uintmax_t bytes = 0; // the file's size
        std::string savedAt; // local time of the last write, "2026-11-21 12:00"
    };
    // Call once at launch, before the first append: hands the runs not yet answered for
    // (the last session's, and any an earlier launch offered but never got an answer for)
    // over to previousPath() and says how many there are, without reading them; nullopt
    // when there are none. What went wrong on the way (a file moved aside, a merge that
    // failed) is in problem().
    std::optional<Previous> takePrevious();
    const std::string& problem() const { return m_problem; }

    // The user's answer to the offer, once the file has been read. adopt(): its runs were
    // restored, and its lines become the start of this session's file (this session's runs
    // so far after them). answer(true): restored, and already appended to this session's
    // file one by one (the file had damaged lines, left behind); answer(false): discarded.
    // Each returns "" or what could not be done (the file then stays and is offered again).
    std::string adopt();
    std::string answer(bool restored);
    // The file could not be read as runs (`why`): it is never offered again, and never lost,
    // but kept under a name of its own. Returns the message that says so and where.
    std::string setAside(const std::string& why);

    // Appends a finished run (fsynced). Throws std::runtime_error naming the file if it
    // cannot be written.
    void append(const engine::RunResult& run);

    const std::filesystem::path& path() const { return m_path; }
    const std::filesystem::path& previousPath() const { return m_previous; }
    const std::filesystem::path& discardedPath() const { return m_discarded; }

private:
    std::filesystem::path m_path;
    std::filesystem::path m_previous;
    std::filesystem::path m_discarded;
    std::string m_problem;
};

// "3 damaged line(s) skipped: line 3, line 7, line 9": which lines of a file were skipped (the
// first `shown` of them, then "and N more"), for one status line.
std::string skippedLines(const std::vector<std::string>& warnings, size_t shown = 5);

} // namespace lmprof::ui
