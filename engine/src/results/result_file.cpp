// Result-set files: atomic writes (temp file, fsync, rename, fsync of the directory),
// reads with errors that name the path, timestamps and this build's identity.

#include "lmprof/engine/file_io.h"
#include "lmprof/engine/result_io.h"
#include "lmprof_version.h"
#include "results/json_access.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lmprof::engine {

void saveResultSetAtomic(const ResultSet& set, const std::filesystem::path& path) {
    writeFileAtomic(path, [&](const ChunkWriter& write) {
        json_io::writeResultSetJson(set, 2, write);
        write("\n");
    });
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
    // Straight into a string of the file's size (a stream buffer would hold it twice over),
    // then whatever a growing file added since, up to the limit.
    std::string text;
    if (const auto size = std::filesystem::file_size(path, ec); !ec) {
        text.resize(static_cast<size_t>(size));
        in.read(text.data(), static_cast<std::streamsize>(size));
        text.resize(static_cast<size_t>(in.gcount()));
    }
    char more[65536];
    while (in.read(more, sizeof(more)) || in.gcount() > 0) {
        if (text.size() + static_cast<size_t>(in.gcount()) > maxBytes) {
            throw ResultFormatError(path.string() + ": larger than lmprof reads (" +
                                    std::to_string(maxBytes) + " bytes)");
        }
        text.append(more, static_cast<size_t>(in.gcount()));
    }
    return text;
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

namespace {
// parseRunsJsonl, telling `consumed` where each line read ends.
JsonlRuns parseRunsJsonlReporting(std::string_view text,
                                  const std::function<void(size_t)>& consumed) {
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
        if (consumed) {
            consumed(pos);
        }
    }
    return out;
}
} // namespace

JsonlRuns parseRunsJsonl(std::string_view text) {
    return parseRunsJsonlReporting(text, {});
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

namespace {

// A result set's file mapped read-only (the same checks as readInputFile): its pages come
// from the page cache as the reader reaches them and go again once the runs before them are
// read, so a set of hundreds of megabytes is never held whole (docs/RESULTS.md, "Reading
// large files"). Where it cannot be mapped, its text is read as any input.
class InputText {
public:
    explicit InputText(const std::filesystem::path& path) {
        const std::string name = path.string();
        // Non-blocking: a FIFO must not hang the open (readInputFile then refuses it).
        const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        struct stat st {};
        if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
            static_cast<std::uintmax_t>(st.st_size) <= kMaxInputFileBytes) {
            void* p =
                ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
            if (p != MAP_FAILED) {
                m_map = static_cast<const char*>(p);
                m_size = static_cast<size_t>(st.st_size);
                ::madvise(p, m_size, MADV_SEQUENTIAL);
            }
        }
        if (fd >= 0) {
            ::close(fd);
        }
        if (!m_map) {
            m_read = readInputFile(path); // its errors name the path and the reason
        }
    }
    ~InputText() {
        if (m_map) {
            ::munmap(const_cast<char*>(m_map), m_size);
        }
    }
    InputText(const InputText&) = delete;
    InputText& operator=(const InputText&) = delete;

    std::string_view text() const { return m_map ? std::string_view(m_map, m_size) : m_read; }
    // The text before `offset` has been read: its whole pages leave this process's memory
    // (read again from the file should the reference reading need them).
    void release(size_t offset) {
        if (!m_map) {
            return;
        }
        const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
        const size_t upTo = offset / page * page;
        if (upTo > m_released) {
            ::madvise(const_cast<char*>(m_map) + m_released, upTo - m_released, MADV_DONTNEED);
            m_released = upTo;
        }
    }

private:
    const char* m_map = nullptr;
    size_t m_size = 0;
    size_t m_released = 0;
    std::string m_read;
};

ResultSet parseNamed(const std::filesystem::path& path, InputText& input,
                     const std::function<void(size_t)>& consumed) {
    try {
        return json_io::parseResultSetReleasing(input.text(), consumed);
    } catch (const ResultFormatError& e) {
        throw ResultFormatError(path.string() + ": " + e.what());
    }
}

} // namespace

ResultSet loadResultSet(const std::filesystem::path& path) {
    InputText input(path);
    return parseNamed(path, input, [&](size_t offset) { input.release(offset); });
}

namespace {
// Whether the object on `line` has a member "runs" of its own: a result set written on one
// line (Python's json.dump, jq -c). Found by following strings and brackets only, so that a
// whole set is not parsed as a run first (it read each compact set twice, 2.1x as long).
bool namesRuns(std::string_view line) {
    int depth = 0;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            --depth;
        } else if (c == '"') {
            size_t end = i + 1;
            while (end < line.size() && line[end] != '"') {
                end += line[end] == '\\' ? 2 : 1;
            }
            const size_t next = line.find_first_not_of(" \t\r\n", end + 1);
            if (depth == 1 && line.substr(i + 1, end - i - 1) == "runs" &&
                next != std::string_view::npos && line[next] == ':') {
                return true;
            }
            i = end;
        }
    }
    return false;
}

// An autosave file under another name: its first non-blank line is a whole run. (A result
// set's first line is "{" or, written compactly, the whole set, with its "runs".)
bool firstLineIsARun(std::string_view text) {
    const size_t start = text.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) {
        return false;
    }
    const size_t end = text.find('\n', start);
    const std::string_view line =
        text.substr(start, end == std::string_view::npos ? end : end - start);
    if (namesRuns(line)) {
        return false;
    }
    try {
        parseRun(line);
        return true;
    } catch (const ResultFormatError&) {
        return false;
    }
}
} // namespace

JsonlRuns loadRuns(const std::filesystem::path& path) {
    ResultsFile file = loadResultsFile(path);
    return {std::move(file.runs), std::move(file.warnings)};
}

ResultsFile loadResultsFile(const std::filesystem::path& path, const ReadProgress& progress) {
    InputText input(path);
    const size_t size = input.text().size();
    const auto consumed = [&](size_t offset) {
        input.release(offset);
        if (progress && !progress(size ? static_cast<double>(offset) / size : 1.0)) {
            throw ReadCancelled("opening " + path.string() + " was cancelled");
        }
    };
    ResultsFile file;
    if (path.extension() == ".jsonl" || firstLineIsARun(input.text())) {
        JsonlRuns runs = parseRunsJsonlReporting(input.text(), consumed);
        file = {std::move(runs.runs), {}, std::move(runs.warnings)};
    } else {
        ResultSet set = parseNamed(path, input, consumed);
        file = {std::move(set.runs), std::move(set.precisionLab), {}};
    }
    if (progress) {
        progress(1.0); // read: what follows the runs (the lab, the set's end) too
    }
    return file;
}

ToolInfo toolInfo() {
    ToolInfo t;
    t.name = "lmprof";
    t.version = LMPROF_VERSION;
    t.git = LMPROF_GIT_REVISION;
    return t;
}

} // namespace lmprof::engine
