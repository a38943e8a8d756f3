// The engine as the window and the CLI drive it, wherever it runs: in this process
// (Session, session.h) or on another machine (RemoteSession, remote_session.h). Commands go
// in (submit a configuration or a precision-lab experiment, cancel), events come out
// (drained once per frame, or waited for), and the questions a form asks of the engine's machine
// (its devices, their memory, whether a configuration can run there) are answered by the engine,
// not by this machine. Torch-free and network-free: lmprof_core.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/precision_lab.h"
#include "lmprof/engine/result_set.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lmprof::engine {

struct RunStarted {
    int runIndex = 0;
    RunResult header; // id, config, device, parameter count; no steps yet
};
struct StepFinished {
    int runIndex = 0;
    StepRecord step;
    // When the engine published it (steady clock, ns): a client on the same machine (or a
    // server on loopback) measures how long a step took to reach the screen.
    int64_t publishedNs = 0;
};
struct MemorySampled {
    int runIndex = 0;
    MemorySample sample;
};
struct TelemetrySampled {
    int runIndex = 0;
    TelemetrySample sample;
};
struct RunFinished {
    int runIndex = 0;
    RunResult result;
};
// A precision-lab experiment (precision_lab.h): queued with the runs, on the engine's device.
using LabRequest = std::variant<AccumulationRequest, DtypeRequest>;
using LabReport = std::variant<AccumulationReport, DtypeReport>;
struct LabFinished {
    int labIndex = 0; // what submitLab() returned
    LabReport report; // its `error` says why it did not run (refused, cancelled, lost)
};
using SessionEvent = std::variant<RunStarted, StepFinished, MemorySampled, TelemetrySampled,
                                  RunFinished, LabFinished>;

// A lab report that did not run, saying why (request's device, model and precision kept).
LabReport unstartedLab(const LabRequest& request, std::string why, bool cancelled = false);
// The device a request names ("auto", "cpu", "cuda:0").
std::string_view labDevice(const LabRequest& request);

// Which engine a client is driving, for its indicator.
struct EngineInfo {
    std::string where = "local"; // "local", or the server's "host:port"
    std::string deviceName;      // the engine's default device ("NVIDIA H100 80GB HBM3", a CPU)
    bool remote = false;
    bool connected = true; // a remote engine: the connection is up and accepted
    std::string problem;   // why it is not (refused, unreachable, lost), or, connected, what
                           // went wrong on the link (a message skipped); empty otherwise
};

class SessionInterface {
public:
    virtual ~SessionInterface() = default;

    // Queues a run and returns its index (0, 1, ... in this client's numbering). The config
    // is not validated here: an invalid one finishes at once with status Error and the
    // validation message. Every submit() is answered by exactly one RunFinished.
    virtual int submit(const RunConfig& config) = 0;

    // Queues a precision-lab experiment behind the runs and returns its index (0, 1, ...
    // numbered apart from runs). Answered by exactly one LabFinished; never throws.
    virtual int submitLab(const LabRequest& request) = 0;

    // Stops the current run within one step (keeping finished steps), or the current lab
    // experiment between chunks, and drops everything queued (each still answered).
    virtual void cancel() = 0;

    // Drops one lab experiment (queued: answered as cancelled; running: stopped between its
    // chunks), leaving the rest. An engine that cannot single one out ignores it.
    virtual void cancelLab(int /*labIndex*/) {}

    // Takes every event published since the last call. Never blocks on the engine.
    virtual std::vector<SessionEvent> drain() = 0;

    // Waits until an event is available or the timeout passes; true if one is available.
    // Memory and telemetry samples alone need not end the wait.
    virtual bool waitForEvents(std::chrono::milliseconds timeout) = 0;

    // True while a run or a lab experiment is executing or queued.
    virtual bool busy() const = 0;

    // Device choices of the engine's machine: "auto", "cpu", "cuda:0", ...
    virtual std::vector<std::string> devices() const = 0;
    // Whether a device string names a GPU there ("auto" does when the engine has one).
    virtual bool isCuda(std::string_view device) const = 0;
    // Memory of that device (the GPU's, or the machine's RAM for the CPU); 0 if unknown.
    virtual int64_t deviceMemoryBytes(std::string_view device) const = 0;
    // The first refusal validate() or the engine's runtime makes, or nullopt (devices.h).
    virtual std::optional<ConfigError> checkRunnable(const RunConfig& config) const = 0;
    // The engine's machine, for a result set's "environment".
    virtual Environment environment(std::string_view device) const = 0;

    virtual EngineInfo info() const = 0;

    // Called on the engine's thread after each event that ends waitForEvents, and when a
    // remote engine's connection comes or goes (what info() says changed): a window that
    // sleeps until something happens wakes there (glfwPostEmptyEvent). It must be quick and
    // callable from any thread; an empty function stops the calls.
    void setWaker(std::function<void()> waker) {
        std::lock_guard lock(m_wakerMutex);
        m_waker = std::move(waker);
    }

protected:
    void wake() const {
        std::lock_guard lock(m_wakerMutex);
        if (m_waker) {
            m_waker();
        }
    }

private:
    mutable std::mutex m_wakerMutex;
    std::function<void()> m_waker;
};

// The steady clock in ns (StepFinished::publishedNs).
inline int64_t steadyNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace lmprof::engine
