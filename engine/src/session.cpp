// Session: the engine's worker thread, its command queue and its event queue.
// The worker holds m_mutex only to take a command or append an event, never across a step.

#include "lmprof/engine/session.h"

#include "bench/op_profiler.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/runner.h"
#include "platform/cuda_backend.h"

#include <functional>
#include <pthread.h>

namespace lmprof::engine {

namespace {

// Forwards runner callbacks into the session's event queue.
class EventForwarder : public RunObserver {
public:
    EventForwarder(int runIndex, std::function<void(SessionEvent)> publish)
        : m_runIndex(runIndex), m_publish(std::move(publish)) {}
    void onRunStarted(const RunResult& header) override {
        m_publish(RunStarted{m_runIndex, header});
    }
    void onStepFinished(const StepRecord& step) override {
        m_publish(StepFinished{m_runIndex, step, steadyNowNs()});
    }
    void onMemorySample(const MemorySample& sample) override {
        m_publish(MemorySampled{m_runIndex, sample});
    }
    void onTelemetrySample(const TelemetrySample& sample) override {
        m_publish(TelemetrySampled{m_runIndex, sample});
    }

private:
    int m_runIndex;
    std::function<void(SessionEvent)> m_publish;
};

// Run ids are the config's label and the run's 1-based position in the session.
std::string runId(const RunConfig& config, int index) {
    return runLabel(config) + "-" + std::to_string(index + 1);
}

} // namespace

Session::Session(int firstRunIndex) : m_nextIndex(firstRunIndex) {
    // Before the worker exists: setenv must not race another thread's getenv.
    bench::quietKinetoWithoutGpu(cuda::deviceCount() > 0);
    m_worker = std::thread([this] { workerLoop(); });
}

Session::~Session() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
        m_queue.clear();
    }
    m_cancel.store(true);
    m_commandReady.notify_all();
    m_worker.join();
}

int Session::submit(const RunConfig& config) {
    int index = 0;
    {
        std::lock_guard lock(m_mutex);
        index = m_nextIndex++;
        m_queue.push_back({index, config});
    }
    m_commandReady.notify_one();
    return index;
}

int Session::submitLab(const LabRequest& request) {
    int index = 0;
    {
        std::lock_guard lock(m_mutex);
        index = m_nextLab++;
        m_queue.push_back({index, request});
    }
    m_commandReady.notify_one();
    return index;
}

void Session::cancel() {
    std::vector<Job> dropped;
    {
        std::lock_guard lock(m_mutex);
        dropped.assign(m_queue.begin(), m_queue.end());
        m_queue.clear();
        if (m_running) {
            m_cancel.store(true);
        }
    }
    // Queued work that never started still finishes, as cancelled, so every submit() is
    // answered by exactly one RunFinished and every submitLab() by one LabFinished.
    for (Job& job : dropped) {
        if (const auto* config = std::get_if<RunConfig>(&job.what)) {
            publish(RunFinished{job.index,
                                unstartedRun(runId(*config, job.index), *config,
                                             RunStatus::Cancelled, "cancelled before it started")});
        } else {
            publish(LabFinished{job.index, unstartedLab(std::get<LabRequest>(job.what),
                                                        "cancelled before it started", true)});
        }
    }
}

void Session::cancelLab(int labIndex) {
    std::optional<Job> dropped;
    {
        std::lock_guard lock(m_mutex);
        const auto it = std::find_if(m_queue.begin(), m_queue.end(), [&](const Job& j) {
            return j.index == labIndex && std::holds_alternative<LabRequest>(j.what);
        });
        if (it != m_queue.end()) {
            dropped = std::move(*it);
            m_queue.erase(it);
        } else if (m_running && m_runningLab == labIndex) {
            m_cancel.store(true);
        }
    }
    if (dropped) {
        publish(LabFinished{dropped->index, unstartedLab(std::get<LabRequest>(dropped->what),
                                                         "cancelled before it started", true)});
    }
}

std::vector<SessionEvent> Session::drain() {
    std::vector<SessionEvent> out;
    std::lock_guard lock(m_mutex);
    out.swap(m_events);
    m_wakeEvents = 0;
    return out;
}

bool Session::waitForEvents(std::chrono::milliseconds timeout) {
    std::unique_lock lock(m_mutex);
    return m_eventReady.wait_for(lock, timeout, [this] { return m_wakeEvents > 0; });
}

bool Session::busy() const {
    std::lock_guard lock(m_mutex);
    return m_running || !m_queue.empty();
}

void Session::setRankProgram(RankProgram program) {
    std::lock_guard lock(m_mutex);
    m_rankProgram = std::move(program);
}

std::vector<std::string> Session::devices() const {
    return availableDevices();
}

bool Session::isCuda(std::string_view device) const {
    return resolveDevice(device).cuda;
}

int64_t Session::deviceMemoryBytes(std::string_view device) const {
    return engine::deviceMemoryBytes(resolveDevice(device));
}

std::optional<ConfigError> Session::checkRunnable(const RunConfig& config) const {
    if (auto refusal = engine::checkRunnable(config)) {
        return refusal;
    }
    // This engine starts a data-parallel run's ranks here, one GPU each (a rank of a
    // multi-node launcher is not started by a Session, and is not checked so).
    if (config.ddp && resolveDevice(config.device).cuda) {
        const int gpus = cuda::deviceCount();
        if (config.ddp->worldSize > gpus) {
            return ConfigError{"ddp.world_size", std::to_string(config.ddp->worldSize) +
                                                     " ranks need one GPU each, but " +
                                                     std::to_string(gpus) +
                                                     " CUDA device(s) are available"};
        }
    }
    return std::nullopt;
}

Environment Session::environment(std::string_view device) const {
    return probeEnvironment(resolveDevice(device));
}

EngineInfo Session::info() const {
    std::call_once(m_infoOnce, [this] { m_info.deviceName = environment("auto").device.name; });
    return m_info;
}

void Session::publish(SessionEvent event) {
    // Samples arrive at up to 100 Hz and are only drawn, once per frame: waking a waiting
    // client for each would cost the run CPU time on a small machine. They are delivered
    // with the next step or run event, or the next drain().
    const bool wake = !std::holds_alternative<MemorySampled>(event) &&
                      !std::holds_alternative<TelemetrySampled>(event);
    {
        std::lock_guard lock(m_mutex);
        m_events.push_back(std::move(event));
        m_wakeEvents += wake ? 1 : 0;
    }
    if (wake) {
        m_eventReady.notify_all();
        SessionInterface::wake();
    }
}

void Session::workerLoop() {
    pthread_setname_np(pthread_self(), "lmprof-engine");
    for (;;) {
        Job job;
        RankProgram rankProgram;
        {
            std::unique_lock lock(m_mutex);
            m_commandReady.wait(lock, [this] { return m_stop || !m_queue.empty(); });
            if (m_stop) {
                return;
            }
            job = std::move(m_queue.front());
            rankProgram = m_rankProgram;
            m_queue.pop_front();
            m_running = true;
            m_runningLab = std::holds_alternative<LabRequest>(job.what) ? job.index : -1;
            m_cancel.store(false);
        }
        runJob(job, rankProgram);
    }
}

void Session::runJob(Job& job, const RankProgram& rankProgram) {
    SessionEvent finished;
    if (const auto* config = std::get_if<RunConfig>(&job.what)) {
        EventForwarder forwarder(job.index, [this](SessionEvent e) { publish(std::move(e)); });
        const std::string id = runId(*config, job.index);
        finished =
            RunFinished{job.index, config->ddp ? launchDataParallel(*config, id, rankProgram,
                                                                    &forwarder, &m_cancel)
                                               : runBenchmark(*config, id, &forwarder, &m_cancel)};
    } else {
        const LabRequest& request = std::get<LabRequest>(job.what);
        LabReport report =
            std::holds_alternative<AccumulationRequest>(request)
                ? LabReport{runAccumulation(std::get<AccumulationRequest>(request), &m_cancel)}
                : LabReport{inspectDtypes(std::get<DtypeRequest>(request))};
        finished = LabFinished{job.index, std::move(report)};
    }
    {
        std::lock_guard lock(m_mutex);
        m_running = false;
        m_runningLab = -1;
        m_events.push_back(std::move(finished));
        ++m_wakeEvents;
    }
    m_eventReady.notify_all();
    wake();
}

} // namespace lmprof::engine
