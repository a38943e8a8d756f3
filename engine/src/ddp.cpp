// Data-parallel records: enum names, the derived figures of a step, and torchrun's
// environment (docs/DISTRIBUTED.md).

#include "lmprof/engine/ddp.h"

#include "enum_names.h"

#include <charconv>
#include <cstdio>

namespace lmprof::engine {

constexpr EnumNames<DdpBackend, 2> kBackendNames{{
    {DdpBackend::Gloo, "gloo"},
    {DdpBackend::Nccl, "nccl"},
}};
constexpr EnumNames<DdpStrategy, 3> kStrategyNames{{
    {DdpStrategy::Naive, "naive"},
    {DdpStrategy::Flat, "flat"},
    {DdpStrategy::Bucketed, "bucketed"},
}};

std::string_view toString(DdpBackend b) {
    return nameIn(kBackendNames, b);
}

std::string_view toString(DdpStrategy s) {
    return nameIn(kStrategyNames, s);
}

std::string describe(const DdpRequest& request) {
    std::string out = std::to_string(request.worldSize) + " × " +
                      std::string(toString(request.backend)) + ", " +
                      std::string(toString(request.strategy));
    if (request.strategy == DdpStrategy::Bucketed) {
        char mb[32];
        std::snprintf(mb, sizeof(mb), " %g MiB", request.bucketMb);
        out += mb;
    }
    return out;
}

std::optional<DdpBackend> parseDdpBackend(std::string_view s) {
    return parseByName(s, kDdpBackends);
}

std::optional<DdpStrategy> parseDdpStrategy(std::string_view s) {
    return parseByName(s, kDdpStrategies);
}

double computeMs(const DdpStepRecord& s) {
    return s.stepMs - s.exposedCommMs;
}

double overheadShare(const DdpStepRecord& s) {
    return s.stepMs > 0.0 ? s.exposedCommMs / s.stepMs : 0.0;
}

std::optional<double> algorithmBandwidthGBps(const DdpStepRecord& s) {
    if (!(s.commMs > 0.0) || s.bytes <= 0) {
        return std::nullopt;
    }
    return static_cast<double>(s.bytes) / (s.commMs * 1e-3) / 1e9;
}

std::optional<double> busBandwidthGBps(const DdpStepRecord& s, int worldSize) {
    const auto alg = algorithmBandwidthGBps(s);
    if (!alg || worldSize < 1) {
        return std::nullopt;
    }
    return *alg * 2.0 * (worldSize - 1) / worldSize;
}

namespace {

// A whole number in [lo, hi] from an environment variable, or the message saying why not.
std::variant<int, std::string> envNumber(const char* name, const char* text, int lo, int hi) {
    const std::string_view s(text);
    int value = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size()) {
        return std::string(name) + "='" + std::string(s) + "' is not a whole number";
    }
    if (value < lo || value > hi) {
        return std::string(name) + "=" + std::string(s) + " must be between " + std::to_string(lo) +
               " and " + std::to_string(hi);
    }
    return value;
}

} // namespace

std::variant<std::monostate, RankEndpoint, std::string> rankFromEnvironment(EnvLookup getenv) {
    const char* rank = getenv("RANK");
    if (!rank) {
        return std::monostate{};
    }
    RankEndpoint e;
    const char* world = getenv("WORLD_SIZE");
    if (!world) {
        return std::string("RANK is set but WORLD_SIZE is not (launch with torchrun, or set "
                           "RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)");
    }
    auto w = envNumber("WORLD_SIZE", world, 1, kMaxWorldSize);
    if (auto* msg = std::get_if<std::string>(&w)) {
        return *msg;
    }
    e.worldSize = std::get<int>(w);
    auto r = envNumber("RANK", rank, 0, e.worldSize - 1);
    if (auto* msg = std::get_if<std::string>(&r)) {
        return *msg + " (a rank of WORLD_SIZE " + std::to_string(e.worldSize) + ")";
    }
    e.rank = std::get<int>(r);
    e.localRank = e.rank;
    if (const char* local = getenv("LOCAL_RANK")) {
        auto l = envNumber("LOCAL_RANK", local, 0, kMaxWorldSize - 1);
        if (auto* msg = std::get_if<std::string>(&l)) {
            return *msg;
        }
        e.localRank = std::get<int>(l);
    }
    e.localWorldSize = e.worldSize;
    if (const char* local = getenv("LOCAL_WORLD_SIZE")) {
        auto l = envNumber("LOCAL_WORLD_SIZE", local, 1, kMaxWorldSize);
        if (auto* msg = std::get_if<std::string>(&l)) {
            return *msg;
        }
        e.localWorldSize = std::get<int>(l);
    }
    if (const char* addr = getenv("MASTER_ADDR")) {
        if (!*addr) {
            return std::string("MASTER_ADDR is empty (the host of rank 0)");
        }
        e.masterAddr = addr;
    } else if (e.worldSize > 1) {
        return std::string("MASTER_ADDR is not set (the host of rank 0)");
    }
    if (const char* port = getenv("MASTER_PORT")) {
        auto p = envNumber("MASTER_PORT", port, 1, 65535);
        if (auto* msg = std::get_if<std::string>(&p)) {
            return *msg;
        }
        e.masterPort = std::get<int>(p);
    } else if (e.worldSize > 1) {
        return std::string("MASTER_PORT is not set (the port rank 0 listens on)");
    }
    return e;
}

std::optional<DdpSummary> summarizeDdp(const DdpReport& report, int worldSize) {
    DdpStepRecord total;
    int n = 0;
    std::vector<std::optional<double>> rankOverhead;
    for (const auto& rank : report.ranks) {
        double rankStep = 0.0, rankExposed = 0.0;
        for (const auto& s : rank.steps) {
            if (s.warmup) {
                continue;
            }
            total.stepMs += s.stepMs;
            total.commMs += s.commMs;
            total.exposedCommMs += s.exposedCommMs;
            total.bytes += s.bytes;
            rankStep += s.stepMs;
            rankExposed += s.exposedCommMs;
            ++n;
        }
        rankOverhead.push_back(rankStep > 0.0 ? std::optional(rankExposed / rankStep)
                                              : std::nullopt);
    }
    if (n == 0) {
        return std::nullopt;
    }
    DdpStepRecord mean;
    mean.stepMs = total.stepMs / n;
    mean.commMs = total.commMs / n;
    mean.exposedCommMs = total.exposedCommMs / n;
    mean.bytes = total.bytes / n;
    return DdpSummary{n,
                      mean.stepMs,
                      computeMs(mean),
                      mean.commMs,
                      mean.exposedCommMs,
                      overheadShare(mean),
                      algorithmBandwidthGBps(mean),
                      busBandwidthGBps(mean, worldSize),
                      std::move(rankOverhead)};
}

std::string firstRankError(const DdpReport& report) {
    for (const auto& r : report.ranks) {
        if (r.error) {
            return "rank " + std::to_string(r.rank) + ": " + *r.error;
        }
    }
    return {};
}

} // namespace lmprof::engine
