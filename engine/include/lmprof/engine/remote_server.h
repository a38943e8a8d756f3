// `lmprof-cli serve`: a session served to the window and CLI clients on other machines
// (docs/REMOTE.md). One network thread (standalone Asio) takes connections,
// reads one JSON line at a time, checks the hello's token and version, passes commands to
// the session and sends every session event to every accepted client. The session never
// waits on the network: a slow or hostile client costs only its own connection.
#pragma once

#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/session_interface.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace lmprof::engine::remote {

// What one server lets its clients make it hold (docs/REMOTE.md, "Limits"). A zero is
// filled from the machine when the server starts (limitsFor); lmprof-cli serve's flags set
// the others. Refusals name the field and the limit.
struct ServeLimits {
    int maxWorldSize = 0;        // ranks of a data-parallel run: the cores, and RAM / 512 MiB
    int64_t maxHostBytes = 0;    // a CPU run's predicted peak (all its ranks): the machine's RAM
    int maxQueuedRuns = 256;     // runs submitted and not yet finished
    int maxConnections = 0;      // open connections: the descriptor limit less a reserve
    int maxUnauthenticated = 32; // without a hello (at most half the connections); at the
                                 // cap the oldest of them is closed to let a new one in
};
// Descriptors kept free for the run itself (its files, the samplers, ranks' pipes): the
// connection cap is the process's limit (RLIMIT_NOFILE) less this.
inline constexpr int kReservedDescriptors = 32;
// The limits with every zero filled from this machine: its cores, its RAM (the session's
// memory of "cpu") and the descriptor limit.
ServeLimits limitsFor(ServeLimits limits, int64_t hostBytes);

// Text from a peer made safe for one log line: bytes outside printable ASCII written as
// \xNN, cut to maxBytes with the number of bytes left out.
std::string printable(std::string_view text, std::size_t maxBytes);

struct ServeOptions {
    Endpoint listen{"127.0.0.1", 7377};
    // Off: an address that is not loopback is refused (the token travels unencrypted).
    bool allowRemote = false;
    std::string token; // what each hello must present; not empty
    // Each finished run is appended here (an autosave file: lmprof-cli show reads it).
    std::filesystem::path autosave;
    // A client's memory snapshots and op traces are written here (its paths are its own
    // machine's): the run's record names the file on the server.
    std::filesystem::path fileDir;
    std::chrono::milliseconds helloTimeout{10000}; // a connection silent this long is closed
    ServeLimits limits;
    std::function<void(const std::string&)> log; // one line per connection event
};

class RemoteServer {
public:
    // Binds at once and opens the autosave file (kept open): throws std::runtime_error
    // naming the address and the reason (in use, not loopback without allowRemote, not an
    // address of this machine) or the autosave file.
    RemoteServer(SessionInterface& session, ServeOptions options);
    ~RemoteServer();
    RemoteServer(const RemoteServer&) = delete;
    RemoteServer& operator=(const RemoteServer&) = delete;

    int port() const;                  // the bound port (the one the system picked for port 0)
    const ServeLimits& limits() const; // as filled from the machine
    // Lines read from clients and handled so far (hellos and refused lines included): a
    // count any thread may read, so that a test can wait for the server to have handled
    // what it sent, however fast this machine is.
    uint64_t commandsRead() const;

    // Serves until stop() or until *interrupt turns true (checked every 100 ms).
    void run(const std::atomic<bool>* interrupt = nullptr);
    // From any thread: run() returns soon after.
    void stop();

private:
    class Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace lmprof::engine::remote
