// lmprof-cli serve, and the engine run and sweep drive (this process's, or a server's with
// --connect). docs/REMOTE.md describes both ends.

#include "cli_commands.h"
#include "cli_options.h"
#include "cli_registry.h"
#include "lmprof/engine/local_engine.h"
#include "lmprof/engine/remote_server.h"
#include "lmprof/engine/remote_session.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace lmprof::app {

using namespace lmprof::engine;

std::filesystem::path configDir() {
    if (const char* dir = std::getenv("LMPROF_CONFIG_DIR"); dir && *dir) {
        return dir;
    }
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
        return std::filesystem::path(xdg) / "lmprof";
    }
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home ? home : ".") / ".config" / "lmprof";
}

namespace {

std::filesystem::path defaultTokenFile() {
    return configDir() / "server" / "token";
}

// A new token (256 random bits as hex) in a file only its owner can read; created
// exclusively, so an existing file is never replaced. Throws naming the path.
std::string makeTokenFile(const std::filesystem::path& path) {
    std::filesystem::create_directories(path.parent_path());
    std::random_device random; // the kernel's entropy (/dev/urandom) on Linux
    std::string token;
    char hex[9];
    for (int i = 0; i < 8; ++i) {
        std::snprintf(hex, sizeof(hex), "%08x", static_cast<unsigned>(random()));
        token += hex;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        throw std::runtime_error("token file " + path.string() + ": " + std::strerror(errno));
    }
    const std::string line = token + "\n";
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                    ::fsync(fd) == 0;
    ::close(fd);
    if (!ok) {
        throw std::runtime_error("token file " + path.string() + ": cannot be written");
    }
    return token;
}

// The server's token: from the given file, else from the default one, made at the first
// start. A token file others can read is refused: anyone on the machine could drive it.
std::string serverToken(const std::string& given, std::filesystem::path& used) {
    used = given.empty() ? defaultTokenFile() : std::filesystem::path(given);
    if (given.empty() && !std::filesystem::exists(used)) {
        std::string token = makeTokenFile(used);
        std::fprintf(stderr, "lmprof-cli serve: made a new token in %s (mode 0600)\n",
                     used.c_str());
        return token;
    }
    struct stat st {};
    if (::stat(used.c_str(), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof(mode), "%03o", static_cast<unsigned>(st.st_mode & 0777));
        throw std::runtime_error("token file " + used.string() + ": others can read it (mode " +
                                 mode + "); chmod 600 it");
    }
    return remote::readToken(used.string());
}

// The number of lines in an autosave file (one per run; a cut last line counts too, which
// only skips a number). 0 when there is none.
int countAutosavedRuns(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    int lines = 0;
    for (std::string line; std::getline(in, line);) {
        lines += line.empty() ? 0 : 1;
    }
    return lines;
}

} // namespace

namespace {

// Until the server answers (accepted, or refused for good) or Ctrl+C, saying every 10 s what
// it waits for: the client retries every second on its own.
bool waitPatiently(remote::RemoteSession& engine, const std::string& connect, bool quiet) {
    auto said = std::chrono::steady_clock::now();
    while (!engine.waitConnected(std::chrono::milliseconds(250))) {
        if (engine.refused() || interrupted()) {
            return false;
        }
        if (!quiet && std::chrono::steady_clock::now() - said >= std::chrono::seconds(10)) {
            said = std::chrono::steady_clock::now();
            std::fprintf(stderr,
                         "lmprof-cli: waiting for %s: %s (a script may still be starting, "
                         "importing torch; Ctrl+C stops)\n",
                         printable(connect).c_str(), printable(engine.info().problem).c_str());
        }
    }
    return true;
}

} // namespace

std::unique_ptr<SessionInterface> openEngine(const CommonOptions& o, Patience patience) {
    return openEngine(o.connect, o.tokenFile, o.quiet, patience);
}

std::unique_ptr<SessionInterface> openLocalEngine(const std::string& tokenFile,
                                                  std::optional<RankProgram> ranks) {
    if (!tokenFile.empty()) {
        std::cerr << "lmprof-cli: --token-file is for --connect\n";
        return nullptr;
    }
    auto engine = std::make_unique<LocalSession>(0, std::move(ranks));
    if (std::string why; !engine->start(&why)) {
        std::cerr << "lmprof-cli: " << why << "\n";
        return nullptr;
    }
    return engine;
}

std::unique_ptr<SessionInterface> openEngine(const std::string& connect,
                                             const std::string& tokenFile, bool quiet,
                                             Patience patience) {
    if (connect.empty()) {
        return openLocalEngine(tokenFile);
    }
    remote::ConnectOptions options;
    try {
        const remote::Endpoint endpoint = remote::parseEndpoint(connect, "--connect");
        options.host = endpoint.host;
        options.port = endpoint.port;
        options.token =
            remote::readToken(tokenFile.empty() ? defaultTokenFile().string() : tokenFile);
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli: " << e.what() << "\n";
        return nullptr;
    }
    options.clientName = "lmprof-cli " + toolInfo().version;
    auto engine = std::make_unique<remote::RemoteSession>(options);
    const bool connected = patience == Patience::UntilCtrlC
                               ? waitPatiently(*engine, connect, quiet)
                               : engine->waitConnected(std::chrono::seconds(10));
    if (!connected && patience == Patience::InTheWindow && !engine->refused()) {
        std::fprintf(stderr,
                     "lmprof: --connect %s: no answer yet (%s); the window opens and keeps "
                     "trying every second\n",
                     printable(connect).c_str(), printable(engine->info().problem).c_str());
        return engine;
    }
    if (!connected) {
        std::cerr << "lmprof-cli: --connect " << connect << ": "
                  << (interrupted() ? std::string("stopped while waiting for it")
                                    : engine->info().problem)
                  << "\n";
        return nullptr;
    }
    if (!quiet) {
        const EngineInfo info = engine->info();
        std::fprintf(stderr, "connected to %s (%s)\n", info.where.c_str(), info.deviceName.c_str());
    }
    return engine;
}

int serveCommand(const ServeOptions& o) {
    remote::ServeOptions options;
    std::filesystem::path tokenFile;
    try {
        options.listen = remote::parseEndpoint(o.listen, "--listen", /*allowZero=*/true);
        options.allowRemote = o.allowRemote;
        options.token = serverToken(o.tokenFile, tokenFile);
    } catch (const std::invalid_argument& e) {
        std::cerr << "lmprof-cli: " << e.what() << "\n";
        return kExitUsage;
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli serve: " << e.what() << "\n";
        return kExitFailure;
    }
    const std::filesystem::path state =
        o.stateDir.empty() ? configDir() / "server" : std::filesystem::path(o.stateDir);
    std::error_code ec;
    std::filesystem::create_directories(state, ec);
    if (ec) {
        std::cerr << "lmprof-cli serve: --state-dir " << state << ": " << ec.message() << "\n";
        return kExitFailure;
    }
    options.autosave = state / "autosave.jsonl";
    options.fileDir = state / "files";
    options.limits.maxWorldSize = o.maxWorldSize;
    options.limits.maxHostBytes = static_cast<int64_t>(o.maxHostMemoryGiB * double(1 << 30));
    options.limits.maxQueuedRuns = o.maxQueuedRuns;
    options.limits.maxConnections = o.maxConnections;
    options.log = [](const std::string& line) {
        std::fprintf(stderr, "lmprof-cli serve: %s\n", line.c_str());
    };
    // Run ids go on from the runs the autosave holds, so that a restarted server's runs do
    // not take the ids of earlier ones (each id is the run's position on this server).
    LocalSession session(countAutosavedRuns(options.autosave));
    if (std::string why; !session.start(&why)) {
        std::cerr << "lmprof-cli serve: " << why << "\n";
        return kExitFailure;
    }
    try {
        remote::RemoteServer server(session, options);
        const remote::ServeLimits& limits = server.limits();
        std::fprintf(stderr,
                     "lmprof-cli serve: limits: %d ranks, %s for a CPU run, %d queued runs, %d "
                     "connections (%d before a hello)\n",
                     limits.maxWorldSize, formatBytes(limits.maxHostBytes).c_str(),
                     limits.maxQueuedRuns, limits.maxConnections, limits.maxUnauthenticated);
        const EngineInfo info = session.info();
        std::fprintf(stderr,
                     "lmprof-cli serve: listening on %s (%s); token in %s; finished runs are "
                     "appended to %s\n",
                     remote::Endpoint{options.listen.host, server.port()}.text().c_str(),
                     info.deviceName.c_str(), tokenFile.c_str(), options.autosave.c_str());
        server.run(interruptFlag());
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli serve: " << e.what() << "\n";
        return kExitFailure;
    }
    std::fprintf(stderr, "lmprof-cli serve: stopped\n");
    return kExitOk;
}

CliCommand serveEntry() {
    return {"serve", "serve this machine's engine to the window and CLI clients (docs/REMOTE.md)",
            true, [](CLI::App& cmd) {
                auto o = std::make_shared<ServeOptions>();
                addText(cmd, "--listen", o->listen,
                        "HOST:PORT to listen on; loopback unless --allow-remote (port 0: any free "
                        "one)");
                addText(cmd, "--token-file", o->tokenFile,
                        "the token clients must present (default: <config dir>/server/token, "
                        "made with mode 0600 at the first start)");
                cmd.add_flag("--allow-remote", o->allowRemote,
                             "allow a --listen address other machines can reach (prefer ssh -L)");
                addText(cmd, "--state-dir", o->stateDir,
                        "where finished runs are autosaved and runs' files go (default: <config "
                        "dir>/server)");
                addNumberIn(cmd, "--max-world-size", o->maxWorldSize, 0, kMaxWorldSize,
                            "most ranks a client's data-parallel run may have (0: the cores, and "
                            "RAM / 512 MiB)");
                addNumberIn(cmd, "--max-host-memory", o->maxHostMemoryGiB, 0.0, 1048576.0,
                            "GiB a client's CPU run may need by the memory model (0: the "
                            "machine's RAM)");
                addNumberIn(cmd, "--max-queued-runs", o->maxQueuedRuns, 1, 100000,
                            "runs clients may have submitted and not finished");
                addNumberIn(cmd, "--max-connections", o->maxConnections, 0, 1024,
                            "open connections (0: the descriptor limit less 32 kept for runs)");
                return std::function<int()>([o] { return serveCommand(*o); });
            }};
}

} // namespace lmprof::app
