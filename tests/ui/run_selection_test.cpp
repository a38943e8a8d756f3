// The Configure form's steps that follow the warmup, selecting runs as in a file manager, and
// the step axis's ticks (issue 60): the rules under the window's gestures, without a window.

#include "lmprof/engine/config.h"
#include "lmprof/ui/config_form.h"
#include "lmprof/ui/run_selection.h"
#include "lmprof/ui/run_store.h"
#include "views/plot_helpers.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace lmprof;
using namespace lmprof::ui;

// The profiled step and the snapshot step follow the warmup until picked (issue 60): a demo
// that lowers the warmup no longer aborts on a step outside the run.
TEST(ConfigForm, ProfileAndSnapshotStepsFollowTheWarmupUntilPicked) {
    using namespace lmprof::engine;
    RunConfig c;
    c.warmupSteps = 5;
    c.opProfile = defaultOpProfileRequest(5);
    c.memorySnapshot = defaultSnapshotRequest("snap.json", 5);
    lmprof::ui::ConfigForm form(c);
    EXPECT_FALSE(form.opProfileStepPicked());
    form.config().warmupSteps = 1;
    form.followWarmup();
    EXPECT_EQ(form.config().opProfile->firstStep, 1);      // the first after warmup
    EXPECT_EQ(form.config().memorySnapshot->firstStep, 0); // the last warmup step
    EXPECT_TRUE(form.valid());

    // Picked in the form: it stays, and a warmup that leaves it outside the run is refused.
    form.pickOpProfileStep(true);
    form.config().opProfile->firstStep = 3;
    form.config().warmupSteps = 8;
    form.followWarmup();
    EXPECT_EQ(form.config().opProfile->firstStep, 3);
    EXPECT_EQ(form.config().memorySnapshot->firstStep, 7);
    form.config().measureSteps = 1;
    form.config().warmupSteps = 1;
    form.followWarmup();
    EXPECT_EQ(form.errors().count("op_profile.first_step"), 1u);

    // A step other than the default when the form is made (--profile-step) is picked.
    RunConfig given = c;
    given.opProfile->firstStep = 2;
    EXPECT_TRUE(lmprof::ui::ConfigForm(given).opProfileStepPicked());

    // A demo's patch that names a step picks it; one that does not leaves it following.
    lmprof::ui::ConfigForm demo(c);
    RunConfig patched = c;
    patched.warmupSteps = 2;
    patched.memorySnapshot->firstStep = 4;
    demo.followWarmup(patched, R"({"warmup_steps": 2, "memory_snapshot": {"first_step": 4}})");
    EXPECT_EQ(patched.memorySnapshot->firstStep, 4);
    EXPECT_EQ(patched.opProfile->firstStep, 2);
    EXPECT_TRUE(demo.snapshotStepPicked());
    EXPECT_FALSE(demo.opProfileStepPicked());
}

// Selecting as in a file manager (issue 60): the filter's words, Shift+click's range over the
// rows as shown, and a colour that comes from the run's id, so that a run saved and reopened
// in another session, at another position, has the colour it had.
TEST(RunSelection, FilterRangeAndColourFromTheId) {
    const std::vector<std::string> row{"tiny", "512", "bf16", "train", "ok"};
    EXPECT_TRUE(matchesFilter("", row));
    EXPECT_TRUE(matchesFilter("  BF16  train ", row));
    EXPECT_TRUE(matchesFilter("51", row));
    EXPECT_FALSE(matchesFilter("bf16 forward", row));
    EXPECT_FALSE(matchesFilter("-bf16", row));
    EXPECT_TRUE(matchesFilter("-fp32 tiny", row));

    const std::vector<int> shown{0, 2, 3, 5, 8}; // a filter hides 1, 4, 6 and 7
    EXPECT_EQ(rangeOfRows(shown, 2, 8), (std::vector<int>{2, 3, 5, 8}));
    EXPECT_EQ(rangeOfRows(shown, 5, 0), (std::vector<int>{0, 2, 3, 5}));
    EXPECT_EQ(rangeOfRows(shown, 4, 3), (std::vector<int>{3})); // the anchor is hidden

    std::vector<engine::RunResult> results(5);
    for (size_t i = 0; i < results.size(); ++i) {
        results[i].id = "tiny-ctx" + std::to_string(64 << i) + "-fp32-train-1";
        results[i].config.contextLength = 64 << i;
    }
    RunStore first;
    first.addLoaded(results);
    first.select({4, 0, 2});
    first.refreshSelection();
    EXPECT_EQ(first.selection(), (std::vector<int>{4, 0, 2}));
    first.select({}); // nothing to select: the selection stays
    EXPECT_EQ(first.selection().size(), 3u);
    // Reopened alone in the next session, at position 0: the same colour.
    RunStore next;
    next.addLoaded({results[4]});
    next.selectOnly(0);
    next.refreshSelection();
    EXPECT_EQ(next.runs()[0].color, first.runs()[4].color);
    EXPECT_EQ(next.runs()[0].color, colorOfId(results[4].id, kRunColorCount));
}

// A session run's number is its place in the Runs table (issue 60): after a restore of runs
// with other labels, the new run is not a second "-1" while the # column says 3.
TEST(RunStore, ASessionRunIsNumberedByItsPlaceInTheTable) {
    RunStore store;
    std::vector<engine::RunResult> restored(2);
    for (int i = 0; i < 2; ++i) {
        restored[i].id =
            "tiny-ctx" + std::to_string(128 << i) + "-fp32-train-" + std::to_string(i + 1);
        restored[i].config.contextLength = 128 << i;
    }
    ASSERT_EQ(store.addLoaded(restored), 2u);
    std::vector<engine::SessionEvent> events;
    engine::RunStarted first;
    first.runIndex = 0;
    first.header.id = "tiny-ctx512-fp32-train-1";
    engine::RunStarted second;
    second.runIndex = 1;
    second.header.id = "tiny-ctx1024-fp32-train-2";
    events.emplace_back(first);
    events.emplace_back(second);
    store.claimIds(events);
    EXPECT_EQ(std::get<engine::RunStarted>(events[0]).header.id, "tiny-ctx512-fp32-train-3");
    EXPECT_EQ(std::get<engine::RunStarted>(events[1]).header.id, "tiny-ctx1024-fp32-train-4");
    store.apply(events);
    ASSERT_EQ(store.runs().size(), 4u);
    EXPECT_EQ(store.runs()[2].result.id, "tiny-ctx512-fp32-train-3"); // # 3
}

// The step axis (issue 60): steps 0 to 4 in a narrow plot got a lone "0"; now at least two
// ticks where the range holds two, whole steps, and never a "-0".
TEST(PlotAxes, StepTicksAreAtLeastTwoWholeStepsAndNeverMinusZero) {
    plot::Range steps;
    steps.add(-0.1);
    steps.add(4.1);
    const std::vector<double> narrow = plot::stepTickValues(steps, 150.0f);
    EXPECT_EQ(narrow, (std::vector<double>{0.0, 2.0, 4.0}));
    EXPECT_FALSE(std::signbit(narrow.front()));
    const std::vector<double> wide = plot::stepTickValues(steps, 800.0f);
    EXPECT_EQ(wide, (std::vector<double>{0.0, 1.0, 2.0, 3.0, 4.0}));
    plot::Range many;
    many.add(0.0);
    many.add(1000.0);
    const std::vector<double> spread = plot::stepTickValues(many, 400.0f); // about 5 ticks
    ASSERT_GE(spread.size(), 2u);
    EXPECT_EQ(spread[1] - spread[0], 200.0);
    plot::Range one;
    one.add(3.0);
    EXPECT_EQ(plot::stepTickValues(one, 150.0f), (std::vector<double>{3.0})); // one step, one tick
}
