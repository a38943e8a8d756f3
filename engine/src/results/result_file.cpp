// Result-set files: atomic writes (temp file, fsync, rename, fsync of the directory),
// reads with errors that name the path, timestamps and this build's identity.

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/file_io.h"
#include "lmprof_version.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace lmprof::engine {

void saveResultSetAtomic(const ResultSet& set, const std::filesystem::path& path) {
    writeFileAtomic(path, toJson(set) + "\n");
}

std::string readInputFile(const std::filesystem::path& path, std::uintmax_t maxBytes) {
    // Only regular files: /dev/zero, a FIFO or a folder would be read forever or fail late.
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec) {
        throw ResultFormatError(path.string() + ": cannot open (" + ec.message() + ")");
    }
    if (!std::filesystem::is_regular_file(status)) {
        throw ResultFormatError(path.string() +
                                ": not a regular file (a folder, device or pipe cannot be read "
                                "as an lmprof file)");
    }
    if (const auto size = std::filesystem::file_size(path, ec); !ec && size > maxBytes) {
        throw ResultFormatError(path.string() + ": " + std::to_string(size) +
                                " bytes is larger than lmprof reads (" + std::to_string(maxBytes) +
                                ")");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw ResultFormatError(path.string() + ": cannot open (" + std::strerror(errno) + ")");
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

void checkJsonDepth(std::string_view text) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\') {
                ++i; // the escaped character, a quote included
            } else if (c == '"') {
                inString = false;
            }
        } else if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth) {
                throw ResultFormatError("not an lmprof file: nested deeper than " +
                                        std::to_string(kMaxJsonDepth) + " levels");
            }
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

JsonlRuns parseRunsJsonl(std::string_view text) {
    JsonlRuns out;
    size_t lineNo = 0;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t end = text.find('\n', pos);
        const bool terminated = end != std::string_view::npos;
        const std::string_view line = text.substr(pos, terminated ? end - pos : text.size() - pos);
        pos = terminated ? end + 1 : text.size();
        ++lineNo;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
            continue;
        }
        try {
            out.runs.push_back(parseRun(line));
        } catch (const ResultFormatError& e) {
            out.warnings.push_back("line " + std::to_string(lineNo) + ": " +
                                   (terminated ? std::string()
                                               : std::string("incomplete last line (the "
                                                             "writer was interrupted), ")) +
                                   "skipped: " + e.what());
        }
    }
    return out;
}

JsonlRuns loadRunsJsonl(const std::filesystem::path& path) {
    return parseRunsJsonl(readInputFile(path));
}

KeptAutosave::KeptAutosave(std::filesystem::path path)
    : m_path(std::move(path)), m_fd(openForAppend(m_path, "autosave file")) {}

KeptAutosave::~KeptAutosave() {
    ::close(m_fd);
}

void KeptAutosave::append(const RunResult& run) {
    if (!appendLines(m_fd, runToJsonLine(run) + "\n")) {
        throw std::runtime_error("cannot append to autosave file " + m_path.string() + ": " +
                                 std::strerror(errno));
    }
}

void appendRunJsonl(const std::filesystem::path& path, const RunResult& run) {
    appendJsonlText(path, runToJsonLine(run) + "\n");
}

ResultSet loadResultSet(const std::filesystem::path& path) {
    const std::string text = readInputFile(path);
    try {
        return parseResultSet(text);
    } catch (const ResultFormatError& e) {
        throw ResultFormatError(path.string() + ": " + e.what());
    }
}

namespace {
// An autosave file under another name: its first non-blank line is a whole run. (A result
// set's first line is "{" or, written compactly, a document with no run fields.)
bool firstLineIsARun(std::string_view text) {
    const size_t start = text.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) {
        return false;
    }
    const size_t end = text.find('\n', start);
    try {
        parseRun(text.substr(start, end == std::string_view::npos ? end : end - start));
        return true;
    } catch (const ResultFormatError&) {
        return false;
    }
}
} // namespace

JsonlRuns loadRuns(const std::filesystem::path& path) {
    const std::string text = readInputFile(path);
    if (path.extension() == ".jsonl" || firstLineIsARun(text)) {
        return parseRunsJsonl(text);
    }
    try {
        return {parseResultSet(text).runs, {}};
    } catch (const ResultFormatError& e) {
        throw ResultFormatError(path.string() + ": " + e.what());
    }
}

ToolInfo toolInfo() {
    ToolInfo t;
    t.name = "lmprof";
    t.version = LMPROF_VERSION;
    t.git = LMPROF_GIT_REVISION;
    return t;
}

} // namespace lmprof::engine
