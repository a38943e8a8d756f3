// The window's crash-safe autosave: every finished run is appended (fsynced) to
// <config dir>/autosave.jsonl as it ends. At the next launch the previous session's file
// is moved aside to previous-session.jsonl and its runs are offered for restore.
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
        std::vector<std::string> warnings; // e.g. a last line cut short by a crash
        std::string savedAt;               // local time of the last write, "2026-11-21 12:00"
    };
    // Call once at launch, before the first append: moves the last session's autosave aside
    // (so this session starts a fresh one) and returns its runs; nullopt when it has none.
    std::optional<Previous> takePrevious();

    // Appends a finished run (fsynced). Throws std::runtime_error naming the file if it
    // cannot be written.
    void append(const engine::RunResult& run);

    const std::filesystem::path& path() const { return m_path; }
    const std::filesystem::path& previousPath() const { return m_previous; }

private:
    std::filesystem::path m_path;
    std::filesystem::path m_previous;
};

} // namespace lmprof::ui
