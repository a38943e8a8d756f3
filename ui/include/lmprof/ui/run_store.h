// The UI's copy of every run of the session: configs, steps, memory samples and results,
// filled from engine events once per frame, plus the series the charts draw (running
// mean ± std, tokens/s) kept up to date incrementally so a 10,000-step run costs O(1) per
// new step. No ImGui here: tests drive it with synthetic events.
#pragma once

#include "lmprof/engine/records.h"
#include "lmprof/engine/session_interface.h"
#include "lmprof/engine/stats.h"
#include "lmprof/engine/watch_journal.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace lmprof::ui {

// Per-step series, index-aligned with RunView::steps.
struct StepSeries {
    std::vector<double> index;                               // step number (x axis)
    std::vector<double> forward, backward, optimizer, total; // ms
    // A watched script's run only (RunResult::source), else empty: the loader's time before
    // each step and the step outside its three phases (docs/WATCH.md), ms.
    std::vector<double> data, rest;
    std::vector<double> tokensPerS;
    // Running mean and mean ± sample std of total_ms over the measured steps so far;
    // NaN on warmup steps (ImPlot leaves gaps there).
    std::vector<double> runMean, runLow, runHigh;
    // Where a watched script's evaluation passes ran (engine::Evaluation): between two steps,
    // at the step axis's half step before the step that followed each.
    std::vector<double> evaluationAt;
};

// Memory samples against time in seconds since the run started (the axis the memory and
// telemetry charts share).
struct MemorySeries {
    std::vector<double> tS, allocatedMiB, reservedMiB, rssMiB;
    std::vector<double> deviceUsedMiB; // whole device (cudaMemGetInfo); NaN on the CPU
};

// One phase of one step as a time span, from its pair of boundary samples, and the peak
// the allocator measured inside it (known once the step has finished).
struct PhaseSpan {
    double t0S = 0.0, t1S = 0.0;
    engine::Phase phase = engine::Phase::Forward;
    int step = 0;
};

// Measured phase peaks as flat segments over their spans: point pairs (t0, peak), (t1, peak),
// drawn as separate segments.
struct PeakSeries {
    std::vector<double> tS, peakMiB;
};

// Telemetry against time in seconds; NaN where a reading is missing (GPU fields on CPU).
struct TelemetrySeries {
    std::vector<double> tS, cpuPercent, rssMiB;
    std::vector<double> gpuUtil, memUtil, powerW, smClockMHz, memClockMHz, temperatureC;
    std::vector<double> throttledS; // times of samples with a slowdown reason set
    bool anyGpu = false;
};

struct RunView {
    int runIndex = -1;        // session index; -1 for runs loaded from a file
    engine::RunResult result; // config, steps, status; summary valid when `finished`
    StepSeries series;
    std::vector<double> stepEndS; // per step: when it ended (s since the run started)
    MemorySeries memory;
    std::vector<PhaseSpan> spans;
    PeakSeries peaks;
    TelemetrySeries telemetry;
    bool started = false;
    bool finished = false;
    bool fromFile = false; // opened or restored from a file, not run in this session
    // Its colour in every chart (an index for ui::runColor): first the one its id gives
    // (colorOfId, the same in every session), then kept for the run's life unless it would
    // repeat another selected run's; and its name in legends and tooltips, by what differs
    // between the selected runs. Both set by RunStore::refreshSelection.
    int color = 0;
    // Past kRunColorCount selected runs colours repeat: the runs sharing one are told apart
    // by a marker on their lines, in their legend entries and chips (0: the first, none).
    int style = 0;
    std::string name;

    // Summary of the measured steps so far (recomputed lazily after new steps).
    const engine::RunSummary& liveSummary();
    // A run opened from a file builds its memory timeline (`memory`, `spans`, `peaks`) only
    // when a chart draws it: call before reading them. Most of a night's sweep is memory
    // samples, and the timelines draw a few runs at a time (RunStore keeps the
    // kKeptTimelines used last). A run that streamed in keeps its timeline, built as it came.
    void ensureTimeline();
    int totalSteps() const { return result.config.warmupSteps + result.config.measureSteps; }

private:
    friend class RunStore;
    // A record as it arrives: kept in the result, and its series extended (stepSeries, ...).
    void addStep(const engine::StepRecord& step);
    void addSample(const engine::MemorySample& sample);
    void addTelemetry(const engine::TelemetrySample& sample);
    void stepSeries(const engine::StepRecord& step);
    void sampleSeries(const engine::MemorySample& sample);
    void telemetrySeries(const engine::TelemetrySample& sample);
    void addPeaks(const engine::StepRecord& step);
    void addWatchedStep(const engine::StepRecord& step);
    void finish(engine::RunResult result);
    // Room for a whole run's series at once (a run opened from a file), so that none of its
    // vectors ends up with up to twice the room it needs.
    void reserveSeries(size_t steps, size_t telemetry);
    void dropTimeline();
    bool m_colorFromId = false;  // `color` was set from its id (it has one by then)
    bool m_lazyTimeline = false; // opened from a file: its timeline is built on demand
    bool m_timelineBuilt = true; // memory, spans and peaks hold every sample and step
    uint64_t m_timelineUsed = 0; // when ensureTimeline last asked (a counter)
    bool m_summaryDirty = true;
    engine::RunSummary m_liveSummary;
    engine::RunningStats m_running; // the measured steps so far: the running band
    // A watched script's run as it streams: its steps thinned by the watcher's rule past
    // StepTally::kKeptSteps, and its summary over all of them (docs/WATCH.md, "Long runs").
    engine::StepTally m_watched;
    std::optional<double> m_openSpanS; // a phase's start boundary seen, its end not yet
    size_t m_spansWithPeaks = 0;
};

// How many runs opened from files keep their memory timeline built (RunView::ensureTimeline)
// once no chart asks for it: the ones asked for last.
inline constexpr size_t kKeptTimelines = 12;

// How many runs can be told apart by colour at once (ui::runColor's palette).
inline constexpr int kRunColorCount = 8;

// A run's whole configuration on one line, each field as legends name it ("tiny · ctx 128
// · b4 · fp32 · train · w5 · …"): the tooltip of a legend entry.
// The device is the one that ran it (resolvedDevice), when known.
std::string describeRun(const engine::RunResult& run);
// Legend names for runs shown together: only the fields that differ between their
// configurations, in a fixed order, in short forms joined by " · " ("ctx 64 · b2 · bf16"),
// at most kMaxNameLength characters (cut with "…"; describeRun has the rest); the run ids
// when nothing differs; a name that still repeats gets its id appended. One run keeps its id.
inline constexpr size_t kMaxNameLength = 40;
std::vector<std::string> distinguishingNames(const std::vector<const engine::RunResult*>& runs);

class RunStore {
public:
    // Applies engine events in order. Unknown run indices create their view on the fly
    // (a run refused before it started only ever sends RunFinished).
    void apply(std::vector<engine::SessionEvent>& events);
    void apply(engine::SessionEvent& event);
    // Before anyone reads them: gives each run in the events an id no other run here has.
    // An engine numbers its runs from 1, so after a restore or an open its "…-train-1" may
    // already be here; the later run takes the next free number ("…-train-25"), in the
    // events themselves, so the autosave, the views and the store agree.
    void claimIds(std::vector<engine::SessionEvent>& events);
    // Adds finished runs from a saved result set, leaving out each one the store already
    // holds exactly (a file opened twice); returns how many were added. A run whose id is
    // taken by another run here is added under the next free one, as claimIds does.
    // fromFile marks them as opened or restored (the Runs table's From column); a sweep's
    // skipped runs are this session's.
    size_t addLoaded(std::vector<engine::RunResult> runs, bool fromFile = true);

    std::vector<RunView>& runs() { return m_runs; }
    const std::vector<RunView>& runs() const { return m_runs; }
    RunView* findBySessionIndex(int runIndex);
    // The run currently receiving steps, if any.
    RunView* active();

    // Finished runs as a result set (the live ones are left out), with the precision lab.
    engine::ResultSet toResultSet(const engine::Environment& environment) const;

    // The precision lab's results of this window: run here or opened from files.
    engine::PrecisionLab& lab() { return m_lab; }
    const engine::PrecisionLab& lab() const { return m_lab; }
    // Takes in a file's lab: its accumulation replaces this one, each of its dtype reports
    // replaces one of the same model, precision and device. Returns whether it held any.
    bool mergeLab(const engine::PrecisionLab& opened);
    // Adds a dtype report the same way.
    void addDtypeReport(engine::DtypeReport report);

    // Selection (indices into runs()); the newest run is selected when it starts.
    std::vector<int>& selection() { return m_selection; }
    bool isSelected(int i) const;
    std::vector<std::string> selectedIds() const; // in selection order
    void selectOnly(int i);
    void toggle(int i);
    // Selects these runs, in this order (a range, every run a filter shows); nothing changes
    // for none.
    void select(std::vector<int> rows);
    // Selects the last n runs (runs opened with --open, shown together), overlaid; nothing
    // changes for 0.
    void selectLast(size_t n);
    // Selects only the newest of the last n runs (just opened or restored): one run drawn,
    // its legend shown; the others are a click away in Runs. Nothing changes for 0.
    void selectNewestOf(size_t n);
    // Once per frame, after the selection may have changed: gives the selected runs distinct
    // colours (a run keeps its colour unless an earlier-selected run has it) and names, and
    // lets go of the memory timelines of file runs no chart has asked for lately
    // (kKeptTimelines).
    void refreshSelection();

private:
    void releaseTimelines();
    RunView& viewFor(int runIndex);
    RunView& addView();
    // Every id a run here has: its view's, or the one claimIds gave it.
    std::unordered_set<std::string> takenIds() const;
    // `id` if no other run has it (`taken`, from takenIds; run `runIndex` may keep its own),
    // else the same label with the next free number. The id returned is added to `taken`.
    std::string uniqueId(const std::string& id, int runIndex,
                         std::unordered_set<std::string>& taken) const;
    std::map<int, std::string> m_sessionIds; // engine run index -> the id claimIds gave it
    std::vector<RunView> m_runs;
    std::vector<int> m_selection;
    engine::PrecisionLab m_lab;
};

} // namespace lmprof::ui
