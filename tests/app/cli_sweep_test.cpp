// lmprof-cli sweep's lists beyond models, lengths and precisions: warmup counts, and the
// plain fields a sweep can list (ValueField::sweepAxis: seed, threads). Runs the real binary.

#include "cli_test_util.h"

using namespace lmprof_cli_test;

TEST(Cli, SweepTakesAListOfWarmupCounts) {
    const auto json = tempDir() / "warmups.json";
    const Result r = cli("sweep --models tiny --ctx 16 --mode forward --warmup 2,0 --batch 1 "
                         "--steps 2 --device cpu -q --format csv --json " +
                         json.string());
    ASSERT_EQ(r.code, 0) << r.output;
    std::ifstream in(json);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Two runs, fewer warmup steps first (the cheaper run), each with its own count.
    const auto zero = text.find("\"warmup_steps\": 0");
    const auto two = text.find("\"warmup_steps\": 2");
    ASSERT_NE(zero, std::string::npos) << text;
    ASSERT_NE(two, std::string::npos) << text;
    EXPECT_LT(zero, two);
    EXPECT_EQ(cli("sweep --models tiny --warmup 1,x --device cpu").code, 2);
    const Result negative = cli("sweep --models tiny --ctx 16 --warmup 0,-1 --device cpu -q");
    EXPECT_EQ(negative.code, 2) << negative.output;
    EXPECT_NE(negative.output.find("--warmup (warmup_steps)"), std::string::npos)
        << negative.output;
}

// Seeds and thread counts are axes like the others: every combination runs and keeps its
// values, the table shows the columns that tell its rows apart, and compare pairs each run
// with the one of the same seed and threads.
TEST(Cli, SweepListsSeedsAndThreadsAndTheTableTellsThemApart) {
    const auto json = tempDir() / "threads.json";
    const Result r = cli("sweep --models tiny --ctx 16 --mode forward --warmup 0 --batch 1 "
                         "--steps 1 --seed 0,7 --threads 1,2 --device cpu -q --json " +
                         json.string());
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("| Seed | Threads |"), std::string::npos) << r.output;
    std::ifstream in(json);
    const auto set = nlohmann::json::parse(in);
    std::set<std::pair<uint64_t, int>> ran;
    for (const auto& run : set.at("runs")) {
        ran.insert({run.at("config").at("seed").get<uint64_t>(),
                    run.at("config").at("threads").get<int>()});
    }
    EXPECT_EQ(ran, (std::set<std::pair<uint64_t, int>>{{0, 1}, {0, 2}, {7, 1}, {7, 2}}));

    const Result csv = cli("show " + json.string() + " --format csv");
    ASSERT_EQ(csv.code, 0) << csv.output;
    EXPECT_NE(csv.output.find(",seed,threads,"), std::string::npos) << csv.output;
    const Result compared = cli("compare " + json.string() + " " + json.string());
    EXPECT_NE(compared.output.find("4 matched"), std::string::npos) << compared.output;
}
