// The engine on another machine, driven as if it were here: a SessionInterface whose runs
// execute on an `lmprof-cli serve` (docs/REMOTE.md). It connects in the background, says
// hello with the token, and turns the server's messages into the same events a local
// Session publishes, numbered in this client's own run indices. A lost connection is
// retried every second; the server then sends the run in progress from its start and the
// runs that finished meanwhile, and none is delivered twice. A refusal (wrong token,
// another protocol version) is final and shown by info().
#pragma once

#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/session_interface.h"

#include <memory>
#include <string>

namespace lmprof::engine::remote {

struct ConnectOptions {
    std::string host = "127.0.0.1";
    int port = kDefaultPort;
    std::string token;
    std::string clientName = "lmprof"; // told to the server, for its log
    int firstRunIndex = 0; // this client's first run index (a window's store has runs already)
    std::chrono::milliseconds retry{1000};
};

class RemoteSession final : public SessionInterface {
public:
    explicit RemoteSession(ConnectOptions options); // starts connecting; never blocks
    ~RemoteSession() override;
    RemoteSession(const RemoteSession&) = delete;
    RemoteSession& operator=(const RemoteSession&) = delete;

    // Waits until the server accepted or refused the hello, or the timeout passes; true
    // when connected.
    bool waitConnected(std::chrono::milliseconds timeout);
    // The server refused this client for good (another token or protocol): it does not retry.
    bool refused() const;

    // Submitting while not connected answers at once with a run that failed (Error), saying
    // why; submit() is never queued for a connection that may not come.
    int submit(const RunConfig& config) override;
    // Runs on the server's device; a report lost with the connection ends as an error.
    int submitLab(const LabRequest& request) override;
    void cancel() override;
    std::vector<SessionEvent> drain() override;
    bool waitForEvents(std::chrono::milliseconds timeout) override;
    bool busy() const override;

    // From the server's welcome (empty, or refusing, until it came).
    std::vector<std::string> devices() const override;
    bool isCuda(std::string_view device) const override;
    int64_t deviceMemoryBytes(std::string_view device) const override;
    std::optional<ConfigError> checkRunnable(const RunConfig& config) const override;
    Environment environment(std::string_view device) const override;
    EngineInfo info() const override;

    // Milliseconds from the server's session publishing each step to this client queueing
    // it (on loopback both read the same steady clock).
    std::vector<double> stepLatenciesMs() const;

private:
    class Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace lmprof::engine::remote
