// The Ops window (ops_view.cpp; its timeline in ops_timeline.cpp): where a profiled step's
// time goes (docs/OP_PROFILE.md).
#pragma once

#include "lmprof/engine/op_profile.h"
#include "ops_model.h"
#include "view.h"

#include <imgui.h>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::ui {

// A region's colour, the same in the tree, the timeline and the overlay: one hue per region
// of kRegions (a qualitative colormap has too few), grey for the rest.
ImU32 regionColor(std::string_view region, float alpha = 1.0f);

// Where a profiled step's time goes (docs/OP_PROFILE.md): headline, tree, timeline,
// attention, two runs' regions side by side.
struct TimelineGeometry; // the timeline's (ops_timeline.cpp): where it is drawn

class OpsView final : public View {
public:
    static constexpr const char* kTitle = "Ops";
    void draw(ViewContext& ctx) override;
    // A profile to show: then the Ops tab grows as it comes to the front.
    bool wantsRoom() const override { return m_hasProfiles; }
    // The Attention tab's two charts alone (the "ops-attention" export, the study's ops
    // chart): the selected run with a profile, else the newest profiled one.
    void drawAttentionChart(ViewContext& ctx, ImVec2 size);

private:
    struct Selection {
        engine::Phase phase = engine::Phase::Forward;
        std::string region; // empty: nothing chosen
        std::string name;   // empty: the whole region
        bool matches(const engine::OpEvent& e) const;
    };
    const RunView* chooseRun(ViewContext& ctx, const std::vector<const RunView*>& runs);
    void drawHeader(ViewContext& ctx, const std::vector<const RunView*>& runs,
                    const engine::OpProfile& p);
    // The headline, or in a short pane its first sentence (the rest kept for drawTable's hover):
    // returns how many sentences and notes it kept back.
    size_t drawHeadline(const engine::OpProfile& p, bool firstOnly);
    void drawTable(const engine::OpProfile& p, size_t moreHeadline);
    void drawNode(const OpsNode& node, bool openAll);
    void drawTimeline(const engine::OpProfile& p);
    void zoomTimeline(double end, float x0, float width, bool hovered);
    const engine::OpEvent* drawEvents(ImDrawList* dl, const TimelineGeometry& g,
                                      const engine::OpTimeline& t,
                                      const std::vector<float>& laneTop, bool hovered) const;
    void drawAttention(ViewContext& ctx, const engine::OpProfile& p, ImVec2 size);
    void drawOverlay(ViewContext& ctx, const std::vector<const RunView*>& runs, const RunView& run);

    std::string m_runId, m_lastSelected, m_otherId;
    bool m_hasProfiles = false; // at the last draw
    engine::OpKind m_kind = engine::OpKind::Kernel;
    char m_filter[128] = "";
    std::vector<std::string> m_moreHeadline; // kept back by drawHeadline this frame
    OpsSort m_sort = OpsSort::Self;
    bool m_descending = true;
    std::string m_kindFor; // the run m_kind was set for (its headline kind, then the user's)
    Selection m_selection;
    std::string m_timelineFor; // the run the zoom below belongs to
    double m_t0 = 0.0, m_t1 = 0.0;
};

} // namespace lmprof::ui
