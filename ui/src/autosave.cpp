// Autosave: the engine's fsynced JSON-lines append and reader, and the hand-over of the
// runs not yet answered for at launch (autosave.h).

#include "autosave.h"

#include "lmprof/engine/file_io.h"
#include "lmprof/engine/result_io.h"

#include <cctype>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <sys/stat.h>
#include <vector>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {

// Appends the bytes of `from` to `to`, so that two files of runs become one without
// re-encoding anything, damaged lines included.
void appendFile(const std::filesystem::path& from, const std::filesystem::path& to) {
    std::string bytes = readInputFile(from);
    if (!bytes.empty() && bytes.back() != '\n') {
        bytes += '\n'; // a cut last line stays a line of its own
    }
    appendJsonlText(to, bytes);
}

// The lines of a file that are not blank, counted without reading what they say.
size_t countLines(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path.string());
    }
    std::vector<char> chunk(1 << 20);
    size_t lines = 0;
    bool blank = true; // the line so far
    while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
        const char* p = chunk.data();
        const char* end = p + in.gcount();
        while (p < end) {
            const char* newline = static_cast<const char*>(std::memchr(p, '\n', end - p));
            const char* stop = newline ? newline : end;
            for (; blank && p < stop; ++p) {
                blank = std::isspace(static_cast<unsigned char>(*p)) != 0;
            }
            if (!newline) {
                break;
            }
            lines += blank ? 0 : 1;
            blank = true;
            p = newline + 1;
        }
    }
    return lines + (blank ? 0 : 1); // a last line without its newline (a cut one) too
}

} // namespace

Autosave::Autosave(std::filesystem::path configDir)
    : m_path(configDir / "autosave.jsonl"), m_previous(configDir / "previous-session.jsonl"),
      m_discarded(configDir / "discarded-session.jsonl") {
    std::error_code ignored; // a missing directory shows up as an append error later
    std::filesystem::create_directories(configDir, ignored);
}

std::optional<Autosave::Previous> Autosave::takePrevious() {
    std::error_code ec;
    const bool pending = std::filesystem::exists(m_previous, ec);
    if (std::filesystem::exists(m_path, ec)) {
        if (!pending) {
            std::filesystem::rename(m_path, m_previous, ec);
            if (ec) {
                // This session appends to the same file: its runs mix with the last
                // session's, which is better than losing either.
                m_problem = "cannot move " + m_path.string() + " aside (" + ec.message() +
                            "); the last session's runs are still in it";
                return std::nullopt;
            }
        } else {
            // An offer never answered (the window closed or crashed with it open): the
            // session since then goes after it, and both are offered together.
            try {
                appendFile(m_path, m_previous);
                std::filesystem::remove(m_path, ec);
            } catch (const std::exception& e) {
                m_problem = std::string("the last session's runs stay in ") + m_path.string() +
                            " (" + e.what() + ")";
            }
        }
    }
    if (!std::filesystem::exists(m_previous, ec)) {
        return std::nullopt;
    }
    Previous p;
    try {
        p.runs = countLines(m_previous);
    } catch (const std::exception& e) {
        m_problem = setAside(e.what());
        return std::nullopt;
    }
    if (p.runs == 0) {
        std::filesystem::remove(m_previous, ec); // empty: nothing to lose
        return std::nullopt;
    }
    p.bytes = std::filesystem::file_size(m_previous, ec);
    struct stat st {};
    if (::stat(m_previous.c_str(), &st) == 0) {
        p.savedAt = localTime(st.st_mtime, "%Y-%m-%d %H:%M");
    }
    return p;
}

std::string Autosave::setAside(const std::string& why) {
    // Never offered again, so never deleted: kept under a name no later launch reuses.
    std::error_code ec;
    const auto aside =
        m_previous.parent_path() / ("previous-session.unreadable-" +
                                    localTime(std::time(nullptr), "%Y%m%d-%H%M%S") + ".jsonl");
    std::filesystem::rename(m_previous, aside, ec);
    return "the last session's autosave could not be restored: " + why + "; it is kept as " +
           (ec ? m_previous : aside).string();
}

std::string Autosave::adopt() {
    try {
        if (std::filesystem::exists(m_path)) {
            appendFile(m_path, m_previous); // this session's runs after the restored ones
        }
        std::filesystem::rename(m_previous, m_path);
    } catch (const std::exception& e) {
        return std::string("cannot make the restored runs this session's autosave (") + e.what() +
               "); they will be offered again";
    }
    return {};
}

std::string Autosave::answer(bool restored) {
    std::error_code ec;
    if (restored) {
        std::filesystem::remove(m_previous, ec);
    } else {
        std::filesystem::rename(m_previous, m_discarded, ec);
    }
    return ec ? "cannot " + std::string(restored ? "remove " : "rename ") + m_previous.string() +
                    " (" + ec.message() + "); it will be offered again"
              : std::string();
}

void Autosave::append(const RunResult& run) {
    appendRunJsonl(m_path, run);
}

std::string skippedLines(const std::vector<std::string>& warnings, size_t shown) {
    const std::string count = std::to_string(warnings.size()) + " damaged line(s) skipped";
    if (shown == 0) {
        return count;
    }
    std::string out;
    for (size_t i = 0; i < warnings.size() && i < shown; ++i) {
        const std::string& w = warnings[i];
        out += (i ? ", " : "") + w.substr(0, w.find(':'));
    }
    if (warnings.size() > shown) {
        out += " and " + std::to_string(warnings.size() - shown) + " more";
    }
    return count + ": " + out;
}

} // namespace lmprof::ui
