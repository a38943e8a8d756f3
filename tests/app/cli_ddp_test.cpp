// lmprof-cli ddp end to end (docs/DISTRIBUTED.md): two local ranks on Gloo, as processes,
// under the launcher or torchrun's environment, a rank killed mid-run; and a sweep split in
// shards across machines and merged back.

#include "cli_test_util.h"

using namespace lmprof_cli_test;

namespace {

const std::string kDdpTiny = "--model tiny --ctx 16 --batch 2 --warmup 1 --steps 2 --device cpu "
                             "--vocab 256 --sample-hz 0 --telemetry-hz 0 -q";

} // namespace

TEST(Cli, DdpRunsEveryStrategyOnTwoRanksWithIdenticalParameters) {
    const auto json = tempDir() / "ddp.json";
    const Result r = cli("ddp --world-size 2 --strategy naive,flat,bucketed --bucket-mb 0.1 " +
                         kDdpTiny + " --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("Data-parallel overhead"), std::string::npos) << r.output;
    const auto set = readJson(json);
    ASSERT_EQ(set["runs"].size(), 3u);
    for (const auto& run : set["runs"]) {
        SCOPED_TRACE(run["id"].get<std::string>());
        EXPECT_EQ(run["status"], "ok");
        EXPECT_EQ(run["config"]["ddp"]["world_size"], 2);
        EXPECT_EQ(run["ddp"]["parameters_identical"], true);
        ASSERT_EQ(run["ddp"]["ranks"].size(), 2u);
        for (const auto& rank : run["ddp"]["ranks"]) {
            EXPECT_EQ(rank["steps"].size(), 3u);
            EXPECT_TRUE(rank["error"].is_null());
        }
    }
    EXPECT_EQ(set["runs"][2]["config"]["ddp"]["strategy"], "bucketed");
    // show reads it back with the same tables.
    const Result show = cli("show " + json.string());
    EXPECT_EQ(show.code, 0) << show.output;
    EXPECT_NE(show.output.find("Data-parallel overhead"), std::string::npos) << show.output;
}

TEST(Cli, DdpRefusesBadFlagsNamingThem) {
    // Arguments, environment, exit code, and what the message says.
    const std::tuple<std::string, std::string, int, std::string> cases[] = {
        {"--world-size 0", "", 2, "--world-size"},
        {"--strategy ring", "", 2, "--strategy: 'ring' is not one of naive, flat, bucketed"},
        {"--backend mpi", "", 2, "--backend"},
        {"--mode forward", "", 2, "--mode (ddp)"},
        {"--master-port 29999 --token-file /nonexistent", "", 1, "--token-file is for --connect"},
        {"", "RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1", 2,
         "RANK=2 must be between 0 and 1"},
    };
    for (const auto& [args, env, code, says] : cases) {
        const Result r = cli("ddp " + args + " " + kDdpTiny, env);
        EXPECT_EQ(r.code, code) << args << env;
        EXPECT_NE(r.output.find(says), std::string::npos) << r.output;
    }
}

// A rank killed mid-run: the other ends with an error well within 30 s, the finished steps
// are kept in the result set, and the launcher says how the rank ended.
TEST(Cli, DdpAKilledRankEndsTheRunWithAnErrorAndKeepsFinishedSteps) {
    const auto json = tempDir() / "ddp-killed.json";
    const auto t0 = std::chrono::steady_clock::now();
    const Result r = cli("ddp --world-size 2 --strategy naive --timeout-s 20 --model tiny "
                         "--ctx 16 --batch 2 --warmup 1 --steps 8 --device cpu --vocab 256 "
                         "--sample-hz 0 --telemetry-hz 0 -q --json " +
                             json.string(),
                         "LMPROF_FAULT_DDP_KILL=1:3");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_LT(seconds, 30.0) << r.output;
    EXPECT_NE(r.output.find("rank 1 was killed by signal 9"), std::string::npos) << r.output;
    const auto set = readJson(json);
    const auto& run = set["runs"][0];
    EXPECT_EQ(run["status"], "error");
    EXPECT_GE(run["steps"].size(), 3u) << "rank 0 keeps the steps it finished";
    ASSERT_EQ(run["ddp"]["ranks"].size(), 2u);
    EXPECT_NE(run["ddp"]["ranks"][1]["error"].get<std::string>().find("sent no record"),
              std::string::npos);
    EXPECT_TRUE(run["ddp"]["parameters_identical"].is_null());
}

// The same binary as one rank of a torchrun-style launch: two processes started by hand
// with torchrun's variables; rank 0 writes the result set.
TEST(Cli, DdpRunsAsARankUnderTorchrunsEnvironment) {
    const auto json = tempDir() / "ddp-torchrun.json";
    const std::string port = std::to_string(20000 + ::getpid() % 20000);
    const std::string env = "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port;
    const std::string args = "ddp --strategy flat " + kDdpTiny;
    const Result r = cli(args + " > /dev/null 2>&1 & RANK=0 " + env + " " LMPROF_CLI_PATH " " +
                             args + " --json " + json.string() + "; code=$?; wait; exit $code",
                         "RANK=1 " + env);
    ASSERT_EQ(r.code, 0) << r.output;
    const auto set = readJson(json);
    EXPECT_EQ(set["runs"][0]["ddp"]["parameters_identical"], true);
    EXPECT_EQ(set["runs"][0]["ddp"]["ranks"].size(), 2u);
}

// A sweep split in two shards (two machines) and merged back: every configuration once,
// a file given twice reported as duplicates, a bad --shard named.
TEST(Cli, SweepShardsMergeBackIntoTheWholeSweep) {
    const auto dir = tempDir();
    const std::string sweep =
        "sweep --models tiny --ctx 16,24,32 --batch 1 --warmup 0 --steps 1 --device cpu -q "
        "--sample-hz 0 --telemetry-hz 0 --vocab 256";
    const auto a = dir / "shard1.json";
    const auto b = dir / "shard2.json";
    Result r = cli(sweep + " --shard 1/2 --json " + a.string());
    ASSERT_EQ(r.code, 0) << r.output;
    r = cli(sweep + " --shard 2/2 --json " + b.string());
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_EQ(readJson(a)["runs"].size(), 2u); // configurations 1 and 3
    EXPECT_EQ(readJson(b)["runs"].size(), 1u); // configuration 2
    const auto all = dir / "all.json";
    r = cli("merge " + a.string() + " " + b.string() + " --json " + all.string());
    ASSERT_EQ(r.code, 0) << r.output;
    const auto merged = readJson(all);
    ASSERT_EQ(merged["runs"].size(), 3u);
    std::set<int64_t> contexts;
    std::set<std::string> ids;
    for (const auto& run : merged["runs"]) {
        contexts.insert(run["config"]["context_length"].get<int64_t>());
        ids.insert(run["id"].get<std::string>());
    }
    EXPECT_EQ(contexts, (std::set<int64_t>{16, 24, 32}));
    EXPECT_EQ(ids.size(), 3u) << "ids stay unique";
    r = cli("merge " + a.string() + " " + a.string() + " --json " + (dir / "dup.json").string());
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("duplicate:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("2 duplicate(s) dropped"), std::string::npos) << r.output;
    EXPECT_EQ(readJson(dir / "dup.json")["runs"].size(), 2u);
    r = cli(sweep + " --shard 3/2");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.output.find("--shard: '3/2' is not i/n"), std::string::npos) << r.output;
    r = cli("merge " + a.string() + " " + (dir / "missing.json").string());
    EXPECT_EQ(r.code, 2) << r.output;
}
