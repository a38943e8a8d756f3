// launchDataParallel: local ranks as processes, their progress and their ends.

#include "lmprof/engine/ddp_launch.h"

#include "lmprof/engine/result_io.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace lmprof::engine {

namespace {

// A port nothing listens on now (the kernel's choice); a rank that finds it taken by the
// time it binds reports the port in use.
int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return 29500;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    int port = 29500;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
        port = ntohs(addr.sin_port);
    }
    ::close(fd);
    return port;
}

struct Rank {
    pid_t pid = -1;
    int status = 0;
    bool running = false;
    std::string startError; // posix_spawn's reason, when it could not start
};

std::string exitText(const Rank& rank) {
    if (!rank.startError.empty()) {
        return "could not start (" + rank.startError + ")";
    }
    if (WIFSIGNALED(rank.status)) {
        return "was killed by signal " + std::to_string(WTERMSIG(rank.status)) + " (" +
               strsignal(WTERMSIG(rank.status)) + ")";
    }
    return "exited with code " + std::to_string(WEXITSTATUS(rank.status));
}

bool failed(const Rank& rank) {
    return !rank.startError.empty() || !WIFEXITED(rank.status) || WEXITSTATUS(rank.status) != 0;
}

// A folder of its own for one launch: the header, rank 0's progress and result.
std::filesystem::path launchFolder() {
    static std::atomic<int> launches{0};
    auto dir = std::filesystem::temp_directory_path() /
               ("lmprof-ddp-" + std::to_string(::getpid()) + "-" + std::to_string(launches++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

// Rank 0's finished steps, read from its progress file as complete lines arrive.
class ProgressReader {
public:
    explicit ProgressReader(std::filesystem::path path) : m_path(std::move(path)) {}

    // The steps completed since the last call. A line that does not parse is skipped: the
    // run's result, read at the end, is what counts.
    std::vector<StepRecord> poll() {
        std::vector<StepRecord> steps;
        std::ifstream in(m_path, std::ios::binary);
        if (!in) {
            return steps;
        }
        in.seekg(static_cast<std::streamoff>(m_offset));
        std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        size_t start = 0;
        for (size_t end; (end = chunk.find('\n', start)) != std::string::npos; start = end + 1) {
            try {
                steps.push_back(parseStep(std::string_view(chunk).substr(start, end - start)));
            } catch (const ResultFormatError&) {
            }
        }
        m_offset += start;
        return steps;
    }

private:
    std::filesystem::path m_path;
    size_t m_offset = 0;
};

std::vector<std::string> environmentFor(int rank, int worldSize, int port,
                                        const std::filesystem::path& dir) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        env.emplace_back(*e);
    }
    for (auto [name, value] : {std::pair<std::string, std::string>{"RANK", std::to_string(rank)},
                               {"LOCAL_RANK", std::to_string(rank)},
                               {"WORLD_SIZE", std::to_string(worldSize)},
                               {"LOCAL_WORLD_SIZE", std::to_string(worldSize)},
                               {"MASTER_ADDR", "127.0.0.1"},
                               {"MASTER_PORT", std::to_string(port)},
                               {kDdpRunVar, (dir / "run.json").string()},
                               {kDdpResultVar, (dir / "result.json").string()},
                               {kDdpProgressVar, (dir / "progress.jsonl").string()}}) {
        env.push_back(name + "=" + value);
    }
    return env;
}

void spawnRanks(std::vector<Rank>& ranks, const RankProgram& program, int port,
                const std::filesystem::path& dir) {
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Their own process group: a terminal's Ctrl+C reaches the launcher alone, which
    // passes it on once.
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    std::vector<std::string> args{program.executable.string()};
    args.insert(args.end(), program.args.begin(), program.args.end());
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    const int worldSize = static_cast<int>(ranks.size());
    for (int r = 0; r < worldSize; ++r) {
        std::vector<std::string> env = environmentFor(r, worldSize, port, dir);
        std::vector<char*> envp;
        for (auto& e : env) {
            envp.push_back(e.data());
        }
        envp.push_back(nullptr);
        Rank& rank = ranks[static_cast<size_t>(r)];
        const int code = posix_spawn(&rank.pid, argv[0], nullptr, &attr, argv.data(), envp.data());
        if (code == 0) {
            rank.running = true;
        } else {
            rank.startError = std::strerror(code);
        }
    }
    posix_spawnattr_destroy(&attr);
}

// Waits for every rank. A rank that fails gives the others the timeout (plus a grace) to
// notice and end on their own; then they are killed. A set cancel is passed on once.
void watchRanks(std::vector<Rank>& ranks, double timeoutS, ProgressReader& progress,
                const std::function<void(const StepRecord&)>& onStep,
                const std::atomic<bool>* cancel) {
    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> deadline;
    if (std::any_of(ranks.begin(), ranks.end(), [](const Rank& r) { return failed(r); })) {
        deadline = Clock::now(); // one could not start: the rest cannot rendezvous
    }
    bool forwarded = false;
    bool killed = false;
    const auto grace = std::chrono::milliseconds(static_cast<int64_t>(timeoutS * 1000) + 5000);
    auto alive = [&] {
        return std::any_of(ranks.begin(), ranks.end(), [](const Rank& r) { return r.running; });
    };
    while (alive()) {
        for (Rank& rank : ranks) {
            if (!rank.running || waitpid(rank.pid, &rank.status, WNOHANG) != rank.pid) {
                continue;
            }
            rank.running = false;
            if (failed(rank) && !deadline) {
                deadline = Clock::now() + grace;
            }
        }
        for (const auto& step : progress.poll()) {
            onStep(step);
        }
        if (cancel && cancel->load() && !forwarded) {
            forwarded = true;
            for (const auto& rank : ranks) {
                if (rank.running) {
                    kill(rank.pid, SIGINT);
                }
            }
        }
        if (deadline && Clock::now() > *deadline && !killed) {
            killed = true;
            for (const auto& rank : ranks) {
                if (rank.running) {
                    kill(rank.pid, SIGKILL);
                }
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (const auto& step : progress.poll()) {
        onStep(step);
    }
}

} // namespace

RankProgram rankProgramBesideThisOne() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return {self.parent_path() / "lmprof-cli", {"ddp"}};
}

RunResult launchDataParallel(const RunConfig& config, const std::string& runId,
                             const RankProgram& program, RunObserver* observer,
                             const std::atomic<bool>* cancel) {
    if (!config.ddp) {
        return unstartedRun(runId, config, RunStatus::Error, "not a data-parallel run");
    }
    if (auto errors = validate(config); !errors.empty()) {
        return unstartedRun(runId, config, RunStatus::Error,
                            "invalid configuration: " + describe(errors));
    }
    if (::access(program.executable.c_str(), X_OK) != 0) {
        return unstartedRun(runId, config, RunStatus::Error,
                            "the rank program " + program.executable.string() + " cannot be run (" +
                                std::strerror(errno) +
                                "): lmprof-cli must be installed beside lmprof");
    }
    RunResult header = unstartedRun(runId, config, RunStatus::Ok, "");
    header.error.reset();
    if (observer) {
        observer->onRunStarted(header);
    }
    std::filesystem::path dir;
    try {
        dir = launchFolder();
        writeFileAtomic(dir / "run.json", runToJsonLine(header));
    } catch (const std::exception& e) {
        return unstartedRun(runId, config, RunStatus::Error,
                            std::string("cannot prepare the ranks' files: ") + e.what());
    }
    const int port = program.masterPort > 0 ? program.masterPort : freePort();
    std::vector<Rank> ranks(static_cast<size_t>(config.ddp->worldSize));
    spawnRanks(ranks, program, port, dir);
    ProgressReader progress(dir / "progress.jsonl");
    std::vector<StepRecord> relayed;
    watchRanks(
        ranks, config.ddp->timeoutS, progress,
        [&](const StepRecord& step) {
            relayed.push_back(step);
            if (observer) {
                observer->onStepFinished(step);
            }
        },
        cancel);

    RunResult run;
    try {
        run = std::move(loadResultSet(dir / "result.json").runs.at(0));
    } catch (const std::exception&) {
        run = unstartedRun(runId, config, RunStatus::Error,
                           "rank 0 " + exitText(ranks.front()) + " before it wrote a result");
        run.steps = std::move(relayed); // what rank 0 said it finished
    }
    run.id = runId;
    // A rank that failed is named even when rank 0's own result says why the run ended.
    std::string why;
    for (size_t r = 0; r < ranks.size(); ++r) {
        if (failed(ranks[r]) && (r > 0 || run.status == RunStatus::Ok)) {
            why += (why.empty() ? "" : "; ") + ("rank " + std::to_string(r) + " ") +
                   exitText(ranks[r]);
        }
    }
    if (!why.empty()) {
        if (run.status == RunStatus::Ok) {
            run.status = RunStatus::Error;
        }
        run.error = run.error ? *run.error + "; " + why : why;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return run;
}

std::optional<LaunchedRank> launchedRankFromEnvironment(EnvLookup getenv) {
    const char* runPath = getenv(kDdpRunVar);
    if (!runPath) {
        return std::nullopt;
    }
    LaunchedRank launched;
    try {
        launched.header = parseRun(readInputFile(runPath));
    } catch (const ResultFormatError& e) {
        throw ResultFormatError(std::string(kDdpRunVar) + "=" + runPath + ": " + e.what());
    }
    const char* result = getenv(kDdpResultVar);
    const char* progress = getenv(kDdpProgressVar);
    launched.resultPath = result ? result : "";
    launched.progressPath = progress ? progress : "";
    return launched;
}

void reportLaunchedStep(const LaunchedRank& launched, const StepRecord& step) {
    if (launched.progressPath.empty()) {
        return;
    }
    // No fsync: the launcher reads it on this machine, and a slow rank 0 would keep the
    // others waiting in the next step's all-reduce.
    std::ofstream out(launched.progressPath, std::ios::app | std::ios::binary);
    out << stepToJsonLine(step) << '\n';
}

} // namespace lmprof::engine
