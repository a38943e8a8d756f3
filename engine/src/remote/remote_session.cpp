// RemoteSession: an Asio thread that keeps one connection to a server (reconnecting after a
// loss) and maps the server's run indices to this client's. Everything it shares with the
// caller's thread is under m_mutex; the socket is the Asio thread's alone.

#include "lmprof/engine/remote_session.h"

#include <asio.hpp>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace lmprof::engine::remote {

using asio::ip::tcp;

class RemoteSession::Impl {
public:
    Impl(RemoteSession& owner, ConnectOptions o)
        : owner(owner), options(std::move(o)), where(Endpoint{options.host, options.port}.text()),
          nextLocal(options.firstRunIndex), work(asio::make_work_guard(io)) {
        problem = "connecting to " + where + "...";
        asio::post(io, [this] { connect(); });
        thread = std::thread([this] { io.run(); });
    }

    ~Impl() {
        asio::post(io, [this] {
            std::error_code ec;
            retryTimer.cancel();
            socket.close(ec);
            work.reset();
            io.stop();
        });
        thread.join();
    }

    // --- the Asio thread --------------------------------------------------------------

    void connect() {
        resolver.async_resolve(
            options.host, std::to_string(options.port),
            [this](std::error_code ec, tcp::resolver::results_type results) {
                if (ec) {
                    lost("cannot resolve " + options.host + ": " + ec.message());
                    return;
                }
                asio::async_connect(socket, results,
                                    [this](std::error_code e, const tcp::endpoint&) {
                                        if (e) {
                                            lost("cannot connect to " + where + ": " + e.message());
                                            return;
                                        }
                                        socket.set_option(tcp::no_delay(true), e);
                                        Message hello;
                                        hello.type = Type::Hello;
                                        hello.token = options.token;
                                        hello.client = options.clientName;
                                        write(encode(hello));
                                        read();
                                    });
            });
    }

    void read() {
        asio::async_read_until(
            socket, asio::dynamic_buffer(in, kMaxMessageBytes + 1), '\n',
            [this](std::error_code ec, size_t n) {
                if (ec == asio::error::not_found) {
                    lost("the server sent a message over the limit");
                    return;
                }
                if (ec) {
                    lost(ec == asio::error::eof ? "the server closed the connection"
                                                : "connection lost: " + ec.message());
                    return;
                }
                const std::string line = in.substr(0, n - 1);
                in.erase(0, n);
                try {
                    handle(decode(line));
                } catch (const ProtocolError& e) {
                    // One message this client cannot read (a newer server's, a run it refuses
                    // to take): said, and skipped; the link and the other runs go on.
                    std::lock_guard lock(mutex);
                    ++unreadable;
                    problem = "skipped " + std::to_string(unreadable) +
                              " unreadable message(s) from the server, the last: " + e.what();
                    owner.wake();
                }
                if (socket.is_open()) {
                    read();
                }
            });
    }

    void write(std::string line) {
        out.push_back(std::move(line));
        if (out.size() == 1) {
            writeNext();
        }
    }

    void writeNext() {
        asio::async_write(socket, asio::buffer(out.front()), [this](std::error_code ec, size_t) {
            if (ec) {
                out.clear();
                return; // the read side reports the loss
            }
            out.pop_front();
            if (!out.empty()) {
                writeNext();
            }
        });
    }

    // The connection is gone: say why, fail what the server never confirmed, try again.
    void lost(const std::string& why) {
        std::error_code ec;
        socket.close(ec);
        in.clear();
        out.clear();
        {
            std::lock_guard lock(mutex);
            const bool wasConnected = connected;
            connected = false;
            if (!refused) {
                // The server's own words, when it said why it closed.
                problem = (closedBecause.empty() ? why : closedBecause) +
                          (wasConnected || !serverId.empty() ? "; reconnecting" : "; retrying");
                closedBecause.clear();
            }
            if (refused) {
                // Refused for good (another token or version after a restart): the runs in
                // flight will not arrive here; the server keeps them for a client it accepts.
                for (auto& [server, local] : toLocal) {
                    Tracked& t = tracked[local];
                    if (!t.finished) {
                        t.finished = true;
                        publish(RunFinished{
                            local, unstartedRun(t.id, t.config, RunStatus::Error, problem)});
                    }
                }
            }
            for (const auto& [local, config] : unconfirmed) {
                publish(RunFinished{local, unstartedRun(runLabel(config), config, RunStatus::Error,
                                                        "the connection to " + where +
                                                            " was lost before the server "
                                                            "confirmed the run")});
            }
            unconfirmed.clear();
            owner.wake(); // info() changed
            // A lab experiment belongs to the connection that asked: the server drops its
            // report once that connection is gone.
            for (const auto& [tag, request] : labsInFlight) {
                publish(LabFinished{tag, unstartedLab(request, "the connection to " + where +
                                                                   " was lost during the "
                                                                   "experiment; run it again")});
            }
            labsInFlight.clear();
        }
        if (!refused) {
            retryTimer.expires_after(options.retry);
            retryTimer.async_wait([this](std::error_code e) {
                if (!e) {
                    connect();
                }
            });
        }
    }

    using Lock = std::unique_lock<std::mutex>;
    using Handler = void (Impl::*)(Message&, Lock&);
    // A server's message, by its type: one method each, called with the mutex held (one that
    // writes back releases it first). A client's message type from a server does nothing.
    void handle(Message m) {
        static const std::map<Type, Handler> kHandlers{
            {Type::Welcome, &Impl::onWelcome},         {Type::Error, &Impl::onError},
            {Type::Accepted, &Impl::onAccepted},       {Type::State, &Impl::onState},
            {Type::RunStarted, &Impl::onRunStarted},   {Type::Step, &Impl::onStep},
            {Type::Memory, &Impl::onSample},           {Type::Telemetry, &Impl::onSample},
            {Type::RunFinished, &Impl::onRunFinished}, {Type::LabFinished, &Impl::onLabFinished},
        };
        Lock lock(mutex);
        if (const auto it = kHandlers.find(m.type); it != kHandlers.end()) {
            (this->*it->second)(m, lock);
        }
    }

    void onWelcome(Message& m, Lock& lock) {
        if (!serverId.empty() && m.serverId != serverId) {
            // Another server process: the runs it had in flight are gone with it.
            for (auto& [server, local] : toLocal) {
                Tracked& t = tracked[local];
                if (!t.finished) {
                    t.finished = true;
                    publish(RunFinished{local, unstartedRun(t.id, t.config, RunStatus::Error,
                                                            "the server at " + where +
                                                                " restarted during the run; "
                                                                "its autosave holds the runs "
                                                                "it finished")});
                }
            }
            toLocal.clear();
        }
        serverId = m.serverId;
        welcome = m;
        serverBusy = m.busy;
        connected = true;
        problem.clear();
        owner.wake(); // info() changed
        // Runs of ours the server may have finished while we were away (and another
        // client acknowledged): asked for by index.
        Message fetch;
        fetch.type = Type::Fetch;
        for (const auto& [server, local] : toLocal) {
            if (!tracked[local].finished) {
                fetch.runs.push_back(server);
            }
        }
        const bool sendCancel = std::exchange(cancelPending, false);
        lock.unlock();
        if (!fetch.runs.empty()) {
            write(encode(fetch));
        }
        if (sendCancel) {
            Message c;
            c.type = Type::Cancel;
            write(encode(c));
        }
    }

    void onError(Message& m, Lock&) {
        if (m.fatal) {
            refused = m.errorCode == code::kBadToken || m.errorCode == code::kVersion;
            problem = "refused by " + where + ": " + m.text;
            closedBecause = problem;
        } else if (m.errorCode == code::kLimit && !unconfirmed.empty()) {
            // The server would not take the oldest submit (commands are answered in
            // order): that run ends here, as an error that says why.
            auto [local, config] = std::move(unconfirmed.front());
            unconfirmed.pop_front();
            publish(RunFinished{local, unstartedRun(runLabel(config), config, RunStatus::Error,
                                                    "refused by " + where + ": " + m.text)});
        } else {
            problem = where + ": " + m.text;
            owner.wake(); // info() changed
        }
    }

    void onAccepted(Message& m, Lock&) {
        for (int server : m.runs) {
            if (unconfirmed.empty()) {
                break;
            }
            auto [local, config] = std::move(unconfirmed.front());
            unconfirmed.pop_front();
            toLocal[server] = local;
            tracked[local].config = std::move(config);
        }
    }

    void onState(Message& m, Lock&) { serverBusy = m.busy; }

    void onRunStarted(Message& m, Lock&) {
        const int local = localFor(m.run);
        Tracked& t = tracked[local];
        t.id = m.result->id;
        t.config = m.result->config;
        if (!t.started) { // else a replay after a reconnect: its steps follow
            t.started = true;
            publish(RunStarted{local, std::move(*m.result)});
        }
    }

    void onStep(Message& m, Lock&) {
        const auto it = toLocal.find(m.run);
        if (it == toLocal.end()) {
            return;
        }
        Tracked& t = tracked[it->second];
        if (m.step->index <= t.lastStep) {
            return; // replayed: this client has it
        }
        t.lastStep = m.step->index;
        if (m.sentNs > 0) {
            latencies.push_back(static_cast<double>(steadyNowNs() - m.sentNs) / 1e6);
        }
        publish(StepFinished{it->second, std::move(*m.step), m.sentNs});
    }

    void onSample(Message& m, Lock&) {
        const auto it = toLocal.find(m.run);
        if (it == toLocal.end()) {
            return;
        }
        Tracked& t = tracked[it->second];
        if (m.memory && m.memory->tMs > t.lastMemoryMs) {
            t.lastMemoryMs = m.memory->tMs;
            publish(MemorySampled{it->second, *m.memory});
        } else if (m.telemetry && m.telemetry->tMs > t.lastTelemetryMs) {
            t.lastTelemetryMs = m.telemetry->tMs;
            publish(TelemetrySampled{it->second, *m.telemetry});
        }
    }

    void onRunFinished(Message& m, Lock& lock) {
        serverBusy = m.busy;
        const int local = localFor(m.run);
        Tracked& t = tracked[local];
        if (!t.finished) {
            if (!t.started) {
                // Finished while no one listened: its header first, as a local run has.
                RunResult header = *m.result;
                header.steps.clear();
                header.memoryTimeline.clear();
                header.telemetry.clear();
                publish(RunStarted{local, std::move(header)});
                t.started = true;
            }
            t.finished = true;
            publish(RunFinished{local, std::move(*m.result)});
        }
        Message ack;
        ack.type = Type::Ack;
        ack.run = m.run;
        lock.unlock();
        write(encode(ack));
    }

    void onLabFinished(Message& m, Lock&) {
        serverBusy = m.busy;
        if (labsInFlight.erase(m.run) > 0) {
            publish(LabFinished{m.run, std::move(*m.labReport)});
        }
    }

    // The local index of a server run, numbering runs this client did not submit (another
    // client's, or one that finished while it was away) as they first appear.
    int localFor(int server) {
        auto it = toLocal.find(server);
        if (it == toLocal.end()) {
            it = toLocal.emplace(server, nextLocal++).first;
        }
        return it->second;
    }

    void publish(SessionEvent event) {
        const bool wake = !std::holds_alternative<MemorySampled>(event) &&
                          !std::holds_alternative<TelemetrySampled>(event);
        events.push_back(std::move(event));
        if (wake) {
            ++wakeEvents;
            eventReady.notify_all();
            owner.wake();
        }
    }

    const DeviceOffer* offer(std::string_view device) const {
        const std::string name = device == "cuda" ? "cuda:0" : std::string(device);
        for (const auto& d : welcome.devices) {
            if (d.name == name) {
                return &d;
            }
        }
        return nullptr;
    }

    struct Tracked {
        std::string id;
        RunConfig config;
        bool started = false;
        bool finished = false;
        int lastStep = -1;
        double lastMemoryMs = -1.0;
        double lastTelemetryMs = -1.0;
    };

    RemoteSession& owner; // its waker hears of events and of the connection coming and going
    ConnectOptions options;
    std::string where;
    asio::io_context io;
    tcp::socket socket{io};
    tcp::resolver resolver{io};
    asio::steady_timer retryTimer{io};
    std::string in;
    std::deque<std::string> out;

    mutable std::mutex mutex;
    std::condition_variable eventReady;
    std::vector<SessionEvent> events;
    int wakeEvents = 0;
    int nextLocal = 0;
    bool connected = false;
    bool refused = false; // a wrong token or another version: not retried
    std::string problem;
    std::string closedBecause; // a fatal error's text, until the connection is lost
    int unreadable = 0;        // messages skipped because they could not be decoded
    std::string serverId;
    Message welcome;
    bool serverBusy = false;
    bool cancelPending = false;
    std::deque<std::pair<int, RunConfig>> unconfirmed; // submitted, not yet accepted
    std::map<int, int> toLocal;                        // server run index -> local
    std::map<int, Tracked> tracked;                    // by local index
    int nextLab = 0;
    std::map<int, LabRequest> labsInFlight; // by this client's lab index (the message's tag)
    std::vector<double> latencies;

    asio::executor_work_guard<asio::io_context::executor_type> work;
    std::thread thread;
};

RemoteSession::RemoteSession(ConnectOptions options)
    : m_impl(std::make_unique<Impl>(*this, std::move(options))) {}

RemoteSession::~RemoteSession() = default;

bool RemoteSession::waitConnected(std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
        {
            std::lock_guard lock(m_impl->mutex);
            if (m_impl->connected || m_impl->refused) {
                return m_impl->connected;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard lock(m_impl->mutex);
    return m_impl->connected;
}

bool RemoteSession::refused() const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->refused;
}

int RemoteSession::submit(const RunConfig& config) {
    Impl& s = *m_impl;
    std::lock_guard lock(s.mutex);
    const int local = s.nextLocal++;
    if (!s.connected) {
        s.publish(
            RunFinished{local, unstartedRun(runLabel(config), config, RunStatus::Error,
                                            "not connected to " + s.where + ": " + s.problem)});
        return local;
    }
    s.unconfirmed.emplace_back(local, config);
    Message m;
    m.type = Type::Submit;
    m.configs = {config};
    asio::post(s.io, [&s, line = encode(m)]() mutable { s.write(std::move(line)); });
    return local;
}

int RemoteSession::submitLab(const LabRequest& request) {
    Impl& s = *m_impl;
    std::lock_guard lock(s.mutex);
    const int tag = s.nextLab++;
    if (!s.connected) {
        s.publish(LabFinished{
            tag, unstartedLab(request, "not connected to " + s.where + ": " + s.problem)});
        return tag;
    }
    s.labsInFlight.emplace(tag, request);
    Message m;
    m.type = Type::Lab;
    m.run = tag;
    m.lab = request;
    asio::post(s.io, [&s, line = encode(m)]() mutable { s.write(std::move(line)); });
    return tag;
}

void RemoteSession::cancel() {
    Impl& s = *m_impl;
    std::lock_guard lock(s.mutex);
    if (!s.connected) {
        s.cancelPending = true; // said once the connection is back
        return;
    }
    Message m;
    m.type = Type::Cancel;
    asio::post(s.io, [&s, line = encode(m)]() mutable { s.write(std::move(line)); });
}

std::vector<SessionEvent> RemoteSession::drain() {
    std::vector<SessionEvent> out;
    std::lock_guard lock(m_impl->mutex);
    out.swap(m_impl->events);
    m_impl->wakeEvents = 0;
    return out;
}

bool RemoteSession::waitForEvents(std::chrono::milliseconds timeout) {
    std::unique_lock lock(m_impl->mutex);
    return m_impl->eventReady.wait_for(lock, timeout, [this] { return m_impl->wakeEvents > 0; });
}

bool RemoteSession::busy() const {
    std::lock_guard lock(m_impl->mutex);
    if (!m_impl->unconfirmed.empty() || !m_impl->labsInFlight.empty() ||
        (m_impl->connected && m_impl->serverBusy)) {
        return true;
    }
    for (const auto& [server, local] : m_impl->toLocal) {
        const auto it = m_impl->tracked.find(local);
        if (it != m_impl->tracked.end() && !it->second.finished) {
            return true;
        }
    }
    return false;
}

std::vector<std::string> RemoteSession::devices() const {
    std::lock_guard lock(m_impl->mutex);
    std::vector<std::string> names;
    for (const auto& d : m_impl->welcome.devices) {
        names.push_back(d.name);
    }
    return names;
}

bool RemoteSession::isCuda(std::string_view device) const {
    std::lock_guard lock(m_impl->mutex);
    const DeviceOffer* d = m_impl->offer(device);
    return d ? d->cuda : device.starts_with("cuda");
}

int64_t RemoteSession::deviceMemoryBytes(std::string_view device) const {
    std::lock_guard lock(m_impl->mutex);
    const DeviceOffer* d = m_impl->offer(device);
    return d ? d->memoryBytes : 0;
}

std::optional<ConfigError> RemoteSession::checkRunnable(const RunConfig& config) const {
    if (auto errors = validate(config); !errors.empty()) {
        return errors.front();
    }
    std::lock_guard lock(m_impl->mutex);
    if (!m_impl->connected) {
        return ConfigError{"device", "not connected to " + m_impl->where + ": " + m_impl->problem};
    }
    const DeviceOffer* d = m_impl->offer(config.device);
    if (!d) {
        std::string names;
        for (const auto& offer : m_impl->welcome.devices) {
            names += (names.empty() ? "" : ", ") + offer.name;
        }
        return ConfigError{"device", "the engine at " + m_impl->where + " has no device " +
                                         config.device + " (it has " + names + ")"};
    }
    if (const auto it = d->refusals.find(std::string(toString(config.precision)));
        it != d->refusals.end()) {
        return ConfigError{"precision", it->second};
    }
    // A variant the server's device cannot run (a forced attention backend is probed by the
    // server when the run starts, and refused there with its reason).
    if (auto refusals = choiceRefusals(config, d->cuda); !refusals.empty()) {
        return refusals.front();
    }
    return std::nullopt;
}

Environment RemoteSession::environment(std::string_view) const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->welcome.environment;
}

EngineInfo RemoteSession::info() const {
    std::lock_guard lock(m_impl->mutex);
    EngineInfo info;
    info.where = m_impl->where;
    info.remote = true;
    info.connected = m_impl->connected;
    info.problem = m_impl->problem;
    info.deviceName = m_impl->welcome.environment.device.name;
    return info;
}

std::vector<double> RemoteSession::stepLatenciesMs() const {
    std::lock_guard lock(m_impl->mutex);
    return m_impl->latencies;
}

} // namespace lmprof::engine::remote
