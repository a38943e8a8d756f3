// Runs a study (docs/STUDY.md) on the engine: the one driver of lmprof-cli study and the
// window's Study view. It submits the calibration runs until the plan can be made, then each
// planned run that the folder's runs.jsonl does not hold yet, one at a time, appending each
// as it ends (an OOM is data), then the precision lab into lab.json. Like SweepDriver it runs
// nothing itself: it submits through the seam and advances on the engine's events, so a
// remote engine runs a study like a local one, and tests feed it events of their own.
// The folder's lock (openStudyFolder) is the client's: it is taken before anything runs.
//
// Usage (the engine is passed to each call: a window may connect to another between them):
//   StudyDriver study(listener);
//   study.plan(engine, studyRequestFor(engine, "auto", 1200, 0), dir);  // or resume(engine, dir)
//   ... study.observe(engine, events) until phase() is Planned, then:
//   study.run(engine);
//   ... study.observe(engine, events) until it is not busy()
#pragma once

#include "lmprof/engine/precision_lab.h"
#include "lmprof/engine/session_interface.h"
#include "lmprof/engine/study.h"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace lmprof::engine {

class StudyDriver {
public:
    enum class Phase { Idle, Calibrating, Planned, Running, Lab, Done };
    // What just happened, for a client's progress lines and its redraw: the state it names
    // is the driver's (calibrating(), current(), lastResult(), message()).
    enum class Change { Calibrating, Planned, RunStarted, RunEnded, LabStarted, Done, Failed };
    using Listener = std::function<void(Change, const StudyDriver&)>;

    explicit StudyDriver(Listener listener = {}) : m_listener(std::move(listener)) {}
    // current() points into the plan: a copy would point into another driver's.
    StudyDriver(const StudyDriver&) = delete;
    StudyDriver& operator=(const StudyDriver&) = delete;
    StudyDriver(StudyDriver&&) = default;
    StudyDriver& operator=(StudyDriver&&) = default;

    // Why this engine cannot plan `request` (its first calibration run is refused), or
    // nullopt: plan() refuses for it, and a client can ask before it makes a folder.
    static std::optional<ConfigError> refusal(const SessionInterface& engine,
                                              const StudyRequest& request);
    // A new study: the calibration runs first (nextCalibrationRun) unless `request` has its
    // rates already (--rate), then the plan, saved in `dir`'s plan.json (none when `dir` is
    // empty: a dry run). false, with message(), when the engine refuses the calibration run.
    bool plan(SessionInterface& engine, StudyRequest request, std::filesystem::path dir);
    // The study saved in `dir`: its plan.json's request plans the same runs, and runs.jsonl
    // says which are done (Done when every run and the lab are). false, with message(), when
    // there is no plan to resume or a file cannot be read; `refusal` is set, and message()
    // says why, when this engine cannot run the device (or the threads) it was planned for.
    bool resume(SessionInterface& engine, std::filesystem::path dir,
                std::optional<ConfigError>* refusal = nullptr);
    // Back to Idle, with no study (the listener stays).
    void clear();
    // Run as soon as the calibration has planned (a demo's "study" step, the CLI).
    void runWhenPlanned() { m_runWhenPlanned = true; }
    // Submits the first planned run not done, then the lab, then writes nothing more (Done).
    // The plan is saved first when this driver has not saved it. Nothing while busy, before
    // a plan, or in a dry run (no folder).
    void run(SessionInterface& engine);
    // The engine's events: a calibration run's finish plans, a study run's is appended to
    // runs.jsonl and submits the next, the lab's three reports make lab.json. A run that could
    // not start on its device (it is gone) stops the study at Planned, with message(). Events
    // of other runs (another client's on a server) are not the study's and are passed over.
    void observe(SessionInterface& engine, const std::vector<SessionEvent>& events);
    void observe(SessionInterface& engine, const SessionEvent& event);
    // Submits nothing more: the run in flight ends (cancelled, when the caller cancels the
    // engine's run) and is kept, and the study stops at Planned, to be resumed; during the
    // calibration it stops at Idle, with nothing planned or saved.
    void cancel() { m_cancelled = true; }

    Phase phase() const { return m_phase; }
    // Calibrating, running or in the lab.
    bool busy() const;
    bool cancelled() const { return m_cancelled; }
    const StudyRequest& request() const { return m_request; }
    const StudyPlan& studyPlan() const { return m_plan; }
    const std::filesystem::path& folder() const { return m_dir; }
    // The ids of the plan's runs that are done (finishedStudyRuns, then each as it ends).
    const std::set<std::string>& done() const { return m_done; }
    // Every planned run done, and the lab when the plan has one.
    bool complete() const;
    // The calibration run in flight (Calibrating).
    const RunConfig& calibrating() const { return m_calibrating; }
    // The study run in flight, or the last one submitted; null before the first.
    const StudyRun* current() const { return m_current; }
    // The result of the run that ended last (RunEnded), with its study id.
    const RunResult& lastResult() const { return m_lastResult; }
    // The estimates of the planned runs not done yet, and the lab's while it is to run.
    double estimateLeftS() const;
    // Why the last step failed (a refusal, a calibration that did not measure, a file that
    // could not be written); empty else.
    const std::string& message() const { return m_message; }

private:
    void fail(std::string why, Phase phase);
    void planned(SessionInterface& engine);
    bool savePlan(SessionInterface& engine);
    void submitNext(SessionInterface& engine);
    void submitLab(SessionInterface& engine);
    void calibrated(SessionInterface& engine, const RunResult& result);
    void runEnded(SessionInterface& engine, const RunResult& result);
    void labEnded(SessionInterface& engine, const LabFinished& lab);
    void tell(Change change) const;

    Listener m_listener;
    Phase m_phase = Phase::Idle;
    std::filesystem::path m_dir;
    StudyRequest m_request;
    StudyPlan m_plan;
    bool m_planSaved = false;
    std::set<std::string> m_done;
    int m_calibrationIndex = -1; // the engine's index of the calibration run in flight
    RunConfig m_calibrating;
    int m_runIndex = -1; // the engine's index of the study run in flight
    const StudyRun* m_current = nullptr;
    RunResult m_lastResult;
    std::map<int, size_t> m_labs; // the engine's lab index -> 0 accumulation, 1+ dtypes
    PrecisionLab m_lab;
    bool m_cancelled = false;
    bool m_runWhenPlanned = false;
    std::string m_message;
};

} // namespace lmprof::engine
