// The Ops view's model (ops_model.h): the tree with its filter and sort, attention's parts
// and two runs' regions side by side, on a hand-made profile.

#include "ops_model.h"

#include <gtest/gtest.h>

using namespace lmprof::engine;
using namespace lmprof::ui;

namespace {

OpProfile sampleProfile(double mmMs) {
    OpProfile p;
    p.phaseMs = {10.0, 20.0, 1.0};
    auto row = [](Phase ph, const char* region, const char* name, double self, double flops,
                  bool matmul) {
        OpRow r;
        r.phase = ph;
        r.region = region;
        r.name = name;
        r.calls = 2;
        r.selfMs = self;
        r.totalMs = self;
        r.flops = flops;
        r.matmul = matmul;
        return r;
    };
    p.rows = {row(Phase::Forward, region::kMlp, "aten::mm", mmMs, 4e9, true),
              row(Phase::Forward, region::kMlp, "aten::silu", 1.0, 0, false),
              row(Phase::Forward, region::kSoftmax, "aten::exp", 0.5, 0, false),
              row(Phase::Forward, region::kScores, "aten::bmm", 0.25, 1e9, true),
              row(Phase::Forward, region::kValue, "aten::bmm", 0.25, 1e9, true),
              row(Phase::Backward, region::kMlp, "aten::mm", 8.0, 8e9, true)};
    p.headline.softmaxFlops = 5e7;
    return p;
}

} // namespace

TEST(OpsModel, TreeGroupsPhaseRegionOpWithSharesOfThePhase) {
    const OpProfile p = sampleProfile(4.0);
    const auto tree = buildOpsTree(p, OpKind::Op, "", OpsSort::Self, true);
    ASSERT_EQ(tree.size(), 2u); // forward, backward; no optimizer rows
    EXPECT_EQ(tree[0].label(), "forward");
    EXPECT_DOUBLE_EQ(tree[0].selfMs, 6.0);
    ASSERT_EQ(tree[0].children.size(), 4u);
    const OpsNode& mlp = tree[0].children[0]; // largest first
    EXPECT_EQ(mlp.label(), "mlp");
    EXPECT_DOUBLE_EQ(mlp.selfMs, 5.0);
    EXPECT_DOUBLE_EQ(mlp.share, 0.5);
    ASSERT_EQ(mlp.children.size(), 2u);
    EXPECT_EQ(mlp.children[0].label(), "aten::mm");
    EXPECT_DOUBLE_EQ(mlp.children[0].share, 0.4);
    EXPECT_DOUBLE_EQ(mlp.children[0].calls, 2.0);

    const auto byName = buildOpsTree(p, OpKind::Op, "", OpsSort::Name, false);
    EXPECT_EQ(byName[0].children[0].label(), "attention.scores");
    EXPECT_EQ(byName[0].children.back().label(), "mlp");
    EXPECT_TRUE(buildOpsTree(p, OpKind::Kernel, "", OpsSort::Self, true).empty());
}

TEST(OpsModel, FilterKeepsMatchingOpsAndTheirRegions) {
    const OpProfile p = sampleProfile(4.0);
    const auto tree = buildOpsTree(p, OpKind::Op, "BMM", OpsSort::Self, true);
    ASSERT_EQ(tree.size(), 1u);
    ASSERT_EQ(tree[0].children.size(), 2u);
    for (const auto& region : tree[0].children) {
        ASSERT_EQ(region.children.size(), 1u);
        EXPECT_EQ(region.children[0].name, "aten::bmm");
    }
    const auto byRegion = buildOpsTree(p, OpKind::Op, "softmax", OpsSort::Self, true);
    ASSERT_EQ(byRegion.size(), 1u);
    EXPECT_EQ(byRegion[0].children[0].region, region::kSoftmax);
}

TEST(OpsModel, AttentionPartsAndRegionOverlay) {
    const OpProfile a = sampleProfile(4.0);
    const AttentionParts parts = attentionParts(a, OpKind::Op);
    EXPECT_DOUBLE_EQ(parts.softmaxMs, 0.5);
    EXPECT_DOUBLE_EQ(parts.scoresMs, 0.25);
    EXPECT_DOUBLE_EQ(parts.valueMs, 0.25);
    EXPECT_DOUBLE_EQ(parts.scoresFlops, 1e9);
    EXPECT_DOUBLE_EQ(parts.softmaxFlops, 5e7);

    const OpProfile b = sampleProfile(1.0);
    const RegionOverlay o = overlayRegions(a, b, OpKind::Op);
    ASSERT_EQ(o.regions.size(), 4u);
    EXPECT_EQ(o.regions[0], region::kScores); // kRegions order
    EXPECT_EQ(o.regions[3], region::kMlp);
    EXPECT_DOUBLE_EQ(o.a[3], 4.0 + 1.0 + 8.0);
    EXPECT_DOUBLE_EQ(o.b[3], 1.0 + 1.0 + 8.0);
}

// A watched model's profile (docs/WATCH.md) has module paths for regions: attention's parts
// come from its headline, which found them by names and shapes, and the overlay keeps its
// regions, by name after the engine's.
TEST(OpsModel, AWatchedProfileTakesAttentionFromItsHeadlineAndOverlaysItsModules) {
    auto watched = [](double qkvMs) {
        OpProfile p = sampleProfile(4.0);
        for (OpRow& r : p.rows) {
            r.region = r.region == region::kMlp ? "blocks.1.mlp" : "blocks.0";
        }
        p.rows[0].region = "blocks.0.qkv";
        p.rows[0].selfMs = qkvMs;
        p.headline.softmaxMs = 0.5;
        p.headline.scoresMs = 0.3;
        p.headline.valueMs = 0.2;
        p.headline.scoresFlops = 2e9;
        p.headline.valueFlops = 1e9;
        return p;
    };
    const OpProfile a = watched(4.0);
    const AttentionParts parts = attentionParts(a, OpKind::Op);
    EXPECT_DOUBLE_EQ(parts.softmaxMs, 0.5);
    EXPECT_DOUBLE_EQ(parts.scoresMs, 0.3);
    EXPECT_DOUBLE_EQ(parts.valueFlops, 1e9);
    // Another kind than the headline's has no parts: nothing is guessed.
    EXPECT_DOUBLE_EQ(attentionParts(a, OpKind::Kernel).scoresMs, 0.0);

    const RegionOverlay o = overlayRegions(a, watched(1.0), OpKind::Op);
    ASSERT_EQ(o.regions, (std::vector<std::string>{"blocks.0", "blocks.0.qkv", "blocks.1.mlp"}));
    EXPECT_DOUBLE_EQ(o.a[1], 4.0);
    EXPECT_DOUBLE_EQ(o.b[1], 1.0);
}

// The op timeline's ruler: 1-2-5 steps, at most the ticks asked for, labels in the unit that
// reads (µs below a millisecond's step).
TEST(OpsModel, RulerTicksAreOneTwoFiveStepsWithReadableLabels) {
    const auto ticks = rulerTicks(0.0, 10.0, 6);
    ASSERT_EQ(ticks.size(), 6u); // 0, 2, 4, 6, 8, 10
    EXPECT_EQ(ticks[1].label, "2 ms");
    EXPECT_DOUBLE_EQ(ticks.back().ms, 10.0);
    const auto fine = rulerTicks(1.23, 1.31, 5);
    ASSERT_FALSE(fine.empty());
    EXPECT_LE(fine.size(), 5u);
    EXPECT_EQ(fine.front().label, "1240 \u00b5s"); // every 20 µs from 1.24 ms
    const auto tenths = rulerTicks(0.0, 1.0, 10);
    EXPECT_EQ(tenths[3].label, "300 \u00b5s");
    const auto wide = rulerTicks(3.0, 57.0, 4);
    EXPECT_EQ(wide.front().label, "20 ms");
    EXPECT_EQ(wide.size(), 2u); // 20, 40
    EXPECT_TRUE(rulerTicks(5.0, 5.0, 4).empty());
}
