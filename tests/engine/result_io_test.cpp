// JSON result sets: round trip, forward compatibility, and clear rejections.

#include "lmprof/engine/op_profile.h"
#include "lmprof/engine/result_io.h"
#include "result_samples.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace lmprof::engine;
using namespace lmprof::engine::test;

TEST(ResultIo, RoundTripPreservesEveryField) {
    const ResultSet set = sampleSet();
    const std::string text = toJson(set);
    const ResultSet back = parseResultSet(text);
    EXPECT_EQ(toJson(back), text); // nothing lost, nothing invented
    ASSERT_EQ(back.runs.size(), 2u);
    const RunResult& r = back.runs[0];
    EXPECT_EQ(r.config.model.dModel, 768);
    EXPECT_EQ(r.config.precision, Precision::Fp16);
    EXPECT_EQ(r.resolvedDevice, "cuda:0");
    EXPECT_EQ(r.config.device, "auto");
    EXPECT_EQ(r.steps[1].peakReservedBytes, 223456789012);
    EXPECT_TRUE(r.steps[2].skippedUpdate);
    EXPECT_EQ(r.memoryTimeline[2].phase, Phase::Backward);
    ASSERT_TRUE(r.summary.mfu);
    EXPECT_EQ(back.runs[1].status, RunStatus::Oom);
    EXPECT_EQ(back.runs[1].failedPhase, Phase::Backward);
    EXPECT_FALSE(back.runs[1].summary.mfu);
    EXPECT_EQ(back.environment.device.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(back.environment.driver, std::optional<std::string>("580.65.06"));
}

TEST(ResultIo, SchemaComesFirstAndMatchesTheSpec) {
    const std::string text = toJson(sampleSet());
    EXPECT_EQ(text.find("\"schema\": \"lmprof.results/1.7\""), 4u);
    for (const char* key : {"\"forward_ms\"", "\"peak_reserved_bytes\"", "\"memory_columns\"",
                            "\"tokens_per_s\"", "\"failed_phase\"", "\"p95\"", "\"cv\""}) {
        EXPECT_NE(text.find(key), std::string::npos) << key;
    }
}

TEST(ResultIo, FilesOfTheFirstVersionStillLoad) {
    // 1.0 files have no op profile, no op_profiled steps and no config.op_profile.
    std::string text = toJson(sampleSet());
    text.replace(text.find("lmprof.results/1.7"), 18, "lmprof.results/1");
    const ResultSet back = parseResultSet(text);
    ASSERT_EQ(back.runs.size(), 2u);
    EXPECT_FALSE(back.runs[0].opProfile);
    EXPECT_FALSE(back.runs[0].config.opProfile);
}

TEST(ResultIo, UnknownFieldsAndMinorVersionsAreAccepted) {
    std::string text = toJson(sampleSet());
    text.replace(text.find("lmprof.results/1.7"), 18, "lmprof.results/1.9");
    text.insert(text.rfind('}'), ", \"future_field\": {\"x\": [1, 2]}");
    const ResultSet back = parseResultSet(text);
    EXPECT_EQ(back.runs.size(), 2u);
}

TEST(ResultIo, ForeignCorruptAndMalformedDocumentsAreRejectedClearly) {
    EXPECT_NE(rejection(R"({"runs": []})").find("\"schema\" field is missing"), std::string::npos);
    EXPECT_NE(rejection(R"({"schema": "chrome.trace/1", "runs": []})").find("chrome.trace/1"),
              std::string::npos);
    EXPECT_NE(rejection(R"({"schema": "lmprof.results/2", "runs": []})")
                  .find("unsupported result-set version"),
              std::string::npos);
    EXPECT_NE(rejection("[1, 2, 3]").find("not a JSON object"), std::string::npos);
    EXPECT_NE(rejection("{\"schema\": \"lmprof.results/1\", \"runs\": [").find("not valid JSON"),
              std::string::npos);
    std::string text = toJson(sampleSet());
    text.replace(text.find("\"batch_size\": 4"), 15, "\"batch_size\": \"4\"");
    EXPECT_NE(rejection(text).find("$.runs[0].config.batch_size: expected an integer"),
              std::string::npos)
        << rejection(text);
    text = toJson(sampleSet());
    text.replace(text.find("\"precision\": \"fp16\""), 19, "\"precision\": \"fp12\"");
    EXPECT_NE(rejection(text).find("precision: unknown value 'fp12'"), std::string::npos);
    EXPECT_NE(rejection(R"({"schema": "lmprof.results/1"})").find("$.runs: missing"),
              std::string::npos);
}

TEST(ResultIo, AtomicSaveReplacesTheFileAndLeavesNoTemporaries) {
    const auto dir = std::filesystem::temp_directory_path() / "lmprof_result_io_test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto path = dir / "results.json";
    { std::ofstream(path) << "old contents"; }
    saveResultSetAtomic(sampleSet(), path);
    EXPECT_EQ(loadResultSet(path).runs.size(), 2u);
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) {
        ++files;
    }
    EXPECT_EQ(files, 1u);
    EXPECT_THROW(saveResultSetAtomic(sampleSet(), dir / "missing-dir" / "x.json"),
                 std::runtime_error);
    try {
        loadResultSet(dir / "absent.json");
        FAIL() << "loading a missing file must throw";
    } catch (const ResultFormatError& e) {
        EXPECT_NE(std::string(e.what()).find("absent.json"), std::string::npos);
    }
    std::filesystem::remove_all(dir);
}

TEST(ResultIo, RunsRoundTripAsSingleJsonLines) {
    const RunResult r = sampleSet().runs[0];
    const std::string line = runToJsonLine(r);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(runToJsonLine(parseRun(line)), line);
}

TEST(ResultIo, AutosaveLinesLoadAndACutLastLineIsOnlyAWarning) {
    const RunResult r = sampleSet().runs[0];
    const std::string line = runToJsonLine(r);
    const std::string good = line + "\n" + line + "\n";
    JsonlRuns loaded = parseRunsJsonl(good);
    EXPECT_EQ(loaded.runs.size(), 2u);
    EXPECT_TRUE(loaded.warnings.empty());

    // A kill in the middle of a write leaves half a line at the end.
    loaded = parseRunsJsonl(good + line.substr(0, line.size() / 2));
    EXPECT_EQ(loaded.runs.size(), 2u);
    ASSERT_EQ(loaded.warnings.size(), 1u);
    EXPECT_NE(loaded.warnings[0].find("line 3: incomplete last line"), std::string::npos)
        << loaded.warnings[0];

    // A damaged line in the middle is skipped too; the runs around it survive.
    loaded = parseRunsJsonl(line + "\n{\"id\": 5}\n\n" + line + "\n");
    EXPECT_EQ(loaded.runs.size(), 2u);
    ASSERT_EQ(loaded.warnings.size(), 1u);
    EXPECT_EQ(loaded.warnings[0].rfind("line 2: skipped: ", 0), 0u) << loaded.warnings[0];
}

// One loader for both kinds of file: a result set, or an autosave file (by extension) with
// its warnings; the outcome text the reports and the window show.
TEST(ResultIo, LoadRunsReadsResultSetsAndAutosaveFiles) {
    const auto dir = std::filesystem::temp_directory_path() / "lmprof_load_runs_test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    saveResultSetAtomic(sampleSet(), dir / "set.json");
    const std::string line = runToJsonLine(sampleSet().runs[0]);
    std::ofstream(dir / "auto.jsonl") << line << "\n" << line.substr(0, line.size() / 2);

    const JsonlRuns fromSet = loadRuns(dir / "set.json");
    EXPECT_EQ(fromSet.runs.size(), 2u);
    EXPECT_TRUE(fromSet.warnings.empty());
    const JsonlRuns fromAutosave = loadRuns(dir / "auto.jsonl");
    EXPECT_EQ(fromAutosave.runs.size(), 1u);
    EXPECT_EQ(fromAutosave.warnings.size(), 1u) << "the cut last line is a warning";
    EXPECT_THROW(loadRuns(dir / "absent.json"), ResultFormatError);
    std::filesystem::remove_all(dir);

    RunResult r;
    EXPECT_EQ(statusText(r), "ok");
    r.status = RunStatus::Oom;
    r.failedPhase = Phase::Backward;
    EXPECT_EQ(statusText(r), "oom (backward)");
}

// Hostile files (issue 12): each is refused with a ResultFormatError that says why, and
// nothing crashes, recurses without bound or reads forever.
TEST(ResultIo, NumbersBeyondDoubleAreRefusedNotAborted) {
    EXPECT_NE(
        rejection(R"({"schema":"lmprof.results/1","runs":[],"note":1e400})").find("out of range"),
        std::string::npos);
    EXPECT_THROW(parseRun(R"({"id":"x","note":-1e999})"), ResultFormatError);
}

TEST(ResultIo, DeepNestingIsRefusedWhileParsing) {
    std::string deep(48000, '[');
    deep += std::string(48000, ']');
    const std::string text =
        R"({"schema":"lmprof.results/1","runs":[{"steps":[{"x":)" + deep + "}]}]}";
    EXPECT_NE(rejection(text).find("nested deeper than"), std::string::npos);
    EXPECT_EQ(parseRunsJsonl(deep + "\n").warnings.size(), 1u);
}

TEST(ResultIo, LoadedConfigsFollowTheRulesOfNewOnes) {
    std::string text = toJson(sampleSet());
    const std::string dModel = "\"d_model\": 768";
    ASSERT_NE(text.find(dModel), std::string::npos);
    text.replace(text.find(dModel), dModel.size(), "\"d_model\": 0");
    EXPECT_NE(rejection(text).find("$.runs[0].config.model.d_model: must be between"),
              std::string::npos)
        << rejection(text);
    text = toJson(sampleSet());
    const std::string batch = "\"batch_size\": 4";
    text.replace(text.find(batch), batch.size(), "\"batch_size\": -4");
    EXPECT_NE(rejection(text).find("$.runs[0].config.batch_size"), std::string::npos);
    text = toJson(sampleSet());
    const std::string index = "\"index\": 0";
    text.replace(text.find(index), index.size(), "\"index\": 999");
    EXPECT_NE(rejection(text).find("$.runs[0].steps[0].index: step 999 is outside"),
              std::string::npos)
        << rejection(text);
}

TEST(ResultIo, OnlyRegularFilesOfSaneSizeAreRead) {
    EXPECT_THROW(loadRuns("/dev/zero"), ResultFormatError);
    try {
        (void)loadRuns("/dev/zero");
    } catch (const ResultFormatError& e) {
        EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos);
    }
    EXPECT_THROW(loadRuns(std::filesystem::temp_directory_path()), ResultFormatError);
    EXPECT_THROW(loadRuns("/nonexistent/lmprof/runs.json"), ResultFormatError);
}

TEST(ResultIo, AnAppendAfterACutLineStartsOnAFreshLine) {
    const auto path = std::filesystem::temp_directory_path() / "lmprof_cut_append.jsonl";
    std::filesystem::remove(path);
    const ResultSet set = sampleSet();
    appendRunJsonl(path, set.runs[0]);
    { std::ofstream(path, std::ios::app) << "{\"id\": \"tiny-ctx"; } // a kill mid-write
    appendRunJsonl(path, set.runs[1]);
    const JsonlRuns loaded = loadRunsJsonl(path);
    ASSERT_EQ(loaded.runs.size(), 2u);
    EXPECT_EQ(loaded.runs[1].id, set.runs[1].id);
    ASSERT_EQ(loaded.warnings.size(), 1u);
    EXPECT_NE(loaded.warnings[0].find("line 2"), std::string::npos) << loaded.warnings[0];
    std::filesystem::remove(path);
}

// A configuration changed by a JSON patch in the result schema's names (demo scripts): known
// fields change, a preset name brings its dimensions, the rest stays; an unknown field or a
// wrong type is refused naming it.
TEST(ResultIo, PatchConfigChangesNamedFieldsAndRefusesUnknownOnes) {
    RunConfig base;
    base.seed = 7;
    const RunConfig c = patchConfig(
        base, R"({"context_length": 256, "precision": "bf16", "model": "small", "device": "cpu"})",
        "steps[1].config");
    EXPECT_EQ(c.contextLength, 256);
    EXPECT_EQ(c.precision, Precision::Bf16);
    EXPECT_EQ(c.model.preset, "small");
    EXPECT_EQ(c.model.dModel, presetModel("small")->dModel);
    EXPECT_EQ(c.device, "cpu");
    EXPECT_EQ(c.seed, 7u);                  // untouched
    EXPECT_EQ(c.batchSize, base.batchSize); // untouched
    const RunConfig custom = patchConfig(base, R"({"model": {"d_model": 64}})", "p");
    EXPECT_EQ(custom.model.dModel, 64);
    EXPECT_EQ(custom.model.preset, "custom"); // no longer the preset's dimensions
    RunConfig ownVocab;
    ownVocab.model.vocabSize = 32000;
    EXPECT_EQ(patchConfig(ownVocab, R"({"model": "small"})", "p").model.vocabSize, 32000);
    EXPECT_EQ(custom.model.numLayers, base.model.numLayers);
    const auto refusal = [&](const char* patch) {
        try {
            (void)patchConfig(base, patch, "steps[1].config");
        } catch (const ResultFormatError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(refusal(R"({"contxt": 5})").find("steps[1].config.contxt: not a configuration field"),
              std::string::npos);
    EXPECT_NE(refusal(R"({"model": {"layers": 5}})").find("steps[1].config.model.layers"),
              std::string::npos);
    EXPECT_NE(refusal(R"({"model": "huge"})").find("'huge' is not a preset"), std::string::npos);
    EXPECT_NE(refusal(R"({"context_length": "long"})").find("context_length"), std::string::npos);
    EXPECT_NE(refusal(R"([1, 2])").find("must be an object"), std::string::npos);
}

// Integers never wrap: a value beyond its field's type is "out of range", with the path and
// the value as written (4294967297 used to read as 1 measured step; 10^12 as -727379968).
TEST(ResultIo, IntegersBeyondTheirFieldsTypeAreOutOfRange) {
    const auto base = nlohmann::json::parse(toJson(sampleSet()));
    const auto said = [&](auto edit) {
        auto j = base;
        edit(j["runs"][0]);
        try {
            parseResultSet(j.dump());
            return std::string("accepted");
        } catch (const ResultFormatError& e) {
            return std::string(e.what());
        }
    };
    EXPECT_NE(said([](auto& run) { run["config"]["measure_steps"] = 4294967297LL; })
                  .find("$.runs[0].config.measure_steps: 4294967297 is out of range (an integer "
                        "from -2147483648 to 2147483647)"),
              std::string::npos)
        << said([](auto& run) { run["config"]["measure_steps"] = 4294967297LL; });
    EXPECT_NE(said([](auto& run) {
                  run["config"]["batch_size"] = 1000000000000LL;
              }).find("$.runs[0].config.batch_size: must be between"),
              std::string::npos)
        << "an int64 field in range of its type is left to validate()";
    EXPECT_NE(said([](auto& run) {
                  run["config"]["warmup_steps"] = 1000000000000LL;
              }).find("1000000000000 is out of range"),
              std::string::npos);
    EXPECT_NE(said([](auto& run) { run["config"]["seed"] = -1; })
                  .find("$.runs[0].config.seed: -1 is out of range (an integer from 0 to "
                        "18446744073709551615)"),
              std::string::npos);
    // 2^64 does not fit 64 bits: the parser keeps it as a double, still out of range.
    auto j = base;
    std::string text = j.dump();
    const std::string seed = "\"seed\":42";
    ASSERT_NE(text.find(seed), std::string::npos);
    text.replace(text.find(seed), seed.size(), "\"seed\":18446744073709551616");
    EXPECT_NE(rejection(text).find("$.runs[0].config.seed: 1.8446744073709552e+19 is out of range"),
              std::string::npos)
        << rejection(text);
    EXPECT_NE(said([](auto& run) {
                  run["steps"][0]["index"] = 4294967296LL;
              }).find("$.runs[0].steps[0].index: 4294967296 is out of range"),
              std::string::npos);
    EXPECT_EQ(said([](auto&) {}), "accepted");
}

// The op profile, the precision lab and the data-parallel block are read like every other
// duration and count: each hostile value is refused with its JSON path.
TEST(ResultIo, HostileOpProfileLabAndDdpValuesAreRefusedWithTheirPath) {
    ResultSet set = sampleSet();
    set.runs.resize(1);
    OpProfile p;
    p.firstStep = 1;
    p.stepCount = 2;
    p.phaseMs = {10.0, 20.0, 3.0};
    p.rows.push_back({Phase::Forward, "attention.softmax", "aten::softmax", OpKind::Op, 12.0, 1.5,
                      1.5, 0.0, false});
    p.timeline.step = 1;
    p.timeline.lanes = {"thread 1 (main)"};
    p.timeline.events.push_back(
        {"aten::mm", "mlp", Phase::Forward, OpKind::Op, 0, 0, 0.5, 1.0, 2e9, "[4, 8]", false});
    set.runs[0].opProfile = std::make_shared<const OpProfile>(p);
    DtypeReport d;
    d.model = "toy";
    d.precision = Precision::Bf16;
    d.device = "cpu";
    d.autocast = "bf16";
    d.rows.push_back({"fc1", "Linear", 1, "fp32", "fp32", "bf16", "fp32", ""});
    set.precisionLab.dtypes.push_back(d);
    const auto base = nlohmann::json::parse(toJson(set));
    ASSERT_NO_THROW(parseResultSet(base.dump()));
    const auto refused = [&](auto edit, const std::string& path) {
        auto j = base;
        edit(j);
        try {
            parseResultSet(j.dump());
            ADD_FAILURE() << "accepted, expected a refusal at " << path;
        } catch (const ResultFormatError& e) {
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        }
    };
    const std::string op = "$.runs[0].op_profile";
    refused([](auto& j) { j["runs"][0]["op_profile"]["rows"][0]["self_ms"] = 1e308; },
            op + ".rows[0].self_ms: a duration of 1e+308 ms is outside 0 to 1e9 ms");
    refused([](auto& j) { j["runs"][0]["op_profile"]["rows"][0]["calls"] = -3; },
            op + ".rows[0].calls: -3 is outside 0 to");
    refused([](auto& j) { j["runs"][0]["op_profile"]["rows"][0]["flops"] = -1.0; },
            op + ".rows[0].flops");
    refused([](auto& j) { j["runs"][0]["op_profile"]["headline"]["matmul_forward_share"] = 7.0; },
            op + ".headline.matmul_forward_share: 7 is outside 0 to 1");
    refused([](auto& j) { j["runs"][0]["op_profile"]["phase_ms"]["backward"] = -20.0; },
            op + ".phase_ms.backward");
    // The run has 5 warmup + 10 measured steps (0 to 14); the profile starts at step 1.
    refused([](auto& j) { j["runs"][0]["op_profile"]["first_step"] = 15; }, op + ".first_step");
    refused([](auto& j) { j["runs"][0]["op_profile"]["step_count"] = 15; }, op + ".step_count");
    refused([](auto& j) { j["runs"][0]["op_profile"]["rows"] = nullptr; },
            op + ".rows: expected an array");
    refused([](auto& j) { j["runs"][0]["op_profile"]["timeline"]["step"] = -1; },
            op + ".timeline.step");
    refused([](auto& j) { j["runs"][0]["op_profile"]["timeline"]["events"][0]["dur_ms"] = -1.0; },
            op + ".timeline.events[0].dur_ms");
    refused([](auto& j) { j["precision_lab"]["dtypes"][0]["rows"][0]["depth"] = -2; },
            "$.precision_lab.dtypes[0].rows[0].depth");

    set.runs = {ddpRun()};
    const auto ddp = nlohmann::json::parse(toJson(set));
    auto j = ddp;
    j["runs"][0]["ddp"]["ranks"][0]["steps"][0]["bytes"] = -5;
    EXPECT_NE(rejection(j.dump()).find("$.runs[0].ddp.ranks[0].steps[0].bytes: -5 is outside 0"),
              std::string::npos)
        << rejection(j.dump());
    j = ddp;
    j["runs"][0]["ddp"]["buckets"] = -1;
    EXPECT_NE(rejection(j.dump()).find("$.runs[0].ddp.buckets"), std::string::npos);
}

TEST(ResultIo, ExecutionVariantsRoundTripDefaultWhenAbsentAndRefuseUnknownNames) {
    ResultSet set = sampleSet();
    set.runs[0].config.attention = AttentionKind::SdpaFlash;
    set.runs[0].config.tf32 = true;
    std::string text = toJson(set);
    EXPECT_NE(text.find("\"attention\": \"sdpa-flash\""), std::string::npos);
    EXPECT_NE(text.find("\"tf32\": \"on\""), std::string::npos);
    const ResultSet back = parseResultSet(text);
    EXPECT_EQ(back.runs[0].config.attention, AttentionKind::SdpaFlash);
    EXPECT_TRUE(back.runs[0].config.tf32);
    EXPECT_EQ(back.runs[1].config.attention, AttentionKind::Naive);

    // A file from before 1.4 has neither: the defaults.
    nlohmann::ordered_json old = nlohmann::ordered_json::parse(toJson(sampleSet()));
    for (auto& run : old["runs"]) {
        run["config"].erase("attention");
        run["config"].erase("tf32");
    }
    const std::string stripped = old.dump(1);
    ASSERT_EQ(stripped.find("\"attention\""), std::string::npos);
    const ResultSet legacy = parseResultSet(stripped);
    EXPECT_EQ(legacy.runs[0].config.attention, AttentionKind::Naive);
    EXPECT_FALSE(legacy.runs[0].config.tf32);

    const size_t at = text.find("\"sdpa-flash\"");
    text.replace(at, 12, "\"fastest\"");
    EXPECT_EQ(rejection(text), "$.runs[0].config.attention: 'fastest' is not one of naive, sdpa, "
                               "sdpa-flash, sdpa-efficient, sdpa-math, sdpa-cudnn");
}

// A CUDA graph run and the GPU's busy share: the capture, each replay's mark and kernel time,
// the two shares, written with the host-bound mark (recomputed when read, never trusted) and
// absent from CPU runs, so their files do not grow.
TEST(ResultIo, GraphCaptureAndBusySharesRoundTripAndAreBounded) {
    ResultSet set = sampleSet();
    RunResult& r = set.runs[0];
    r.graph = GraphCapture{41.5, 123456789};
    r.steps.back().graphReplay = true;
    r.steps.back().kernelMs = 0.5 * r.steps.back().totalMs;
    r.summary.gpuBusy = 0.42;
    r.summary.gpuBusyNvml = 0.5;
    set.runs[1].busyNote = "no kernel time: CUPTI is missing";
    std::string text = toJson(set);
    EXPECT_NE(text.find("\"host_bound\": true"), std::string::npos);
    EXPECT_EQ(text.find("host_bound"), text.rfind("host_bound")) << "only the run with a share";
    const ResultSet back = parseResultSet(text);
    ASSERT_TRUE(back.runs[0].graph);
    EXPECT_DOUBLE_EQ(back.runs[0].graph->captureMs, 41.5);
    EXPECT_EQ(back.runs[0].graph->poolBytes, 123456789);
    EXPECT_TRUE(back.runs[0].steps.back().graphReplay);
    EXPECT_FALSE(back.runs[0].steps.front().graphReplay);
    EXPECT_EQ(back.runs[0].steps.back().kernelMs, r.steps.back().kernelMs);
    EXPECT_EQ(back.runs[0].summary.gpuBusy, 0.42);
    EXPECT_EQ(back.runs[0].summary.gpuBusyNvml, 0.5);
    EXPECT_EQ(hostBound(back.runs[0].summary), std::optional(true));
    EXPECT_FALSE(back.runs[1].graph);
    EXPECT_EQ(back.runs[1].busyNote,
              std::optional<std::string>("no kernel time: CUPTI is missing"));
    EXPECT_EQ(hostBound(back.runs[1].summary), std::nullopt);

    text.replace(text.find("\"gpu_busy\": 0.42"), 16, "\"gpu_busy\": 1.42");
    EXPECT_EQ(rejection(text), "$.runs[0].summary.gpu_busy: a share must be between 0 and 1");
    text = toJson(set);
    text.replace(text.find("\"pool_bytes\": 123456789"), 23, "\"pool_bytes\": -1");
    EXPECT_NE(rejection(text).find("$.runs[0].cuda_graph.pool_bytes"), std::string::npos)
        << rejection(text);
}
