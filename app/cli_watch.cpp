// lmprof-cli watch [--json OUT] -- python train.py ARGS: runs an unmodified PyTorch script
// with the lmprof Python package watching it (docs/WATCH.md, "No code change"), prints each
// step as the script's journal grows, and reports and saves its run(s) when it ends. Under
// torchrun every rank is its own run.

#include "cli_commands.h"
#include "cli_registry.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/watch_journal.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <poll.h>
#include <memory>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace lmprof::app {

using namespace lmprof::engine;
namespace fs = std::filesystem;

namespace {

struct WatchOptions {
    WatchLaunch launch; // the script and what its watcher is told
    std::string jsonPath;
    std::string format = "table";
    bool quiet = false;
    std::string connect;   // or: show a script that serves, instead of running one
};

// The folder from which `python` imports the lmprof package (a pip install, editable or
// not), asked of the interpreter itself without importing the package, and so torch. Empty
// when it has none, or does not answer within 20 s.
std::optional<fs::path> installedPackage(const std::string& python) {
    static const char* kAsk =
        "import importlib.util as u, os\n"
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

std::vector<std::string> childEnvironment(const WatchLaunch& o, const fs::path& package,
                                          const fs::path& save) {
    std::vector<std::string> env;
    std::string pythonPath;
    for (char** e = environ; *e; ++e) {
        const std::string_view entry(*e);
        if (entry.rfind("PYTHONPATH=", 0) == 0) {
            pythonPath = std::string(entry.substr(11));
        } else if (entry.rfind("LMPROF_WATCH", 0) != 0 &&
                   entry.rfind("LMPROF_TOKENS_PER_STEP=", 0) != 0 &&
                   entry.rfind("LMPROF_PROFILE_OPS=", 0) != 0 &&
                   entry.rfind("LMPROF_OPS_", 0) != 0 && entry.rfind("LMPROF_MEMORY_", 0) != 0 &&
                   entry.rfind("LMPROF_SNAPSHOT_PATH=", 0) != 0 &&
                   entry.rfind("LMPROF_MODULE_DEPTH=", 0) != 0) {
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
            env.push_back("LMPROF_SNAPSHOT_PATH=" + std::filesystem::absolute(o.snapshotPath).string());
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

namespace {

// Every rank in the folder, by its journal (run.json.steps.jsonl, run.rank1.json.steps.jsonl,
// ...) or, for a rank that closed its run before a poll saw the journal, its result set.
// Keyed by the journal's name; a journal that is not there reads as empty.
void findJournals(const fs::path& dir, std::map<std::string, WatchJournal>& journals) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        std::string name = entry.path().filename().string();
        if (entry.path().extension() == ".json") {
            name += kWatchJournalSuffix;
        } else if (name.size() <= kWatchJournalSuffix.size() || !name.ends_with(kWatchJournalSuffix)) {
            continue;
        }
        if (!journals.contains(name)) {
            journals.emplace(name, WatchJournal(dir / name));
        }
    }
}

std::string ms(const std::optional<double>& v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", v.value_or(0.0));
    return text;
}

} // namespace

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
    // Its own process group: a terminal's Ctrl+C reaches lmprof alone, which passes it on
    // once (stop()), and then waits for the script to close its run.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    const int spawned = posix_spawnp(&m_pid, argv[0], nullptr, &attr, argv.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    if (spawned != 0) {
        throw std::runtime_error("cannot start '" + launch.command.front() +
                                 "': " + std::strerror(spawned));
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

namespace {

// One line a step: the phases as the watcher split them, the loss when logged.
void printWatchedStep(const std::string& label, const StepRecord& s) {
    std::string line = "  [" + label + "] step " + std::to_string(s.index + 1) +
                       (s.warmup ? (s.compiled ? " (compiled)" : " (warmup)") : "") + "  data " +
                       ms(s.dataMs) + "  fwd " + ms(s.forwardMs) + "  bwd " + ms(s.backwardMs) +
                       "  opt " + ms(s.optimizerMs) + "  rest " + ms(s.restMs) + "  step " +
                       ms(s.totalMs) + " ms";
    if (s.microBatches > 1) {
        line += "  x" + std::to_string(s.microBatches) + " micro-batches";
    }
    if (s.loss) {
        char loss[32];
        std::snprintf(loss, sizeof loss, "  loss %.4g", *s.loss);
        line += loss;
    }
    if (s.peakAllocatedBytes > 0) {
        line += "  peak " + formatBytes(s.peakAllocatedBytes);
    }
    std::fprintf(stderr, "%s\n", line.c_str());
}

// Prints at most kLinesPerSecond step lines: a fast loop shows its latest steps and how many
// went by unprinted. `flush` prints what is given whatever the time.
class StepPrinter {
public:
    explicit StepPrinter(bool quiet) : m_quiet(quiet) {}
    void operator()(const std::string& label, const std::vector<StepRecord>& steps,
                    bool flush = false) {
        if (m_quiet || steps.empty()) {
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (!flush && now - m_last < std::chrono::milliseconds(1000 / kLinesPerSecond)) {
            m_unprinted += steps.size();
            return;
        }
        const size_t from = steps.size() > kBurst ? steps.size() - 1 : 0;
        m_unprinted += from;
        if (m_unprinted > 0) {
            std::fprintf(stderr, "  (%zu step(s) not shown)\n", m_unprinted);
            m_unprinted = 0;
        }
        for (size_t i = from; i < steps.size(); ++i) {
            printWatchedStep(label, steps[i]);
        }
        m_last = now;
    }

private:
    static constexpr int kLinesPerSecond = 20;
    static constexpr size_t kBurst = 5;
    bool m_quiet;
    std::chrono::steady_clock::time_point m_last{};
    size_t m_unprinted = 0;
};

// The rank's result set when the script closed its run; else the run its journal holds.
std::optional<RunResult> finalRun(const fs::path& dir, const std::string& journalName,
                                  WatchJournal& journal, const std::string& ended,
                                  std::optional<Environment>& environment) {
    const fs::path result = dir / journalName.substr(0, journalName.size() - kWatchJournalSuffix.size());
    std::error_code ec;
    if (fs::exists(result, ec)) {
        ResultSet set = loadResultSet(result);
        if (!environment) {
            environment = set.environment;
        }
        if (!set.runs.empty()) {
            return std::move(set.runs.front());
        }
    }
    journal.poll();
    if (!journal.started()) {
        return std::nullopt;
    }
    if (!environment) {
        environment = journal.environment();
    }
    return journal.run("the watched script " + ended + " before its run was closed");
}

std::string describeExit(int status) {
    if (WIFSIGNALED(status)) {
        return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
               strsignal(WTERMSIG(status)) + ")";
    }
    return "exited with status " + std::to_string(WEXITSTATUS(status));
}

// watch --connect: a viewer of a script that serves its run (listen=), through the same
// client as the window's File > Connect. Ends once every run it saw has finished.
int viewCommand(const WatchOptions& o) {
    const auto engine = openEngine(o.connect, o.launch.tokenFile, o.quiet);
    if (!engine) {
        return kExitUsage;
    }
    StepPrinter print(o.quiet);
    std::map<int, std::string> ids;
    std::map<int, RunResult> finished;
    while (!interrupted() && (ids.empty() || finished.size() < ids.size())) {
        engine->waitForEvents(std::chrono::milliseconds(200));
        for (auto& event : engine->drain()) {
            if (auto* started = std::get_if<RunStarted>(&event)) {
                ids[started->runIndex] = started->header.id;
            } else if (auto* step = std::get_if<StepFinished>(&event)) {
                print(ids.contains(step->runIndex) ? ids[step->runIndex] : "run", {step->step});
            } else if (auto* done = std::get_if<RunFinished>(&event)) {
                ids.emplace(done->runIndex, done->result.id);
                finished[done->runIndex] = std::move(done->result);
            }
        }
    }
    std::vector<RunResult> runs;
    for (auto& [index, run] : finished) {
        runs.push_back(std::move(run));
    }
    if (runs.empty()) {
        std::cerr << "lmprof-cli: watch: interrupted before any run finished\n";
        return kExitFailure;
    }
    CommonOptions common;
    common.jsonPath = o.jsonPath;
    common.format = o.format;
    const Environment environment = engine->environment("");
    reportRuns(runs, common, &environment);
    return kExitOk;
}

int watchCommand(const WatchOptions& o) {
    if (!checkFormat(o.format) || !checkJsonTarget(o.jsonPath)) {
        return kExitUsage;
    }
    if (o.launch.command.empty() == o.connect.empty()) {
        std::cerr << "lmprof-cli: watch: give a script's command after -- (to run it), or "
                     "--connect HOST:PORT (to show one that serves its run), not both\n";
        return kExitUsage;
    }
    if (!o.connect.empty()) {
        return viewCommand(o);
    }
    WatchLaunch launch = o.launch;
    // The trace and the pickle go beside the result set, as the engine writes them
    // (docs/OP_PROFILE.md), not into the script's private folder, which is removed.
    const fs::path json(o.jsonPath);
    const auto beside = [&](const char* suffix) {
        return (json.parent_path() / (json.stem().string() + ".{run}" + suffix)).string();
    };
    if (launch.profileOps >= 0 && launch.opsTrace.empty() && !o.jsonPath.empty()) {
        launch.opsTrace = beside(".trace.json");
    }
    if (launch.memorySnapshot >= 0 && launch.snapshotPath.empty()) {
        if (o.jsonPath.empty()) {
            std::cerr << "lmprof-cli: watch: --memory-snapshot: give --json (the pickle goes "
                         "beside it) or --snapshot-path\n";
            return kExitUsage;
        }
        launch.snapshotPath = beside(".snapshot.pickle");
    }
    std::unique_ptr<WatchedScript> script;
    try {
        script = std::make_unique<WatchedScript>(launch);
    } catch (const std::exception& e) {
        std::cerr << "lmprof-cli: watch: " << e.what() << "\n";
        return kExitUsage;
    }
    const fs::path dir = script->dir();

    std::map<std::string, WatchJournal> journals;
    StepPrinter print(o.quiet);
    auto pollAll = [&] {
        findJournals(dir, journals);
        for (auto& [name, journal] : journals) {
            try {
                const auto steps = journal.poll();
                print(journal.started() ? journal.runId() : name, steps);
            } catch (const ResultFormatError& e) {
                std::cerr << "lmprof-cli: watch: " << e.what() << "\n";
            }
        }
    };
    bool forwarded = false;
    while (!script->poll()) {
        if (interrupted() && !forwarded) {
            forwarded = true;
            kill(-script->pid(), SIGINT);
            std::fprintf(stderr, "lmprof-cli: watch: passed the interrupt on to the script; "
                                 "waiting for it to close its run\n");
        }
        pollAll();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    pollAll();
    const int status = *script->poll();
    const std::string ended = describeExit(status);
    std::vector<RunResult> runs;
    std::optional<Environment> environment;
    for (auto& [name, journal] : journals) {
        try {
            const size_t seen = journal.stepCount();
            if (auto run = finalRun(dir, name, journal, ended, environment)) {
                // The steps recorded as the script closed its run, after the last poll.
                if (run->steps.size() > seen) {
                    print(run->id, std::vector<StepRecord>(run->steps.begin() + static_cast<std::ptrdiff_t>(seen),
                                                           run->steps.end()),
                          true);
                }
                runs.push_back(std::move(*run));
            }
        } catch (const std::exception& e) {
            std::cerr << "lmprof-cli: watch: " << e.what() << "\n";
        }
    }
    const int scriptCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (runs.empty()) {
        std::cerr << "lmprof-cli: watch: the script " << ended
                  << " and lmprof saw no training step (no optimizer step after a forward of a "
                     "module with parameters; docs/WATCH.md)\n";
        return scriptCode != 0 ? scriptCode : kExitFailure;
    }
    std::fprintf(stderr, "lmprof-cli: watch: the script %s; %zu run(s)\n", ended.c_str(),
                 runs.size());
    CommonOptions common;
    common.jsonPath = o.jsonPath;
    common.format = o.format;
    reportRuns(runs, common, &*environment);
    return scriptCode;
}

} // namespace

CliCommand watchEntry() {
    return {"watch",
            "run a PyTorch training script unchanged and profile its steps (-- python train.py)",
            true, [](CLI::App& cmd) {
                auto o = std::make_shared<WatchOptions>();
                cmd.add_option("command", o->launch.command,
                               "the script's command line, after --: python train.py ARGS");
                cmd.add_option("--json", o->jsonPath, "write the run(s) as a result set here");
                cmd.add_option("--format", o->format, "table|markdown|csv");
                cmd.add_option("--name", o->launch.name, "the run's id (default: the model's class)");
                cmd.add_option("--tokens-per-step", o->launch.tokensPerStep,
                               "tokens one step trains on, for tokens/s")
                    ->check(CLI::PositiveNumber);
                cmd.add_option("--warmup", o->launch.warmup, "steps flagged warmup (default 5)")
                    ->check(CLI::NonNegativeNumber);
                cmd.add_flag("--quiet", o->quiet, "no line per step");
                cmd.add_option("--listen", o->launch.listen,
                               "the script serves its steps live on HOST:PORT (loopback)");
                cmd.add_option("--connect", o->connect,
                               "show the run of a script that serves on HOST:PORT instead");
                cmd.add_option("--token-file", o->launch.tokenFile,
                               "the token (default: <config dir>/server/token)");
                cmd.add_option("--profile-ops", o->launch.profileOps,
                               "profile step N's ops by module (lmprof-cli ops reads them)")
                    ->check(CLI::NonNegativeNumber);
                cmd.add_option("--ops-depth", o->launch.opsDepth,
                               "module names per region: 3 makes blocks.3.attn (default 3)")
                    ->check(CLI::PositiveNumber);
                cmd.add_flag("--ops-fold", o->launch.opsFold,
                             "fold repeated layers into one region: blocks.*.attn");
                cmd.add_option("--time-modules", o->launch.moduleDepth,
                               "time each module of the model cut at depth N (blocks.3 at 2)")
                    ->check(CLI::PositiveNumber);
                cmd.add_option("--memory-hz", o->launch.memoryHz,
                               "sample the script's memory N times a second (0: off)")
                    ->check(CLI::Range(0.0, 1000.0));
                cmd.add_option("--memory-snapshot", o->launch.memorySnapshot,
                               "record step N's CUDA allocator history (memory_viz pickle)")
                    ->check(CLI::NonNegativeNumber);
                cmd.add_option("--snapshot-path", o->launch.snapshotPath,
                               "the pickle ({run}: the run's id; default: beside --json)");
                cmd.add_option("--profile-trace", o->launch.opsTrace,
                               "the profiled step's Chrome trace ({run}: the run's id; "
                               "default: beside --json)");
                return std::function<int()>([o] { return watchCommand(*o); });
            }};
}

} // namespace lmprof::app
