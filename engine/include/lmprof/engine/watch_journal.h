// A watched script's step journal, <save>.steps.jsonl (docs/WATCH.md, "Faults"): a header
// line with the run and its environment, then one line per finished step, then the run's end
// (its status and error) when the script closes it, written by the lmprof Python package as
// the script trains. lmprof-cli watch reads it as it grows; after a
// script that was killed, its steps are the run.
#pragma once

#include "lmprof/engine/formats.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/result_set.h"
#include "lmprof/engine/stats.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lmprof::engine {

inline constexpr std::string_view kWatchJournalSchema = formats::kJournalSchema;
inline constexpr std::string_view kWatchJournalSuffix = ".steps.jsonl";

// What a watched run keeps of its steps in memory bounded whatever their number (docs/WATCH.md,
// "Long runs"), by the Python watcher's rule (its Tally): every step up to kKeptSteps; past
// that, the warmup and perturbed steps and every `every`-th, `every` doubling each time the
// others outgrow kKeptSteps. The summary covers every step recorded (PhaseTally).
class StepTally {
public:
    static constexpr size_t kKeptSteps = 10'000;

    void add(const StepRecord& step);
    const std::vector<StepRecord>& kept() const { return m_kept; }
    StepRecord* lastKept() { return m_kept.empty() ? nullptr : &m_kept.back(); }
    int recorded() const { return m_recorded; }
    int warmup() const { return m_warmup; }
    int lastIndex() const { return m_lastIndex; }
    std::optional<Thinning> thinning() const;
    // summarize()'s summary of the kept steps, its times and peaks taken over every step.
    RunSummary summary(const RunConfig& config) const;

private:
    int m_every = 1;
    int m_recorded = 0;
    int m_warmup = 0;
    int m_lastIndex = -1;
    size_t m_regular = 0; // kept steps that are not special
    std::vector<StepRecord> m_kept;
    PhaseTally m_forward, m_backward, m_optimizer, m_total; // measured steps
    PeakBytes m_peaks[2]; // [0] of the warmup steps, [1] of the others
};

class WatchJournal {
public:
    explicit WatchJournal(std::filesystem::path path);

    // Reads what was appended since the last call and returns the steps among it; a line
    // still being written waits for the next call, and at most kMaxReadBytes are read per
    // call. A line that is not JSON is skipped (counted in skipped()). Throws
    // ResultFormatError when the file is not a watch journal: its first line is not the
    // header, or the header names another schema; or when it is no regular file (a FIFO, a
    // device, a link), which is never opened for reading: said once, then nothing is read.
    std::vector<StepRecord> poll();

    bool started() const { return m_header.has_value(); }
    const std::string& runId() const { return m_header->id; } // started() only
    const std::filesystem::path& path() const { return m_path; }
    int skipped() const { return m_skipped; }
    size_t stepCount() const { return m_steps.recorded(); } // steps read so far
    int lastIndex() const { return m_steps.lastIndex(); }   // the last one's, -1 before any
    // The run as the journal has it (started() only): its steps so far (thinned past
    // StepTally::kKeptSteps), its step counts and summary over all of them, ended as the journal's
    // end line says, else `cancelled` with `why`, since its script never closed it.
    RunResult run(const std::string& why) const;
    const Environment& environment() const;

    static constexpr size_t kMaxReadBytes = size_t{16} << 20;
    static constexpr size_t kMaxLineBytes = size_t{1} << 20;

private:
    void take(std::string_view line, std::vector<StepRecord>& out);
    // Throws ResultFormatError naming the file and `why` the first time; nothing after.
    std::vector<StepRecord> refuse(const std::string& why);

    std::filesystem::path m_path;
    uintmax_t m_offset = 0;
    std::optional<RunResult> m_header; // the run without its steps
    Environment m_environment;
    StepTally m_steps;
    std::optional<std::pair<RunStatus, std::optional<std::string>>>
        m_end; // status and error, once closed
    int m_skipped = 0;
    bool m_refused = false; // a file in the journal's place that is no regular file, told once
};

} // namespace lmprof::engine
