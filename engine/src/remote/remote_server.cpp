// RemoteServer: one Asio thread for the network and a pump thread that hands the session's
// events to it. All server state (connections, the run in progress, the finished runs) is
// touched on the Asio thread only.
//
// Sections: a connection · the server.

#include "lmprof/engine/remote_server.h"

#include "lmprof/engine/ddp.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/memory_model.h"
#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/result_io.h"

#include <array>
#include <asio.hpp>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace lmprof::engine::remote {

using asio::ip::tcp;

namespace {

// A client's file path made the server's: a new file under `dir` named "<seq>-<name>", the
// client's file name with anything but letters, digits, '.', '_' and '-' replaced and cut
// to 100 bytes (no folders of the client's, no way out of `dir`, nothing a log line or a
// shell would read as more). A number already used there is skipped: no run's file
// replaces another's, across clients and restarts.
std::string serverPath(const std::filesystem::path& dir, const std::string& clientPath,
                       const char* fallback, int& seq) {
    std::string name = std::filesystem::path(clientPath).filename().string();
    for (char& ch : name) {
        const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                           (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
        ch = plain ? ch : '_';
    }
    name = name.substr(0, 100);
    if (name.find_first_not_of('.') == std::string::npos) { // "", ".", "..", "..."
        name = fallback;
    }
    std::error_code ec;
    std::filesystem::path path;
    do {
        path = dir / (std::to_string(++seq) + "-" + name);
    } while (std::filesystem::exists(path, ec));
    return path.string();
}

// A finished run whose line would be over kMaxMessageBytes (a very long run's timeline)
// goes without its memory timeline and telemetry, and says so; the autosave has it whole.
void fitToLimit(Message& m) {
    if (m.result && encode(m).size() > kMaxMessageBytes) {
        m.result->memoryTimeline.clear();
        m.result->telemetry.clear();
        m.result->samplerError = "the memory timeline and telemetry were left out of the "
                                 "message (over the protocol's limit); the server's autosave "
                                 "has them";
    }
}

// Equal without an early exit (the time taken does not tell how much of a token matched).
bool sameToken(const std::string& a, const std::string& b) {
    unsigned diff = a.size() == b.size() ? 0u : 1u;
    for (size_t i = 0; i < a.size(); ++i) {
        diff |=
            static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    }
    return diff == 0;
}

} // namespace

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
// A connection

class RemoteServer::Impl {
public:
    Impl(SessionInterface& session, ServeOptions options);

    class Connection;
    void accept();
    void onEvents(std::vector<SessionEvent> events);
    void broadcast(const Message& m);
    void welcome(Connection& c);
    void command(Connection& c, Message m);
    // One line, whatever a peer put in it: control bytes escaped, at most 2000 bytes.
    void log(const std::string& line) const {
        if (options.log) {
            options.log(printable(line, 2000));
        }
    }
    // Appends a finished run to the autosave file (held open); a failure is logged, the run
    // is kept.
    void autosave(const RunResult& run) {
        if (!autosaveFile) {
            return;
        }
        try {
            autosaveFile->append(run);
        } catch (const std::exception& e) {
            log(std::string("autosave: ") + e.what());
        }
    }
    // Why the server will not run this configuration, naming the field and the limit.
    std::optional<std::string> overLimit(const RunConfig& config) const;
    int unauthenticated() const;
    Message stateMessage() const {
        Message m;
        m.type = Type::State;
        m.busy = session.busy();
        return m;
    }

    SessionInterface& session;
    std::atomic<uint64_t> commandsRead{0};
    ServeOptions options;
    asio::io_context io;
    tcp::acceptor acceptor{io};
    asio::steady_timer acceptRetry{io};
    Message welcomeTemplate;
    std::set<std::shared_ptr<Connection>> connections;
    std::optional<KeptAutosave> autosaveFile;
    int fileSeq = 0; // the last number given to a run's file
    uint64_t connectionSerial = 0;
    int pending = 0; // runs submitted and not finished

    // The run in progress, so a client that connects mid-run sees it from its start.
    struct Active {
        int index = 0;
        RunResult header;
        std::vector<StepRecord> steps;
        std::vector<MemorySample> memory;
        std::vector<TelemetrySample> telemetry;
    };
    std::optional<Active> active;
    // Every run finished since the server started; unacknowledged ones are sent to each
    // client that connects.
    struct Kept {
        int index = 0;
        RunResult result;
        bool acked = false;
    };
    std::vector<Kept> finished;
    Message replay(const Kept& k) const; // a kept run, sent again
    // Sends the kept runs the connection's fetches asked for, once its replays have gone.
    void serveFetch(Connection& c);
    // A client that left: its lab experiments are dropped from the engine (queued ones at
    // once, a running one between its chunks), since their reports go to it alone.
    void dropLabsOf(const Connection& c);
    // Lab experiments in flight, by the session's lab index: who asked, and their tag. A lab
    // report goes to that connection alone; one whose client left is dropped (it is cheap to
    // run again, unlike a run, and no one else asked for it).
    struct LabAsker {
        std::weak_ptr<Connection> connection;
        int tag = 0;
    };
    std::map<int, LabAsker> labs;

    std::atomic<bool> stopping{false};
    std::thread pump;
};

class RemoteServer::Impl::Connection : public std::enable_shared_from_this<Connection> {
public:
    Connection(Impl& server, tcp::socket socket)
        : m_server(server), m_socket(std::move(socket)), m_timer(server.io) {
        std::error_code ec;
        const auto remote = m_socket.remote_endpoint(ec);
        peer = ec ? std::string("?")
                  : remote.address().to_string() + ":" + std::to_string(remote.port());
    }

    void start() {
        // No hello in time: refused, so a silent connection holds nothing for long.
        m_timer.expires_after(m_server.options.helloTimeout);
        m_timer.async_wait([self = shared_from_this()](std::error_code ec) {
            if (!ec && !self->accepted && !self->m_closing) {
                self->refuse(code::kTimeout,
                             "no hello within " +
                                 std::to_string(self->m_server.options.helloTimeout.count()) +
                                 " ms");
            }
        });
        readNext();
    }

    // A replay (runs kept for this client) is not counted against the limit on unread
    // messages: a night's sweep may be more than it, and is sent once, to this client.
    void send(const Message& m, bool replay = false) { sendLine(encode(m), !replay); }
    size_t replayBytes() const { return m_replayBytes; }
    // Runs fetched and not yet sent: these indices, or every kept run.
    void wantRuns(const std::vector<int>& runs) {
        if (runs.empty()) {
            m_fetchAll = true;
        }
        for (int index : runs) {
            if (m_fetched.size() >= kMaxFetched) {
                m_fetchAll = true; // past the bound, every kept run: none asked for is lost
                break;
            }
            m_fetched.insert(index);
        }
    }
    bool wantsRuns() const { return m_fetchAll || !m_fetched.empty(); }
    bool wants(int index) const { return m_fetchAll || m_fetched.count(index) > 0; }
    void clearWanted() {
        m_fetchAll = false;
        m_fetched.clear();
    }

    void sendLine(std::string line, bool counted = true) {
        if (m_closing && !m_finalQueued) {
            return;
        }
        m_outBytes += counted ? line.size() : 0;
        m_replayBytes += counted ? 0 : line.size();
        m_out.emplace_back(std::move(line), counted);
        if (m_outBytes > kMaxQueuedBytes) {
            // A client that stopped reading: it is dropped, the run is not held up.
            m_server.log("dropped " + peer + ": over " + std::to_string(kMaxQueuedBytes >> 20) +
                         " MiB of messages unread");
            close();
            return;
        }
        if (!m_writing) {
            writeNext();
        }
    }

    // Says why in an error message, then closes: a fatal refusal.
    void refuse(std::string_view errorCode, const std::string& why) {
        if (m_closing) {
            return;
        }
        m_server.log("refused " + peer + ": " + std::string(errorCode) + ": " + why);
        m_finalQueued = true;
        send(errorMessage(errorCode, why, true));
        m_closing = true;
        m_finalQueued = false;
    }

    void close() {
        m_closing = true;
        std::error_code ec;
        m_timer.cancel();
        m_socket.close(ec);
        m_server.dropLabsOf(*this);
        m_server.connections.erase(shared_from_this());
    }

    bool closing() const { return m_closing; }
    bool accepted = false;
    uint64_t serial = 0; // order of arrival
    std::string peer;
    std::string client;

private:
    static constexpr size_t kMaxQueuedBytes = size_t{512} << 20;

    void readNext() {
        if (m_closing) {
            return;
        }
        m_reading = true;
        // Before the hello a line may be a few KiB: an unauthenticated peer holds little.
        asio::async_read_until(
            m_socket,
            asio::dynamic_buffer(m_in, (accepted ? kMaxMessageBytes : kMaxHelloBytes) + 1), '\n',
            [self = shared_from_this()](std::error_code ec, size_t n) { self->onRead(ec, n); });
    }

    void onRead(std::error_code ec, size_t n) {
        m_reading = false;
        if (m_closing) {
            if (m_lingering) {
                ec ? close() : discard();
            }
            return;
        }
        if (ec == asio::error::not_found) {
            refuse(code::kTooLarge, accepted ? "a message is over the limit of " +
                                                   std::to_string(kMaxMessageBytes) + " bytes"
                                             : "a message before the hello is over the limit of " +
                                                   std::to_string(kMaxHelloBytes) + " bytes");
            return;
        }
        if (ec) {
            m_server.log(
                (accepted ? "client " + peer + " left" : peer + " closed before its hello") +
                (ec == asio::error::eof ? std::string() : ": " + ec.message()));
            close();
            return;
        }
        std::string line = m_in.substr(0, n - 1);
        m_in.erase(0, n);
        if (!line.empty() && line.back() == '\r') {
            line.pop_back();
        }
        try {
            m_server.command(*this, decode(line, /*fromClient=*/true));
        } catch (const ProtocolError& e) {
            refuse(e.errorCode(), e.what());
        }
        m_server.commandsRead.fetch_add(1, std::memory_order_release); // handled
        readNext();
    }

    void writeNext() {
        if (m_out.empty()) {
            m_writing = false;
            if (m_closing) {
                linger();
            }
            return;
        }
        m_writing = true;
        asio::async_write(m_socket, asio::buffer(m_out.front().first),
                          [self = shared_from_this()](std::error_code ec, size_t) {
                              if (ec) {
                                  self->close();
                                  return;
                              }
                              const auto& [line, counted] = self->m_out.front();
                              self->m_outBytes -= counted ? line.size() : 0;
                              self->m_replayBytes -= counted ? 0 : line.size();
                              self->m_out.pop_front();
                              if (self->m_replayBytes == 0 && self->wantsRuns() &&
                                  !self->m_closing) {
                                  self->m_server.serveFetch(*self);
                              }
                              self->writeNext();
                          });
    }

    // After a refusal: stop sending, and read (discarding) what the client still sends for
    // a moment, so that closing does not reset the connection before it has read why.
    void linger() {
        std::error_code ec;
        m_socket.shutdown(tcp::socket::shutdown_send, ec);
        m_timer.expires_after(std::chrono::seconds(10));
        m_timer.async_wait([self = shared_from_this()](std::error_code e) {
            if (!e) {
                self->close();
            }
        });
        m_lingering = true;
        if (!m_reading) { // else the read in flight goes on discarding when it returns
            discard();
        }
    }

    void discard() {
        m_socket.async_read_some(asio::buffer(m_scratch),
                                 [self = shared_from_this()](std::error_code ec, size_t) {
                                     if (ec) {
                                         self->close();
                                     } else {
                                         self->discard();
                                     }
                                 });
    }

    Impl& m_server;
    tcp::socket m_socket;
    asio::steady_timer m_timer;
    std::string m_in;
    std::deque<std::pair<std::string, bool>> m_out; // a line, and whether it is counted
    size_t m_outBytes = 0;
    size_t m_replayBytes = 0; // replays queued and not yet written (not in m_outBytes)
    static constexpr size_t kMaxFetched = 1 << 16; // indices noted; more fetch every run
    std::set<int> m_fetched;
    bool m_fetchAll = false;
    bool m_writing = false;
    bool m_closing = false;
    bool m_finalQueued = false;
    bool m_reading = false;
    bool m_lingering = false;
    std::array<char, 65536> m_scratch{};
};

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

int RemoteServer::Impl::unauthenticated() const {
    int n = 0;
    for (const auto& c : connections) {
        n += c->accepted || c->closing() ? 0 : 1; // refused ones linger 10 s at most
    }
    return n;
}

std::optional<std::string> RemoteServer::Impl::overLimit(const RunConfig& config) const {
    // An invalid configuration is the session's to refuse (it ends as an error naming the
    // field); the estimates below assume the ranges validate() holds (no overflow).
    if (!validate(config).empty()) {
        return std::nullopt;
    }
    const ServeLimits& l = options.limits;
    const int ranks = config.ddp ? config.ddp->worldSize : 1;
    if (ranks > l.maxWorldSize) {
        return "ddp.world_size: " + std::to_string(ranks) + " ranks are over this server's " +
               "limit of " + std::to_string(l.maxWorldSize) +
               " (lmprof-cli serve --max-world-size)";
    }
    // A CPU run lives in the server's memory: one that the memory model says cannot fit is
    // refused before anything starts. A CUDA run that does not fit ends oom on its GPU.
    if (!session.isCuda(config.device)) {
        constexpr double kRankProcessBytes = 256.0 * (1 << 20); // LibTorch in each rank
        // Each intra-op thread LibTorch starts keeps its stack's touched pages and its
        // allocator arenas for the process's life: a few MiB, counted at 8 MiB.
        constexpr double kThreadBytes = 8.0 * (1 << 20);
        const double need =
            static_cast<double>(ranks) *
            (static_cast<double>(predictPeak(config).total()) +
             (config.ddp ? kRankProcessBytes : 0.0) + kThreadBytes * std::max(0, config.threads));
        if (need > static_cast<double>(l.maxHostBytes)) {
            return "model: the memory model predicts " +
                   formatBytes(static_cast<int64_t>(std::min(need, 9.0e18))) +
                   (ranks > 1 ? " for its " + std::to_string(ranks) + " ranks" : std::string()) +
                   ", over this server's limit of " + formatBytes(l.maxHostBytes) +
                   " (its memory; lmprof-cli serve --max-host-memory)";
        }
    }
    return std::nullopt;
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

void RemoteServer::Impl::command(Connection& c, Message m) {
    if (!isClientType(m.type)) {
        c.refuse(code::kUnknownType,
                 "\"" + std::string(toString(m.type)) + "\" is a server's message, not a client's");
        return;
    }
    if (!c.accepted) {
        if (m.type != Type::Hello) {
            c.refuse(code::kHelloFirst, "the first message must be a hello, got \"" +
                                            std::string(toString(m.type)) + "\"");
        } else if (m.protocol != kProtocolVersion) {
            c.refuse(code::kVersion, "this server speaks protocol " +
                                         std::to_string(kProtocolVersion) + ", the client " +
                                         std::to_string(m.protocol) +
                                         ": use an lmprof of the same version on both ends");
        } else if (!sameToken(m.token, options.token)) {
            c.refuse(code::kBadToken, "wrong token (the server's is in its token file)");
        } else {
            c.accepted = true;
            c.client = printable(m.client, 200);
            log("client " + c.peer + " connected" +
                (c.client.empty() ? "" : " (" + c.client + ")"));
            welcome(c);
        }
        return;
    }
    switch (m.type) {
    case Type::Submit: {
        // All or nothing: one configuration over a limit refuses the submit, and the
        // connection stays (the client may send a smaller one).
        std::optional<std::string> refusal;
        if (pending + static_cast<int>(m.configs.size()) > options.limits.maxQueuedRuns) {
            refusal = "runs: " + std::to_string(pending) + " queued and " +
                      std::to_string(m.configs.size()) + " more are over this server's limit of " +
                      std::to_string(options.limits.maxQueuedRuns) +
                      " (lmprof-cli serve --max-queued-runs)";
        }
        for (size_t i = 0; i < m.configs.size() && !refusal; ++i) {
            const std::string which =
                m.configs.size() > 1 ? "run " + std::to_string(i + 1) + ": " : "";
            if (auto why = overLimit(m.configs[i])) {
                refusal = which + *why;
            } else if (auto refused = session.checkRunnable(m.configs[i])) {
                // What a local run would be refused for (a variant this device lacks, too
                // many threads): refused before it is queued, so that no error run is kept
                // and replayed to the clients that come later.
                refusal = which + refused->message();
            }
        }
        if (refusal) {
            log("refused " + c.peer + "'s submit: " + *refusal);
            c.send(errorMessage(code::kLimit, *refusal, false));
            break;
        }
        Message reply;
        reply.type = Type::Accepted;
        for (RunConfig& config : m.configs) {
            // The client's file paths name its own machine: the files go to the server's.
            if (config.memorySnapshot && !config.memorySnapshot->path.empty()) {
                config.memorySnapshot->path =
                    serverPath(options.fileDir, config.memorySnapshot->path, "snapshot", fileSeq);
            }
            if (config.opProfile && !config.opProfile->tracePath.empty()) {
                config.opProfile->tracePath =
                    serverPath(options.fileDir, config.opProfile->tracePath, "trace.json", fileSeq);
            }
            if ((config.memorySnapshot || config.opProfile) && !options.fileDir.empty()) {
                std::error_code ec;
                std::filesystem::create_directories(options.fileDir, ec);
            }
            reply.runs.push_back(session.submit(config));
            ++pending;
        }
        log("client " + c.peer + " submitted " + std::to_string(reply.runs.size()) + " run(s)");
        c.send(reply);
        broadcast(stateMessage());
        break;
    }
    case Type::Lab: {
        if (pending + 1 > options.limits.maxQueuedRuns) {
            const std::string refusal = "lab: " + std::to_string(pending) +
                                        " runs and experiments queued are at this "
                                        "server's limit of " +
                                        std::to_string(options.limits.maxQueuedRuns) +
                                        " (lmprof-cli serve --max-queued-runs)";
            log("refused " + c.peer + "'s lab experiment: " + refusal);
            Message reply;
            reply.type = Type::LabFinished;
            reply.run = m.run;
            reply.labReport = unstartedLab(*m.lab, refusal);
            reply.busy = session.busy();
            c.send(reply);
            break;
        }
        const int index = session.submitLab(*m.lab);
        ++pending;
        labs[index] = {c.shared_from_this(), m.run};
        log("client " + c.peer + " started a precision-lab experiment on " +
            printable(std::string(labDevice(*m.lab)), 64));
        broadcast(stateMessage());
        break;
    }
    case Type::Cancel:
        log("client " + c.peer + " cancelled");
        session.cancel();
        break;
    case Type::Fetch:
        // A fetch's replays are sent uncounted, like those on connect, but only once the
        // replays before them have been written: until then the runs asked for are noted
        // (one set per connection, at most every kept run), so a client that sends fetches
        // and never reads holds one round of replays at most.
        c.wantRuns(m.runs);
        serveFetch(c);
        break;
    case Type::Ack:
        for (Kept& k : finished) {
            if (k.index == m.run) {
                k.acked = true;
            }
        }
        break;
    default: // a second hello
        c.send(errorMessage(code::kInvalid, "already said hello", false));
        break;
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
