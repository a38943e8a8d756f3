// The dock places at run time (window_set.h): a window brought forward grows when it has
// content (roomShare, View::wantsRoom), and room moves between neighbouring places so that
// every plot on screen keeps a readable size (docs/WINDOW.md, "Layout"). The layout report
// is what a demo's "layout" step writes and gui_e2e checks.

#include "lmprof/engine/file_io.h"
#include "window_set.h"

#include <algorithm>
#include <cmath>
#include <imgui_internal.h>
#include <map>
#include <nlohmann/json.hpp>

namespace lmprof::ui {

namespace {

// The smallest plot that still reads (docs/WINDOW.md): its frame, axis labels included, and
// its data area, inside the axes and any legend beside it.
constexpr float kMinPlot[2] = {240.0f, 140.0f};
constexpr float kMinData[2] = {150.0f, 80.0f};

float shownSize(const plot::DrawnPlot& p, int axis) {
    return std::max(0.0f, p.max[axis] - p.min[axis]);
}
float dataSize(const plot::DrawnPlot& p, int axis) {
    return std::max(0.0f, p.dataMax[axis] - p.dataMin[axis]);
}
// How far a plot is from readable along an axis: negative what it lacks, else its surplus.
float margin(const plot::DrawnPlot& p, int axis) {
    return std::min(shownSize(p, axis) - kMinPlot[axis], dataSize(p, axis) - kMinData[axis]);
}

// A place's two children along its split axis: `first` gets `size`, its sibling the rest,
// through the sizes ImGui's docking keeps for the split's next layout (a locked size is
// taken from Size, and the sibling gets the rest).
void resizeFirstChild(ImGuiDockNode* parent, ImGuiDockNode* first, float size) {
    const int axis = parent->SplitAxis;
    ImGuiDockNode* other =
        parent->ChildNodes[0] == first ? parent->ChildNodes[1] : parent->ChildNodes[0];
    const float total = first->Size[axis] + other->Size[axis];
    size = std::ceil(size); // whole pixels, rounded so that a lack under one is made up
    first->Size[axis] = first->SizeRef[axis] = size;
    other->SizeRef[axis] = std::max(1.0f, total - size);
    first->WantLockSizeOnce = true;
}

// What a place lacks and can give, along each axis, judged by the plots drawn in it this
// frame: a plot under kMinPlot needs the difference; a place can give what its smallest
// plot has above kMinPlot, or, without plots (a table, a form), what it has above a few
// lines of text.
struct Room {
    float need[2] = {0.0f, 0.0f};
    float spare[2] = {0.0f, 0.0f};
};

struct PlotInPlace {
    const plot::DrawnPlot* plot;
    bool scrolls; // its view's plots are meant to scroll (View::plotsScroll)
};
using PlotsByNode = std::map<const ImGuiDockNode*, std::vector<PlotInPlace>>;

// What a place needs at least without a plot drawn in it: room for a readable plot and a
// few lines of controls where a chart window docks (a chart not drawn because its place
// was crushed asks for it back), a few lines of text elsewhere (a table, a form).
struct Places {
    PlotsByNode plots;
    std::map<const ImGuiDockNode*, bool> hostsCharts;
};

Room leafRoom(const ImGuiDockNode* node, const Places& places) {
    Room room;
    const auto it = places.plots.find(node);
    const auto charts = places.hostsCharts.find(node);
    const bool chartPlace = charts != places.hostsCharts.end() && charts->second;
    const float lines = ImGui::GetFrameHeightWithSpacing();
    const float pad = 2.0f * ImGui::GetStyle().WindowPadding.x;
    const float minSize[2] = {chartPlace ? kMinPlot[0] + pad : 16.0f * ImGui::GetFontSize(),
                              chartPlace ? kMinPlot[1] + 4.0f * lines : 4.0f * lines};
    for (int axis : {0, 1}) {
        room.need[axis] = std::max(0.0f, minSize[axis] - node->Size[axis]);
        room.spare[axis] = std::max(0.0f, node->Size[axis] - minSize[axis]);
    }
    if (it == places.plots.end()) {
        return room;
    }
    // Plots side by side or stacked share what their place gains: each one's lack counts,
    // and so does what its place hides of it (a view that scrolls below its own minimum),
    // unless the view's plots are meant to scroll.
    for (int axis : {0, 1}) {
        float least = INFINITY;
        for (const PlotInPlace& p : it->second) {
            const float hidden =
                p.scrolls ? 0.0f : p.plot->frameSize[axis] - shownSize(*p.plot, axis);
            least = std::min(least, margin(*p.plot, axis) - std::max(0.0f, hidden));
            room.need[axis] += std::max({0.0f, -margin(*p.plot, axis), hidden});
        }
        room.spare[axis] = std::min(room.spare[axis], std::max(0.0f, least));
    }
    return room;
}

// Balances a place's children, deepest first: along the split axis a child that needs
// room takes it from its sibling's spare, never more. Returns what the place as a whole
// still needs and could give.
Room balance(ImGuiDockNode* node, const Places& places, int& moves) {
    if (!node->ChildNodes[0] || !node->ChildNodes[1]) {
        return leafRoom(node, places);
    }
    const Room a = balance(node->ChildNodes[0], places, moves);
    const Room b = balance(node->ChildNodes[1], places, moves);
    const int axis = node->SplitAxis;
    const int across = 1 - axis;
    float moved = 0.0f;
    constexpr float kAtLeast = 0.5f; // pixels: below this a move is not worth a relayout
    if (a.need[axis] > kAtLeast && b.spare[axis] > kAtLeast) {
        moved = std::min(a.need[axis], b.spare[axis]);
        resizeFirstChild(node, node->ChildNodes[0], node->ChildNodes[0]->Size[axis] + moved);
    } else if (b.need[axis] > kAtLeast && a.spare[axis] > kAtLeast) {
        moved = std::min(b.need[axis], a.spare[axis]);
        resizeFirstChild(node, node->ChildNodes[1], node->ChildNodes[1]->Size[axis] + moved);
    }
    moves += moved > 0.0f ? 1 : 0;
    Room out;
    out.need[axis] = std::max(0.0f, a.need[axis] + b.need[axis] - moved);
    out.spare[axis] = std::max(0.0f, a.spare[axis] + b.spare[axis] - moved);
    out.need[across] = std::max(a.need[across], b.need[across]);
    out.spare[across] = std::min(a.spare[across], b.spare[across]);
    return out;
}

// Makes `node` take at least `share` of its vertical split (the rest stays with its
// sibling); keepPlotsReadable gives the sibling's plots back what they then lack.
void growInSplit(ImGuiDockNode* node, float share) {
    ImGuiDockNode* parent = node ? node->ParentNode : nullptr;
    if (!parent || parent->SplitAxis != ImGuiAxis_Y || !parent->ChildNodes[0] ||
        !parent->ChildNodes[1]) {
        return;
    }
    const float total = parent->Size.y;
    if (total < 4.0f * ImGui::GetFontSize()) {
        return; // a window too small to share (minimised): ImGui's split needs both sides > 0
    }
    const float want = std::floor(total * share);
    if (node->Size.y < want - 1.0f) {
        resizeFirstChild(parent, node, want);
    }
}

bool inFront(const ImGuiWindow* win) {
    return win && win->DockNode && win->DockIsActive && !win->Hidden && win->DockNode->TabBar &&
           win->DockNode->TabBar->SelectedTabId == win->TabId;
}

} // namespace

void WindowSet::giveRoomTo(const Window& w) {
    if (w.roomShare > 0.0f && (!w.view || w.view->wantsRoom())) {
        const ImGuiWindow* win = ImGui::FindWindowByName(w.title);
        growInSplit(win ? win->DockNode : nullptr, w.roomShare);
    }
}

void WindowSet::giveRoomToWindowsBroughtForward() {
    for (Window& w : m_windows) {
        if (w.roomShare <= 0.0f) {
            continue;
        }
        const ImGuiWindow* win = ImGui::FindWindowByName(w.title);
        // In front with something to show: brought forward, or given content while in front
        // (Ops when its profiled run finishes). In front when first seen (the saved
        // layout's choice): its saved size stays.
        const bool wants = inFront(win) && (!w.view || w.view->wantsRoom());
        if (wants && !w.wantedRoom && w.seen) {
            giveRoomTo(w);
        }
        w.wantedRoom = wants;
        w.seen = w.seen || win != nullptr;
    }
}

void WindowSet::keepPlotsReadable(ImGuiID dockspace, bool settled) {
    giveRoomToWindowsBroughtForward();
    m_lastFramePlots = std::move(plot::plotsThisFrame());
    plot::plotsThisFrame().clear();
    Places places;
    for (const plot::DrawnPlot& p : m_lastFramePlots) {
        const ImGuiWindow* win = ImGui::FindWindowByName(p.window.c_str());
        const auto w = std::find_if(m_windows.begin(), m_windows.end(),
                                    [&](const Window& w) { return p.window == w.title; });
        if (inFront(win) && w != m_windows.end()) {
            places.plots[win->DockNode].push_back({&p, w->view && w->view->plotsScroll()});
        }
    }
    for (const Window& w : m_windows) {
        const ImGuiWindow* win = ImGui::FindWindowByName(w.title);
        if (win && win->DockNode) {
            places.hostsCharts[win->DockNode] |= w.slot != DockSlot::Left &&
                                                 w.slot != DockSlot::LeftBottom &&
                                                 w.slot != DockSlot::Bottom;
        }
    }
    // Not before the windows and their places have their sizes (the first frames lay them
    // out from the saved sizes).
    ImGuiDockNode* root = ImGui::DockBuilderGetNode(dockspace);
    int moves = 0;
    if (root && settled) {
        balance(root, places, moves);
    }
    m_framesSinceLayoutMove = moves > 0 ? 0 : m_framesSinceLayoutMove + 1;
}

void WindowSet::writeLayoutReport(const std::filesystem::path& path,
                                  const std::optional<VerdictMark>& mark) const {
    // In whole pixels: a lack under half a pixel is none (balance's kAtLeast).
    nlohmann::json plots = nlohmann::json::array();
    for (const plot::DrawnPlot& p : m_lastFramePlots) {
        plots.push_back({{"window", p.window},
                         {"chart", p.chart},
                         {"x", p.min.x},
                         {"y", p.min.y},
                         {"width", std::round(shownSize(p, 0))},
                         {"height", std::round(shownSize(p, 1))},
                         {"data_width", std::round(dataSize(p, 0))},
                         {"data_height", std::round(dataSize(p, 1))},
                         {"frame_width", std::round(p.frameSize.x)},
                         {"frame_height", std::round(p.frameSize.y)}});
    }
    nlohmann::json front = nlohmann::json::array();
    for (const Window& w : m_windows) {
        const ImGuiWindow* win = ImGui::FindWindowByName(w.title);
        if (inFront(win)) {
            front.push_back({{"window", w.title},
                             {"x", win->Pos.x},
                             {"y", win->Pos.y},
                             {"width", win->Size.x},
                             {"height", win->Size.y}});
        }
    }
    const ImVec2 size = ImGui::GetMainViewport()->Size;
    const nlohmann::json report{{"width", size.x},
                                {"height", size.y},
                                {"min_plot", {{"width", kMinPlot[0]}, {"height", kMinPlot[1]}}},
                                {"min_data", {{"width", kMinData[0]}, {"height", kMinData[1]}}},
                                {"windows", front},
                                {"plots", plots},
                                {"verdicts", verdicts.report(mark)}};
    engine::writeFileAtomic(path, report.dump(1) + "\n");
}

} // namespace lmprof::ui
