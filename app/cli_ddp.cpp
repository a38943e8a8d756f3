// lmprof-cli ddp: data-parallel runs (docs/DISTRIBUTED.md).
//   As a launcher (no RANK in the environment) it submits each --strategy in turn to the
//   engine, like `run`: a Session here, whose launcher (ddp_launch.h) spawns --world-size
//   ranks of this same binary, relays rank 0's steps and watches the ranks, or with
//   --connect a server's engine, which does the same there. Then it prints and saves all the
//   strategies' runs like `run` does.
//   As a rank (RANK set: by a launcher, torchrun or Slurm) it runs runDataParallel. A rank
//   of the engine's launcher takes its run from the launcher's header file; a rank of
//   torchrun from its own options. Rank 0 prints and saves the result, or hands it over.
//
// Sections: options to configs · one rank · the launcher.

#include "cli_commands.h"
#include "cli_options.h"
#include "cli_registry.h"
#include "lmprof/engine/ddp_launch.h"
#include "lmprof/engine/local_engine.h"
#include "lmprof/engine/result_io.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

namespace lmprof::app {

using namespace lmprof::engine;

namespace {

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
// Checked against `engine` (this machine's LibTorch without one).
std::optional<RunConfig> buildDdpConfig(const DdpOptions& o, DdpStrategy strategy,
                                        const SessionInterface* engine = nullptr) {
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
    return buildRunConfig(run, request, engine);
}

// ---------------------------------------------------------------------------------------
// One rank

// Rank 0's progress: printed (a torchrun rank), or handed to the engine's launcher. Every
// rank honours the test fault.
class RankObserver final : public RunObserver {
public:
    RankObserver(const RunConfig& config, int rank, bool quiet, const LaunchedRank* launched)
        : m_config(config), m_rank(rank), m_quiet(quiet), m_launched(launched) {
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
        if (m_rank != 0) {
            return;
        }
        if (m_launched) {
            reportLaunchedStep(*m_launched, step);
        } else if (!m_quiet) {
            printStepLine("[" + runLabel(m_config) + "]", step, m_config);
        }
    }

private:
    const RunConfig& m_config;
    int m_rank;
    bool m_quiet;
    const LaunchedRank* m_launched;
    int m_faultRank = -1;
    int m_faultStep = -1;
};

RunResult runRank(const RunConfig& config, const std::string& id, const RankEndpoint& endpoint,
                  bool quiet, const LaunchedRank* launched) {
    RankObserver observer(config, endpoint.rank, quiet, launched);
    std::string why;
    const EngineModule* engine = loadEngineModule(&why);
    RunResult result =
        engine ? engine->runDataParallel(config, endpoint, id, &observer, interruptFlag())
               : unstartedRun(id, config, RunStatus::Error, why);
    if (result.error && endpoint.rank != 0) {
        std::fprintf(stderr, "lmprof-cli rank %d: %s\n", endpoint.rank, result.error->c_str());
    }
    return result;
}

// A rank of the engine's launcher: the run is the launcher's; rank 0 leaves the result in
// the launcher's folder, and the launcher reports.
int launchedRankMain(const LaunchedRank& launched, const RankEndpoint& endpoint) {
    const RunResult result =
        runRank(launched.header.config, launched.header.id, endpoint, true, &launched);
    if (endpoint.rank == 0) {
        saveResultSetAtomic(makeSet({result}, result.config.device), launched.resultPath);
        return kExitOk;
    }
    // A cancel is agreed by every rank: not a failure the launcher should report.
    const bool ended = result.status == RunStatus::Ok || result.status == RunStatus::Cancelled;
    return ended ? kExitOk : kExitFailure;
}

// A rank of torchrun or Slurm: the run is built from this rank's options; under torchrun a
// strategy list runs one strategy after another, each on its own port.
int rankMain(const DdpOptions& o, const RankEndpoint& endpoint) {
    // Loaded before the configurations are built: its refusals (a device or precision this
    // machine cannot run) are then usage errors here, before any rank joins the group.
    if (std::string why; !loadEngineModule(&why)) {
        std::fprintf(stderr, "lmprof-cli rank %d: %s\n", endpoint.rank, why.c_str());
        return kExitFailure;
    }
    std::vector<RunResult> runs;
    for (size_t k = 0; k < o.strategies.size(); ++k) {
        auto strategy = strategyNamed(o.strategies[k]);
        if (!strategy) {
            return kExitUsage;
        }
        auto config = buildDdpConfig(o, *strategy);
        if (!config) {
            return kExitUsage;
        }
        RankEndpoint e = endpoint;
        e.masterPort += static_cast<int>(k);
        runs.push_back(runRank(*config, runLabel(*config) + "-" + std::to_string(k + 1), e,
                               o.run.common.quiet, nullptr));
        if (interrupted()) {
            break;
        }
    }
    if (endpoint.rank != 0) {
        bool ok = std::all_of(runs.begin(), runs.end(),
                              [](const RunResult& r) { return r.status == RunStatus::Ok; });
        return ok ? kExitOk : kExitFailure;
    }
    const int code = reportRuns(runs, o.run.common);
    std::cout << "\n";
    writeDdpReport(std::cout, runs, *parseReportFormat(o.run.common.format));
    return code;
}

// ---------------------------------------------------------------------------------------
// The launcher: the engine's seam starts the ranks, a Session here (this very binary is the
// ranks' program) or, with --connect, an lmprof-cli serve's on its machine.

std::unique_ptr<SessionInterface> openDdpEngine(const DdpOptions& o) {
    if (o.run.common.connect.empty() && o.masterPort > 0) {
        RankProgram program = rankProgramBesideThisOne();
        program.masterPort = o.masterPort;
        return openLocalEngine(o.run.common.tokenFile, std::move(program));
    }
    return openEngine(o.run.common);
}

int launcherMain(const DdpOptions& o) {
    if (!checkFormat(o.run.common.format) || !checkJsonTarget(o.run.common.jsonPath)) {
        return kExitUsage;
    }
    if (!o.run.common.connect.empty() && o.masterPort > 0) {
        std::cerr << "lmprof-cli: --master-port: the server picks its ranks' port; not with "
                     "--connect\n";
        return kExitUsage;
    }
    const auto engine = openDdpEngine(o);
    if (!engine) {
        return kExitFailure;
    }
    std::vector<RunConfig> plans;
    for (const auto& name : o.strategies) {
        auto strategy = strategyNamed(name);
        if (!strategy) {
            return kExitUsage;
        }
        auto config = buildDdpConfig(o, *strategy, engine.get());
        if (!config) {
            return kExitUsage;
        }
        plans.push_back(*config);
    }
    const std::vector<RunResult> runs = runAll(*engine, plans, o.run.common.quiet, false, {});
    const Environment environment = engine->environment(o.run.common.device);
    const int code = reportRuns(runs, o.run.common, &environment);
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
    auto lookup = [](const char* name) -> const char* { return std::getenv(name); };
    const auto env = rankFromEnvironment(lookup);
    if (const auto* error = std::get_if<std::string>(&env)) {
        std::cerr << "lmprof-cli ddp: " << *error << "\n";
        return kExitUsage;
    }
    if (const auto* endpoint = std::get_if<RankEndpoint>(&env)) {
        std::optional<LaunchedRank> launched;
        try {
            launched = launchedRankFromEnvironment(lookup);
        } catch (const ResultFormatError& e) {
            std::cerr << "lmprof-cli ddp: " << e.what() << "\n";
            return kExitUsage;
        }
        if (launched) {
            return launchedRankMain(*launched, *endpoint);
        }
        // A rank's world size is its launcher's WORLD_SIZE (torchrun's own count).
        DdpOptions asRank = o;
        asRank.worldSize = endpoint->worldSize;
        return rankMain(asRank, *endpoint);
    }
    return launcherMain(o);
}

CliCommand ddpEntry() {
    return {"ddp", "data-parallel training over local ranks (or one rank under torchrun/Slurm)",
            true, [](CLI::App& cmd) {
                auto o = std::make_shared<DdpOptions>();
                addRunOptions(cmd, o->run);
                addConnectOptions(cmd, o->run.common);
                addNumberIn(cmd, "--world-size", o->worldSize, 1, kMaxWorldSize,
                            "ranks (processes); under torchrun, WORLD_SIZE");
                addChoice(cmd, "--backend", o->backend, {"gloo", "nccl"},
                          "c10d process group: gloo (CPU) or nccl (GPUs) [gloo]");
                addList(cmd, "--strategy", o->strategies,
                        "comma-separated, of " + joinNames(kDdpStrategies, ","));
                addNumberIn(cmd, "--bucket-mb", o->bucketMb, 0.001, 65536.0,
                            "bucketed: MiB of gradients per all-reduce");
                addNumberIn(cmd, "--timeout-s", o->timeoutS, 1.0, 86400.0,
                            "how long a rank waits for a peer before the run ends with an error");
                addNumberIn(cmd, "--master-port", o->masterPort, 0, 65535,
                            "the launcher's rendezvous port (0: a free one; not with --connect)");
                return std::function<int()>([o] { return ddpCommand(*o); });
            }};
}

} // namespace lmprof::app
