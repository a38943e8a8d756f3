// The file utilities every writer of lmprof's files shares: a file replaced atomically, lines
// appended so a crash right after keeps them, the check of an output path before a run, and
// the time stamp files carry. Plain POSIX and the standard library (lmprof_core).
#pragma once

#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace lmprof::engine {

// Writes to a temporary file beside `path`, flushes it to disk and renames it over `path`,
// so a crash leaves either the old file or the new one, never half of one.
// Throws std::runtime_error naming the path on failure.
void writeFileAtomic(const std::filesystem::path& path, std::string_view contents);
// The same, for contents made piece by piece (a result set of hundreds of megabytes is
// written run by run, never held whole): `produce` calls `write` with each piece in order.
using ChunkWriter = std::function<void(std::string_view)>;
void writeFileAtomic(const std::filesystem::path& path,
                     const std::function<void(const ChunkWriter& write)>& produce);

// Why `path` cannot take a file written by writeFileAtomic, or "" if it can: it must be a
// regular file or not exist yet (the rename would replace a link, folder, pipe or device),
// in an existing, writable folder. Checked before a run, so no result waits on a bad path.
std::string outputFileProblem(const std::filesystem::path& path);

// A file opened for appending (created 0644 if missing); throws std::runtime_error naming
// `what` and the path.
int openForAppend(const std::filesystem::path& path, const std::string& what);
// Appends whole lines (each ending in a newline) through a descriptor opened for appending,
// starting on a fresh line (a line cut by a kill stays a line of its own), and fsyncs: one
// write(2). Returns false with errno set on failure.
bool appendLines(int fd, std::string_view lines);
// appendLines on `path` (an autosave file, created if missing), so the lines survive a
// crash right after. Throws std::runtime_error naming the path on failure.
void appendJsonlText(const std::filesystem::path& path, std::string_view lines);

// ISO 8601 UTC timestamp of now, e.g. "2026-11-21T12:00:00Z".
std::string utcNow();
// A local time in strftime's `format`, e.g. localTime(t, "%Y-%m-%d %H:%M").
std::string localTime(std::time_t t, const char* format);
// Now, local, as a file name's part that sorts and reads: "2026-11-25_19-05-12".
std::string localNowForFileName();

} // namespace lmprof::engine
