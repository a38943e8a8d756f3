// Reading and writing result sets as JSON (schema "lmprof.results/1", docs/RESULTS.md).
// Readers ignore unknown fields and reject a missing or unknown major schema, or a
// malformed document, with a ResultFormatError whose message names the problem.
#pragma once

#include "lmprof/engine/records.h"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

inline constexpr std::string_view kResultSchema = "lmprof.results/1.1";

class ResultFormatError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

std::string toJson(const ResultSet& set, int indent = 2);
ResultSet parseResultSet(std::string_view text);

// One run as a single JSON line (no newline inside), and back.
std::string runToJsonLine(const RunResult& run);
RunResult parseRun(std::string_view text);

// An autosave file: one run per line (runToJsonLine), appended as runs finish.
struct JsonlRuns {
    std::vector<RunResult> runs;
    // One message per line that could not be read ("line 7: ..."). A line cut short by a
    // kill during a write is reported here, never thrown: the runs before it still load.
    std::vector<std::string> warnings;
};
JsonlRuns parseRunsJsonl(std::string_view text);
// Throws ResultFormatError only when the file cannot be opened.
JsonlRuns loadRunsJsonl(const std::filesystem::path& path);
// Appends runToJsonLine(run) and a newline to an autosave file (created if missing) and
// fsyncs it before returning, so the run survives a crash right after. One write(2) per
// line: a kill mid-write leaves at most a cut last line, which the readers skip.
// Throws std::runtime_error naming the path on failure.
void appendRunJsonl(const std::filesystem::path& path, const RunResult& run);

// Throws ResultFormatError for unreadable files too (naming the path).
ResultSet loadResultSet(const std::filesystem::path& path);

// The runs of either kind of file: an autosave file by its .jsonl extension (with its
// warnings), otherwise a result set. The one loader of `lmprof-cli show`/`compare` and the
// window's Compare view. Throws ResultFormatError as the two loaders above do.
JsonlRuns loadRuns(const std::filesystem::path& path);

// Writes to a temporary file beside `path`, flushes it to disk and renames it over `path`,
// so a crash leaves either the old file or the new one, never half of one.
// Throws std::runtime_error naming the path on failure.
void saveResultSetAtomic(const ResultSet& set, const std::filesystem::path& path);
void writeFileAtomic(const std::filesystem::path& path, std::string_view contents);

// ISO 8601 UTC timestamp of now, e.g. "2026-11-21T12:00:00Z".
std::string utcNow();

// This build's name, version and git revision.
ToolInfo toolInfo();

} // namespace lmprof::engine
