// Autosave: the engine's fsynced JSON-lines append and reader, and the hand-over of the
// previous session's file at launch.

#include "autosave.h"

#include "lmprof/engine/result_io.h"

#include <ctime>
#include <sys/stat.h>

namespace lmprof::ui {

using namespace lmprof::engine;

Autosave::Autosave(std::filesystem::path configDir)
    : m_path(configDir / "autosave.jsonl"), m_previous(configDir / "previous-session.jsonl") {
    std::error_code ignored; // a missing directory shows up as an append error later
    std::filesystem::create_directories(configDir, ignored);
}

std::optional<Autosave::Previous> Autosave::takePrevious() {
    std::error_code ec;
    if (!std::filesystem::exists(m_path, ec)) {
        return std::nullopt;
    }
    // Moved aside even when it holds nothing readable, so this session's runs never mix
    // with the last one's; previous-session.jsonl stays until the next launch replaces it.
    std::filesystem::rename(m_path, m_previous, ec);
    if (ec) {
        return std::nullopt;
    }
    Previous p;
    try {
        JsonlRuns loaded = loadRunsJsonl(m_previous);
        p.runs = std::move(loaded.runs);
        p.warnings = std::move(loaded.warnings);
    } catch (const ResultFormatError&) {
        return std::nullopt;
    }
    if (p.runs.empty()) {
        return std::nullopt;
    }
    struct stat st {};
    if (::stat(m_previous.c_str(), &st) == 0) {
        std::tm tm{};
        localtime_r(&st.st_mtime, &tm);
        char buf[32];
        std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm);
        p.savedAt = buf;
    }
    return p;
}

void Autosave::append(const RunResult& run) {
    appendRunJsonl(m_path, run);
}

} // namespace lmprof::ui
