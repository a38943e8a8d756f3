// The UI's copy of every run of the session: configs, steps, memory samples and results,
// filled from engine events once per frame, plus the series the charts draw (running
// mean ± std, tokens/s) kept up to date incrementally so a 10,000-step run costs O(1) per
// new step. No ImGui here: tests drive it with synthetic events.
#pragma once

#include "lmprof/engine/records.h"
#include "lmprof/engine/session.h"

#include <optional>
#include <string>
#include <vector>

namespace lmprof::ui {

// Per-step series, index-aligned with RunView::steps.
struct StepSeries {
    std::vector<double> index;                               // step number (x axis)
    std::vector<double> forward, backward, optimizer, total; // ms
    std::vector<double> tokensPerS;
    // Running mean and mean ± sample std of total_ms over the measured steps so far;
    // NaN on warmup steps (ImPlot leaves gaps there).
    std::vector<double> runMean, runLow, runHigh;
};

struct MemorySeries {
    std::vector<double> tMs, allocatedMiB, reservedMiB, rssMiB;
    std::vector<engine::Phase> phase;
    std::vector<int> step;
};

struct RunView {
    int runIndex = -1;        // session index; -1 for runs loaded from a file
    engine::RunResult result; // config, steps, status; summary valid when `finished`
    StepSeries series;
    MemorySeries memory;
    bool started = false;
    bool finished = false;

    // Summary of the measured steps so far (recomputed lazily after new steps).
    const engine::RunSummary& liveSummary();
    int totalSteps() const { return result.config.warmupSteps + result.config.measureSteps; }

private:
    friend class RunStore;
    void addStep(const engine::StepRecord& step);
    void addSample(const engine::MemorySample& sample);
    void finish(const engine::RunResult& result);
    bool m_summaryDirty = true;
    engine::RunSummary m_liveSummary;
    // Welford accumulators for the running band.
    int m_measured = 0;
    double m_mean = 0.0, m_m2 = 0.0;
};

class RunStore {
public:
    // Applies engine events in order. Unknown run indices create their view on the fly
    // (a run refused before it started only ever sends RunFinished).
    void apply(std::vector<engine::SessionEvent>& events);
    void apply(engine::SessionEvent& event);
    // Adds finished runs from a saved result set.
    void addLoaded(const std::vector<engine::RunResult>& runs);

    std::vector<RunView>& runs() { return m_runs; }
    const std::vector<RunView>& runs() const { return m_runs; }
    RunView* findBySessionIndex(int runIndex);
    // The run currently receiving steps, if any.
    RunView* active();

    // Finished runs as a result set (the live ones are left out).
    engine::ResultSet toResultSet(const engine::Environment& environment) const;

    // Selection (indices into runs()); the newest run is selected when it starts.
    std::vector<int>& selection() { return m_selection; }
    bool isSelected(int i) const;
    void selectOnly(int i);
    void toggle(int i);

private:
    RunView& viewFor(int runIndex);
    std::vector<RunView> m_runs;
    std::vector<int> m_selection;
};

} // namespace lmprof::ui
