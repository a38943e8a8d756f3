// The straggler verdict (docs/VERDICTS.md) on synthetic ranks: a watched script's ranks
// under torchrun, one with a slow loader, named with the phase its time goes to, across
// the runs and in the result set's top-level "verdicts"; equal ranks get none; too few
// common steps abstain; an engine run's data-parallel ranks are read the same way.

#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/verdicts.h"
#include "synthetic_runs.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

using namespace lmprof::engine;

namespace {

// One rank's watched run of `n` measured steps after 2 warmup steps: a loader wait of
// `dataMs`, 4 ms forward, `backwardMs` (its all-reduce wait included), 1 ms optimizer, with
// a little jitter from `seed`.
RunResult rank(int r, int n, double dataMs, double backwardMs, unsigned seed,
               const std::string& name = "train") {
    RunConfig c = lmprof::engine::testing::cfg("tiny", 64, Precision::Fp32, Mode::Train, 2);
    c.measureSteps = n;
    RunResult run = lmprof::engine::testing::finished(c, RunStatus::Ok, std::vector<double>(n, 1.0),
                                                      name + "-rank" + std::to_string(r));
    run.source = RunSource{};
    std::mt19937 gen(seed);
    std::normal_distribution<double> jitter(0.0, 0.2);
    for (auto& s : run.steps) {
        s.dataMs = dataMs + jitter(gen);
        s.forwardMs = 4.0 + jitter(gen);
        s.backwardMs = backwardMs + jitter(gen);
        s.optimizerMs = 1.0;
        s.restMs = 0.1;
        s.totalMs = *s.dataMs + s.forwardMs + s.backwardMs + s.optimizerMs + *s.restMs;
    }
    return run;
}

std::optional<RunVerdict> straggler(const std::vector<RunVerdict>& all) {
    for (const auto& v : all) {
        if (v.kind == VerdictKind::Straggler) {
            return v;
        }
    }
    return std::nullopt;
}

} // namespace

TEST(Straggler, TheRankWithTheSlowLoaderIsNamedWithItsPhase) {
    // Rank 1 waits 30 ms for its batch; rank 0 waits as long in backward's all-reduce.
    const std::vector<RunResult> runs{rank(0, 20, 1.0, 38.0, 1), rank(1, 20, 30.0, 9.0, 2)};
    const std::optional<RunVerdict> v = straggler(judgeRuns(runs));
    ASSERT_TRUE(v);
    EXPECT_EQ(v->certainty, Certainty::Firm);
    EXPECT_EQ(v->severity, Severity::Critical) << v->value;
    EXPECT_LE(v->low, v->value);
    EXPECT_GE(v->high, v->value);
    EXPECT_NEAR(v->value, 29.0 / 44.1, 0.03) << "the lead over the mean step";
    EXPECT_NE(v->evidence.find("rank 1 works"), std::string::npos) << v->evidence;
    EXPECT_NE(v->evidence.find("in its data phase"), std::string::npos) << v->evidence;
    EXPECT_NE(v->evidence.find("backward (the all-reduce)"), std::string::npos) << v->evidence;
    EXPECT_NE(v->advice.find("rank 1's loader"), std::string::npos) << v->advice;
    EXPECT_EQ(v->runs, (std::vector<std::string>{"train-rank0", "train-rank1"}));
    EXPECT_EQ(v->firstStep, 2);
    EXPECT_EQ(v->lastStep, 21);
}

TEST(Straggler, EqualRanksAndOtherRunsGetNone) {
    const std::vector<RunResult> equal{rank(0, 30, 2.0, 9.0, 1), rank(1, 30, 2.0, 9.0, 2),
                                       rank(2, 30, 2.0, 9.0, 3)};
    EXPECT_FALSE(straggler(judgeRuns(equal)));
    // Two scripts, one rank each, and a run that is no rank: no group to judge.
    const std::vector<RunResult> apart{
        rank(0, 30, 30.0, 9.0, 1, "a"), rank(1, 30, 1.0, 9.0, 2, "b"),
        lmprof::engine::testing::finished(lmprof::engine::testing::cfg("tiny", 64), RunStatus::Ok,
                                          std::vector<double>(30, 10.0))};
    EXPECT_TRUE(judgeRuns(apart).empty());
}

TEST(Straggler, TooFewCommonStepsAbstain) {
    const std::vector<RunResult> runs{rank(0, 3, 1.0, 38.0, 1), rank(1, 3, 30.0, 9.0, 2)};
    const std::optional<RunVerdict> v = straggler(judgeRuns(runs));
    ASSERT_TRUE(v);
    EXPECT_EQ(v->certainty, Certainty::Abstained);
    EXPECT_NE(v->evidence.find("needs 5 measured steps that every rank has; has 3"),
              std::string::npos)
        << v->evidence;
}

TEST(Straggler, AnEngineRunsRanksAreJudgedByTheirExposedCommunication) {
    RunResult run = lmprof::engine::testing::finished(lmprof::engine::testing::cfg("tiny", 64),
                                                      RunStatus::Ok, std::vector<double>(10, 50.0));
    run.ddp = DdpReport{};
    for (int r = 0; r < 2; ++r) {
        DdpRank ranked;
        ranked.rank = r;
        for (int i = 0; i < 10; ++i) {
            DdpStepRecord s;
            s.index = i + 1;
            s.stepMs = 50.0 + 0.1 * (i % 3);
            s.exposedCommMs = r == 0 ? 20.0 + 0.1 * (i % 2) : 1.0; // rank 0 waits for 1
            s.commMs = s.exposedCommMs + 2.0;
            ranked.steps.push_back(s);
        }
        run.ddp->ranks.push_back(ranked);
    }
    const std::optional<RunVerdict> v = straggler(judgeRun(run));
    ASSERT_TRUE(v);
    EXPECT_EQ(v->certainty, Certainty::Firm);
    EXPECT_NE(v->evidence.find("rank 1 works 49.1 ms"), std::string::npos) << v->evidence;
    EXPECT_NE(v->evidence.find("exposed communication"), std::string::npos) << v->evidence;
    EXPECT_EQ(v->chart, "ddp-lanes");
    EXPECT_TRUE(v->runs.empty()) << "a run's own verdict";
}

TEST(Straggler, IsWrittenAtTheTopLevelReadBackAndRefusedWhenHostile) {
    ResultSet set;
    set.runs = {rank(0, 20, 1.0, 38.0, 1), rank(1, 20, 30.0, 9.0, 2)};
    const std::string text = toJson(set);
    const auto doc = nlohmann::json::parse(text);
    ASSERT_TRUE(doc.contains("verdicts"));
    EXPECT_EQ(doc["verdicts"][0]["kind"], "straggler");
    EXPECT_EQ(doc["verdicts"][0]["runs"], nlohmann::json({"train-rank0", "train-rank1"}));
    const ResultSet back = parseResultSet(text);
    ASSERT_TRUE(back.verdicts);
    ASSERT_EQ(back.verdicts->size(), 1u);
    EXPECT_EQ(back.verdicts->front().evidence, doc["verdicts"][0]["evidence"]);
    // As written, not judged again: a changed evidence survives.
    auto edited = doc;
    edited["verdicts"][0]["evidence"] = "as the file says";
    EXPECT_EQ(parseResultSet(edited.dump()).verdicts->front().evidence, "as the file says");
    // A file from before: judged as it is read.
    auto old = doc;
    old.erase("verdicts");
    EXPECT_EQ(parseResultSet(old.dump()).verdicts->size(), 1u);
    const auto refused = [&](const char* key, const nlohmann::json& value) {
        auto bad = doc;
        bad["verdicts"][0][key] = value;
        try {
            parseResultSet(bad.dump());
        } catch (const ResultFormatError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(refused("runs", nlohmann::json::array({1})).find("$.verdicts[0].runs[0]"),
              std::string::npos);
    EXPECT_NE(refused("kind", "late-rank").find("$.verdicts[0].kind"), std::string::npos);
    auto notArray = doc;
    notArray["verdicts"] = "straggler";
    EXPECT_THROW(parseResultSet(notArray.dump()), ResultFormatError);
    // The report names them after the runs' own.
    std::ostringstream out;
    writeVerdictReport(out, set.runs, ReportFormat::Table);
    EXPECT_NE(out.str().find("Verdicts across train-rank0, train-rank1\n  critical straggler"),
              std::string::npos)
        << out.str();
}

// A hostile file's megabyte of id is read without recursion (a regex's would overflow the
// stack), and ids that only look like ranks are none.
TEST(Straggler, LongAndOddIdsAreReadSafely) {
    std::vector<RunResult> runs{rank(0, 20, 1.0, 38.0, 1), rank(1, 20, 30.0, 9.0, 2)};
    const std::string longName(1 << 20, 'a');
    runs[0].id = longName + "-rank0";
    runs[1].id = longName + "-rank1";
    const auto v = straggler(judgeRuns(runs));
    ASSERT_TRUE(v);
    EXPECT_EQ(v->runs.size(), 2u);
    for (const char* odd : {"train-rank", "train-rank1234567", "train-rank1x", "train-rank-1"}) {
        runs[1].id = odd;
        EXPECT_FALSE(straggler(judgeRuns(runs))) << odd;
    }
}
