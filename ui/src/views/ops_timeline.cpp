// The Ops window's timeline (ops_view.h): lanes of ops (threads) and kernels (streams) under
// the first profiled step's ranges, on a zoomable time axis, the rows chosen in the tree lit.

#include "lmprof/engine/format.h"
#include "ops_view.h"
#include "theme.h"

#include <algorithm>
#include <cmath>
#include <imgui.h>

namespace lmprof::ui {

using namespace lmprof::engine;

namespace {

// How deep a timeline goes: its end, the rows of its ranges, and the rows of each lane's ops
// (at most 8).
struct TimelineDepths {
    double end = 0.0;
    int ranges = 0;
    std::vector<int> lanes;
};

TimelineDepths depthsOf(const OpTimeline& t) {
    TimelineDepths d;
    d.lanes.assign(t.lanes.size(), 0);
    for (const OpEvent& e : t.events) {
        d.end = std::max(d.end, e.startMs + e.durMs);
        if (e.range) {
            d.ranges = std::max(d.ranges, e.depth + 1);
        } else {
            int& lane = d.lanes[static_cast<size_t>(e.lane)];
            lane = std::max(lane, std::min(e.depth, 7) + 1);
        }
    }
    d.end = std::max(d.end, 1e-3); // a step of zero-length events still gets an axis
    return d;
}

} // namespace

// Where the timeline is drawn: the canvas, the top of its rows, and the time axis from
// t0 to t1 across `width` pixels right of the lanes' labels.
struct TimelineGeometry {
    ImVec2 canvas, origin;
    float x0 = 0.0f, width = 0.0f, rowH = 0.0f, height = 0.0f;
    double t0 = 0.0, t1 = 1.0;
    float xOf(double ms) const { return x0 + static_cast<float>((ms - t0) / (t1 - t0)) * width; }
};

namespace {

// The time ruler along the top, its labels kept inside the canvas.
void drawRuler(ImDrawList* dl, const TimelineGeometry& g) {
    const ImU32 faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    const float labelSpace = ImGui::CalcTextSize("000.00 ms").x * 1.6f;
    for (const RulerTick& tick :
         rulerTicks(g.t0, g.t1, std::max(1, static_cast<int>(g.width / labelSpace)))) {
        const float x = g.xOf(tick.ms);
        dl->AddLine(ImVec2(x, g.canvas.y + g.rowH * 0.55f), ImVec2(x, g.origin.y + g.height),
                    ImGui::GetColorU32(ImGuiCol_Border));
        // Right of its tick, or left of it where it would run past the edge.
        const float tickW = ImGui::CalcTextSize(tick.label.c_str()).x;
        const float at = x + 3.0f + tickW <= g.x0 + g.width ? x + 3.0f : x - 3.0f - tickW;
        dl->AddText(ImVec2(at, g.canvas.y), faint, tick.label.c_str());
    }
    dl->AddLine(ImVec2(g.x0, g.origin.y - 1.0f), ImVec2(g.x0 + g.width, g.origin.y - 1.0f), faint);
}

// Row tops: the ranges first (step, phase, region), then each lane's op depths, with the
// lanes' labels; the top of each lane.
std::vector<float> drawLanes(ImDrawList* dl, const TimelineGeometry& g, const OpTimeline& t,
                             const TimelineDepths& depths) {
    const ImU32 faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    std::vector<float> laneTop(t.lanes.size());
    float y = g.origin.y + g.rowH * static_cast<float>(depths.ranges);
    dl->AddText(ImVec2(g.origin.x + 2, g.origin.y), faint, "ranges");
    for (size_t l = 0; l < t.lanes.size(); ++l) {
        y += 4.0f;
        laneTop[l] = y;
        dl->AddLine(ImVec2(g.origin.x, y - 2.0f), ImVec2(g.x0 + g.width, y - 2.0f), faint);
        dl->AddText(ImVec2(g.origin.x + 2, y), ImGui::GetColorU32(ImGuiCol_Text),
                    t.lanes[l].c_str());
        y += g.rowH * static_cast<float>(depths.lanes[l]);
    }
    return laneTop;
}

void eventTooltip(const OpEvent& e) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(e.name.c_str());
    ImGui::TextDisabled("%s%s%s, %s", toString(e.phase).data(), e.region.empty() ? "" : " / ",
                        e.region.c_str(), e.range ? "range" : toString(e.kind).data());
    ImGui::Text("%.3f ms at %.3f ms", e.durMs, e.startMs);
    if (!e.shapes.empty()) {
        ImGui::Text("inputs %s", e.shapes.c_str());
    }
    if (e.flops > 0.0) {
        ImGui::Text("%.3f GFLOP, %.3f TFLOP/s", e.flops / 1e9,
                    e.durMs > 0 ? e.flops / (e.durMs * 1e-3) / 1e12 : 0.0);
    }
    ImGui::EndTooltip();
}

} // namespace

// The wheel zooms about the pointer, a drag pans, a double-click shows the whole step.
void OpsView::zoomTimeline(double end, float x0, float width, bool hovered) {
    const ImGuiIO& io = ImGui::GetIO();
    const double span = m_t1 - m_t0;
    if (hovered && io.MouseWheel != 0.0f) {
        const double at = m_t0 + (io.MousePos.x - x0) / width * span;
        const double factor = std::pow(1.25, -io.MouseWheel);
        const double next = std::clamp(span * factor, 1e-4, end);
        m_t0 = std::clamp(at - (at - m_t0) * next / span, 0.0, end - next);
        m_t1 = m_t0 + next;
    }
    if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left)) {
        const double dt = -io.MouseDelta.x / width * span;
        const double shift = std::clamp(dt, -m_t0, end - m_t1);
        m_t0 += shift;
        m_t1 += shift;
    }
    if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
        m_t0 = 0.0;
        m_t1 = end;
    }
}

// Each event in view as a bar in its row, the selection's lit; the one under the pointer.
const OpEvent* OpsView::drawEvents(ImDrawList* dl, const TimelineGeometry& g, const OpTimeline& t,
                                   const std::vector<float>& laneTop, bool hovered) const {
    const ImGuiIO& io = ImGui::GetIO();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const bool anySelected = !m_selection.region.empty();
    const OpEvent* hover = nullptr;
    for (const OpEvent& e : t.events) {
        const float a = g.xOf(e.startMs);
        const float b = std::max(a + 1.0f, g.xOf(e.startMs + e.durMs));
        if (b < g.x0 || a > g.x0 + g.width) {
            continue;
        }
        const float top = e.range ? g.origin.y + g.rowH * static_cast<float>(e.depth)
                                  : laneTop[static_cast<size_t>(e.lane)] +
                                        g.rowH * static_cast<float>(std::min(e.depth, 7));
        const ImVec2 p0(std::max(a, g.x0), top);
        const ImVec2 p1(b, top + g.rowH - 1.0f);
        const bool lit = anySelected && m_selection.matches(e);
        float alpha = e.range ? 0.45f : 0.9f;
        if (anySelected && !lit && !e.range) {
            alpha = 0.18f;
        }
        const ImU32 fill = e.range && e.region.empty() ? ImGui::GetColorU32(ImGuiCol_Header)
                                                       : regionColor(e.region, alpha);
        dl->AddRectFilled(p0, p1, fill);
        if (lit) {
            dl->AddRect(p0, p1, ImGui::GetColorU32(palette().warning), 0.0f, 0, 2.0f);
        }
        if (p1.x - p0.x > 30.0f) {
            dl->PushClipRect(p0, p1, true);
            dl->AddText(ImVec2(p0.x + 2, p0.y + 1), text, e.name.c_str());
            dl->PopClipRect();
        }
        if (hovered && io.MousePos.x >= p0.x && io.MousePos.x < p1.x && io.MousePos.y >= p0.y &&
            io.MousePos.y < p1.y) {
            hover = &e;
        }
    }
    return hover;
}

void OpsView::drawTimeline(const OpProfile& p) {
    const OpTimeline& t = p.timeline;
    if (t.events.empty()) {
        ImGui::TextDisabled("This profile has no timeline.");
        return;
    }
    const TimelineDepths depths = depthsOf(t);
    if (m_timelineFor != m_runId || m_t1 <= m_t0) {
        m_timelineFor = m_runId;
        m_t0 = 0.0;
        m_t1 = depths.end;
    }
    // Wrapped: a narrow pane keeps the whole line (the shown range is at its end).
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("step %d, %.2f..%.2f ms shown: wheel zooms, drag pans, double-click "
                       "shows the whole step",
                       t.step, m_t0, m_t1);
    ImGui::PopStyleColor();
    TimelineGeometry g;
    g.rowH = ImGui::GetTextLineHeight() + 3.0f;
    const float labelW = ImGui::CalcTextSize("thread 0000000 (main)").x + 8.0f;
    g.height = g.rowH * static_cast<float>(depths.ranges + 1);
    for (int d : depths.lanes) {
        g.height += g.rowH * static_cast<float>(d) + 4.0f;
    }
    ImGui::BeginChild("timeline", ImVec2(0, 0), ImGuiChildFlags_Borders,
                      ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_HorizontalScrollbar);
    // A time ruler on top, the ranges and lanes under it.
    g.canvas = ImGui::GetCursorScreenPos();
    g.origin = ImVec2(g.canvas.x, g.canvas.y + g.rowH);
    g.width = std::max(50.0f, ImGui::GetContentRegionAvail().x - labelW);
    g.x0 = g.origin.x + labelW;
    ImGui::InvisibleButton("canvas", ImVec2(labelW + g.width, g.height + g.rowH));
    const bool hovered = ImGui::IsItemHovered();
    zoomTimeline(depths.end, g.x0, g.width, hovered);
    g.t0 = m_t0;
    g.t1 = m_t1;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->PushClipRect(g.canvas, ImVec2(g.x0 + g.width, g.origin.y + g.height), true);
    drawRuler(dl, g);
    const std::vector<float> laneTop = drawLanes(dl, g, t, depths);
    const OpEvent* hover = drawEvents(dl, g, t, laneTop, hovered);
    dl->PopClipRect();
    if (hover) {
        eventTooltip(*hover);
    }
    ImGui::EndChild();
}

} // namespace lmprof::ui
