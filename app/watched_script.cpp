// Starting a watched script (docs/WATCH.md, "No change at all"), for lmprof-cli watch and
// the window alike: which lmprof Python package watches it, the environment that arms the
// watcher and passes it the options, the private folder for its files, and the process
// group it runs in.

#include "cli_commands.h"
#include "lmprof/engine/remote_protocol.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace lmprof::app {

using namespace lmprof::engine;
namespace fs = std::filesystem;

namespace {

// The folder from which `python` imports the lmprof package (a pip install, editable or
// not), asked of the interpreter itself without importing the package, and so torch. Empty
// when it has none, or does not answer within 20 s.
std::optional<fs::path> installedPackage(const std::string& python) {
    static const char* kAsk = "import importlib.util as u, os\n"
                              "s = u.find_spec('lmprof')\n"
                              "if s and s.submodule_search_locations:\n"
                              "    print(os.path.dirname(list(s.submodule_search_locations)[0]))\n";
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) {
        return std::nullopt;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::vector<std::string> args = {python, "-c", kAsk};
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    std::string text;
    if (spawned == 0) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        char buffer[4096];
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            pollfd pfd{out[0], POLLIN, 0};
            if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
                ::kill(pid, SIGKILL);
                text.clear();
                break;
            }
            const ssize_t n = ::read(out[0], buffer, sizeof buffer);
            if (n <= 0 || text.size() > 65536) {
                break;
            }
            text.append(buffer, static_cast<size_t>(n));
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            text.clear();
        }
    }
    ::close(out[0]);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.pop_back();
    }
    if (text.empty() || text.find('\n') != std::string::npos) {
        return std::nullopt;
    }
    return fs::path(text);
}

// The interpreter a command runs: its first word when that names a Python ("python",
// "python3.11", ".venv/bin/python"), else the python3 on PATH (torchrun, a shell script).
std::string interpreterOf(const std::vector<std::string>& command) {
    const std::string name = command.empty() ? "" : fs::path(command.front()).filename().string();
    return name.rfind("python", 0) == 0 ? command.front() : "python3";
}

bool holdsBootstrap(const fs::path& dir) {
    std::error_code ec;
    return fs::exists(dir / "lmprof" / "_bootstrap" / "sitecustomize.py", ec);
}

// Where the package is: $LMPROF_PYTHON_PACKAGE (a folder holding lmprof/); else where the
// script's own interpreter imports it from, so that `import lmprof` in the script and the
// watcher are one package; else this checkout's python/src (docs/WATCH.md, "Install").
std::optional<fs::path> packageDir(const std::vector<std::string>& command, std::string& why) {
    const char* env = std::getenv("LMPROF_PYTHON_PACKAGE");
    if (env && *env) {
        if (holdsBootstrap(env)) {
            return fs::path(env);
        }
        why = std::string("LMPROF_PYTHON_PACKAGE: ") + env +
              " does not hold the lmprof package (it should name the folder that holds "
              "lmprof/, e.g. python/src)";
        return std::nullopt;
    }
    const std::string python = interpreterOf(command);
    if (const auto installed = installedPackage(python); installed && holdsBootstrap(*installed)) {
        return installed;
    }
    if (holdsBootstrap(LMPROF_PYTHON_SOURCE)) {
        return fs::path(LMPROF_PYTHON_SOURCE);
    }
    why = "the lmprof Python package was not found: " + python +
          " cannot import it, and this build's " + std::string(LMPROF_PYTHON_SOURCE) +
          " is gone (pip install the package from the checkout's python/ folder, or set "
          "LMPROF_PYTHON_PACKAGE to the folder that holds lmprof/)";
    return std::nullopt;
}

// Starts the command in a process group of its own, so that a terminal's Ctrl+C reaches
// lmprof alone, which passes it on once (stop()) and waits for the script to close its run.
// The script dies with lmprof (PR_SET_PDEATHSIG, SIGKILL): whatever ends lmprof, even a
// second Ctrl+C or a SIGKILL, no script is left training into a folder nobody reads; its
// journal holds every finished step. The pid, or -errno when it cannot be started (told by
// the child through a close-on-exec pipe). Called from the thread that lives as long as the
// script (the main thread): the signal follows the thread that forked.
pid_t spawnInItsOwnGroup(char* const* argv, char* const* envp) {
    int told[2];
    if (pipe2(told, O_CLOEXEC) != 0) {
        return -errno;
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) { // only async-signal-safe calls from here to exec
        setpgid(0, 0);
        // lmprof stops the script with a Ctrl+C (SIGINT): one started in the background of a
        // shell inherits SIGINT ignored, and Python then installs no KeyboardInterrupt.
        std::signal(SIGINT, SIG_DFL);
        int error = 0;
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
            error = getppid() != parent ? ESRCH : errno; // lmprof already gone
        } else {
            execvpe(argv[0], argv, envp);
            error = errno;
        }
        [[maybe_unused]] const auto n = write(told[1], &error, sizeof error);
        _exit(127);
    }
    ::close(told[1]);
    if (pid < 0) {
        const int error = errno;
        ::close(told[0]);
        return -error;
    }
    setpgid(pid, pid); // as the child does: whichever runs first, the group exists
    int error = 0;
    ssize_t n;
    do {
        n = read(told[0], &error, sizeof error);
    } while (n < 0 && errno == EINTR);
    ::close(told[0]);
    if (n == static_cast<ssize_t>(sizeof error)) {
        int ignored = 0;
        waitpid(pid, &ignored, 0);
        return -error;
    }
    return pid;
}

std::vector<std::string> childEnvironment(const WatchLaunch& o, const fs::path& package,
                                          const fs::path& save) {
    std::vector<std::string> env;
    std::string pythonPath;
    for (char** e = environ; *e; ++e) {
        const std::string_view entry(*e);
        // The watcher's options that this launch sets: its own, not the caller's.
        static constexpr std::string_view kOurs[] = {
            "LMPROF_WATCH",   "LMPROF_TOKENS_PER_STEP=", "LMPROF_PROFILE_OPS=", "LMPROF_OPS_",
            "LMPROF_MEMORY_", "LMPROF_SNAPSHOT_PATH=",   "LMPROF_MODULE_DEPTH="};
        // --warmup, when given, beats the caller's LMPROF_WARMUP_STEPS: the child's getenv
        // would find the caller's first.
        const bool ourWarmup = o.warmup >= 0 && entry.starts_with("LMPROF_WARMUP_STEPS=");
        if (entry.starts_with("PYTHONPATH=")) {
            pythonPath = std::string(entry.substr(11));
        } else if (!ourWarmup &&
                   std::none_of(std::begin(kOurs), std::end(kOurs),
                                [&](std::string_view ours) { return entry.starts_with(ours); })) {
            env.emplace_back(entry);
        }
    }
    const std::string ours = (package / "lmprof" / "_bootstrap").string() + ":" + package.string();
    env.push_back("PYTHONPATH=" + ours + (pythonPath.empty() ? "" : ":" + pythonPath));
    env.push_back("LMPROF_WATCH=1");
    env.push_back("LMPROF_WATCH_SAVE=" + save.string());
    if (!o.name.empty()) {
        env.push_back("LMPROF_WATCH_NAME=" + o.name);
    }
    if (o.tokensPerStep > 0) {
        env.push_back("LMPROF_TOKENS_PER_STEP=" + std::to_string(o.tokensPerStep));
    }
    if (o.warmup >= 0) {
        env.push_back("LMPROF_WARMUP_STEPS=" + std::to_string(o.warmup));
    }
    if (!o.listen.empty()) {
        env.push_back("LMPROF_WATCH_LISTEN=" + o.listen);
    }
    if (!o.tokenFile.empty()) {
        env.push_back("LMPROF_WATCH_TOKEN_FILE=" + std::filesystem::absolute(o.tokenFile).string());
    }
    if (o.moduleDepth > 0) {
        env.push_back("LMPROF_MODULE_DEPTH=" + std::to_string(o.moduleDepth));
    }
    if (o.memoryHz > 0.0) {
        env.push_back("LMPROF_MEMORY_HZ=" + std::to_string(o.memoryHz));
    }
    if (o.memorySnapshot >= 0) {
        env.push_back("LMPROF_MEMORY_SNAPSHOT=" + std::to_string(o.memorySnapshot));
        if (!o.snapshotPath.empty()) {
            env.push_back("LMPROF_SNAPSHOT_PATH=" +
                          std::filesystem::absolute(o.snapshotPath).string());
        }
    }
    if (o.profileOps >= 0) {
        env.push_back("LMPROF_PROFILE_OPS=" + std::to_string(o.profileOps));
        if (o.opsDepth > 0) {
            env.push_back("LMPROF_OPS_DEPTH=" + std::to_string(o.opsDepth));
        }
        if (o.opsFold) {
            env.push_back("LMPROF_OPS_FOLD=1");
        }
        if (!o.opsTrace.empty()) {
            env.push_back("LMPROF_OPS_TRACE=" + std::filesystem::absolute(o.opsTrace).string());
        }
    }
    return env;
}

} // namespace

// A private folder for the script's result files and journals, removed at the end.
struct ScratchDir {
    fs::path path;
    ScratchDir() {
        std::error_code ec;
        std::string pattern = (fs::temp_directory_path(ec) / "lmprof-watch-XXXXXX").string();
        if (ec || !mkdtemp(pattern.data())) {
            throw std::runtime_error("cannot make a folder for the watched script's files: " +
                                     std::string(std::strerror(errno)));
        }
        path = pattern;
    }
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

WatchedScript::WatchedScript(const WatchLaunch& launch) {
    if (!launch.listen.empty()) {
        remote::parseEndpoint(launch.listen, "--listen", /*allowZero=*/true);
    }
    std::string why;
    const auto package = packageDir(launch.command, why);
    if (!package) {
        throw std::runtime_error(why);
    }
    m_dir = std::make_shared<ScratchDir>();
    WatchLaunch told = launch;
    if (!launch.token.empty()) {
        told.tokenFile = (m_dir->path / "token").string();
        const int fd = ::open(told.tokenFile.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
        const std::string line = launch.token + "\n";
        if (fd < 0 || ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
            if (fd >= 0) {
                ::close(fd);
            }
            throw std::runtime_error("cannot write the script's token file " + told.tokenFile);
        }
        ::close(fd);
    }
    std::vector<std::string> env = childEnvironment(told, *package, m_dir->path / "run.json");
    std::vector<char*> envp;
    for (auto& e : env) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    std::vector<std::string> args = launch.command;
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    m_pid = spawnInItsOwnGroup(argv.data(), envp.data());
    if (m_pid < 0) {
        throw std::runtime_error("cannot start '" + launch.command.front() +
                                 "': " + std::strerror(static_cast<int>(-m_pid)));
    }
}

WatchedScript::~WatchedScript() = default;

const std::filesystem::path& WatchedScript::dir() const {
    return m_dir->path;
}

std::optional<int> WatchedScript::poll() {
    if (!m_status && waitpid(m_pid, &m_rawStatus, WNOHANG) == m_pid) {
        m_status = m_rawStatus;
    }
    return m_status;
}

int WatchedScript::stop(std::chrono::milliseconds grace) {
    if (!poll()) {
        kill(-m_pid, SIGINT);
        const auto deadline = std::chrono::steady_clock::now() + grace;
        while (!poll() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (!poll()) {
            kill(-m_pid, SIGKILL);
            waitpid(m_pid, &m_rawStatus, 0);
            m_status = m_rawStatus;
        }
    }
    return *m_status;
}

} // namespace lmprof::app
