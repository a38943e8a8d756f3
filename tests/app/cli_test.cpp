// lmprof-cli end to end: exit codes of README.md ("lmprof-cli"), messages that name the flag, files
// that round-trip through `show`, sweeps, ops, the precision lab and the flags commands share.
// Runs the real binary (path from CMake). Serve: cli_serve_test.cpp; study:
// cli_study_test.cpp; ddp and sweep shards: cli_ddp_test.cpp; sweep lists: cli_sweep_test.cpp.

#include "cli_test_util.h"

using namespace lmprof_cli_test;

TEST(Cli, RunWritesAResultSetThatShowReadsBack) {
    const auto json = tempDir() / "run.json";
    const Result run = cli("run " + kTiny + " --json " + json.string());
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_NE(run.output.find("| tiny  | 16      | 1     | fp32      | train |"), std::string::npos)
        << run.output;
    ASSERT_TRUE(std::filesystem::exists(json));
    const Result show = cli("show " + json.string() + " --format markdown");
    EXPECT_EQ(show.code, 0) << show.output;
    EXPECT_NE(show.output.find("| tiny | 16 | 1 | fp32 | train |"), std::string::npos)
        << show.output;
    const Result csv = cli("show " + json.string() + " --format csv");
    EXPECT_EQ(csv.code, 0);
    EXPECT_EQ(csv.output.rfind("id,model,d_model,", 0), 0u) << csv.output;
}

TEST(Cli, MemorySnapshotIsWrittenAndBadSnapshotFlagsAreNamed) {
    const auto dir = tempDir();
    const auto trace = dir / "snapshot.json";
    const auto json = dir / "with-snapshot.json";
    std::filesystem::remove(trace);
    Result r =
        cli("run " + kTiny + " --memory-snapshot " + trace.string() + " --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("memory snapshot of step(s) 0..0"), std::string::npos) << r.output;
    std::ifstream in(trace);
    std::string head(64, '\0');
    in.read(head.data(), 64);
    EXPECT_NE(head.find("\"schema\": \"lmprof.alloc-trace/1\""), std::string::npos) << head;
    // The result set records where the snapshot went.
    std::ifstream set(json);
    const std::string text((std::istreambuf_iterator<char>(set)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find(trace.string()), std::string::npos);

    r = cli("run " + kTiny + " --memory-snapshot " + trace.string() + " --snapshot-step 7");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--snapshot-step (memory_snapshot.first_step): step 7 is outside"),
              std::string::npos)
        << r.output;
    r = cli("run " + kTiny + " --sample-hz -5");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--sample-hz (sample_hz)"), std::string::npos) << r.output;
}

TEST(Cli, BadInputExitsWithCode2AndNamesTheFlag) {
    Result r = cli("run --model custom --d-model 100 --heads 3 --d-ff 64 --layers 1 --device cpu");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--heads (model.num_heads): d_model 100 is not divisible"),
              std::string::npos)
        << r.output;
    r = cli("run --model custom --d-model 64 --device cpu");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--d-ff (model.d_ff): required with --model custom"), std::string::npos)
        << r.output;
    r = cli("run --model tiny --precision fp8");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--precision (precision): 'fp8' is not one of"), std::string::npos);
    r = cli("run --model tiny --ctx notanumber");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--ctx"), std::string::npos) << r.output;
    r = cli("run --model small --layers 3");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("need --model custom"), std::string::npos);
    r = cli("run --model tiny --device cuda:3");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--device (device):"), std::string::npos) << r.output;
    r = cli("frobnicate");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(cli("--help").code, 0);
}

TEST(Cli, ShowRejectsForeignAndCorruptFilesWithCode2) {
    const auto dir = tempDir();
    std::ofstream(dir / "foreign.json") << R"({"schema": "chrome.trace/1", "traceEvents": []})";
    std::ofstream(dir / "corrupt.json") << R"({"schema": "lmprof.results/1", "runs": [{"id":)";
    Result r = cli("show " + (dir / "foreign.json").string());
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("not an lmprof result set"), std::string::npos) << r.output;
    r = cli("show " + (dir / "corrupt.json").string());
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("not valid JSON"), std::string::npos) << r.output;
    r = cli("show " + (dir / "missing.json").string());
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("missing.json"), std::string::npos);
}

TEST(Cli, OutOfMemoryRunExitsWithCode3AndIsSaved) {
    const auto json = tempDir() / "oom.json";
    const Result r = cli("run " + kTiny + " --json " + json.string(), "LMPROF_FAULT_OOM=backward");
    EXPECT_EQ(r.code, 3) << r.output;
    EXPECT_NE(r.output.find("oom (backward)"), std::string::npos) << r.output;
    std::ifstream in(json);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"status\": \"oom\""), std::string::npos);
    EXPECT_NE(text.find("\"failed_phase\": \"backward\""), std::string::npos);
}

TEST(Cli, SweepRunsCheapestFirstSkipsAfterOomAndAutosaves) {
    const auto dir = tempDir();
    const auto jsonl = dir / "sweep.jsonl";
    std::filesystem::remove(jsonl);
    const Result r = cli("sweep --models tiny --ctx 32,16 --precision fp32 --mode forward,train "
                         "--batch 1 --warmup 0 --steps 1 --device cpu -q --format csv "
                         "--autosave " +
                         jsonl.string());
    ASSERT_EQ(r.code, 0) << r.output;
    // Four runs, ordered by FLOPs: forward@16, forward@32, train@16, train@32.
    const auto first = r.output.find("tiny-ctx16-fp32-forward");
    const auto second = r.output.find("tiny-ctx32-fp32-forward");
    const auto third = r.output.find("tiny-ctx16-fp32-train");
    ASSERT_NE(first, std::string::npos) << r.output;
    EXPECT_LT(first, second);
    EXPECT_LT(second, third);
    std::ifstream in(jsonl);
    int lines = 0;
    for (std::string l; std::getline(in, l);) {
        ++lines;
    }
    EXPECT_EQ(lines, 4);

    // With every run out of memory in forward, the larger context is skipped.
    const Result oom = cli("sweep --models tiny --ctx 16,32 --mode forward --batch 1 --warmup 0 "
                           "--steps 1 --device cpu -q",
                           "LMPROF_FAULT_OOM=forward");
    EXPECT_EQ(oom.code, 3) << oom.output;
    EXPECT_NE(oom.output.find("skipped after out-of-memory in tiny-ctx16-fp32-forward"),
              std::string::npos)
        << oom.output;
}

TEST(Cli, SigkillDuringASweepLosesNoFinishedRun) {
    const auto dir = tempDir();
    const auto jsonl = dir / "killed.jsonl";
    std::filesystem::remove(jsonl);
    const std::string autosave = jsonl.string();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // Twelve short runs; the test kills the sweep after the second one has been saved.
        const char* argv[] = {LMPROF_CLI_PATH,
                              "sweep",
                              "--models",
                              "tiny",
                              "--ctx",
                              "8,12,16,20,24,28,32,36,40,44,48,52",
                              "--batch",
                              "1",
                              "--warmup",
                              "0",
                              "--steps",
                              "40",
                              "--device",
                              "cpu",
                              "-q",
                              "--autosave",
                              autosave.c_str(),
                              nullptr};
        freopen("/dev/null", "w", stdout);
        execv(LMPROF_CLI_PATH, const_cast<char**>(argv));
        _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (countLines(jsonl) < 2 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the sweep ended first";

    const int saved = countLines(jsonl);
    ASSERT_GE(saved, 2);
    EXPECT_LT(saved, 12); // it really was killed mid-sweep
    const Result show = cli("show " + jsonl.string() + " --format csv");
    EXPECT_EQ(show.code, 0) << show.output;
    EXPECT_EQ(std::count(show.output.begin(), show.output.end(), '\n'), saved + 1)
        << show.output; // header + one row per saved run
    size_t okRows = 0;
    for (size_t at = show.output.find(",ok,"); at != std::string::npos;
         at = show.output.find(",ok,", at + 1)) {
        ++okRows;
    }
    EXPECT_EQ(okRows, static_cast<size_t>(saved));

    // Simulate a kill in the middle of a write: the half line is skipped with a warning.
    { std::ofstream(jsonl, std::ios::app) << "{\"id\": \"tiny-ctx"; }
    const Result cut = cli("show " + jsonl.string() + " --format csv");
    EXPECT_EQ(cut.code, 0) << cut.output;
    EXPECT_NE(cut.output.find("warning"), std::string::npos);
    EXPECT_NE(cut.output.find("incomplete last line"), std::string::npos) << cut.output;
}

TEST(Cli, CompareTwoResultSetsAndFailOnRegression) {
    const auto dir = tempDir();
    const auto a = dir / "a.json";
    const auto b = dir / "b.json";
    ASSERT_EQ(cli("run " + kTiny + " --json " + a.string()).code, 0);
    ASSERT_EQ(cli("run " + kTiny + " --json " + b.string()).code, 0);
    const Result r = cli("compare " + a.string() + " " + b.string());
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("| tiny  | 16      | 1     | fp32      | train |"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("1 matched"), std::string::npos) << r.output;
    const Result foreign = cli("compare " + a.string() + " " + (dir / "nope.json").string());
    EXPECT_EQ(foreign.code, 2);
    EXPECT_NE(foreign.output.find("nope.json"), std::string::npos);
    EXPECT_EQ(cli("compare " + a.string() + " " + b.string() + " --format csv").code, 0);
}

// lmprof-cli ratio: the log-ratio test for per-round means of two programs (the GPU kit's
// benchmark set). By hand: means 10.1 and 7.1333, ratio 0.70627; the log-ratio's standard
// error 0.02403 on 3.27 degrees of freedom (Welch–Satterthwaite), t_0.975 about 3.03
// (3.18 at 3, 2.78 at 4), so the interval is 0.70627 · exp(±0.0729) = [0.6566, 0.7597].
TEST(Cli, RatioGivesTheLogRatioIntervalAndVerdict) {
    const Result r = cli("ratio --a 10,10.5,9.8 --b 7.1,7.3,7.0 --format json");
    ASSERT_EQ(r.code, 0) << r.output;
    const auto j = nlohmann::json::parse(r.output);
    EXPECT_NEAR(j["ratio"].get<double>(), 0.70627, 1e-5);
    EXPECT_NEAR(j["low"].get<double>(), 0.6566, 1e-4);
    EXPECT_NEAR(j["high"].get<double>(), 0.7597, 1e-4);
    EXPECT_EQ(j["verdict"], "faster");
    const Result same = cli("ratio --a 10,10.1,9.9 --b 10,10.2,9.8");
    EXPECT_EQ(same.code, 0);
    EXPECT_NE(same.output.find("within noise"), std::string::npos) << same.output;
    const Result one = cli("ratio --a 5 --b 4");
    EXPECT_NE(one.output.find("untestable (fewer than 2 values a side)"), std::string::npos)
        << one.output;
    for (const char* bad :
         {"--a 10,x --b 1,2", "--a 10,-1 --b 1,2", "--a 10,,2 --b 1,2", "--a 2,1e999 --b 1,2"}) {
        const Result refused = cli(std::string("ratio ") + bad);
        EXPECT_EQ(refused.code, 2) << bad;
        EXPECT_NE(refused.output.find("--a: entry 2"), std::string::npos) << refused.output;
    }
}

TEST(Cli, ProfileOpsPrintsTheRegionTableAndOpsReadsItBack) {
    const auto dir = tempDir();
    const auto json = dir / "ops.json";
    const Result run = cli("run " + kTiny + " --profile-ops --json " + json.string());
    ASSERT_EQ(run.code, 0) << run.output;
    EXPECT_NE(run.output.find("Op profile of tiny-ctx16-fp32-train-1, step 1"), std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find("of the forward pass"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("| forward   | attention.softmax"), std::string::npos) << run.output;
    const auto trace = dir / "ops.tiny-ctx16-fp32-train-1.trace.json";
    EXPECT_TRUE(std::filesystem::exists(trace)) << run.output;

    const Result ops = cli("ops " + json.string() + " --by op --top 3 --phase backward");
    ASSERT_EQ(ops.code, 0) << ops.output;
    EXPECT_NE(ops.output.find("| backward | "), std::string::npos) << ops.output;
    EXPECT_EQ(ops.output.find("| forward "), std::string::npos) << ops.output;
    const Result csv = cli("ops " + json.string() + " --by row --format csv");
    ASSERT_EQ(csv.code, 0) << csv.output;
    EXPECT_NE(csv.output.find("run,phase,region,name,kind,calls/step,self ms"), std::string::npos)
        << csv.output;

    const Result badRun = cli("ops " + json.string() + " --run nope");
    EXPECT_EQ(badRun.code, 2);
    EXPECT_NE(badRun.output.find("no run with id 'nope'"), std::string::npos) << badRun.output;
    const Result badBy = cli("ops " + json.string() + " --by colour");
    EXPECT_EQ(badBy.code, 2);
    EXPECT_NE(badBy.output.find("--by"), std::string::npos) << badBy.output;
}

TEST(Cli, BadProfileStepIsRefusedNamingTheFlag) {
    const Result late = cli("run " + kTiny + " --profile-ops --profile-step 7");
    EXPECT_EQ(late.code, 2);
    EXPECT_NE(late.output.find("--profile-step (op_profile.first_step): step 7 is outside"),
              std::string::npos)
        << late.output;
    const Result negative = cli("run " + kTiny + " --profile-ops --profile-step -3");
    EXPECT_EQ(negative.code, 2);
    EXPECT_NE(negative.output.find("--profile-step"), std::string::npos) << negative.output;
    const Result noFlag = cli("run " + kTiny + " --profile-step 1");
    EXPECT_EQ(noFlag.code, 2);
    EXPECT_NE(noFlag.output.find("--profile-ops"), std::string::npos) << noFlag.output;
}

TEST(Cli, SweepProfilesEachRunAfterItsOwnWarmup) {
    const auto json = tempDir() / "sweep-ops.json";
    const Result r = cli("sweep --models tiny --ctx 16 --warmup 0,2 --batch 1 --steps 1 "
                         "--device cpu -q --profile-ops --json " +
                         json.string());
    ASSERT_EQ(r.code, 0) << r.output;
    const Result ops = cli("ops " + json.string() + " --by region --phase optimizer");
    ASSERT_EQ(ops.code, 0) << ops.output;
    EXPECT_NE(ops.output.find("-1, step 0"), std::string::npos) << ops.output;
    EXPECT_NE(ops.output.find("-2, step 2"), std::string::npos) << ops.output;
    EXPECT_NE(ops.output.find("optimizer.adamw"), std::string::npos) << ops.output;
}

TEST(Cli, ShowRefusesDevicesAndPipesAtOnce) {
    const Result zero = cli("show /dev/zero");
    EXPECT_EQ(zero.code, 2);
    EXPECT_NE(zero.output.find("/dev/zero: not a regular file"), std::string::npos) << zero.output;
    const auto fifo = tempDir() / "pipe.json";
    std::filesystem::remove(fifo);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const Result pipe = cli("compare " + fifo.string() + " " + fifo.string());
    EXPECT_EQ(pipe.code, 2);
    EXPECT_NE(pipe.output.find("not a regular file"), std::string::npos) << pipe.output;
}

TEST(Cli, SweepGoesOnWhenItsAutosaveCannotBeWritten) {
    const auto json = tempDir() / "sweep-no-autosave.json";
    const Result r = cli("sweep --models tiny --ctx 8,12 --batch 1 --warmup 0 --steps 1 "
                         "--device cpu -q --autosave /nonexistent-lmprof-dir/a.jsonl --json " +
                         json.string());
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("--autosave: cannot open autosave file"), std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("--autosave", r.output.find("--autosave") + 1), std::string::npos)
        << "said once: " << r.output;
    EXPECT_NE(r.output.find("| tiny  | 12 "), std::string::npos) << r.output;
    EXPECT_TRUE(std::filesystem::exists(json));
}

TEST(Cli, JsonTargetIsCheckedBeforeRunningAndNeverReplacedByNothing) {
    const auto dir = tempDir();
    const Result missing = cli("run " + kTiny + " --json /nonexistent-lmprof-dir/out.json");
    EXPECT_EQ(missing.code, 2);
    EXPECT_NE(missing.output.find("--json /nonexistent-lmprof-dir/out.json: its folder"),
              std::string::npos)
        << missing.output;
    EXPECT_EQ(missing.output.find("step 0 ("), std::string::npos) << "refused before running";
    const auto link = dir / "link.json";
    std::filesystem::remove(link);
    std::filesystem::create_symlink("/dev/null", link);
    const Result linked = cli("run " + kTiny + " --json " + link.string());
    EXPECT_EQ(linked.code, 2);
    EXPECT_NE(linked.output.find("is not a regular file"), std::string::npos) << linked.output;
    EXPECT_TRUE(std::filesystem::is_symlink(link));

    // A run cancelled before it measured anything goes beside an existing result file.
    const auto json = dir / "keep.json";
    { std::ofstream(json) << "precious"; }
    const Result cancelled =
        cli("run --model tiny --ctx 16 --batch 1 --warmup 0 --steps 1 --device cpu -q --json " +
                json.string(),
            "LMPROF_FAULT_OOM=forward");
    EXPECT_NE(cancelled.output.find("no run measured a step"), std::string::npos)
        << cancelled.output;
    std::ifstream kept(json);
    std::string text((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "precious");
    EXPECT_TRUE(std::filesystem::exists(dir / "keep.unmeasured.json"));
}

// Each message names the flag, the value and the rule (issue: CLI11's own messages said
// "Could not convert", "At Most 1 required", read '' as 0 and -1 as 2^64-1).
TEST(Cli, BadValuesNameTheFlagTheValueAndTheRule) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"sweep --models , --ctx 16", "--models: entry 1 of ',' is empty"},
        {"sweep --models tiny,,small", "--models: entry 2 of 'tiny,,small' is empty"},
        {"sweep --ctx 16,32,16", "--ctx: entry 3 of '16,32,16' repeats '16' (each entry once)"},
        {"run --model custom --d-model 0 --d-ff 64 --layers 1 --heads 1",
         "--d-model (model.d_model): must be between 1 and"},
        {"run --ctx ''", "--ctx: needs a value, got ''"},
        {"run --steps 1 --steps 2", "--steps: given 2 times ('1', '2'); give it once"},
        {"sweep --ctx 16 --ctx 32", "--ctx: given 2 times ('16', '32'); give it once with a "
                                    "comma-separated list"},
        {"run --steps 99999999999",
         "--steps: '99999999999' is out of range (-2147483648 to 2147483647)"},
        {"run --seed -1", "--seed: '-1' is negative; it must be 0 or more"},
        {"sweep --ctx 16 --seed 0,-1", "--seed (seed): must not be negative, got -1"},
        {"sweep --ctx 16 --threads 1,4294967297",
         "--threads (threads): must be between 0 and 4096, got 4294967297"},
        {"run --steps 3x", "--steps: '3x' is not a whole number"},
        {"run --sample-hz nan", "--sample-hz: 'nan' is not a finite number"},
        {"run --json ''", "--json: needs a value, got ''"},
        {"sweep --autosave ''", "--autosave: needs a value, got ''"},
        {"run --memory-snapshot ''", "--memory-snapshot: needs a value, got ''"},
    };
    for (const auto& [args, message] : cases) {
        const Result r = cli(args + " --device cpu -q");
        EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
        EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    }
}

// show/compare say when there is nothing to show or compare, instead of an empty table
// and exit 0; values no run can have are refused by the loader; a pair without measured
// steps shows no ratio.
TEST(Cli, NothingToShowOrCompareIsAnError) {
    const auto dir = tempDir();
    std::ofstream(dir / "empty.jsonl").close();
    Result r = cli("show " + (dir / "empty.jsonl").string());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("empty.jsonl: the file holds no run"), std::string::npos) << r.output;
    std::ofstream(dir / "corrupt.jsonl") << "garbage\n{\"x\": 1}\n";
    r = cli("show " + (dir / "corrupt.jsonl").string());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("line 1: skipped"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("line 2: skipped"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("no readable run (2 line(s) skipped)"), std::string::npos) << r.output;

    const auto a = dir / "a16.json";
    ASSERT_EQ(cli("run " + kTiny + " --json " + a.string()).code, 0);
    const auto b = dir / "b32.jsonl.txt"; // an autosave file under another name
    ASSERT_EQ(cli("sweep --models tiny --ctx 32 --batch 1 --warmup 1 --steps 2 --device cpu -q "
                  "--autosave " +
                  b.string())
                  .code,
              0);
    r = cli("compare " + a.string() + " " + b.string() + " --fail-on-regression");
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("no run of " + b.string() + " matches an ok run of"), std::string::npos)
        << r.output;

    auto doc = nlohmann::json::parse(std::ifstream(a));
    auto huge = doc;
    huge["runs"][0]["steps"][1]["total_ms"] = 1e308;
    std::ofstream(dir / "huge.json") << huge.dump();
    r = cli("compare " + a.string() + " " + (dir / "huge.json").string());
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("$.runs[0].steps[1].total_ms: a duration of 1e+308 ms is outside 0 "
                            "to 1e9 ms"),
              std::string::npos)
        << r.output;

    auto none = doc;
    none["runs"][0]["steps"] = nlohmann::json::array();
    std::ofstream(dir / "none.json") << none.dump();
    r = cli("compare " + a.string() + " " + (dir / "none.json").string());
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(r.output.find("0.000x"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("| -   | -      | - | too few steps |"), std::string::npos) << r.output;
}

// A snapshot path that is not UTF-8 (Linux allows any bytes) is written, and so is the
// result set that names it.
TEST(Cli, APathThatIsNotUtf8IsSaved) {
    const auto dir = tempDir();
    const std::string snapshot = (dir / "snap-\xff.json").string();
    const auto json = dir / "utf8.json";
    const Result r =
        cli("run " + kTiny + " --memory-snapshot '" + snapshot + "' --json " + json.string());
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(std::filesystem::exists(snapshot));
    EXPECT_EQ(cli("show " + json.string()).code, 0);
}

TEST(Cli, PrecisionLabPrintsItsTablesSavesThemAndShowReadsThemBack) {
    const auto dir = tempDir();
    const std::string json = (dir / "lab.json").string();
    Result r = cli("precision accumulate --device cpu --max-terms 1000 --json " + json);
    ASSERT_EQ(r.code, 0) << r.output;
    for (const char* text : {"10.0001", "9.9531", "10.0021", "fp16 += bf16", "sum() of bf16"}) {
        EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
    }
    r = cli("show " + json);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("9.9531"), std::string::npos) << r.output;

    r = cli("precision dtypes --model toy --precision fp16 --device cpu --format markdown");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("| fc1"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("lower-precision list"), std::string::npos) << r.output;

    // Refusals name the flag and exit 2 before anything runs.
    r = cli("precision dtypes --precision fp8");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--precision: 'fp8' is not one of"), std::string::npos) << r.output;
    r = cli("precision dtypes --model gpt5");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--model: 'gpt5' is not one of toy,tiny"), std::string::npos)
        << r.output;
    r = cli("precision accumulate --max-terms 5");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--max-terms"), std::string::npos) << r.output;
    r = cli("precision dtypes --device tpu");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--device: 'tpu' is not one of"), std::string::npos) << r.output;
    r = cli("precision");
    EXPECT_EQ(r.code, 2) << r.output;
}

TEST(Cli, GradNormsNeedABackward) {
    Result r = cli("run " + kTiny + " --mode forward --grad-norms");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--grad-norms"), std::string::npos) << r.output;
    // A sweep asks them of the runs that have a backward.
    const std::string json = (tempDir() / "norms.json").string();
    r = cli("sweep --models tiny --ctx 16 --batch 1 --warmup 0 --steps 1 --device cpu -q "
            "--mode forward,train --grad-norms --json " +
            json);
    ASSERT_EQ(r.code, 0) << r.output;
    std::ifstream in(json);
    const auto set = nlohmann::json::parse(in);
    ASSERT_EQ(set["runs"].size(), 2u);
    for (const auto& run : set["runs"]) {
        const bool train = run["config"]["mode"] == "train";
        EXPECT_EQ(run["config"]["grad_norms"], train);
        EXPECT_EQ(run["steps"][0].contains("grad_norms"), train);
        EXPECT_TRUE(run["steps"][0].contains("loss"));
    }
}

namespace {

// Each option of a command, by long name, with the kind of value its --help shows: INT,
// NUMBER, LIST, TEXT (free text or one of named choices) or FLAG (none).
std::map<std::string, std::string> optionsOf(const std::string& command) {
    std::map<std::string, std::string> out;
    std::istringstream help(cli(command + " --help").output);
    const std::regex option(R"(^  (?:-[a-zA-Z],)?(--[a-z0-9-]+)(?: (\S+))?)");
    for (std::string line; std::getline(help, line);) {
        std::smatch m;
        if (std::regex_search(line, m, option)) {
            const std::string type = m[2];
            out[m[1]] = type.empty()                                            ? "FLAG"
                        : (type == "INT" || type == "NUMBER" || type == "LIST") ? type
                                                                                : "TEXT";
        }
    }
    return out;
}

} // namespace

// The flags commands share mean the same everywhere: every command that starts engine work
// (it takes --device) takes -q, and a shared flag takes the same kind of value in each
// command (a sweep may take a LIST of what the others take one of).
TEST(Cli, CommonFlagsAreConsistentAcrossEverySubcommand) {
    const std::vector<std::string> commands{"run",
                                            "sweep",
                                            "ddp",
                                            "serve",
                                            "precision accumulate",
                                            "precision dtypes",
                                            "show",
                                            "ops",
                                            "compare",
                                            "merge",
                                            "columns",
                                            "ratio",
                                            "devices"};
    std::map<std::string, std::map<std::string, std::string>> byOption; // option -> command -> type
    for (const auto& command : commands) {
        const auto options = optionsOf(command);
        ASSERT_TRUE(options.count("--help")) << command << ": no --help parsed";
        if (options.count("--device")) {
            EXPECT_TRUE(options.count("--quiet")) << command << " starts engine work but has no -q";
        }
        for (const auto& [name, type] : options) {
            byOption[name][command] = type;
        }
    }
    // ratio prints its own two formats (table, json); every other --format is a report's.
    byOption["--format"].erase("ratio");
    for (const auto& [name, types] : byOption) {
        std::string first, firstCommand;
        for (const auto& [command, type] : types) {
            if (command == "sweep" && type == "LIST") {
                continue;
            }
            if (firstCommand.empty()) {
                first = type, firstCommand = command;
            } else {
                EXPECT_EQ(type, first) << name << " takes " << type << " in " << command << " but "
                                       << first << " in " << firstCommand;
            }
        }
    }
    // A quiet precision run prints nothing but its table.
    const Result quiet = cli("precision accumulate --device cpu --max-terms 1000 -q");
    EXPECT_EQ(quiet.code, 0) << quiet.output;
}
