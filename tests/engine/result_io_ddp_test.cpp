// Data-parallel runs in result sets: their rank records round-trip, derived figures are
// written, and hostile blocks are refused with their path.

#include "lmprof/engine/ddp.h"
#include "lmprof/engine/result_io.h"
#include "result_samples.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace lmprof::engine;
using namespace lmprof::engine::test;

TEST(ResultIo, DataParallelRunsRoundTripAndDerivedFiguresAreWritten) {
    ResultSet set = sampleSet();
    set.runs = {ddpRun()};
    const std::string text = toJson(set);
    const ResultSet back = parseResultSet(text);
    const RunResult& r = back.runs.at(0);
    ASSERT_TRUE(r.config.ddp && r.ddp);
    EXPECT_EQ(r.config.ddp->strategy, DdpStrategy::Bucketed);
    EXPECT_DOUBLE_EQ(r.config.ddp->bucketMb, 0.5);
    EXPECT_EQ(r.ddp->buckets, 3);
    EXPECT_EQ(r.ddp->parametersIdentical, true);
    ASSERT_EQ(r.ddp->ranks.size(), 2u);
    EXPECT_EQ(r.ddp->ranks[1].error, "connection closed by peer");
    EXPECT_EQ(r.ddp->ranks[0].parameterHash, "00000000deadbeef");
    EXPECT_DOUBLE_EQ(r.ddp->ranks[1].steps[2].exposedCommMs, 4.5);
    EXPECT_EQ(toJson(back), text);
    // The derived figures are in the file for scripts: 4000 B in 8 ms = 0.0005 GB/s.
    const auto j = nlohmann::json::parse(text);
    const auto& step = j["runs"][0]["ddp"]["ranks"][0]["steps"][1];
    EXPECT_DOUBLE_EQ(step["compute_ms"].get<double>(), 21.0 - 3.5);
    EXPECT_DOUBLE_EQ(step["algbw_gbps"].get<double>(), 0.0005);
    EXPECT_DOUBLE_EQ(step["busbw_gbps"].get<double>(), 0.0005);
    // A run without ddp writes config.ddp null and no block; older files have neither.
    ResultSet plain = sampleSet();
    const auto pj = nlohmann::json::parse(toJson(plain));
    EXPECT_TRUE(pj["runs"][0]["config"]["ddp"].is_null());
    EXPECT_FALSE(pj["runs"][0].contains("ddp"));
}

TEST(ResultIo, HostileDataParallelBlocksAreRefusedWithTheirPath) {
    ResultSet set = sampleSet();
    set.runs = {ddpRun()};
    const auto base = nlohmann::json::parse(toJson(set));
    const auto refused = [&](auto edit, const std::string& path) {
        auto j = base;
        edit(j["runs"][0]);
        try {
            parseResultSet(j.dump());
            ADD_FAILURE() << "accepted, expected a refusal at " << path;
        } catch (const ResultFormatError& e) {
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        }
    };
    refused([](auto& run) { run["ddp"]["ranks"][1]["rank"] = 0; }, "$.runs[0].ddp.ranks[1].rank");
    refused([](auto& run) { run["ddp"]["ranks"][1]["rank"] = 5; }, "$.runs[0].ddp.ranks[1].rank");
    refused([](auto& run) { run["ddp"]["ranks"].push_back(run["ddp"]["ranks"][0]); },
            "$.runs[0].ddp.ranks");
    refused([](auto& run) { run["ddp"]["ranks"][0]["steps"][0]["exposed_comm_ms"] = 1e6; },
            "$.runs[0].ddp.ranks[0].steps[0].exposed_comm_ms");
    refused([](auto& run) { run["ddp"]["ranks"][0]["steps"][0]["index"] = 99; },
            "$.runs[0].ddp.ranks[0].steps[0].index");
    refused([](auto& run) { run["config"]["ddp"] = nullptr; }, "$.runs[0].ddp");
    refused([](auto& run) { run["config"]["ddp"]["strategy"] = "ring"; },
            "$.runs[0].config.ddp.strategy");
    refused([](auto& run) { run["config"]["ddp"]["world_size"] = 0; },
            "$.runs[0].config.ddp.world_size");
}

TEST(ResultIo, RankRecordsTravelAsJsonAndRefuseTooManySteps) {
    const DdpRank rank = ddpRun().ddp->ranks[1];
    const std::string text = ddpRankToJson(rank, 2);
    const DdpRank back = ddpRankFromJson(text, 3);
    EXPECT_EQ(back.rank, 1);
    EXPECT_EQ(back.steps.size(), 3u);
    EXPECT_EQ(back.error, rank.error);
    EXPECT_THROW(ddpRankFromJson(text, 2), ResultFormatError);
    EXPECT_THROW(ddpRankFromJson("{\"rank\": \"one\"}", 3), ResultFormatError);
    EXPECT_THROW(ddpRankFromJson("garbage", 3), ResultFormatError);
}
