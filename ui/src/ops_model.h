// What the Ops view shows, computed without ImGui so tests can drive it: the profile's rows
// as a tree (phase → region → op or kernel) filtered and sorted, attention's parts, and two
// runs' per-region times side by side (docs/OP_PROFILE.md).
#pragma once

#include "lmprof/engine/op_profile.h"

#include <string>
#include <string_view>
#include <vector>

namespace lmprof::ui {

struct OpsNode {
    enum class Level { Phase, Region, Op };
    Level level = Level::Op;
    engine::Phase phase = engine::Phase::Forward;
    std::string region; // "" on phase nodes
    std::string name;   // the op or kernel; "" above
    double calls = 0.0, selfMs = 0.0, totalMs = 0.0, flops = 0.0;
    double share = 0.0; // of the phase's time of this kind
    std::vector<OpsNode> children;
    std::string label() const; // what the tree shows
};

enum class OpsSort { Name, Calls, Self, Total, Share, Flops };

// Rows of `kind` as phases, their regions and the ops in them, each level sorted by `sort`
// (phases stay in step order). `filter` keeps ops whose name or region contains it (any
// case); regions and phases that keep no op go.
std::vector<OpsNode> buildOpsTree(const engine::OpProfile& profile, engine::OpKind kind,
                                  std::string_view filter, OpsSort sort, bool descending);

// The forward pass's attention parts: softmax and the two matmuls, time (of `kind`) and FLOPs.
struct AttentionParts {
    double softmaxMs = 0.0, scoresMs = 0.0, valueMs = 0.0;
    double softmaxFlops = 0.0, scoresFlops = 0.0, valueFlops = 0.0;
};
AttentionParts attentionParts(const engine::OpProfile& profile, engine::OpKind kind);

// Per-region time per step (all phases, `kind`) of two profiles, regions in kRegions order
// then unattributed; a region neither has is left out.
struct RegionOverlay {
    std::vector<std::string> regions;
    std::vector<double> a, b; // ms per step
};
RegionOverlay overlayRegions(const engine::OpProfile& a, const engine::OpProfile& b,
                             engine::OpKind kind);

// The timeline's ruler: ticks every 1, 2 or 5 × 10^k ms, the smallest such step that puts at
// most `maxTicks` ticks in [t0, t1]; each tick's time and its label ("12.5 ms", "250 µs").
struct RulerTick {
    double ms;
    std::string label;
};
std::vector<RulerTick> rulerTicks(double t0, double t1, int maxTicks);

} // namespace lmprof::ui
