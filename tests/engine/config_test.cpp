// Presets, validation messages and the analytic counts of config.h.

#include "lmprof/engine/compare.h"
#include "lmprof/engine/config.h"
#include "lmprof/engine/precision.h"
#include "lmprof/engine/result_io.h"
#include "throwaway_field.h"

#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <stdexcept>
#include <variant>

using namespace lmprof::engine;

TEST(Config, PresetParameterCountsMatchTheSpecTable) {
    // docs/MODEL.md table, in millions at V = 10000, rounded to 0.1M (tiny to 0.01M).
    const std::vector<std::pair<std::string, double>> expected = {
        {"tiny", 3.08},   {"small", 128.6}, {"medium", 423.2},
        {"large", 969.4}, {"xl", 1998.2},   {"2.7B", 3406.8}};
    ASSERT_EQ(presetNames().size(), expected.size());
    for (const auto& [name, millions] : expected) {
        const auto m = presetModel(name);
        ASSERT_TRUE(m) << name;
        const double got = static_cast<double>(parameterCount(*m)) / 1e6;
        const double tolerance = name == "tiny" ? 0.005 : 0.05;
        EXPECT_NEAR(got, millions, tolerance) << name;
    }
    // The formula itself, by hand for tiny: 2·10000·128 + 2·(4·128² + 3·128·512 + 2·128) + 128.
    EXPECT_EQ(parameterCount(*presetModel("tiny")),
              2 * 10000 * 128 + 2 * (4 * 128 * 128 + 3 * 128 * 512 + 2 * 128) + 128);
}

TEST(Config, PresetDimensionsAreTheSpecs) {
    const auto xl = *presetModel("xl");
    EXPECT_EQ(xl.dModel, 1600);
    EXPECT_EQ(xl.dFf, 6400);
    EXPECT_EQ(xl.numLayers, 48);
    EXPECT_EQ(xl.numHeads, 25);
    EXPECT_FALSE(presetModel("huge"));
}

TEST(Config, DefaultsAreValid) {
    EXPECT_TRUE(validate(RunConfig{}).empty());
}

namespace {
bool hasError(const std::vector<ConfigError>& errors, const std::string& field,
              const std::string& fragment) {
    for (const auto& e : errors) {
        if (e.field == field && e.reason.find(fragment) != std::string::npos) {
            return true;
        }
    }
    return false;
}
} // namespace

TEST(Config, ValidationNamesTheFieldAndReason) {
    RunConfig c;
    c.model.preset = "custom";
    c.model.dModel = 100;
    c.model.numHeads = 3;
    auto errors = validate(c);
    EXPECT_TRUE(hasError(errors, "model.num_heads", "not divisible")) << errors.size();

    c.model.dModel = 96;
    c.model.numHeads = 32; // head dim 3: odd
    EXPECT_TRUE(hasError(validate(c), "model.num_heads", "must be even"));

    c = RunConfig{};
    c.contextLength = 0;
    c.batchSize = -1;
    c.measureSteps = 0;
    c.device = "gpu";
    c.model.preset = "enormous";
    errors = validate(c);
    EXPECT_TRUE(hasError(errors, "context_length", "between 1"));
    EXPECT_TRUE(hasError(errors, "batch_size", "got -1"));
    EXPECT_TRUE(hasError(errors, "measure_steps", "between 1"));
    EXPECT_TRUE(hasError(errors, "device", "'gpu'"));
    EXPECT_TRUE(hasError(errors, "model.preset", "unknown preset 'enormous'"));

    c = RunConfig{};
    c.device = "cuda:x";
    EXPECT_TRUE(hasError(validate(c), "device", "cuda:x"));
    c.device = "cuda:1";
    EXPECT_TRUE(validate(c).empty());
}

TEST(Config, FaultPhaseMustBelongToTheMode) {
    RunConfig c;
    c.mode = Mode::Forward;
    c.faultOomPhase = Phase::Optimizer;
    EXPECT_TRUE(hasError(validate(c), "fault_oom_phase", "has no optimizer phase"));
}

TEST(Config, EnumNamesRoundTrip) {
    for (auto p : kPrecisions) {
        EXPECT_EQ(parsePrecision(toString(p)), p);
    }
    for (auto m : kModes) {
        EXPECT_EQ(parseMode(toString(m)), m);
    }
    for (auto ph : kPhases) {
        EXPECT_EQ(parsePhase(toString(ph)), ph);
    }
    EXPECT_EQ(toString(Precision::Bf16Pure), "bf16-pure");
    EXPECT_FALSE(parsePrecision("fp8"));
    EXPECT_EQ(phasesOf(Mode::ForwardBackward).size(), 2u);
    EXPECT_EQ(joinNames(kPrecisions), "fp32, bf16, fp16, bf16-pure");
    EXPECT_EQ(joinNames(kModes, "|"), "forward|forward-backward|train");
}

// The precision table: one row per precision with the traits the runner and the memory
// model act on (autocast, weight format, loss scaling, bytes per element).
TEST(Config, PrecisionTableHasOneConsistentRowPerPrecision) {
    // One row per precision in kPrecisions' order is a static_assert in precision.cpp.
    for (auto p : kPrecisions) {
        const PrecisionTraits& t = traitsOf(p);
        EXPECT_EQ(t.precision, p);
        EXPECT_EQ(t.name, toString(p));
        EXPECT_FALSE(t.description.empty());
        // Half-precision formats save fewer bytes per activation than fp32.
        EXPECT_LE(t.denseBytes, 4.0);
        EXPECT_GT(t.logitBytes, 0.0);
        if (t.lossScaling) {
            EXPECT_EQ(t.autocast, NumberFormat::Fp16) << "loss scaling is fp16's remedy";
        }
    }
    EXPECT_FALSE(traitsOf(Precision::Fp32).autocast);
    EXPECT_EQ(traitsOf(Precision::Bf16).autocast, NumberFormat::Bf16);
    EXPECT_EQ(traitsOf(Precision::Bf16).weights, NumberFormat::Fp32);
    EXPECT_TRUE(traitsOf(Precision::Fp16).lossScaling);
    EXPECT_EQ(traitsOf(Precision::Bf16Pure).weights, NumberFormat::Bf16);
    EXPECT_EQ(bytesOf(traitsOf(Precision::Bf16Pure).weights), 2);
}

TEST(Config, FlopsFollowTheSpecFormula) {
    RunConfig c;
    c.model = *presetModel("small");
    c.contextLength = 256;
    c.batchSize = 4;
    const double n = static_cast<double>(parameterCount(c.model));
    const double fwd = 2.0 * n * 4 * 256 + 12 * 4.0 * 4 * 256.0 * 256.0 * 768;
    EXPECT_DOUBLE_EQ(forwardFlops(c), fwd);
    c.mode = Mode::Train;
    EXPECT_DOUBLE_EQ(stepFlops(c), 3.0 * fwd);
    c.mode = Mode::Forward;
    EXPECT_DOUBLE_EQ(stepFlops(c), fwd);
}

// The snapshot a run records unless told otherwise: the last warmup step, one step.
TEST(Config, DefaultSnapshotRequestIsTheLastWarmupStep) {
    const SnapshotRequest r = defaultSnapshotRequest("x.pickle", 5);
    EXPECT_EQ(r.path, "x.pickle");
    EXPECT_EQ(r.firstStep, 4);
    EXPECT_EQ(r.stepCount, 1);
    EXPECT_EQ(r.maxEntries, SnapshotRequest{}.maxEntries);
    EXPECT_EQ(defaultSnapshotRequest("y", 0).firstStep, 0) << "step 0 without warmup";
}

// The one parser of "cuda[:<index>]", behind validate() and resolveDevice().
TEST(Config, CudaIndexIsParsedFromTheDeviceString) {
    EXPECT_EQ(parseCudaIndex("cuda"), 0);
    EXPECT_EQ(parseCudaIndex("cuda:3"), 3);
    for (const char* notCuda : {"auto", "cpu", "cuda:", "cuda:-1", "cuda:1x", "cudax", "gpu:0"}) {
        EXPECT_FALSE(parseCudaIndex(notCuda)) << notCuda;
    }
}

namespace {

// A fake environment for rankFromEnvironment.
std::map<std::string, std::string> g_env;
const char* fakeEnv(const char* name) {
    const auto it = g_env.find(name);
    return it == g_env.end() ? nullptr : it->second.c_str();
}

std::string envError() {
    const auto r = rankFromEnvironment(&fakeEnv);
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "";
}

} // namespace

TEST(Config, TorchrunsEnvironmentNamesTheRankOrTheVariableThatIsWrong) {
    g_env = {};
    EXPECT_TRUE(std::holds_alternative<std::monostate>(rankFromEnvironment(&fakeEnv)));
    g_env = {{"RANK", "1"},
             {"WORLD_SIZE", "4"},
             {"LOCAL_RANK", "0"},
             {"MASTER_ADDR", "node-a"},
             {"MASTER_PORT", "29501"}};
    const auto ok = rankFromEnvironment(&fakeEnv);
    ASSERT_TRUE(std::holds_alternative<RankEndpoint>(ok));
    const auto& e = std::get<RankEndpoint>(ok);
    EXPECT_EQ(e.rank, 1);
    EXPECT_EQ(e.worldSize, 4);
    EXPECT_EQ(e.localRank, 0);
    EXPECT_EQ(e.masterAddr, "node-a");
    EXPECT_EQ(e.masterPort, 29501);
    EXPECT_EQ(e.localWorldSize, 4) << "without LOCAL_WORLD_SIZE, the world size";
    g_env["LOCAL_WORLD_SIZE"] = "2";
    EXPECT_EQ(std::get<RankEndpoint>(rankFromEnvironment(&fakeEnv)).localWorldSize, 2);
    g_env["LOCAL_WORLD_SIZE"] = "0";
    EXPECT_NE(envError().find("LOCAL_WORLD_SIZE=0 must be between 1"), std::string::npos)
        << envError();
    g_env.erase("LOCAL_WORLD_SIZE");

    g_env["RANK"] = "4";
    EXPECT_NE(envError().find("RANK=4 must be between 0 and 3"), std::string::npos) << envError();
    g_env["RANK"] = "x";
    EXPECT_NE(envError().find("RANK='x' is not a whole number"), std::string::npos);
    g_env["RANK"] = "0";
    g_env["MASTER_PORT"] = "70000";
    EXPECT_NE(envError().find("MASTER_PORT"), std::string::npos);
    g_env.erase("MASTER_PORT");
    EXPECT_NE(envError().find("MASTER_PORT is not set"), std::string::npos);
    g_env.erase("WORLD_SIZE");
    EXPECT_NE(envError().find("WORLD_SIZE is not"), std::string::npos);
}

TEST(Config, DataParallelRequestsAreValidatedByField) {
    RunConfig c;
    c.ddp = DdpRequest{};
    EXPECT_TRUE(validate(c).empty());
    c.ddp->worldSize = 0;
    c.ddp->bucketMb = 0;
    c.ddp->timeoutS = 0.5;
    c.mode = Mode::Forward;
    std::vector<std::string> fields;
    for (const auto& e : validate(c)) {
        fields.push_back(e.field);
    }
    EXPECT_EQ(fields, (std::vector<std::string>{"ddp.world_size", "ddp.bucket_mb", "ddp.timeout_s",
                                                "ddp"}));
    c = RunConfig{};
    c.device = "cpu";
    c.ddp = DdpRequest{2, DdpBackend::Nccl};
    ASSERT_EQ(validate(c).size(), 1u);
    EXPECT_EQ(validate(c).front().field, "ddp.backend");
    // Run labels and compare keys tell the strategies apart.
    RunConfig naive;
    naive.ddp = DdpRequest{};
    RunConfig flat = naive;
    flat.ddp->strategy = DdpStrategy::Flat;
    EXPECT_EQ(runLabel(flat), "tiny-ctx128-fp32-train-ddp2-flat");
    EXPECT_NE(runLabel(naive), runLabel(flat));
}

// cuda_graphs: refused on the CPU, and with what cannot see a replayed step (a snapshot or op
// profile of measured steps, data-parallel hooks); a warmup short of the capture's needs is
// named. Each refusal names its field.
TEST(Config, CudaGraphsAreRefusedWhereAReplayCannotBeMeasured) {
    RunConfig c;
    c.device = "cuda:0";
    c.cudaGraphs = true;
    c.warmupSteps = kGraphWarmupSteps;
    EXPECT_TRUE(validate(c).empty()) << describe(validate(c));
    const auto fieldsOf = [](const RunConfig& config) {
        std::vector<std::string> fields;
        for (const auto& e : validate(config)) {
            fields.push_back(e.field);
        }
        return fields;
    };
    RunConfig cpu = c;
    cpu.device = "cpu";
    EXPECT_EQ(fieldsOf(cpu), std::vector<std::string>{"cuda_graphs"});
    EXPECT_NE(validate(cpu).front().reason.find("the CPU"), std::string::npos);

    RunConfig hurried = c;
    hurried.warmupSteps = 1;
    EXPECT_EQ(fieldsOf(hurried), std::vector<std::string>{"warmup_steps"});

    RunConfig snapshot = c;
    snapshot.memorySnapshot = SnapshotRequest{};
    snapshot.memorySnapshot->path = "s.pickle";
    snapshot.memorySnapshot->firstStep = 0;
    snapshot.memorySnapshot->stepCount = 1; // a warmup step: eager, allowed
    EXPECT_TRUE(validate(snapshot).empty()) << describe(validate(snapshot));
    snapshot.memorySnapshot->firstStep = c.warmupSteps; // the first replay
    EXPECT_EQ(fieldsOf(snapshot), std::vector<std::string>{"memory_snapshot"});

    RunConfig ops = c;
    ops.opProfile = OpProfileRequest{};
    ops.opProfile->firstStep = c.warmupSteps;
    ops.opProfile->stepCount = 1;
    EXPECT_EQ(fieldsOf(ops), std::vector<std::string>{"op_profile"});

    RunConfig ddp = c;
    ddp.ddp = DdpRequest{};
    EXPECT_EQ(fieldsOf(ddp), std::vector<std::string>{"ddp"});

    EXPECT_EQ(runLabel(c), "tiny-ctx128-fp32-train-graphs");
}

// A plain field is one declaration (ValueField): a throwaway one reaches the JSON both ways,
// validate() with its range and the comparison key (tests/engine/throwaway_field.h).
TEST(ConfigFields, AThrowawayFieldReachesTheJsonValidateAndTheComparisonKey) {
    RunConfig c;
    c.warmupSteps = 2;
    RunConfig other = c;
    other.warmupSteps = 1;
    EXPECT_EQ(configKey(c), configKey(other)); // not part of the key before it is declared
    const std::string before = configToJsonLine(c);
    EXPECT_EQ(before.find("throwaway_steps"), std::string::npos);

    const ExtraValueField declared(test::throwawayField());
    EXPECT_THROW(ExtraValueField{test::throwawayField()}, std::invalid_argument); // one per key
    std::string line = configToJsonLine(c);
    const std::string written = "\"throwaway_steps\":2";
    ASSERT_NE(line.find(written), std::string::npos) << line;
    line.replace(line.find(written), written.size(), "\"throwaway_steps\":3");
    EXPECT_EQ(parseConfig(line).warmupSteps, 3);

    const RunConfig tooMany = [] {
        RunConfig r;
        r.warmupSteps = 5;
        return r;
    }();
    bool refused = false;
    for (const auto& e : validate(tooMany)) {
        refused |= e.field == "throwaway_steps" && e.reason == "must be between 0 and 3, got 5";
    }
    EXPECT_TRUE(refused) << describe(validate(tooMany));
    EXPECT_NE(configKey(c), configKey(other));
    EXPECT_NE(configKey(c).find("throwaway_steps="), std::string::npos);
}
