// The engine in this process (SessionInterface, session_interface.h): a named worker
// thread that takes commands (run a configuration, cancel) and publishes events. The GUI
// drains events once per frame; the CLI waits on them. Nothing here ever blocks the worker
// on a consumer.
//
// Usage:
//   Session session;                       // starts the worker thread
//   session.submit(config);                // queued; runs in submission order
//   for (auto& e : session.drain()) ...    // non-blocking; or waitForEvents(timeout) first
//   session.submitLab(request);            // a precision-lab experiment, queued likewise
//   session.cancel();                      // current run stops within one step
// A configuration with a ddp request runs as local rank processes (launchDataParallel);
// the session relays rank 0's steps.
// The destructor cancels, stops and joins the worker.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/ddp_launch.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/session_interface.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

namespace lmprof::engine {

class Session final : public SessionInterface {
public:
    // Runs are numbered from firstRunIndex (a window that switches engines keeps counting).
    explicit Session(int firstRunIndex = 0);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Queues a run and returns its index (0, 1, ...). The config is not validated here:
    // an invalid one finishes at once with status Error and the validation message.
    int submit(const RunConfig& config) override;
    // Queues a lab experiment behind the runs; it runs on the worker like them.
    int submitLab(const LabRequest& request) override;

    // Stops the current run within one step (keeping finished steps) and drops queued runs.
    void cancel() override;
    // Drops one lab experiment: from the queue (answered as cancelled), or, when it is the
    // one running, stopped between its chunks. Runs and other experiments go on. For a
    // server whose client left: no one will read that report.
    void cancelLab(int labIndex) override;

    // Takes every event published since the last call. Never blocks on the worker.
    std::vector<SessionEvent> drain() override;

    // Waits until an event is available or the timeout passes; true if one is available.
    // Memory and telemetry samples alone do not end the wait (see publish()).
    bool waitForEvents(std::chrono::milliseconds timeout) override;

    // True while a run is executing or queued.
    bool busy() const override;

    // This machine's devices (devices.h).
    std::vector<std::string> devices() const override;
    bool isCuda(std::string_view device) const override;
    int64_t deviceMemoryBytes(std::string_view device) const override;
    std::optional<ConfigError> checkRunnable(const RunConfig& config) const override;
    Environment environment(std::string_view device) const override;
    EngineInfo info() const override;

    // The program data-parallel runs start as their ranks (rankProgramBesideThisOne() until
    // set): for runs submitted after the call.
    void setRankProgram(RankProgram program);

private:
    void workerLoop();
    void publish(SessionEvent event);

    mutable std::mutex m_mutex;
    std::condition_variable m_commandReady;
    std::condition_variable m_eventReady;
    // A queued command: a run's or a lab experiment's index and what to do.
    struct Job {
        int index = 0;
        std::variant<RunConfig, LabRequest> what;
    };
    void runJob(Job& job, const RankProgram& rankProgram);
    std::deque<Job> m_queue;
    RankProgram m_rankProgram = rankProgramBesideThisOne();
    std::vector<SessionEvent> m_events;
    int m_wakeEvents = 0; // events in m_events that end waitForEvents (not samples)
    int m_nextIndex = 0;
    int m_nextLab = 0;
    bool m_running = false;
    int m_runningLab = -1; // the lab experiment running, or -1
    bool m_stop = false;
    std::atomic<bool> m_cancel{false};
    mutable std::once_flag m_infoOnce; // info() probes the machine once
    mutable EngineInfo m_info;
    std::thread m_worker; // started by the constructor once everything above exists
};

} // namespace lmprof::engine
