// lmprof-cli ddp: data-parallel runs (docs/DISTRIBUTED.md).
//   As a launcher (no RANK in the environment) it runs each --strategy in turn: it picks a
//   free port, spawns --world-size ranks of this same binary with torchrun's variables set,
//   watches them (a rank that dies ends the others within the timeout), and reads back
//   rank 0's result. Then it prints and saves all the strategies' runs like `run` does.
//   As a rank (RANK set: by this launcher, torchrun or Slurm) it runs runDataParallel;
//   rank 0 prints and saves the result, or hands it to the launcher.
//
// Sections: options to configs · one rank · the launcher.

#include "cli_commands.h"
#include "lmprof/engine/data_parallel.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/result_io.h"

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace lmprof::app {

using namespace lmprof::engine;

namespace {

// Set by the launcher for the ranks it spawns: the strategy of this launch, and where rank
// 0 leaves its result for the launcher.
constexpr const char* kStrategyVar = "LMPROF_DDP_STRATEGY";
constexpr const char* kResultVar = "LMPROF_DDP_RESULT";
// Test-only: "RANK:STEP" makes that rank kill itself (SIGKILL) once it has finished that
// many steps, the way a crashed or OOM-killed rank disappears.
constexpr const char* kFaultVar = "LMPROF_FAULT_DDP_KILL";

std::optional<DdpStrategy> strategyNamed(const std::string& name) {
    auto s = parseDdpStrategy(name);
    if (!s) {
        std::cerr << "lmprof-cli: --strategy: '" << name << "' is not one of "
                  << joinNames(kDdpStrategies) << "\n";
    }
    return s;
}

// The run configuration with its ddp request; nullopt after printing what is wrong.
std::optional<RunConfig> buildDdpConfig(const DdpOptions& o, DdpStrategy strategy) {
    auto backend = parseDdpBackend(o.backend);
    if (!backend) {
        std::cerr << "lmprof-cli: --backend: '" << o.backend << "' is not one of "
                  << joinNames(kDdpBackends) << "\n";
        return std::nullopt;
    }
    RunOptions run = o.run;
    if (*backend == DdpBackend::Nccl && run.common.device == "auto") {
        run.common.device = "cuda";
    }
    const DdpRequest request{o.worldSize, *backend, strategy, o.bucketMb, o.timeoutS};
    // buildRunConfig checks the rest (and checkRunnable) with the request in place.
    return buildRunConfig(run, request);
}

// ---------------------------------------------------------------------------------------
// One rank

class RankObserver final : public RunObserver {
public:
    RankObserver(const RunConfig& config, int rank, bool quiet)
        : m_config(config), m_rank(rank), m_quiet(quiet) {
        if (const char* fault = std::getenv(kFaultVar)) {
            std::sscanf(fault, "%d:%d", &m_faultRank, &m_faultStep);
        }
    }
    void onStepFinished(const StepRecord& step) override {
        if (m_rank == m_faultRank && step.index + 1 == m_faultStep) {
            std::fprintf(stderr, "lmprof-cli rank %d: %s: killing this rank after step %d\n",
                         m_rank, kFaultVar, m_faultStep);
            std::raise(SIGKILL);
        }
        if (m_rank == 0 && !m_quiet) {
            printStepLine("[" + runLabel(m_config) + "]", step, m_config);
        }
    }

private:
    const RunConfig& m_config;
    int m_rank;
    bool m_quiet;
    int m_faultRank = -1;
    int m_faultStep = -1;
};

RunResult runRank(const RunConfig& config, const RankEndpoint& endpoint, bool quiet) {
    RankObserver observer(config, endpoint.rank, quiet);
    RunResult result =
        runDataParallel(config, endpoint, runLabel(config) + "-1", &observer, interruptFlag());
    if (result.error && endpoint.rank != 0) {
        std::fprintf(stderr, "lmprof-cli rank %d: %s\n", endpoint.rank, result.error->c_str());
    }
    return result;
}

int rankMain(const DdpOptions& o, const RankEndpoint& endpoint) {
    std::vector<std::string> strategies = o.strategies;
    if (const char* one = std::getenv(kStrategyVar)) {
        strategies = {one};
    }
    const char* resultPath = std::getenv(kResultVar);
    std::vector<RunResult> runs;
    for (size_t k = 0; k < strategies.size(); ++k) {
        auto strategy = strategyNamed(strategies[k]);
        if (!strategy) {
            return kExitUsage;
        }
        auto config = buildDdpConfig(o, *strategy);
        if (!config) {
            return kExitUsage;
        }
        // Under torchrun a list runs one strategy after another, each on its own port.
        RankEndpoint e = endpoint;
        e.masterPort += static_cast<int>(k);
        runs.push_back(runRank(*config, e, o.run.common.quiet || endpoint.rank != 0));
        if (interrupted()) {
            break;
        }
    }
    if (endpoint.rank != 0) {
        bool ok = std::all_of(runs.begin(), runs.end(),
                              [](const RunResult& r) { return r.status == RunStatus::Ok; });
        return ok ? kExitOk : kExitFailure;
    }
    if (resultPath) {
        saveResultSetAtomic(makeSet(runs, runs.front().config.device), resultPath);
        return kExitOk; // the launcher reports
    }
    const int code = reportRuns(runs, o.run.common);
    std::cout << "\n";
    writeDdpReport(std::cout, runs, *parseReportFormat(o.run.common.format));
    return code;
}

// ---------------------------------------------------------------------------------------
// The launcher

int cudaDeviceCount() {
    const auto devices = availableDevices();
    return static_cast<int>(std::count_if(devices.begin(), devices.end(),
                                          [](const auto& d) { return d.rfind("cuda", 0) == 0; }));
}

// A port nothing listens on now (the kernel's choice); a rank that finds it taken by the
// time it binds reports the port in use.
int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
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
};

std::string exitText(int status) {
    if (WIFSIGNALED(status)) {
        return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
               strsignal(WTERMSIG(status)) + ")";
    }
    return "exited with code " + std::to_string(WEXITSTATUS(status));
}

bool failed(int status) {
    return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

// Spawns the ranks of one strategy and waits for them. A rank that fails gives the others
// the timeout to notice and end on their own; then they are killed.
std::vector<Rank> launchRanks(const DdpOptions& o, const std::string& strategy, int port,
                              const std::string& resultPath) {
    std::vector<std::string> envText;
    for (char** e = environ; *e; ++e) {
        envText.emplace_back(*e);
    }
    std::vector<Rank> ranks(static_cast<size_t>(o.worldSize));
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Their own process group: Ctrl+C reaches the launcher once, which passes it on once.
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    std::vector<char*> argv;
    for (const auto& a : o.argv) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    for (int r = 0; r < o.worldSize; ++r) {
        std::vector<std::string> env = envText;
        for (auto [name, value] : {std::pair<std::string, std::string>{"RANK", std::to_string(r)},
                                   {"LOCAL_RANK", std::to_string(r)},
                                   {"WORLD_SIZE", std::to_string(o.worldSize)},
                                   {"LOCAL_WORLD_SIZE", std::to_string(o.worldSize)},
                                   {"MASTER_ADDR", "127.0.0.1"},
                                   {"MASTER_PORT", std::to_string(port)},
                                   {kStrategyVar, strategy},
                                   {kResultVar, resultPath}}) {
            env.push_back(name + "=" + value);
        }
        std::vector<char*> envp;
        for (auto& e : env) {
            envp.push_back(e.data());
        }
        envp.push_back(nullptr);
        Rank& rank = ranks[static_cast<size_t>(r)];
        if (posix_spawn(&rank.pid, "/proc/self/exe", nullptr, &attr, argv.data(), envp.data()) ==
            0) {
            rank.running = true;
        } else {
            std::fprintf(stderr, "lmprof-cli: could not start rank %d: %s\n", r,
                         std::strerror(errno));
            rank.status = 127 << 8;
        }
    }
    posix_spawnattr_destroy(&attr);

    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> deadline;
    bool forwarded = false;
    const auto grace = std::chrono::milliseconds(static_cast<int64_t>(o.timeoutS * 1000) + 5000);
    auto alive = [&] {
        return std::any_of(ranks.begin(), ranks.end(), [](const Rank& r) { return r.running; });
    };
    while (alive()) {
        for (size_t r = 0; r < ranks.size(); ++r) {
            Rank& rank = ranks[r];
            if (!rank.running || waitpid(rank.pid, &rank.status, WNOHANG) != rank.pid) {
                continue;
            }
            rank.running = false;
            if (failed(rank.status)) {
                std::fprintf(stderr, "lmprof-cli: rank %zu %s\n", r, exitText(rank.status).c_str());
                if (!deadline) {
                    deadline = Clock::now() + grace;
                }
            }
        }
        if (interrupted() && !forwarded) {
            forwarded = true;
            for (const auto& rank : ranks) {
                if (rank.running) {
                    kill(rank.pid, SIGINT);
                }
            }
        }
        if (deadline && Clock::now() > *deadline) {
            for (const auto& rank : ranks) {
                if (rank.running) {
                    kill(rank.pid, SIGKILL);
                }
            }
            deadline = Clock::now() + std::chrono::hours(1); // once
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return ranks;
}

int launcherMain(const DdpOptions& o) {
    if (!checkFormat(o.run.common.format) || !checkJsonTarget(o.run.common.jsonPath)) {
        return kExitUsage;
    }
    std::vector<std::pair<DdpStrategy, RunConfig>> plans;
    for (const auto& name : o.strategies) {
        auto strategy = strategyNamed(name);
        if (!strategy) {
            return kExitUsage;
        }
        auto config = buildDdpConfig(o, *strategy);
        if (!config) {
            return kExitUsage;
        }
        if (resolveDevice(config->device).cuda && o.worldSize > cudaDeviceCount()) {
            std::cerr << "lmprof-cli: --world-size " << o.worldSize << ": one GPU per rank, but "
                      << cudaDeviceCount() << " CUDA device(s) are available\n";
            return kExitUsage;
        }
        plans.emplace_back(*strategy, *config);
    }
    const auto dir =
        std::filesystem::temp_directory_path() / ("lmprof-ddp-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::vector<RunResult> runs;
    for (const auto& [strategy, config] : plans) {
        const int port = o.masterPort > 0 ? o.masterPort : freePort();
        const auto resultPath = dir / (std::string(toString(strategy)) + ".json");
        if (!o.run.common.quiet) {
            std::fprintf(stderr, "[%s] %d ranks, %s, rendezvous at 127.0.0.1:%d\n",
                         runLabel(config).c_str(), o.worldSize,
                         std::string(toString(config.ddp->backend)).c_str(), port);
        }
        const auto ranks = launchRanks(o, std::string(toString(strategy)), port, resultPath);
        RunResult run;
        try {
            ResultSet set = loadResultSet(resultPath);
            run = std::move(set.runs.at(0));
        } catch (const std::exception&) {
            run = unstartedRun(runLabel(config), config, RunStatus::Error,
                               "rank 0 " + exitText(ranks.front().status) +
                                   " before it wrote a result");
        }
        for (size_t r = 1; r < ranks.size() && run.status == RunStatus::Ok; ++r) {
            if (failed(ranks[r].status)) {
                run.status = RunStatus::Error;
                run.error = "rank " + std::to_string(r) + " " + exitText(ranks[r].status);
            }
        }
        run.id = runLabel(config) + "-" + std::to_string(runs.size() + 1);
        runs.push_back(std::move(run));
        if (interrupted()) {
            break;
        }
    }
    std::filesystem::remove_all(dir);
    const int code = reportRuns(runs, o.run.common);
    const auto format = *parseReportFormat(o.run.common.format);
    if (format != ReportFormat::Csv) {
        std::cout << "\n";
    }
    writeDdpReport(std::cout, runs, format);
    for (const auto& r : runs) {
        if (r.error) {
            std::fprintf(stderr, "lmprof-cli: %s: %s\n", r.id.c_str(), r.error->c_str());
        }
    }
    return code;
}

} // namespace

int ddpCommand(const DdpOptions& o) {
    const auto env =
        rankFromEnvironment([](const char* name) -> const char* { return std::getenv(name); });
    if (const auto* error = std::get_if<std::string>(&env)) {
        std::cerr << "lmprof-cli ddp: " << *error << "\n";
        return kExitUsage;
    }
    if (const auto* endpoint = std::get_if<RankEndpoint>(&env)) {
        // A rank's world size is its launcher's WORLD_SIZE (this launcher sets it to
        // --world-size; torchrun to its own count).
        DdpOptions asRank = o;
        asRank.worldSize = endpoint->worldSize;
        return rankMain(asRank, *endpoint);
    }
    return launcherMain(o);
}

} // namespace lmprof::app
