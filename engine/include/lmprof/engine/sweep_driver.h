// Runs a sweep (or any list of runs) on the engine one configuration at a time: the one
// driver of multi-run work for both clients (lmprof-cli's runAll, the window's Sweep view).
// The engine queues runs, so a sweep submitted at once could not skip the configurations an
// earlier OOM has shown to be too large; the driver submits the next one (through the
// function it is given) when the previous RunFinished arrives, and estimates what is left.
// It runs nothing itself: tests feed it synthetic events.
//
// Usage (once per frame, before the RunStore takes the events):
//   driver.start(expandSweep(spec), runAfterOom, submitFn, skippedFn);
//   driver.observe(events);       // advances the sweep, reports skipped configs
//   driver.progress();            // for the progress bar and ETA
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/session_interface.h"
#include "lmprof/engine/sweep.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::engine {

class SweepDriver {
public:
    // Queues a run on the engine and returns its session index.
    using SubmitFn = std::function<int(const RunConfig&)>;
    // Receives a configuration turned into a Skipped result instead of a run.
    using SkippedFn = std::function<void(const RunResult&)>;

    // Starts a sweep over `configs` in the given order (expandSweep's, cheapest first) and
    // submits the first one. The functions are kept until the sweep ends.
    void start(std::vector<RunConfig> configs, bool runAfterOom, SubmitFn submit,
               SkippedFn skipped);
    // The engine's events (a frame's, or one): steps of the current run feed the ETA; its
    // RunFinished submits the next configuration. A cancelled run ends the sweep.
    void observe(const std::vector<SessionEvent>& events);
    void observe(const SessionEvent& event);
    // The engine's index of the run in flight; -1 when none.
    int current() const { return m_currentIndex; }
    // Submits nothing more; the caller cancels the session's current run.
    void cancel();

    bool running() const { return m_running; }

    struct Progress {
        size_t total = 0;    // configurations in the sweep
        size_t finished = 0; // runs that ended (any status)
        size_t skipped = 0;  // configurations skipped after an OOM
        size_t failed = 0;   // runs that ended oom or error
        // Seconds left: the run in flight at its own step time once it has one, each run
        // still to come at the FLOP rate this sweep's steps have shown plus the time a run
        // took outside its steps (building the model, warmup allocations, writing files).
        // nullopt before the first step.
        std::optional<double> etaSeconds;
        double fraction() const {
            return total ? static_cast<double>(finished + skipped) / static_cast<double>(total)
                         : 0.0;
        }
    };
    Progress progress() const;
    // Where progress() reads the time, in ms (tests set their own); a steady clock else.
    void setClock(std::function<double()> nowMs) { m_nowMs = std::move(nowMs); }

private:
    void submitNext();

    std::vector<RunConfig> m_configs;
    size_t m_next = 0;       // index of the next configuration to consider
    int m_currentIndex = -1; // session index of the run in flight; -1 when none
    size_t m_currentConfig = 0;
    int m_currentSteps = 0; // steps of the current run seen so far
    bool m_running = false;
    bool m_runAfterOom = false;
    OomSkipper m_skipper;
    SubmitFn m_submit;
    SkippedFn m_skipped;
    size_t m_finished = 0, m_skippedCount = 0, m_failed = 0;
    double m_flopsDone = 0.0; // analytic FLOPs of the steps observed
    double m_msDone = 0.0;    // their measured time
    double m_currentMs = 0.0; // the steps of the run in flight so far
    double m_submittedAtMs = 0.0;
    double m_outsideStepsMs = 0.0; // finished runs' time outside their steps, summed
    int m_runsTimed = 0;
    std::function<double()> m_nowMs;
};

} // namespace lmprof::engine
