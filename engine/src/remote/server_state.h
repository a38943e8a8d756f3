// The remote server's state and its connections (remote_server.h), shared by the files that
// do its jobs:
//   server_connection.cpp  the transport: a connection's reads and writes, what a silent or
//                          unread peer may make the server hold, the refusal that closes it;
//   server_commands.cpp    the clients' messages, one method each, and the limits a submit
//                          is checked against;
//   remote_server.cpp      listening and accepting, the engine's events relayed to every
//                          client, the finished runs kept, autosaved and replayed.
// All of it is touched on the Asio thread only; the pump thread only hands events to it.
#pragma once

#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/remote_server.h"
#include "lmprof/engine/result_io.h"

#include <array>
#include <asio.hpp>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace lmprof::engine::remote {

using asio::ip::tcp;

class RemoteServer::Impl {
public:
    Impl(SessionInterface& session, ServeOptions options);

    class Connection;
    void accept();
    void onEvents(std::vector<SessionEvent> events);
    void broadcast(const Message& m);
    void welcome(Connection& c);
    // A client's message, by its type: one method each (server_commands.cpp).
    void command(Connection& c, Message m);
    void onHello(Connection& c, const Message& m);
    void onSubmit(Connection& c, Message& m);
    void onLab(Connection& c, const Message& m);
    void onCancel(Connection& c);
    void onFetch(Connection& c, const Message& m);
    void onAck(const Message& m);
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
    Connection(Impl& server, tcp::socket socket);
    void start();

    // A replay (runs kept for this client) is not counted against the limit on unread
    // messages: a night's sweep may be more than it, and is sent once, to this client.
    void send(const Message& m, bool replay = false) { sendLine(encode(m), !replay); }
    size_t replayBytes() const { return m_replayBytes; }
    // Runs fetched and not yet sent: these indices, or every kept run.
    void wantRuns(const std::vector<int>& runs);
    bool wantsRuns() const { return m_fetchAll || !m_fetched.empty(); }
    bool wants(int index) const { return m_fetchAll || m_fetched.count(index) > 0; }
    void clearWanted();
    void sendLine(std::string line, bool counted = true);

    // Says why in an error message, then closes: a fatal refusal.
    void refuse(std::string_view errorCode, const std::string& why);
    void close();
    bool closing() const { return m_closing; }
    bool accepted = false;
    uint64_t serial = 0; // order of arrival
    std::string peer;
    std::string client;

private:
    static constexpr size_t kMaxQueuedBytes = size_t{512} << 20;
    void readNext();
    void onRead(std::error_code ec, size_t n);
    void writeNext();

    // After a refusal: stop sending, and read (discarding) what the client still sends for
    // a moment, so that closing does not reset the connection before it has read why.
    void linger();
    void discard();

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

// A finished run whose line would be over kMaxMessageBytes (a very long run's timeline)
// goes without its memory timeline and telemetry, and says so; the autosave has it whole.
void fitToLimit(Message& m);

} // namespace lmprof::engine::remote
