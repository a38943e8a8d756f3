// Result-set files: atomic writes (temp file, fsync, rename, fsync of the directory),
// reads with errors that name the path, timestamps and this build's identity.

#include "lmprof/engine/result_io.h"
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

namespace {

[[noreturn]] void ioError(const std::string& what, const std::filesystem::path& path) {
    throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(errno));
}

// A failure on the temporary file names the file the user asked for first.
[[noreturn]] void ioError(const std::string& what, const std::filesystem::path& path,
                          const std::filesystem::path& tmp) {
    throw std::runtime_error(what + " " + path.string() + " (through its temporary file " +
                             tmp.filename().string() + "): " + std::strerror(errno));
}

} // namespace

void writeFileAtomic(const std::filesystem::path& path, std::string_view contents) {
    const std::filesystem::path dir =
        path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    const std::filesystem::path tmp =
        dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ioError("cannot create", path, tmp);
    }
    size_t written = 0;
    while (written < contents.size()) {
        const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            const int saved = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            errno = saved;
            ioError("cannot write", path, tmp);
        }
        written += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        ::unlink(tmp.c_str());
        ioError("cannot flush", path, tmp);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int saved = errno;
        ::unlink(tmp.c_str());
        errno = saved;
        ioError("cannot replace", path);
    }
    // Make the rename itself durable.
    const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        ::fsync(dirFd);
        ::close(dirFd);
    }
}

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

std::string outputFileProblem(const std::filesystem::path& path) {
    std::error_code ec;
    const auto status = std::filesystem::symlink_status(path, ec);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
        return "is not a regular file (a link, folder, pipe or device would be replaced)";
    }
    const std::filesystem::path dir =
        path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    if (!std::filesystem::is_directory(dir, ec)) {
        return "its folder " + dir.string() + " does not exist";
    }
    if (::access(dir.c_str(), W_OK) != 0) {
        return "its folder " + dir.string() + " is not writable";
    }
    return {};
}

JsonlRuns loadRunsJsonl(const std::filesystem::path& path) {
    return parseRunsJsonl(readInputFile(path));
}

namespace {
// An autosave file opened for appending (created 0644 if missing); throws naming it.
int openForAppend(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        ioError("cannot open autosave file", path);
    }
    return fd;
}

// Appends whole lines through an open descriptor (O_APPEND), starting on a fresh line, and
// fsyncs: one write(2). Returns false with errno set on failure.
bool appendLines(int fd, std::string_view lines) {
    // A line cut by a kill (no newline at the end) stays a line of its own: the new lines
    // start on a fresh line instead of being glued to it and skipped with it.
    std::string data(lines);
    struct stat st {};
    char last = '\n';
    if (::fstat(fd, &st) == 0 && st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) == 1 &&
        last != '\n') {
        data.insert(data.begin(), '\n');
    }
    return ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()) &&
           ::fsync(fd) == 0;
}
} // namespace

void appendJsonlText(const std::filesystem::path& path, std::string_view lines) {
    const int fd = openForAppend(path);
    const bool ok = appendLines(fd, lines);
    const int saved = errno;
    ::close(fd);
    if (!ok) {
        errno = saved;
        ioError("cannot append to autosave file", path);
    }
}

KeptAutosave::KeptAutosave(std::filesystem::path path)
    : m_path(std::move(path)), m_fd(openForAppend(m_path)) {}

KeptAutosave::~KeptAutosave() {
    ::close(m_fd);
}

void KeptAutosave::append(const RunResult& run) {
    if (!appendLines(m_fd, runToJsonLine(run) + "\n")) {
        ioError("cannot append to autosave file", m_path);
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

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

ToolInfo toolInfo() {
    ToolInfo t;
    t.name = "lmprof";
    t.version = LMPROF_VERSION;
    t.git = LMPROF_GIT_REVISION;
    return t;
}

} // namespace lmprof::engine
