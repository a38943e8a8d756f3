// The op profile (docs/OP_PROFILE.md): attribution rules on hand-made events, then a real
// profiled training step of `tiny` on the CPU: regions, FLOPs, coverage of the forward
// time, peaks of the profiled step, the Chrome trace, and the result-set round trip.

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/runner.h"
#include "profile/op_analysis.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <unistd.h>

using namespace lmprof::engine;
using profile::RawEvent;
using Type = RawEvent::Type;

namespace {

RawEvent ev(Type type, std::string name, uint64_t thread, int64_t start, int64_t end) {
    RawEvent e;
    e.type = type;
    e.name = std::move(name);
    e.thread = thread;
    e.startNs = start;
    e.endNs = end;
    return e;
}

const OpRow* findRow(const OpProfile& p, Phase phase, std::string_view region,
                     std::string_view name, OpKind kind = OpKind::Op) {
    for (const auto& r : p.rows) {
        if (r.phase == phase && r.region == region && r.name == name && r.kind == kind) {
            return &r;
        }
    }
    return nullptr;
}

// A step on thread 1: forward with an mm in "mlp" (sequence 7), backward on thread 2 with
// the node of sequence 7 (its mm must land in "mlp"), an AccumulateGrad node, an op under no
// node, and a kernel launched from the forward mm (correlation 42).
std::vector<RawEvent> syntheticStep() {
    std::vector<RawEvent> e;
    e.push_back(ev(Type::Range, kStepRange, 1, 0, 1000));
    e.push_back(ev(Type::Range, "forward", 1, 0, 400));
    e.push_back(ev(Type::Range, region::kMlp, 1, 10, 300));
    RawEvent linear = ev(Type::Op, "aten::linear", 1, 20, 200);
    linear.sequenceNr = 7;
    e.push_back(linear);
    RawEvent mm = ev(Type::Op, "aten::mm", 1, 30, 190);
    mm.sequenceNr = 7;
    mm.shapes = {{4, 8}, {8, 16}};
    e.push_back(mm);
    RawEvent launch = ev(Type::Runtime, "cudaLaunchKernel", 1, 40, 50);
    launch.correlation = 42;
    e.push_back(launch);
    RawEvent kernel = ev(Type::Kernel, "gemm_kernel", 7, 60, 160);
    kernel.correlation = 42;
    e.push_back(kernel);
    e.push_back(ev(Type::Op, "aten::add", 1, 310, 350)); // in no region
    e.push_back(ev(Type::Range, "backward", 1, 400, 900));
    RawEvent node = ev(Type::Op, "MmBackward0", 2, 410, 600);
    node.backwardNode = true;
    node.sequenceNr = 7;
    node.forwardThread = 1;
    e.push_back(node);
    e.push_back(ev(Type::Op, "aten::mm", 2, 420, 580));
    RawEvent acc = ev(Type::Op, "torch::autograd::AccumulateGrad", 2, 610, 700);
    acc.backwardNode = true;
    acc.sequenceNr = 1000;
    acc.forwardThread = 1;
    e.push_back(acc);
    e.push_back(ev(Type::Op, "aten::add_", 2, 620, 690));
    e.push_back(ev(Type::Op, "aten::ones_like", 2, 710, 720)); // under no node
    return e;
}

} // namespace

TEST(OpAnalysis, AttributesForwardBackwardAndKernelsByTheRules) {
    RunConfig c;
    const OpProfile p = profile::analyze({syntheticStep(), 3}, c);
    EXPECT_EQ(p.firstStep, 3);
    EXPECT_EQ(p.stepCount, 1);
    EXPECT_DOUBLE_EQ(p.phaseMs.forward, 400e-6);
    // Forward: the mm's self time excludes nothing, the linear's excludes the mm.
    const OpRow* mm = findRow(p, Phase::Forward, region::kMlp, "aten::mm");
    ASSERT_NE(mm, nullptr);
    EXPECT_DOUBLE_EQ(mm->selfMs, 160e-6);
    EXPECT_DOUBLE_EQ(mm->flops, 2.0 * 4 * 8 * 16); // from the shapes: the profiler had none
    EXPECT_TRUE(mm->matmul);
    const OpRow* linear = findRow(p, Phase::Forward, region::kMlp, "aten::linear");
    ASSERT_NE(linear, nullptr);
    EXPECT_DOUBLE_EQ(linear->selfMs, (180 - 160) * 1e-6);
    EXPECT_DOUBLE_EQ(linear->totalMs, 180e-6);
    EXPECT_NE(findRow(p, Phase::Forward, region::kUnattributed, "aten::add"), nullptr);
    // Backward on another thread: through the node's sequence number to "mlp".
    EXPECT_NE(findRow(p, Phase::Backward, region::kMlp, "aten::mm"), nullptr);
    EXPECT_NE(findRow(p, Phase::Backward, region::kMlp, "MmBackward0"), nullptr);
    EXPECT_NE(findRow(p, Phase::Backward, region::kAccumulateGrad, "aten::add_"), nullptr);
    EXPECT_NE(findRow(p, Phase::Backward, region::kUnattributed, "aten::ones_like"), nullptr);
    // The kernel: where its launch was, with the launching op's FLOPs.
    const OpRow* k = findRow(p, Phase::Forward, region::kMlp, "gemm_kernel", OpKind::Kernel);
    ASSERT_NE(k, nullptr);
    EXPECT_DOUBLE_EQ(k->selfMs, 100e-6);
    EXPECT_DOUBLE_EQ(k->flops, 2.0 * 4 * 8 * 16);
    EXPECT_TRUE(k->matmul);
    // Kernels exist, so the headline and the unattributed times count kernels.
    EXPECT_EQ(p.headline.kind, OpKind::Kernel);
    EXPECT_EQ(p.headline.topForwardName, "gemm_kernel");
    EXPECT_DOUBLE_EQ(p.headline.topForwardShare, 1.0);
    EXPECT_DOUBLE_EQ(p.unattributedMs.forward, 0.0);
    // The timeline: main thread, the autograd thread, the stream.
    ASSERT_EQ(p.timeline.lanes.size(), 3u);
    EXPECT_EQ(p.timeline.lanes[0], "thread 1 (main)");
    EXPECT_EQ(p.timeline.lanes[2], "stream 7");
}

TEST(OpAnalysis, WithoutAStepRangeNothingIsAttributedAndItSaysSo) {
    std::vector<RawEvent> e{ev(Type::Op, "aten::mm", 1, 0, 10)};
    const OpProfile p = profile::analyze({e, 0}, RunConfig{});
    EXPECT_TRUE(p.rows.empty());
    ASSERT_FALSE(p.notes.empty());
    EXPECT_NE(p.notes[0].find("no finished step"), std::string::npos);
}

TEST(OpAnalysis, AStepCutShortIsLeftOutAndWorkBeforeTheFirstPhaseIsKept) {
    std::vector<RawEvent> e = syntheticStep();
    e.push_back(ev(Type::Op, "aten::item", 1, 0, 0)); // at the step's start, before forward
    // A second step that was cancelled after its forward began.
    e.push_back(ev(Type::Range, kStepRange, 1, 2000, 2500));
    e.push_back(ev(Type::Range, "forward", 1, 2000, 2500));
    e.push_back(ev(Type::Op, "aten::mm", 1, 2010, 2400));
    profile::AnalysisInput input{e, 3};
    input.completedSteps = 1;
    const OpProfile p = profile::analyze(input, RunConfig{});
    EXPECT_EQ(p.stepCount, 1);
    const OpRow* mm = findRow(p, Phase::Forward, region::kMlp, "aten::mm");
    ASSERT_NE(mm, nullptr);
    EXPECT_DOUBLE_EQ(mm->calls, 1.0) << "the cut step's mm is not counted";
    EXPECT_EQ(findRow(p, Phase::Forward, region::kUnattributed, "aten::mm"), nullptr);
    EXPECT_NE(findRow(p, Phase::Forward, region::kUnattributed, "aten::item"), nullptr);
    ASSERT_FALSE(p.notes.empty());
    EXPECT_NE(p.notes.back().find("cut short"), std::string::npos);
}

TEST(OpAnalysis, MatmulFlopsFollowTheShapes) {
    EXPECT_DOUBLE_EQ(profile::matmulFlops("aten::mm", {{3, 5}, {5, 7}}), 2.0 * 3 * 5 * 7);
    EXPECT_DOUBLE_EQ(profile::matmulFlops("aten::addmm", {{7}, {3, 5}, {5, 7}}), 2.0 * 3 * 5 * 7);
    EXPECT_DOUBLE_EQ(profile::matmulFlops("aten::bmm", {{2, 3, 5}, {2, 5, 7}}),
                     2.0 * 2 * 3 * 5 * 7);
    EXPECT_DOUBLE_EQ(profile::matmulFlops("aten::add", {{3, 5}, {3, 5}}), 0.0);
    EXPECT_DOUBLE_EQ(profile::matmulFlops("aten::mm", {{3, 5}}), 0.0);
}

TEST(OpProfileConfig, RefusesStepsOutsideTheRunAndOverlapWithASnapshot) {
    RunConfig c;
    c.warmupSteps = 1;
    c.measureSteps = 2;
    c.opProfile = defaultOpProfileRequest(c.warmupSteps);
    EXPECT_EQ(c.opProfile->firstStep, 1);
    EXPECT_TRUE(validate(c).empty());
    c.opProfile->firstStep = 3;
    auto errors = validate(c);
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors[0].field, "op_profile.first_step");
    c.opProfile->firstStep = 1;
    c.opProfile->stepCount = 5;
    errors = validate(c);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].field, "op_profile.step_count");
    c.opProfile->stepCount = 1;
    c.memorySnapshot = SnapshotRequest{"x.json", 1, 1, 100};
    errors = validate(c);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].reason.find("overlap"), std::string::npos);
}

namespace {

// One profiled training step of tiny on the CPU, shared by the tests below.
const RunResult& profiledRun() {
    static const RunResult run = [] {
        RunConfig c;
        c.device = "cpu";
        c.threads = 2;
        c.contextLength = 64;
        c.batchSize = 2;
        c.warmupSteps = 2;
        c.measureSteps = 3;
        // One trace per process: ctest runs these tests in parallel processes.
        const std::string trace =
            "lmprof_op_profile_test." + std::to_string(::getpid()) + ".trace.json";
        c.opProfile = defaultOpProfileRequest(
            c.warmupSteps, (std::filesystem::temp_directory_path() / trace).string());
        return runBenchmark(c, "ops-test", nullptr, nullptr);
    }();
    return run;
}

double parseFlops(const std::string& name, const std::string& shapes) {
    std::vector<std::vector<int64_t>> dims;
    const std::regex list(R"(\[([^\]]*)\])");
    for (auto it = std::sregex_iterator(shapes.begin(), shapes.end(), list);
         it != std::sregex_iterator(); ++it) {
        std::vector<int64_t> d;
        std::string inner = (*it)[1];
        std::stringstream ss(inner);
        for (std::string x; std::getline(ss, x, ',');) {
            d.push_back(std::stoll(x));
        }
        dims.push_back(d);
    }
    const size_t a = name == "aten::mm" || name == "aten::bmm" ? 0 : 1;
    const auto& x = dims.at(a);
    const auto& y = dims.at(a + 1);
    double batch = 1.0;
    for (size_t i = 0; i + 2 < x.size(); ++i) {
        batch *= static_cast<double>(x[i]);
    }
    return 2.0 * batch * static_cast<double>(x[x.size() - 2] * x.back() * y.back());
}

} // namespace

TEST(OpProfileRun, ProfiledStepIsFlaggedAndLeftOutOfTheStatistics) {
    const RunResult& r = profiledRun();
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    ASSERT_TRUE(r.opProfile);
    EXPECT_EQ(r.opProfile->firstStep, 2);
    EXPECT_EQ(r.opProfile->stepCount, 1);
    ASSERT_EQ(r.steps.size(), 5u);
    for (const auto& s : r.steps) {
        EXPECT_EQ(s.opProfiled, s.index == 2) << s.index;
        EXPECT_EQ(s.index, &s - r.steps.data()) << "steps stay in order";
    }
    EXPECT_EQ(r.summary.totalMs.n, 2);
}

TEST(OpProfileRun, EveryForwardOpFallsInANamedRegion) {
    const OpProfile& p = *profiledRun().opProfile;
    ASSERT_GT(p.phaseMs.forward, 0.0);
    EXPECT_LT(p.unattributedMs.forward, 0.02 * p.phaseMs.forward)
        << p.unattributedMs.forward << " of " << p.phaseMs.forward << " ms";
    std::set<std::string> regions;
    for (const auto& row : p.rows) {
        if (row.phase == Phase::Forward) {
            regions.insert(row.region);
        }
    }
    for (const char* want : {region::kEmbedding, region::kNorm, region::kQkv, region::kRope,
                             region::kScores, region::kSoftmax, region::kValue, region::kAttnOutput,
                             region::kResidual, region::kMlp, region::kLmHead, region::kLoss}) {
        EXPECT_TRUE(regions.count(want)) << want;
    }
}

TEST(OpProfileRun, BackwardAndOptimizerOpsLandInTheirRegions) {
    const OpProfile& p = *profiledRun().opProfile;
    // Counted in calls, not time: an op under no autograd node (the gradient seed) is the
    // only unattributed kind, and a slow first call (under ASan, on a busy machine) must not
    // make its few calls look like many.
    double calls = 0.0, unattributedCalls = 0.0;
    std::set<std::string> regions;
    for (const auto& row : p.rows) {
        if (row.phase == Phase::Backward) {
            calls += row.calls;
            unattributedCalls += row.region == region::kUnattributed ? row.calls : 0.0;
            regions.insert(row.region);
        }
    }
    for (const char* want : {region::kMlp, region::kSoftmax, region::kLmHead, region::kLoss,
                             region::kEmbedding, region::kNorm}) {
        EXPECT_TRUE(regions.count(want)) << want;
    }
    EXPECT_LT(unattributedCalls, 0.05 * calls) << unattributedCalls << " of " << calls;
    bool adamw = false;
    for (const auto& row : p.rows) {
        adamw = adamw || (row.phase == Phase::Optimizer && row.region == region::kAdamW);
    }
    EXPECT_TRUE(adamw);
}

TEST(OpProfileRun, MatmulFlopsAreTwoMnkOfTheirShapes) {
    const OpProfile& p = *profiledRun().opProfile;
    int checked = 0;
    for (const auto& e : p.timeline.events) {
        if ((e.name == "aten::mm" || e.name == "aten::bmm" || e.name == "aten::addmm") &&
            !e.shapes.empty()) {
            EXPECT_DOUBLE_EQ(e.flops, parseFlops(e.name, e.shapes)) << e.name << " " << e.shapes;
            ++checked;
        }
    }
    EXPECT_GT(checked, 10);
    for (const auto& row : p.rows) {
        if (row.name == "aten::mm" || row.name == "aten::bmm") {
            EXPECT_GT(row.flops, 0.0) << row.region;
        }
    }
}

TEST(OpProfileRun, ForwardSelfTimesAddUpToTheForwardPhase) {
    const RunResult& r = profiledRun();
    const OpProfile& p = *r.opProfile;
    double self = 0.0;
    for (const auto& row : p.rows) {
        self += row.phase == Phase::Forward && row.kind == OpKind::Op ? row.selfMs : 0.0;
    }
    // Every op of the phase is counted once (never more than the phase) and the ops are most
    // of it; the rest is the harness between ops, which grows under load and sanitizers.
    const double forward = r.steps[2].forwardMs;
    EXPECT_LE(self, 1.05 * forward) << self << " ms of ops in " << forward << " ms";
    EXPECT_GE(self, 0.5 * forward) << self << " ms of ops in " << forward << " ms";
}

TEST(OpProfileRun, HeadlineAnswersTheSeedQuestions) {
    const RunResult& r = profiledRun();
    const OpHeadline& h = r.opProfile->headline;
    EXPECT_EQ(h.kind, OpKind::Op);
    EXPECT_FALSE(h.topForwardName.empty());
    EXPECT_GT(h.topForwardShare, 0.0);
    EXPECT_LE(h.topForwardShare, 1.0);
    EXPECT_GT(h.topForwardCalls, 0.0);
    EXPECT_GT(h.matmulForwardShare, 0.0);
    EXPECT_LT(h.matmulForwardShare, 1.0);
    EXPECT_GT(h.matmulStepShare, 0.0);
    ASSERT_TRUE(h.timeRatio() && h.flopRatio());
    // Scores and PV: 2 · 2·B·h·T²·dh per layer, from the profiled bmm shapes.
    const auto& c = r.config;
    const double dh = static_cast<double>(c.model.dModel / c.model.numHeads);
    const double scores = static_cast<double>(c.batchSize * c.model.numHeads * c.contextLength *
                                              c.contextLength * c.model.numLayers);
    EXPECT_DOUBLE_EQ(h.attentionMatmulFlops, 4.0 * scores * dh);
    EXPECT_DOUBLE_EQ(h.softmaxFlops, 5.0 * scores);
    EXPECT_FALSE(headlineSentences(*r.opProfile).empty());
}

TEST(OpProfileRun, ProfiledStepKeepsItsMemoryPeaks) {
    const RunResult& r = profiledRun();
    const StepRecord& profiled = r.steps[2];
    const StepRecord& next = r.steps[3];
    for (Phase ph : kPhases) {
        const double a = static_cast<double>(profiled.phasePeakBytes.of(ph));
        const double b = static_cast<double>(next.phasePeakBytes.of(ph));
        EXPECT_GT(a, 0.0) << toString(ph);
        EXPECT_NEAR(a, b, 0.05 * b) << toString(ph);
    }
    EXPECT_EQ(profiled.peakAllocatedBytes, profiled.phasePeakBytes.max());
    // And the reporter was back for the step after: its peaks are the steady ones.
    EXPECT_NEAR(static_cast<double>(r.steps[4].peakAllocatedBytes),
                static_cast<double>(next.peakAllocatedBytes), 0.05 * next.peakAllocatedBytes);
}

TEST(OpProfileRun, WritesAChromeTraceWithTheRegionsAndOps) {
    const OpProfile& p = *profiledRun().opProfile;
    ASSERT_FALSE(p.trace.empty()) << p.traceError.value_or("");
    std::ifstream in(p.trace);
    ASSERT_TRUE(in) << p.trace;
    const auto trace = nlohmann::json::parse(in);
    std::set<std::string> names;
    for (const auto& e : trace.at("traceEvents")) {
        if (e.contains("name") && e["name"].is_string()) {
            names.insert(e["name"].get<std::string>());
        }
    }
    for (const char* want : {"attention.softmax", "mlp", "forward", "backward", "aten::mm"}) {
        EXPECT_TRUE(names.count(want)) << want;
    }
}

TEST(OpProfileRun, HostileTimelineValuesAreRefusedWithTheirPath) {
    ResultSet set;
    set.runs.push_back(profiledRun());
    const std::string good = toJson(set);
    for (const auto& [from, to, path] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"\"depth\": 0", "\"depth\": 2147483647", ".timeline.events[0].depth"},
             {"\"lane\": 0", "\"lane\": 99", ".timeline.events[0].lane"},
             {"\"kind\": \"op\"", "\"kind\": \"warp\"", ".kind"}}) {
        std::string text = good;
        const size_t at = text.find(from, text.find("\"op_profile\": {"));
        ASSERT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
        try {
            (void)parseResultSet(text);
            ADD_FAILURE() << "accepted " << to;
        } catch (const ResultFormatError& e) {
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        }
    }
}

TEST(OpProfileRun, RoundTripsThroughTheResultSet) {
    ResultSet set;
    set.runs.push_back(profiledRun());
    const ResultSet back = parseResultSet(toJson(set));
    ASSERT_EQ(back.runs.size(), 1u);
    const RunResult& r = back.runs[0];
    ASSERT_TRUE(r.config.opProfile);
    EXPECT_EQ(r.config.opProfile->firstStep, 2);
    ASSERT_TRUE(r.opProfile);
    const OpProfile& a = *profiledRun().opProfile;
    const OpProfile& b = *r.opProfile;
    ASSERT_EQ(a.rows.size(), b.rows.size());
    EXPECT_EQ(a.rows[0].name, b.rows[0].name);
    EXPECT_DOUBLE_EQ(a.rows[0].selfMs, b.rows[0].selfMs);
    EXPECT_EQ(a.headline.topForwardName, b.headline.topForwardName);
    EXPECT_EQ(a.timeline.events.size(), b.timeline.events.size());
    EXPECT_TRUE(r.steps[2].opProfiled);
    EXPECT_EQ(a.trace, b.trace);
}

// One profiled step's figures carry their caveat (issue 60): the headline says how many steps
// it comes from, and QK^T against PV, equal FLOPs, more than 10x apart in time is said to be
// the step's timing, not stated as the ops' cost.
TEST(OpHeadlineText, SaysItsStepsAndDoubtsAttentionTimesTenfoldApart) {
    OpProfile p;
    p.firstStep = 5;
    p.stepCount = 1;
    p.headline.topForwardName = "aten::mm";
    p.headline.scoresMs = 19.7;
    p.headline.valueMs = 0.19;
    const std::vector<std::string> sentences = headlineSentences(p);
    ASSERT_FALSE(sentences.empty());
    EXPECT_EQ(sentences.front().rfind("From 1 profiled step (step 5): aten::mm takes", 0), 0u)
        << sentences.front();
    const auto doubt = attentionTimingDoubt(p);
    ASSERT_TRUE(doubt.has_value());
    EXPECT_NE(doubt->find("104x apart"), std::string::npos) << *doubt;
    EXPECT_EQ(sentences.back(), *doubt);

    p.stepCount = 3;
    EXPECT_EQ(profiledStepsText(p), "3 profiled steps (5 to 7)");
    p.headline.valueMs = 2.5; // 7.9x: within what one step's timing explains
    EXPECT_FALSE(attentionTimingDoubt(p).has_value());
    p.headline.valueMs = 0.0; // no PV time: nothing to compare
    EXPECT_FALSE(attentionTimingDoubt(p).has_value());
}
