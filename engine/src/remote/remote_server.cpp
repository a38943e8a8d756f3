// RemoteServer: one Asio thread for the network and a pump thread that hands the session's
// events to it. This file listens and accepts, relays the engine's events to every client,
// and keeps, autosaves and replays the finished runs; a connection's transport and the
// clients' messages are in server_connection.cpp and server_commands.cpp (server_state.h).

#include "lmprof/engine/remote_server.h"

#include "server_state.h"

#include <stdexcept>
#include <sys/resource.h>
#include <unistd.h>

namespace lmprof::engine::remote {

void fitToLimit(Message& m) {
    if (m.result && encode(m).size() > kMaxMessageBytes) {
        m.result->memoryTimeline.clear();
        m.result->telemetry.clear();
        m.result->samplerError = "the memory timeline and telemetry were left out of the "
                                 "message (over the protocol's limit); the server's autosave "
                                 "has them";
    }
}

std::string printable(std::string_view text, std::size_t maxBytes) {
    std::string out;
    const std::size_t n = std::min(text.size(), maxBytes);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            static constexpr char kHex[] = "0123456789abcdef";
            out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
        }
    }
    if (text.size() > n) {
        out += "... (" + std::to_string(text.size() - n) + " more bytes)";
    }
    return out;
}

ServeLimits limitsFor(ServeLimits l, int64_t hostBytes) {
    constexpr int64_t kRankBytes = int64_t{512} << 20; // a LibTorch rank process, with room
    if (l.maxWorldSize <= 0) {
        const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        const int byMemory = hostBytes > 0 ? static_cast<int>(hostBytes / kRankBytes) : cores;
        l.maxWorldSize = std::clamp(std::min(cores, byMemory), 1, kMaxWorldSize);
    }
    if (l.maxHostBytes <= 0) {
        l.maxHostBytes = hostBytes;
    }
    if (l.maxConnections <= 0) {
        rlimit r{};
        const rlim_t soft = ::getrlimit(RLIMIT_NOFILE, &r) == 0 ? r.rlim_cur : 1024;
        const rlim_t usable = soft == RLIM_INFINITY ? 1024 : soft;
        l.maxConnections = static_cast<int>(std::clamp<rlim_t>(
            usable > static_cast<rlim_t>(kReservedDescriptors) ? usable - kReservedDescriptors : 1,
            1, 1024));
    }
    // Half the connections at most may be without a hello: clients who said it keep room.
    l.maxUnauthenticated = std::clamp(l.maxUnauthenticated, 1, std::max(1, l.maxConnections / 2));
    return l;
}

// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// The server

RemoteServer::Impl::Impl(SessionInterface& s, ServeOptions o) : session(s), options(std::move(o)) {
    if (options.token.empty()) {
        throw std::runtime_error("serve: the token is empty");
    }
    options.limits = limitsFor(options.limits, session.deviceMemoryBytes("cpu"));
    if (!options.autosave.empty()) {
        autosaveFile.emplace(options.autosave); // held open: a flood cannot take its descriptor
    }
    std::error_code ec;
    const auto address = asio::ip::make_address(
        options.listen.host == "localhost" ? "127.0.0.1" : options.listen.host, ec);
    if (ec) {
        throw std::runtime_error("--listen " + options.listen.text() +
                                 ": not an IP address of this machine (" + ec.message() + ")");
    }
    if (!address.is_loopback() && !options.allowRemote) {
        throw std::runtime_error(
            "--listen " + options.listen.text() +
            ": not a loopback address, so other machines could connect and the token would "
            "cross the network unencrypted; pass --allow-remote to allow it, or keep the "
            "default and reach the server through ssh -L (docs/REMOTE.md)");
    }
    const tcp::endpoint endpoint(address, static_cast<unsigned short>(options.listen.port));
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) {
        acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
        acceptor.bind(endpoint, ec);
    }
    if (!ec) {
        acceptor.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        throw std::runtime_error("--listen " + options.listen.text() + ": " + ec.message());
    }

    // What every client is told first: this server, its machine and what it can run.
    welcomeTemplate.type = Type::Welcome;
    welcomeTemplate.serverId = std::to_string(steadyNowNs()) + "-" + std::to_string(::getpid());
    welcomeTemplate.tool = toolInfo();
    welcomeTemplate.environment = session.environment("auto");
    for (const std::string& name : session.devices()) {
        DeviceOffer offer;
        offer.name = name;
        offer.cuda = session.isCuda(name);
        offer.memoryBytes = session.deviceMemoryBytes(name);
        for (Precision p : kPrecisions) {
            RunConfig probe;
            probe.device = name;
            probe.precision = p;
            if (auto refusal = session.checkRunnable(probe); refusal) {
                offer.refusals[std::string(toString(p))] = refusal->reason;
            }
        }
        welcomeTemplate.devices.push_back(std::move(offer));
    }
}

void RemoteServer::Impl::accept() {
    acceptor.async_accept([this](std::error_code ec, tcp::socket socket) {
        if (stopping.load() || !acceptor.is_open()) {
            return;
        }
        if (ec) {
            // Out of file descriptors, say: tried again shortly, not in a tight loop.
            log("accept: " + ec.message());
            acceptRetry.expires_after(std::chrono::milliseconds(100));
            acceptRetry.async_wait([this](std::error_code e) {
                if (!e) {
                    accept();
                }
            });
            return;
        }
        // At the cap of connections without a hello the oldest of them makes room: a flood
        // of silent peers cannot keep a client that says hello at once from getting in.
        if (unauthenticated() >= options.limits.maxUnauthenticated) {
            std::shared_ptr<Connection> oldest;
            for (const auto& c : connections) {
                if (!c->accepted && !c->closing() && (!oldest || c->serial < oldest->serial)) {
                    oldest = c;
                }
            }
            if (oldest) {
                oldest->refuse(code::kBusy, std::to_string(options.limits.maxUnauthenticated) +
                                                " connections have not said hello, the limit: "
                                                "the oldest makes room for a new one");
                oldest->close();
            }
        }
        // At the cap of connections: told why in one line, written at once (the socket's
        // buffer takes it), and closed, so that it holds no descriptor and no memory.
        if (const int open = static_cast<int>(connections.size());
            open >= options.limits.maxConnections) {
            const std::string full = std::to_string(open) +
                                     " connections are open, the limit (descriptors less " +
                                     std::to_string(kReservedDescriptors) + " kept for runs)";
            log("refused a connection: busy: " + full);
            socket.non_blocking(true, ec);
            asio::write(socket, asio::buffer(encode(errorMessage(code::kBusy, full, true))), ec);
            socket.close(ec);
            accept();
            return;
        }
        socket.set_option(tcp::no_delay(true), ec);
        auto c = std::make_shared<Connection>(*this, std::move(socket));
        c->serial = ++connectionSerial;
        connections.insert(c);
        c->start();
        accept();
    });
}

void RemoteServer::Impl::dropLabsOf(const Connection& c) {
    int dropped = 0;
    for (const auto& [index, asker] : labs) {
        const auto owner = asker.connection.lock();
        if (!owner || owner.get() == &c) {
            session.cancelLab(index);
            ++dropped;
        }
    }
    if (dropped > 0) {
        log("dropped " + std::to_string(dropped) + " lab experiment(s) of " + c.peer +
            ", who left");
    }
}

void RemoteServer::Impl::serveFetch(Connection& c) {
    if (c.replayBytes() > 0 || !c.wantsRuns()) {
        return;
    }
    std::vector<const Kept*> sending;
    for (const Kept& k : finished) {
        if (c.wants(k.index)) {
            sending.push_back(&k);
        }
    }
    c.clearWanted();
    for (const Kept* k : sending) {
        c.send(replay(*k), true);
    }
}

Message RemoteServer::Impl::replay(const Kept& k) const {
    Message m;
    m.type = Type::RunFinished;
    m.run = k.index;
    m.result = k.result;
    m.replay = true;
    m.busy = session.busy();
    fitToLimit(m);
    return m;
}

void RemoteServer::Impl::welcome(Connection& c) {
    Message w = welcomeTemplate;
    w.busy = session.busy();
    c.send(w);
    // The run in progress from its start, then what finished with no one to receive it.
    if (active) {
        Message m;
        m.run = active->index;
        m.type = Type::RunStarted;
        m.result = active->header;
        c.send(m, true);
        m.result.reset();
        m.type = Type::Memory;
        for (const auto& s : active->memory) {
            m.memory = s;
            c.send(m, true);
        }
        m.memory.reset();
        m.type = Type::Telemetry;
        for (const auto& s : active->telemetry) {
            m.telemetry = s;
            c.send(m, true);
        }
        m.telemetry.reset();
        m.type = Type::Step;
        for (const auto& s : active->steps) {
            m.step = s; // sentNs 0: a replay, not a fresh step (no latency to measure)
            c.send(m, true);
        }
    }
    for (const Kept& k : finished) {
        if (!k.acked) {
            c.send(replay(k), true);
        }
    }
}

void RemoteServer::Impl::broadcast(const Message& m) {
    const std::string line = encode(m);
    // A copy: a connection that overflows removes itself from the set.
    const auto all = connections;
    for (const auto& c : all) {
        if (c->accepted) {
            c->sendLine(line);
        }
    }
}

void RemoteServer::Impl::onEvents(std::vector<SessionEvent> events) {
    bool anyoneListening = false;
    for (const auto& c : connections) {
        anyoneListening = anyoneListening || c->accepted;
    }
    for (SessionEvent& event : events) {
        Message m;
        if (auto* e = std::get_if<RunStarted>(&event)) {
            active = Active{e->runIndex, e->header, {}, {}, {}};
            m.type = Type::RunStarted;
            m.run = e->runIndex;
            m.result = std::move(e->header);
        } else if (auto* e = std::get_if<StepFinished>(&event)) {
            if (active && active->index == e->runIndex) {
                active->steps.push_back(e->step);
            }
            m.type = Type::Step;
            m.run = e->runIndex;
            m.step = std::move(e->step);
            m.sentNs = e->publishedNs;
        } else if (auto* e = std::get_if<MemorySampled>(&event)) {
            if (active && active->index == e->runIndex) {
                active->memory.push_back(e->sample);
            }
            m.type = Type::Memory;
            m.run = e->runIndex;
            m.memory = e->sample;
        } else if (auto* e = std::get_if<TelemetrySampled>(&event)) {
            if (active && active->index == e->runIndex) {
                active->telemetry.push_back(e->sample);
            }
            m.type = Type::Telemetry;
            m.run = e->runIndex;
            m.telemetry = e->sample;
        } else if (auto* e = std::get_if<RunFinished>(&event)) {
            if (active && active->index == e->runIndex) {
                active.reset();
            }
            pending = std::max(0, pending - 1);
            autosave(e->result);
            log("run " + e->result.id + " finished: " + std::string(toString(e->result.status)) +
                (anyoneListening ? "" : " (kept for the next client)"));
            m.type = Type::RunFinished;
            m.run = e->runIndex;
            m.result = e->result;
            m.busy = session.busy();
            fitToLimit(m);
            finished.push_back({e->runIndex, std::move(e->result), false});
        } else if (auto* e = std::get_if<LabFinished>(&event)) {
            pending = std::max(0, pending - 1);
            const auto asker = labs.find(e->labIndex);
            if (asker != labs.end()) {
                if (auto c = asker->second.connection.lock(); c && !c->closing()) {
                    m.type = Type::LabFinished;
                    m.run = asker->second.tag;
                    m.labReport = std::move(e->report);
                    m.busy = session.busy();
                    c->send(m);
                }
                labs.erase(asker);
            }
            broadcast(stateMessage());
            continue;
        }
        broadcast(m);
        if (m.type == Type::RunFinished) {
            broadcast(stateMessage());
        }
    }
}

RemoteServer::RemoteServer(SessionInterface& session, ServeOptions options)
    : m_impl(std::make_unique<Impl>(session, std::move(options))) {}

RemoteServer::~RemoteServer() {
    stop();
    if (m_impl->pump.joinable()) {
        m_impl->pump.join();
    }
}

uint64_t RemoteServer::commandsRead() const {
    return m_impl->commandsRead.load(std::memory_order_acquire);
}

int RemoteServer::port() const {
    return m_impl->acceptor.local_endpoint().port();
}

const ServeLimits& RemoteServer::limits() const {
    return m_impl->options.limits;
}

void RemoteServer::run(const std::atomic<bool>* interrupt) {
    Impl& s = *m_impl;
    s.pump = std::thread([&s] {
        while (!s.stopping.load()) {
            s.session.waitForEvents(std::chrono::milliseconds(50));
            auto events = s.session.drain();
            if (!events.empty()) {
                asio::post(s.io, [&s, events = std::move(events)]() mutable {
                    s.onEvents(std::move(events));
                });
            }
        }
    });
    s.accept();
    asio::steady_timer watch(s.io);
    std::function<void(std::error_code)> check = [&](std::error_code ec) {
        if (ec) {
            return;
        }
        if (s.stopping.load() || (interrupt && interrupt->load())) {
            s.stopping.store(true);
            std::error_code ignored;
            s.acceptor.close(ignored);
            const auto all = s.connections;
            for (const auto& c : all) {
                c->close();
            }
            s.io.stop();
            return;
        }
        watch.expires_after(std::chrono::milliseconds(100));
        watch.async_wait(check);
    };
    check({});
    s.io.run();
    s.stopping.store(true);
    s.pump.join();
    // Events the pump handed over after the loop stopped: their runs are autosaved still.
    s.io.restart();
    s.io.poll();
    // The run in progress stops after its step and is autosaved with the steps it has.
    s.session.cancel();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (s.session.busy() && std::chrono::steady_clock::now() < until) {
        s.session.waitForEvents(std::chrono::milliseconds(100));
    }
    for (auto& event : s.session.drain()) {
        if (auto* e = std::get_if<RunFinished>(&event)) {
            s.autosave(e->result);
        }
    }
}

void RemoteServer::stop() {
    m_impl->stopping.store(true);
}

} // namespace lmprof::engine::remote
