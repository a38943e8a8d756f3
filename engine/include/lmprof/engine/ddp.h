// Data-parallel runs (docs/DISTRIBUTED.md): what a DDP run is asked to do, what each rank
// measures per step, and where a rank learns who it is (torchrun's environment). Plain data,
// no LibTorch types; the run itself is in data_parallel.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lmprof::engine {

// c10d's process groups: Gloo (CPU tensors, TCP) and NCCL (CUDA tensors).
enum class DdpBackend { Gloo, Nccl };
// The CS336 progression: every gradient all-reduced on its own after backward; one
// all-reduce of all gradients flattened; buckets all-reduced asynchronously as backward
// produces them, overlapping communication with the rest of backward.
enum class DdpStrategy { Naive, Flat, Bucketed };
inline constexpr std::array kDdpBackends{DdpBackend::Gloo, DdpBackend::Nccl};
inline constexpr std::array kDdpStrategies{DdpStrategy::Naive, DdpStrategy::Flat,
                                           DdpStrategy::Bucketed};
std::string_view toString(DdpBackend b);
std::string_view toString(DdpStrategy s);
std::optional<DdpBackend> parseDdpBackend(std::string_view s);
std::optional<DdpStrategy> parseDdpStrategy(std::string_view s);

inline constexpr int kMaxWorldSize = 1024;

// RunConfig::ddp: run the configuration data-parallel. Every rank trains on batch_size
// sequences of its own (the global batch is world_size × batch_size).
struct DdpRequest {
    int worldSize = 2;
    DdpBackend backend = DdpBackend::Gloo;
    DdpStrategy strategy = DdpStrategy::Naive;
    double bucketMb = 25.0; // bucketed: the size a bucket fills up to, in MiB
    // How long a rank waits for a peer (rendezvous, a collective, the final gather) before
    // the run ends with an error.
    double timeoutS = 60.0;
};

// "2 × gloo, bucketed 25 MiB": the request in a few words (the window's tables and lanes).
std::string describe(const DdpRequest& request);

// One rank's step. The exposed communication is the part the step waited for (after
// backward); communication hidden behind backward is commMs − exposedCommMs.
struct DdpStepRecord {
    int index = 0;
    bool warmup = false;
    double stepMs = 0.0;        // the whole step, as StepRecord::totalMs
    double commMs = 0.0;        // all-reduce time: launch to completion, overlaps merged
    double exposedCommMs = 0.0; // the step's wait for communication after backward
    int64_t bytes = 0;          // gradient bytes this rank all-reduced
};

// Derived figures of a step, the one place they are computed (reports, window, JSON).
double computeMs(const DdpStepRecord& s);     // stepMs − exposedCommMs
double overheadShare(const DdpStepRecord& s); // exposedCommMs / stepMs, 0..1
std::optional<double> algorithmBandwidthGBps(const DdpStepRecord& s); // bytes / commMs
// algorithm × 2(n−1)/n: what each link carried, comparable across world sizes.
std::optional<double> busBandwidthGBps(const DdpStepRecord& s, int worldSize);

struct DdpRank {
    int rank = 0;
    std::string host;
    std::string device; // "cpu", "cuda:1"
    std::vector<DdpStepRecord> steps;
    std::optional<std::string> error; // why this rank's run failed, or why it never reported
    std::optional<std::string> parameterHash; // 64-bit FNV-1a of every parameter's bytes, hex
};

// RunResult::ddp: every rank's steps, gathered by rank 0.
struct DdpReport {
    std::vector<DdpRank> ranks; // by rank
    int64_t gradientBytes = 0;  // one step's gradients, all parameters
    int buckets = 0;            // all-reduces per step: parameters (naive), 1 (flat), buckets
    // Every rank reported a hash and they are equal; nullopt when a rank did not report.
    std::optional<bool> parametersIdentical;
};

// Who this process is in a data-parallel run, as torchrun and Slurm launchers say it.
struct RankEndpoint {
    int rank = 0;
    int worldSize = 1;
    int localRank = 0;
    int localWorldSize = 1; // ranks on this machine (LOCAL_WORLD_SIZE, else the world size)
    std::string masterAddr = "127.0.0.1";
    int masterPort = 29500;
};

// Reads RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT. std::monostate
// when RANK is not set (not launched as a rank); a message naming the variable when one is missing
// or malformed. `getenv` is injectable for tests.
using EnvLookup = const char* (*)(const char*);
std::variant<std::monostate, RankEndpoint, std::string> rankFromEnvironment(EnvLookup getenv);

// The means over every rank's measured (non-warmup) steps: what the reports' and the
// window's per-strategy rows show. nullopt when no rank measured a step.
struct DdpSummary {
    int steps = 0; // measured rank-steps averaged over
    double stepMs = 0.0;
    double computeMs = 0.0;
    double commMs = 0.0;
    double exposedCommMs = 0.0;
    double overhead = 0.0; // mean exposed / mean step
    std::optional<double> algbwGBps;
    std::optional<double> busbwGBps;
    // Each rank's own overhead (its mean exposed / its mean step), in rank order, for the
    // spread around `overhead`; nullopt for a rank without measured steps.
    std::vector<std::optional<double>> rankOverhead;
};
std::optional<DdpSummary> summarizeDdp(const DdpReport& report, int worldSize);

// The rank that reported the first problem, as "rank 1: <error>", or empty.
std::string firstRankError(const DdpReport& report);

} // namespace lmprof::engine
