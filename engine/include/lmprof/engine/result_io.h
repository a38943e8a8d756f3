// Reading and writing result sets as JSON (schema "lmprof.results/1", docs/RESULTS.md).
// Readers ignore unknown fields and reject a missing or unknown major schema, or a
// malformed document, with a ResultFormatError whose message names the problem.
#pragma once

#include "lmprof/engine/file_io.h"
#include "lmprof/engine/formats.h"
#include "lmprof/engine/result_set.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

inline constexpr std::string_view kResultSchema = formats::kResultSchema;

class ResultFormatError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One rank's record of a data-parallel run as a JSON object: what a rank sends rank 0 at the
// end of a run, and an element of the run's "ddp.ranks". The reader is strict
// (ResultFormatError naming the path) and refuses more steps than totalSteps.
std::string ddpRankToJson(const DdpRank& rank, int worldSize);
DdpRank ddpRankFromJson(std::string_view text, int totalSteps);

// The limits every reader of lmprof's files keeps (docs/LIMITS.md). Far above anything
// lmprof writes (a 10,000-step run with its timeline is tens of MB, about 6 levels deep);
// a file beyond them is refused before it can exhaust memory or the stack.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{1} << 30;
inline constexpr int kMaxJsonDepth = 64;

// The bytes of a regular file of at most maxBytes; a folder, device, pipe or larger file is
// a ResultFormatError naming the path and the reason, raised before anything is read.
std::string readInputFile(const std::filesystem::path& path,
                          std::uintmax_t maxBytes = kMaxInputFileBytes);
// Throws ResultFormatError if arrays and objects nest deeper than kMaxJsonDepth in `text`
// (brackets inside strings do not count). Any JSON parser is safe to recurse after it.
void checkJsonDepth(std::string_view text);

std::string toJson(const ResultSet& set, int indent = 2);
ResultSet parseResultSet(std::string_view text);

// `base` with the fields of a JSON object in the result schema's names changed, e.g.
// {"context_length": 256, "precision": "bf16", "model": "small"} ("model" may name a preset
// or patch its fields). An unknown field or a wrong type is a ResultFormatError naming it
// under `path`; the values are not validated (engine::validate does that).
RunConfig patchConfig(const RunConfig& base, std::string_view patch, const std::string& path);

// A configuration alone as a single JSON line, in the result schema's names ("device" is
// the request), and back; values are not validated (engine::validate does that).
std::string configToJsonLine(const RunConfig& config);
RunConfig parseConfig(std::string_view text);

// One run as a single JSON line (no newline inside), and back.
std::string runToJsonLine(const RunResult& run);
RunResult parseRun(std::string_view text);

// One step as a single JSON line, and back (a launched rank 0's progress, ddp_launch.h).
std::string stepToJsonLine(const StepRecord& step);
StepRecord parseStep(std::string_view text);

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
// The same for any whole lines: appendJsonlText (file_io.h).
// An autosave file held open from the start, for a process that must be able to append
// when it has no file descriptor to spare (lmprof-cli serve under a flood of connections).
// append() is appendRunJsonl's write through the kept descriptor.
class KeptAutosave {
public:
    explicit KeptAutosave(std::filesystem::path path); // throws naming the path
    ~KeptAutosave();
    KeptAutosave(const KeptAutosave&) = delete;
    KeptAutosave& operator=(const KeptAutosave&) = delete;
    void append(const RunResult& run); // throws std::runtime_error naming the path
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
    int m_fd = -1;
};

// Throws ResultFormatError for unreadable files too (naming the path).
ResultSet loadResultSet(const std::filesystem::path& path);

// The runs of either kind of file: an autosave file by its .jsonl extension or by its
// content (a first line that is a whole run), with its warnings; otherwise a result set. The one
// loader of `lmprof-cli show`/`compare` and the window's Compare view. Throws ResultFormatError as
// the two loaders above do.
JsonlRuns loadRuns(const std::filesystem::path& path);

// What a file of results holds, whichever kind it is: a result set's runs and precision lab,
// or an autosave file's runs and the warnings of its damaged lines.
struct ResultsFile {
    std::vector<RunResult> runs;
    PrecisionLab lab;
    std::vector<std::string> warnings;
};
// How far a long read has come (the share of the file read, 0 to 1), asked as it goes;
// false stops it (ReadCancelled is thrown, and nothing is returned).
using ReadProgress = std::function<bool(double share)>;
class ReadCancelled : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
// loadRuns and the lab in one reading, with progress (the window opens a night's sweep on a
// thread of its own, with a progress bar and Cancel). Throws as loadRuns does.
ResultsFile loadResultsFile(const std::filesystem::path& path, const ReadProgress& progress = {});

// writeFileAtomic (file_io.h) of toJson(set): a crash leaves the old file or the new one.
// Throws std::runtime_error naming the path on failure.
void saveResultSetAtomic(const ResultSet& set, const std::filesystem::path& path);

// This build's name, version and git revision.
ToolInfo toolInfo();

} // namespace lmprof::engine
