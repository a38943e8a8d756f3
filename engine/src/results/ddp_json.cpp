// Data-parallel runs in the result set (docs/RESULTS.md, docs/DISTRIBUTED.md): the request
// in a run's config ("ddp", null when none) and every rank's steps in the run ("ddp",
// absent when none). The rank object is also what ranks send rank 0 at the end of a run.

#include "results/json_access.h"

#include <limits>

#include <set>

namespace lmprof::engine::json_io {

namespace {

json ddpStepJson(const DdpStepRecord& s, int worldSize) {
    return {{"index", s.index},
            {"warmup", s.warmup},
            {"step_ms", s.stepMs},
            {"compute_ms", computeMs(s)},
            {"comm_ms", s.commMs},
            {"exposed_comm_ms", s.exposedCommMs},
            {"overhead", overheadShare(s)},
            {"bytes", s.bytes},
            {"algbw_gbps", nullable(algorithmBandwidthGBps(s))},
            {"busbw_gbps", nullable(busBandwidthGBps(s, worldSize))}};
}

// compute_ms, overhead and the bandwidths are derived: read back from the times and bytes.
DdpStepRecord ddpStepFrom(const json& j, const std::string& path) {
    DdpStepRecord s;
    read(j, path, "index", s.index, true);
    read(j, path, "warmup", s.warmup);
    readDuration(j, path, "step_ms", s.stepMs, true);
    readDuration(j, path, "comm_ms", s.commMs, true);
    readDuration(j, path, "exposed_comm_ms", s.exposedCommMs, true);
    readBetween(j, path, "bytes", s.bytes, int64_t{0}, std::numeric_limits<int64_t>::max());
    if (s.exposedCommMs > s.stepMs) {
        fail(path + ".exposed_comm_ms", "is longer than the step (step_ms)");
    }
    return s;
}

json rankJson(const DdpRank& r, int worldSize) {
    json steps = json::array();
    for (const auto& s : r.steps) {
        steps.push_back(ddpStepJson(s, worldSize));
    }
    return {{"rank", r.rank},
            {"host", r.host},
            {"device", r.device},
            {"error", nullable(r.error)},
            {"parameter_hash", nullable(r.parameterHash)},
            {"steps", steps}};
}

DdpRank rankFrom(const json& j, const std::string& path, int totalSteps) {
    DdpRank r;
    read(j, path, "rank", r.rank, true);
    read(j, path, "host", r.host);
    read(j, path, "device", r.device);
    readOptional(j, path, "error", r.error);
    readOptional(j, path, "parameter_hash", r.parameterHash);
    const json& steps = arrayMember(j, path, "steps");
    checkStepCount(steps.size(), path + ".steps", totalSteps);
    for (size_t i = 0; i < steps.size(); ++i) {
        const std::string sp = indexed(path, "steps", i);
        r.steps.push_back(ddpStepFrom(steps[i], sp));
        checkStepIndex(r.steps.back().index, sp, totalSteps);
    }
    return r;
}

} // namespace

void writeDdp(json& run, const RunResult& r) {
    if (!r.ddp) {
        return;
    }
    const int world = r.config.ddp ? r.config.ddp->worldSize : 1;
    json ranks = json::array();
    for (const auto& rank : r.ddp->ranks) {
        ranks.push_back(rankJson(rank, world));
    }
    run["ddp"] = {{"gradient_bytes", r.ddp->gradientBytes},
                  {"buckets", r.ddp->buckets},
                  {"parameters_identical",
                   r.ddp->parametersIdentical ? json(*r.ddp->parametersIdentical) : json(nullptr)},
                  {"ranks", ranks}};
}

void readDdp(const json& run, const std::string& path, RunResult& r) {
    const json* j = member(run, path, "ddp", false);
    if (!j) {
        return;
    }
    const std::string p = path + ".ddp";
    if (!r.config.ddp) {
        fail(p, "a data-parallel block, but the config has no ddp request");
    }
    DdpReport report;
    readBetween(*j, p, "gradient_bytes", report.gradientBytes, int64_t{0},
                std::numeric_limits<int64_t>::max());
    readBetween(*j, p, "buckets", report.buckets, 0, std::numeric_limits<int>::max());
    readOptional(*j, p, "parameters_identical", report.parametersIdentical);
    const json& ranks = arrayMember(*j, p, "ranks");
    const int world = r.config.ddp->worldSize;
    if (ranks.size() > static_cast<size_t>(world)) {
        fail(p + ".ranks", std::to_string(ranks.size()) + " ranks, but the world size is " +
                               std::to_string(world));
    }
    std::set<int> seen;
    for (size_t i = 0; i < ranks.size(); ++i) {
        const std::string rp = indexed(p, "ranks", i);
        report.ranks.push_back(
            rankFrom(ranks[i], rp, r.config.warmupSteps + r.config.measureSteps));
        const int rank = report.ranks.back().rank;
        if (rank < 0 || rank >= world) {
            fail(rp + ".rank",
                 std::to_string(rank) + " is not a rank of world size " + std::to_string(world));
        }
        if (!seen.insert(rank).second) {
            fail(rp + ".rank", "rank " + std::to_string(rank) + " appears twice");
        }
    }
    r.ddp = std::move(report);
}

} // namespace lmprof::engine::json_io

namespace lmprof::engine {

std::string ddpRankToJson(const DdpRank& rank, int worldSize) {
    return json_io::rankJson(rank, worldSize)
        .dump(-1, ' ', false, json_io::json::error_handler_t::replace);
}

DdpRank ddpRankFromJson(std::string_view text, int totalSteps) {
    return json_io::rankFrom(json_io::parseDocument(text), "$", totalSteps);
}

} // namespace lmprof::engine
