// Reading a watched script's step journal as it grows (watch_journal.h, docs/WATCH.md).

#include "lmprof/engine/watch_journal.h"

#include "lmprof/engine/result_io.h"
#include "results/json_access.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lmprof::engine {

using namespace json_io;

namespace {

// A `scalars` line: what run.log() gave the last step after it was journaled. Only its loss
// is a field of a step here, amended when that step is kept (not thinned out). False
// (skipped) for a line about another step, or a loss that is no number.
bool amendLast(const json& entry, StepTally& steps) {
    const auto* index = entry.contains("index") ? &entry["index"] : nullptr;
    const auto* scalars = entry.contains("scalars") ? &entry["scalars"] : nullptr;
    if (steps.recorded() == 0 || !index || !index->is_number_integer() ||
        index->get<int64_t>() != steps.lastIndex() || !scalars || !scalars->is_object()) {
        return false;
    }
    StepRecord* last = steps.lastKept();
    if (!last || last->index != steps.lastIndex() || !scalars->contains("loss")) {
        return true;
    }
    try {
        last->loss = numberOrNameFrom((*scalars)["loss"], "$.scalars.loss");
    } catch (const ResultFormatError&) {
        return false;
    }
    return true;
}

// Kept whatever the thinning: few, and each read on its own.
bool special(const StepRecord& s) {
    return s.warmup || s.opProfiled || s.memorySnapshot;
}

} // namespace

void StepTally::add(const StepRecord& step) {
    ++m_recorded;
    m_warmup += step.warmup ? 1 : 0;
    m_lastIndex = step.index;
    if (!special(step)) {
        m_forward.add(step.forwardMs);
        m_backward.add(step.backwardMs);
        m_optimizer.add(step.optimizerMs);
        m_total.add(step.totalMs);
    }
    PeakBytes& peaks = m_peaks[step.warmup ? 0 : 1];
    peaks.forward = std::max(peaks.forward, step.phasePeakBytes.forward);
    peaks.backward = std::max(peaks.backward, step.phasePeakBytes.backward);
    peaks.optimizer = std::max(peaks.optimizer, step.phasePeakBytes.optimizer);
    if (special(step)) {
        m_kept.push_back(step);
        return;
    }
    if (step.index % m_every != 0) {
        return;
    }
    m_kept.push_back(step);
    if (++m_regular > kKeptSteps) {
        m_every *= 2;
        std::erase_if(m_kept,
                      [&](const StepRecord& s) { return !special(s) && s.index % m_every != 0; });
        m_regular = static_cast<size_t>(std::count_if(
            m_kept.begin(), m_kept.end(), [](const StepRecord& s) { return !special(s); }));
    }
}

std::optional<Thinning> StepTally::thinning() const {
    return m_every > 1 ? std::optional<Thinning>(Thinning{m_every, m_recorded}) : std::nullopt;
}

RunSummary StepTally::summary(const RunConfig& config) const {
    RunSummary summary = summarize(config, m_kept, std::nullopt);
    if (m_every == 1) {
        return summary; // every step is there: summarize's own figures
    }
    summary.forwardMs = m_forward.stats();
    summary.backwardMs = m_backward.stats();
    summary.optimizerMs = m_optimizer.stats();
    summary.totalMs = m_total.stats();
    summary.peakBytes = m_peaks[m_recorded > m_warmup ? 1 : 0];
    const double meanS = summary.totalMs.mean / 1000.0;
    summary.tflops = meanS > 0.0 ? stepFlops(config) / meanS / 1e12 : 0.0;
    return summary;
}

WatchJournal::WatchJournal(std::filesystem::path path) : m_path(std::move(path)) {}

std::vector<StepRecord> WatchJournal::poll() {
    std::vector<StepRecord> steps;
    // Opened without blocking and without following a link, then held to a regular file: a
    // FIFO planted in the journal's place would block a plain open until a writer came.
    const int fd = ::open(m_path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return steps; // not there yet
        }
        return refuse(std::string("cannot be opened (") + std::strerror(errno) + ")");
    }
    struct stat info {};
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        return refuse("is not a regular file (a FIFO, a device or a folder)");
    }
    // What was appended since the last call, at most kMaxReadBytes: the buffer is sized to
    // it, not to the bound (a journal is polled ten times a second and grows by a line).
    const auto size = static_cast<uintmax_t>(std::max<off_t>(info.st_size, 0));
    if (size <= m_offset) {
        ::close(fd);
        return steps;
    }
    std::string chunk(static_cast<size_t>(std::min<uintmax_t>(size - m_offset, kMaxReadBytes)),
                      '\0');
    const ssize_t got = pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(m_offset));
    ::close(fd);
    chunk.resize(got > 0 ? static_cast<size_t>(got) : 0);
    size_t start = 0;
    for (size_t end; (end = chunk.find('\n', start)) != std::string::npos; start = end + 1) {
        take(std::string_view(chunk).substr(start, end - start), steps);
    }
    if (start == 0 && chunk.size() == kMaxReadBytes) {
        // A whole read without a line end: no line of the journal is that long.
        ++m_skipped;
        start = chunk.size();
    }
    m_offset += start;
    return steps;
}

std::vector<StepRecord> WatchJournal::refuse(const std::string& why) {
    if (!m_refused) { // said once, not at every poll
        m_refused = true;
        throw ResultFormatError(m_path.string() + ": " + why +
                                "; lmprof reads only a regular "
                                "file as a watch journal");
    }
    return {};
}

void WatchJournal::take(std::string_view line, std::vector<StepRecord>& out) {
    if (line.size() > kMaxLineBytes) {
        ++m_skipped;
        return;
    }
    json entry;
    try {
        entry = parseDocument(line);
    } catch (const ResultFormatError&) {
        ++m_skipped; // cut short by a kill mid-write
        return;
    }
    const std::string where = m_path.string() + ": ";
    const auto kind = entry.is_object() && entry.contains("kind") && entry["kind"].is_string()
                          ? entry["kind"].get<std::string>()
                          : std::string();
    if (!m_header) {
        const auto schema =
            entry.is_object() && entry.contains("schema") && entry["schema"].is_string()
                ? entry["schema"].get<std::string>()
                : std::string();
        if (kind != "header" || schema != kWatchJournalSchema) {
            throw ResultFormatError(where +
                                    "not an lmprof watch journal (its first line is "
                                    "not a header of schema \"" +
                                    std::string(kWatchJournalSchema) + "\")");
        }
        try {
            m_environment =
                environmentFrom(*member(entry, "$", "environment", true), "$.environment");
            m_header = runFrom(*member(entry, "$", "run", true), "$.run");
        } catch (const json::exception& e) {
            throw ResultFormatError(where + "malformed header: " + e.what());
        } catch (const ResultFormatError& e) {
            throw ResultFormatError(where + "header: " + e.what());
        }
        if (!m_header->source) {
            throw ResultFormatError(where + "header: the run has no \"source\" block");
        }
        return;
    }
    if (kind == "end") {
        const auto* status = entry.contains("status") ? &entry["status"] : nullptr;
        const auto parsed = status && status->is_string()
                                ? parseRunStatus(status->get<std::string>())
                                : std::nullopt;
        if (!parsed) {
            ++m_skipped;
            return;
        }
        const auto* error = entry.contains("error") ? &entry["error"] : nullptr;
        m_end.emplace(*parsed, error && error->is_string()
                                   ? std::optional<std::string>(error->get<std::string>())
                                   : std::nullopt);
        return;
    }
    if (kind == "scalars") {
        m_skipped += amendLast(entry, m_steps) ? 0 : 1;
        return;
    }
    if (kind != "step") {
        return; // a kind this reader does not know: newer writers may add some
    }
    if (m_steps.recorded() >= kMaxWatchedSteps) {
        ++m_skipped;
        return;
    }
    try {
        StepRecord step = stepFrom(*member(entry, "$", "step", true), "$.step");
        if (step.index <= m_steps.lastIndex()) {
            ++m_skipped; // a step whose index came before (recover() skips it too)
            return;
        }
        m_steps.add(step);
        out.push_back(std::move(step));
    } catch (const std::exception&) {
        ++m_skipped;
    }
}

RunResult WatchJournal::run(const std::string& why) const {
    RunResult run = *m_header;
    run.steps = m_steps.kept();
    run.thinned = m_steps.thinning();
    run.config.warmupSteps = m_steps.warmup();
    run.config.measureSteps = m_steps.recorded() - m_steps.warmup();
    run.status = m_end ? m_end->first : RunStatus::Cancelled;
    run.error = m_end ? m_end->second : std::optional<std::string>(why);
    run.summary = m_steps.summary(run.config);
    run.summary.tokensPerS = tokensPerSecond(run, run.summary.totalMs.mean);
    return run;
}

const Environment& WatchJournal::environment() const {
    return m_environment;
}

} // namespace lmprof::engine
