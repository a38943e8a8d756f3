// One rank of a data-parallel run: join, run with the gradient sync, gather at rank 0.

#include "lmprof/engine/data_parallel.h"

#include "data_parallel/gradient_sync.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/result_io.h"

#include <algorithm>
#include <thread>
#include <unistd.h>

namespace lmprof::engine {

namespace {

constexpr const char* kRankKey = "lmprof/ddp/rank/";

std::string hostName() {
    char name[256] = {};
    return gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string();
}

// The configuration this rank runs: its own CUDA device, and its share of the CPU cores
// when the user did not say how many threads.
RunConfig rankConfig(const RunConfig& config, const RankEndpoint& e) {
    RunConfig c = config;
    const DeviceTarget target = resolveDevice(config.device);
    if (target.cuda && (config.device == "auto" || config.device == "cuda")) {
        c.device = "cuda:" + std::to_string(e.localRank);
    }
    if (!target.cuda && c.threads == 0) {
        const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        c.threads = std::max(1, cores / std::max(1, e.localWorldSize));
    }
    return c;
}

// Rank 0 reads every other rank's record from the store: up to the full timeout after a
// run that went well (a peer may still be finishing its last step), a few seconds after
// one that failed (its peers failed at the same collective).
DdpReport gather(c10d::Store& store, const RunResult& mine, DdpRank own, const DdpRequest& ddp,
                 int totalSteps, int64_t gradientBytes, int allReduces) {
    DdpReport report;
    report.gradientBytes = gradientBytes;
    report.buckets = allReduces;
    report.ranks.resize(static_cast<size_t>(ddp.worldSize));
    report.ranks[0] = std::move(own);
    const auto wait = std::chrono::milliseconds(static_cast<int64_t>(
        (mine.status == RunStatus::Ok ? ddp.timeoutS : std::min(ddp.timeoutS, 5.0)) * 1000));
    for (int r = 1; r < ddp.worldSize; ++r) {
        DdpRank& rank = report.ranks[static_cast<size_t>(r)];
        rank.rank = r;
        const std::string key = kRankKey + std::to_string(r);
        try {
            store.wait({key}, wait);
            const std::vector<uint8_t> bytes = store.get(key);
            rank = ddpRankFromJson(
                std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                totalSteps);
            if (rank.rank != r) {
                rank = DdpRank{
                    r, {}, {}, {}, "sent the record of rank " + std::to_string(rank.rank), {}};
            }
        } catch (const ResultFormatError& e) {
            rank = DdpRank{
                r, {}, {}, {}, std::string("sent a record rank 0 cannot read: ") + e.what(), {}};
        } catch (const std::exception&) {
            rank.error =
                "sent no record within " +
                std::to_string(static_cast<int>(std::chrono::duration<double>(wait).count())) +
                " s (it died, or lost its connection to rank 0)";
        }
    }
    bool allHashed = true;
    bool equal = true;
    for (const auto& r : report.ranks) {
        allHashed = allHashed && r.parameterHash.has_value();
        equal = equal && r.parameterHash == report.ranks[0].parameterHash;
    }
    if (allHashed) {
        report.parametersIdentical = equal;
    }
    return report;
}

} // namespace

namespace {

// A rank other than 0 hands its record to rank 0 through the store; a run that cannot ends
// in error (rank 0 then reports the rank as missing).
void sendToRankZero(c10d::Store& store, const DdpRank& own, int worldSize, RunResult& result) {
    try {
        const std::string text = ddpRankToJson(own, worldSize);
        store.set(kRankKey + std::to_string(own.rank),
                  std::vector<uint8_t>(text.begin(), text.end()));
    } catch (const std::exception& e) {
        if (result.status == RunStatus::Ok) {
            result.status = RunStatus::Error;
            result.error = std::string("could not send this rank's steps to rank 0: ") + e.what();
        }
    }
}

} // namespace

RunResult runDataParallel(const RunConfig& config, const RankEndpoint& endpoint,
                          const std::string& runId, RunObserver* observer,
                          const std::atomic<bool>* cancel) {
    if (!config.ddp) {
        return unstartedRun(runId, config, RunStatus::Error,
                            "ddp: the configuration has no ddp request");
    }
    const DdpRequest& ddp = *config.ddp;
    if (ddp.worldSize != endpoint.worldSize) {
        return unstartedRun(runId, config, RunStatus::Error,
                            "ddp.world_size: the run asks for " + std::to_string(ddp.worldSize) +
                                " ranks but WORLD_SIZE is " + std::to_string(endpoint.worldSize));
    }
    const RunConfig mineConfig = rankConfig(config, endpoint);
    if (auto errors = validate(mineConfig); !errors.empty()) {
        return unstartedRun(runId, config, RunStatus::Error,
                            "invalid configuration: " + errors.front().message());
    }
    const DeviceTarget target = resolveDevice(mineConfig.device);
    const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(ddp.timeoutS * 1000));

    std::optional<ddp::Group> group;
    try {
        group = ddp::join(endpoint, ddp.backend, timeout, target.cuda ? target.index : 0);
    } catch (const std::exception& e) {
        RunResult r = unstartedRun(runId, config, RunStatus::Error, e.what());
        r.resolvedDevice = target.name();
        return r;
    }
    c10::intrusive_ptr<c10d::Store> store = group->store;
    ddp::GradientSync sync(std::move(*group), mineConfig, endpoint, cancel);
    RunResult result =
        bench::runBenchmarkWith(mineConfig, runId, observer, sync.runnerCancel(), &sync);
    result.config.device = config.device; // what was asked; resolvedDevice says what ran
    result.config.threads = mineConfig.threads;

    DdpRank own;
    own.rank = endpoint.rank;
    own.host = hostName();
    own.device = result.resolvedDevice;
    own.steps = sync.takeSteps();
    own.parameterHash = sync.parameterHash();
    if (result.status == RunStatus::Error || result.status == RunStatus::Oom) {
        own.error = result.error.value_or(std::string(toString(result.status)));
    }
    const int totalSteps = config.warmupSteps + config.measureSteps;
    if (endpoint.rank != 0) {
        sendToRankZero(*store, own, ddp.worldSize, result);
        result.ddp = DdpReport{
            {std::move(own)}, sync.gradientBytes(), sync.allReducesPerStep(), std::nullopt};
        return result;
    }
    result.ddp = gather(*store, result, std::move(own), ddp, totalSteps, sync.gradientBytes(),
                        sync.allReducesPerStep());
    if (result.status == RunStatus::Ok) {
        if (const std::string problem = firstRankError(*result.ddp); !problem.empty()) {
            result.status = RunStatus::Error;
            result.error = problem;
        } else if (result.ddp->parametersIdentical == false) {
            result.status = RunStatus::Error;
            result.error = "the ranks' parameters differ after the run (their hashes are not "
                           "equal): the gradient all-reduce did not keep them in step";
        }
    } else if (result.error) {
        // Say what the peers saw when a collective failed because another rank did.
        DdpReport peers = *result.ddp;
        peers.ranks.erase(peers.ranks.begin());
        if (const std::string peer = firstRankError(peers); !peer.empty()) {
            *result.error += " [" + peer + "]";
        }
    }
    return result;
}

} // namespace lmprof::engine
