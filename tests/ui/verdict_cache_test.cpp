// The window's verdicts (ui/src/verdict_cache.h): a live run judged again only once it has a
// quarter more steps, or when it ends; a run read with its verdicts keeps them; and the strip
// shows the live run when it is selected, else the last one selected.

#include "lmprof/engine/verdicts.h"
#include "verdict_cache.h"

#include <gtest/gtest.h>

using namespace lmprof;
using lmprof::ui::RunStore;
using lmprof::ui::VerdictCache;

namespace {

// Steps of 10 ms waiting 6 ms for data each (a watched script's input-bound run).
void addSteps(RunStore& store, int index, int from, int to) {
    std::vector<engine::SessionEvent> events;
    for (int i = from; i < to; ++i) {
        engine::StepRecord s;
        s.index = i;
        s.warmup = i < 2;
        s.dataMs = 6.0 + 0.01 * (i % 3);
        s.forwardMs = 1.0;
        s.backwardMs = 2.0;
        s.optimizerMs = 0.5;
        s.totalMs = 10.0 + 0.01 * (i % 3);
        events.emplace_back(engine::StepFinished{index, s});
    }
    store.apply(events);
}

void start(RunStore& store, int index, const std::string& id) {
    engine::RunResult header;
    header.id = id;
    header.config.warmupSteps = 2;
    header.config.measureSteps = 400;
    std::vector<engine::SessionEvent> events{engine::RunStarted{index, header}};
    store.apply(events);
}

bool names(const std::vector<engine::RunVerdict>& verdicts, engine::VerdictKind kind) {
    for (const auto& v : verdicts) {
        if (v.kind == kind && v.severity != engine::Severity::Info) {
            return true;
        }
    }
    return false;
}

} // namespace

TEST(VerdictCache, ALiveRunIsJudgedAgainOnlyAfterAQuarterMoreSteps) {
    RunStore store;
    start(store, 0, "live");
    addSteps(store, 0, 0, 12);
    VerdictCache cache;
    ui::RunView& run = store.runs().front();
    EXPECT_TRUE(names(cache.of(run), engine::VerdictKind::InputBound));
    EXPECT_EQ(cache.judgements(), 1u);
    addSteps(store, 0, 12, 14); // 14 < 1.25 x 12: the same verdicts, not judged
    cache.of(run);
    EXPECT_EQ(cache.judgements(), 1u);
    addSteps(store, 0, 14, 15); // 15 = 1.25 x 12
    cache.of(run);
    EXPECT_EQ(cache.judgements(), 2u);
    // Steps arrive one at a time for 400 steps: judged O(log n) times, not 400.
    for (int i = 15; i < 402; ++i) {
        addSteps(store, 0, i, i + 1);
        cache.of(run);
    }
    EXPECT_LE(cache.judgements(), 2u + 15u);
    const size_t before = cache.judgements();
    std::vector<engine::SessionEvent> end{engine::RunFinished{0, run.result}};
    store.apply(end);
    cache.of(store.runs().front());
    EXPECT_EQ(cache.judgements(), before + 1) << "the run's end is judged";
}

TEST(VerdictCache, ARunReadWithItsVerdictsKeepsThem) {
    RunStore store;
    start(store, 0, "read");
    addSteps(store, 0, 0, 30);
    engine::RunResult result = store.runs().front().result;
    engine::RunVerdict said;
    said.kind = engine::VerdictKind::Recompiles;
    said.severity = engine::Severity::Warn;
    result.verdicts = {said};
    std::vector<engine::SessionEvent> end{engine::RunFinished{0, result}};
    store.apply(end);
    VerdictCache cache;
    const auto& verdicts = cache.of(store.runs().front());
    ASSERT_EQ(verdicts.size(), 1u);
    EXPECT_EQ(verdicts.front().kind, engine::VerdictKind::Recompiles);
    EXPECT_EQ(cache.judgements(), 0u);
}

TEST(VerdictCache, TheStripShowsTheLiveRunWhenSelectedElseTheLastSelected) {
    RunStore store;
    EXPECT_EQ(ui::verdictRun(store), nullptr);
    start(store, 0, "first");
    addSteps(store, 0, 0, 5);
    std::vector<engine::SessionEvent> end{engine::RunFinished{0, store.runs()[0].result}};
    store.apply(end);
    start(store, 1, "second"); // live
    addSteps(store, 1, 0, 5);
    store.selection() = {1, 0};
    ASSERT_NE(ui::verdictRun(store), nullptr);
    EXPECT_EQ(ui::verdictRun(store)->result.id, "second") << "the live run, selected";
    store.selection() = {0};
    EXPECT_EQ(ui::verdictRun(store)->result.id, "first") << "the live run is not selected";
    store.selection() = {1, 0};
    std::vector<engine::SessionEvent> end2{engine::RunFinished{1, store.runs()[1].result}};
    store.apply(end2);
    EXPECT_EQ(ui::verdictRun(store)->result.id, "first") << "none live: the last selected";
}
