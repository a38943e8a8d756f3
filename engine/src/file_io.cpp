// Files written so that a crash loses nothing (file_io.h): atomic replacement, fsynced line
// appends, and the checks made before anything is written.

#include "lmprof/engine/file_io.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <stdexcept>
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
    writeFileAtomic(path, [contents](const ChunkWriter& write) { write(contents); });
}

void writeFileAtomic(const std::filesystem::path& path,
                     const std::function<void(const ChunkWriter& write)>& produce) {
    const std::filesystem::path dir =
        path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    const std::filesystem::path tmp =
        dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ioError("cannot create", path, tmp);
    }
    const auto write = [&](std::string_view contents) {
        size_t written = 0;
        while (written < contents.size()) {
            const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                ioError("cannot write", path, tmp);
            }
            written += static_cast<size_t>(n);
        }
    };
    try {
        produce(write);
    } catch (...) { // a write failed, or the producer did: no half file is left
        const int saved = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        errno = saved;
        throw;
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

int openForAppend(const std::filesystem::path& path, const std::string& what) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        ioError("cannot open " + what, path);
    }
    return fd;
}

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

void appendJsonlText(const std::filesystem::path& path, std::string_view lines) {
    const int fd = openForAppend(path, "autosave file");
    const bool ok = appendLines(fd, lines);
    const int saved = errno;
    ::close(fd);
    if (!ok) {
        errno = saved;
        ioError("cannot append to autosave file", path);
    }
}

std::string localTime(std::time_t t, const char* format) {
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[64];
    return std::strftime(buf, sizeof(buf), format, &tm) ? std::string(buf) : std::string();
}

std::string localNowForFileName() {
    return localTime(std::time(nullptr), "%Y-%m-%d_%H-%M-%S");
}

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

} // namespace lmprof::engine
