// The result set the result I/O tests start from (result_io_test.cpp,
// result_io_ddp_test.cpp), and what reading a document says when it refuses it.
#pragma once

#include "lmprof/engine/ddp.h"
#include "lmprof/engine/result_io.h"

#include <string>

namespace lmprof::engine::test {

// Two runs (one ok with three steps and a memory timeline, one oom) on a CUDA machine.
inline ResultSet sampleSet() {
    ResultSet set;
    set.created = "2026-11-21T12:00:00Z";
    set.tool = {"lmprof", "0.1.0", "abc1234"};
    set.environment.torch = "2.15.0";
    set.environment.cuda = "13.2";
    set.environment.device = {"cuda", "NVIDIA H100 80GB HBM3", 85000000000};
    set.environment.cpuModel = "AMD EPYC";
    set.environment.cpuThreads = 16;
    set.environment.host = "gpu-1";
    set.environment.driver = "580.65.06";
    RunResult r;
    r.id = "small-ctx128-bf16-train-1";
    r.config.model = *presetModel("small");
    r.config.precision = Precision::Fp16;
    r.config.mode = Mode::Train;
    r.config.faultOomPhase.reset();
    r.resolvedDevice = "cuda:0";
    r.config.device = "auto";
    r.config.seed = 42;
    r.parameterCount = parameterCount(r.config.model);
    for (int i = 0; i < 3; ++i) {
        StepRecord s;
        s.index = i;
        s.warmup = i == 0;
        s.forwardMs = 10.5 + i;
        s.backwardMs = 20.25;
        s.optimizerMs = 3.125;
        s.totalMs = 35.0 + i;
        s.peakAllocatedBytes = 123456789012;
        s.peakReservedBytes = 223456789012;
        s.phasePeakBytes = {1, 2, 3};
        s.lossScale = 65536.0;
        s.skippedUpdate = i == 2;
        r.steps.push_back(s);
        r.memoryTimeline.push_back({1.5 * i, 100 + i, 200, 300, 0, 0, Phase::Backward, i, false});
    }
    r.summary = summarize(r.config, r.steps, 989.4e12);
    RunResult oom = r;
    oom.id = "xl-ctx1024-fp32-train-2";
    oom.status = RunStatus::Oom;
    oom.failedPhase = Phase::Backward;
    oom.error = "CUDA out of memory. Tried to allocate 2.00 GiB";
    oom.steps.clear();
    oom.summary = summarize(oom.config, oom.steps, std::nullopt);
    set.runs = {r, oom};
    return set;
}

// A data-parallel run of the sample's first run: two Gloo ranks, bucketed, the second rank
// ended with an error.
inline RunResult ddpRun() {
    RunResult r = sampleSet().runs.front();
    r.config.ddp = DdpRequest{2, DdpBackend::Gloo, DdpStrategy::Bucketed, 0.5, 30.0};
    DdpReport report;
    report.gradientBytes = 4000;
    report.buckets = 3;
    report.parametersIdentical = true;
    for (int rank = 0; rank < 2; ++rank) {
        DdpRank dr{rank, "host-a", "cpu", {}, std::nullopt, "00000000deadbeef"};
        for (int i = 0; i < 3; ++i) {
            dr.steps.push_back({i, i == 0, 20.0 + i, 8.0, 3.5 + rank, 4000});
        }
        report.ranks.push_back(dr);
    }
    report.ranks[1].error = "connection closed by peer";
    r.ddp = report;
    return r;
}

// The reader's refusal of `text`, or "<accepted>".
inline std::string rejection(const std::string& text) {
    try {
        parseResultSet(text);
    } catch (const ResultFormatError& e) {
        return e.what();
    }
    return "<accepted>";
}

} // namespace lmprof::engine::test
