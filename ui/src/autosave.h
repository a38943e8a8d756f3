// The window's crash-safe autosave: every finished run is appended (fsynced) to
// <config dir>/autosave.jsonl as it ends. At the next launch the previous session's file
// becomes previous-session.jsonl and its runs are offered for restore.
//
// No file of runs is deleted or replaced before the user has answered for it:
//  - previous-session.jsonl stays until the offer is answered. A window that closes (or
//    crashes) with the offer open leaves it, and the next launch offers it again, with
//    the runs of the session in between appended after its own.
//  - Restore appends its runs to this session's file first, and only then removes it;
//    Discard renames it to discarded-session.jsonl (replacing the last discarded one).
//  - A file that cannot be read, or holds no readable run, is moved aside under a name of
//    its own (previous-session.unreadable-<time>.jsonl) and the user is told where.
#pragma once

#include "lmprof/engine/records.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::ui {

class Autosave {
public:
    explicit Autosave(std::filesystem::path configDir);

    struct Previous {
        std::vector<engine::RunResult> runs;
        std::vector<std::string> warnings; // one per skipped line ("line 7: ...")
        std::string savedAt;               // local time of the last write, "2026-11-21 12:00"
    };
    // Call once at launch, before the first append: hands the runs not yet answered for
    // (the last session's, and any an earlier launch offered but never got an answer for)
    // over to previous-session.jsonl and returns them; nullopt when there are none. What
    // went wrong on the way (a file moved aside, a merge that failed) is in problem().
    std::optional<Previous> takePrevious();
    const std::string& problem() const { return m_problem; }

    // The user's answer to the offer. restored: its runs are in this session's file now
    // (call only after appending them all). Otherwise they were discarded. Returns "" or
    // what could not be done (the file then stays and is offered again).
    std::string answer(bool restored);

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
