// Data-parallel runs in the result set (docs/RESULTS.md, docs/DISTRIBUTED.md): the request
// in a run's config ("ddp", null when none) and every rank's steps in the run ("ddp",
// absent when none). The rank object is also what ranks send rank 0 at the end of a run.

#include "results/fields.h"

#include <limits>
#include <set>

namespace lmprof::engine::json_io {

namespace {

// What a data-parallel record's fields need besides themselves: the world size for the
// bus bandwidth written, the run's step count for the steps read.
struct DdpContext {
    int worldSize = 1;
    int totalSteps = 0;
};

constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

DdpContext contextOf(const RunResult& r) {
    return {r.config.ddp ? r.config.ddp->worldSize : 1,
            r.config.warmupSteps + r.config.measureSteps};
}

} // namespace

// compute_ms, overhead and the bandwidths are derived: read back from the times and bytes.
template <typename Io>
void fields(Io& io, Ref<DdpStepRecord, Io> s, const DdpContext& context) {
    io.required("index", s.index);
    io.field("warmup", s.warmup);
    io.duration("step_ms", s.stepMs, true);
    io.derived("compute_ms", [&] { return computeMs(s); });
    io.duration("comm_ms", s.commMs, true);
    io.duration("exposed_comm_ms", s.exposedCommMs, true);
    io.derived("overhead", [&] { return overheadShare(s); });
    io.between("bytes", s.bytes, int64_t{0}, kMaxBytes);
    io.derived("algbw_gbps", [&] { return nullable(algorithmBandwidthGBps(s)); });
    io.derived("busbw_gbps", [&] { return nullable(busBandwidthGBps(s, context.worldSize)); });
    if constexpr (Io::kReads) {
        if (s.exposedCommMs > s.stepMs) {
            io.refuse("exposed_comm_ms", "is longer than the step (step_ms)");
        }
    }
}

template <typename Io>
void fields(Io& io, Ref<DdpRank, Io> r, const DdpContext& context) {
    io.required("rank", r.rank);
    io.field("host", r.host);
    io.field("device", r.device);
    io.nullable("error", r.error);
    io.nullable("parameter_hash", r.parameterHash);
    if constexpr (Io::kReads) {
        checkStepCount(arrayMember(io.in, io.path, "steps").size(), io.path + ".steps",
                       context.totalSteps);
    }
    io.array("steps", r.steps, context);
    if constexpr (Io::kReads) {
        for (size_t i = 0; i < r.steps.size(); ++i) {
            checkStepIndex(r.steps[i].index, indexed(io.path, "steps", i), context.totalSteps);
        }
    }
}

template <typename Io>
void fields(Io& io, Ref<DdpReport, Io> report, const DdpContext& context) {
    io.between("gradient_bytes", report.gradientBytes, int64_t{0}, kMaxBytes);
    io.between("buckets", report.buckets, 0, std::numeric_limits<int>::max());
    io.nullable("parameters_identical", report.parametersIdentical);
    if constexpr (Io::kReads) {
        const size_t ranks = arrayMember(io.in, io.path, "ranks").size();
        if (ranks > static_cast<size_t>(context.worldSize)) {
            io.refuse("ranks", std::to_string(ranks) + " ranks, but the world size is " +
                                   std::to_string(context.worldSize));
        }
    }
    io.array("ranks", report.ranks, context);
    if constexpr (Io::kReads) {
        std::set<int> seen;
        for (size_t i = 0; i < report.ranks.size(); ++i) {
            const int rank = report.ranks[i].rank;
            if (rank < 0 || rank >= context.worldSize) {
                io.refuse("ranks", i, "rank",
                          std::to_string(rank) + " is not a rank of world size " +
                              std::to_string(context.worldSize));
            }
            if (!seen.insert(rank).second) {
                io.refuse("ranks", i, "rank", "rank " + std::to_string(rank) + " appears twice");
            }
        }
    }
}

void ddpFields(Writer& io, const RunResult& r) {
    io.optionalObject("ddp", r.ddp, contextOf(r));
}

template <typename J>
void readDdpFields(BasicReader<J>& io, RunResult& r) {
    if (io.has("ddp") && !r.config.ddp) {
        io.refuse("ddp", "a data-parallel block, but the config has no ddp request");
    }
    io.optionalObject("ddp", r.ddp, contextOf(r));
}
void ddpFields(Reader& io, RunResult& r) {
    readDdpFields(io, r);
}
void ddpFields(SimdReader& io, RunResult& r) {
    readDdpFields(io, r);
}

} // namespace lmprof::engine::json_io

namespace lmprof::engine {

std::string ddpRankToJson(const DdpRank& rank, int worldSize) {
    return json_io::toObject(rank, json_io::DdpContext{worldSize, 0})
        .dump(-1, ' ', false, json_io::json::error_handler_t::replace);
}

DdpRank ddpRankFromJson(std::string_view text, int totalSteps) {
    return json_io::fromObject<DdpRank>(json_io::parseDocument(text), "$",
                                        json_io::DdpContext{1, totalSteps});
}

} // namespace lmprof::engine
