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
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace lmprof::engine::remote {

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
    std::function<void(const std::string&)> log;   // one line per connection event
};

class RemoteServer {
public:
    // Binds at once: throws std::runtime_error naming the address and the reason (in use,
    // not loopback without allowRemote, not an address of this machine).
    RemoteServer(SessionInterface& session, ServeOptions options);
    ~RemoteServer();
    RemoteServer(const RemoteServer&) = delete;
    RemoteServer& operator=(const RemoteServer&) = delete;

    int port() const; // the bound port (the one the system picked for port 0)

    // Serves until stop() or until *interrupt turns true (checked every 100 ms).
    void run(const std::atomic<bool>* interrupt = nullptr);
    // From any thread: run() returns soon after.
    void stop();

private:
    class Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace lmprof::engine::remote
