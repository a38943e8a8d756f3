// The remote server's answers to its clients' messages, one method each, and the limits a
// submit is checked against (server_state.h).

#include "lmprof/engine/ddp.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/memory_model.h"
#include "server_state.h"

#include <filesystem>

namespace lmprof::engine::remote {

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

void RemoteServer::Impl::command(Connection& c, Message m) {
    if (!isClientType(m.type)) {
        c.refuse(code::kUnknownType,
                 "\"" + std::string(toString(m.type)) + "\" is a server's message, not a client's");
        return;
    }
    if (!c.accepted) {
        onHello(c, m);
        return;
    }
    switch (m.type) {
    case Type::Submit:
        onSubmit(c, m);
        break;
    case Type::Lab:
        onLab(c, m);
        break;
    case Type::Cancel:
        onCancel(c);
        break;
    case Type::Fetch:
        onFetch(c, m);
        break;
    case Type::Ack:
        onAck(m);
        break;
    default: // a second hello
        c.send(errorMessage(code::kInvalid, "already said hello", false));
        break;
    }
}

// Before its hello a connection may send nothing else; the hello's protocol and token are
// checked, and a refusal closes the connection.
void RemoteServer::Impl::onHello(Connection& c, const Message& m) {
    if (m.type != Type::Hello) {
        c.refuse(code::kHelloFirst, "the first message must be a hello, got \"" +
                                        std::string(toString(m.type)) + "\"");
    } else if (m.protocol != kProtocolVersion) {
        c.refuse(code::kVersion, "this server speaks protocol " + std::to_string(kProtocolVersion) +
                                     ", the client " + std::to_string(m.protocol) +
                                     ": use an lmprof of the same version on both ends");
    } else if (!sameToken(m.token, options.token)) {
        c.refuse(code::kBadToken, "wrong token (the server's is in its token file)");
    } else {
        c.accepted = true;
        c.client = printable(m.client, 200);
        log("client " + c.peer + " connected" + (c.client.empty() ? "" : " (" + c.client + ")"));
        welcome(c);
    }
}

// All or nothing: one configuration over a limit refuses the submit, and the connection
// stays (the client may send a smaller one).
void RemoteServer::Impl::onSubmit(Connection& c, Message& m) {
    std::optional<std::string> refusal;
    if (pending + static_cast<int>(m.configs.size()) > options.limits.maxQueuedRuns) {
        refusal = "runs: " + std::to_string(pending) + " queued and " +
                  std::to_string(m.configs.size()) + " more are over this server's limit of " +
                  std::to_string(options.limits.maxQueuedRuns) +
                  " (lmprof-cli serve --max-queued-runs)";
    }
    for (size_t i = 0; i < m.configs.size() && !refusal; ++i) {
        const std::string which = m.configs.size() > 1 ? "run " + std::to_string(i + 1) + ": " : "";
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
        return;
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
}

// A precision-lab experiment: its report goes to this client alone (dropLabsOf).
void RemoteServer::Impl::onLab(Connection& c, const Message& m) {
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
        return;
    }
    const int index = session.submitLab(*m.lab);
    ++pending;
    labs[index] = {c.shared_from_this(), m.run};
    log("client " + c.peer + " started a precision-lab experiment on " +
        printable(std::string(labDevice(*m.lab)), 64));
    broadcast(stateMessage());
}

void RemoteServer::Impl::onCancel(Connection& c) {
    log("client " + c.peer + " cancelled");
    session.cancel();
}

// A fetch's replays are sent uncounted, like those on connect, but only once the
// replays before them have been written: until then the runs asked for are noted
// (one set per connection, at most every kept run), so a client that sends fetches
// and never reads holds one round of replays at most.
void RemoteServer::Impl::onFetch(Connection& c, const Message& m) {
    c.wantRuns(m.runs);
    serveFetch(c);
}

// The client has stored the run: the server stops keeping it for the next client.
void RemoteServer::Impl::onAck(const Message& m) {
    for (Kept& k : finished) {
        if (k.index == m.run) {
            k.acked = true;
        }
    }
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

int RemoteServer::Impl::unauthenticated() const {
    int n = 0;
    for (const auto& c : connections) {
        n += c->accepted || c->closing() ? 0 : 1; // refused ones linger 10 s at most
    }
    return n;
}

} // namespace lmprof::engine::remote
