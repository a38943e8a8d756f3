// The dock places at run time (window_set.h): a window brought forward grows when it has
// content (roomShare, View::wantsRoom), and room moves between neighbouring places so that
// every plot on screen keeps a readable size (docs/WINDOW.md, "Layout"). The layout report
// is what a demo's "layout" step writes and gui_e2e checks.

#include "lmprof/engine/file_io.h"
#include "window_set.h"

#include <algorithm>
#include <cmath>
#include <imgui_internal.h>
#include <implot.h>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace lmprof::ui {

namespace {

// The smallest plot that still reads (docs/WINDOW.md): its frame, axis labels included, and
// its data area, inside the axes and any legend beside it.
constexpr float kMinPlot[2] = {240.0f, 140.0f};
constexpr float kMinData[2] = {150.0f, 80.0f};

float shownSize(const DrawnPlot& p, int axis) {
    return std::max(0.0f, p.max[axis] - p.min[axis]);
}
float dataSize(const DrawnPlot& p, int axis) {
    return std::max(0.0f, p.dataMax[axis] - p.dataMin[axis]);
}
// How far a plot is from readable along an axis: negative what it lacks, else its surplus.
// ImPlot draws no plot that fills its place smaller than its PlotMinSize (then part of it
// hides): that floor counts where it is the higher.
float margin(const DrawnPlot& p, int axis) {
    const float floor = std::max(kMinPlot[axis], ImPlot::GetStyle().PlotMinSize[axis]);
    return std::min(shownSize(p, axis) - floor, dataSize(p, axis) - kMinData[axis]);
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

// What a place lacks and can give, along each axis, judged by what is drawn in it this
// frame: a plot under kMinPlot needs the difference, and so does a main table showing fewer
// rows than its view wants; a place can give what its smallest plot has above kMinPlot and
// its table beyond those rows, or, with neither (a form), what it has above a few lines.
struct Room {
    float need[2] = {0.0f, 0.0f};
    float spare[2] = {0.0f, 0.0f};
};

struct PlotInPlace {
    const DrawnPlot* plot;
    bool scrolls; // its view's plots are meant to scroll (View::plotsScroll)
};
using PlotsByNode = std::map<const ImGuiDockNode*, std::vector<PlotInPlace>>;

// What is drawn in each place this frame, and which places host chart windows.
struct Places {
    PlotsByNode plots;
    std::map<const ImGuiDockNode*, std::vector<const DrawnTable*>> tables;
    std::map<const ImGuiDockNode*, bool> hostsCharts;
};

// A table's rows against those its view wants in view, in pixels: negative what it lacks,
// else its surplus.
float rowsMargin(const DrawnTable& t) {
    return (t.fit - static_cast<float>(t.wanted)) * t.rowHeight;
}

// A place's main table (noteTableRows) as its plots are: the rows it lacks are room
// it needs, and it gives only what it has beyond the rows wanted.
void addTableRoom(Room& room, const std::vector<const DrawnTable*>& tables) {
    for (const DrawnTable* t : tables) {
        const float m = rowsMargin(*t);
        room.need[1] += std::max(0.0f, -m);
        room.spare[1] = std::min(room.spare[1], std::max(0.0f, m));
    }
}

// A place without plots drawn: room for a readable plot and a few lines of controls where a
// chart window docks (a chart not drawn because its place was crushed asks for it back), a
// few lines of text elsewhere (a table, a form).
Room roomByLines(const ImGuiDockNode* node, bool chartPlace) {
    Room room;
    const float lines = ImGui::GetFrameHeightWithSpacing();
    const float pad = 2.0f * ImGui::GetStyle().WindowPadding.x;
    const float minSize[2] = {chartPlace ? kMinPlot[0] + pad : 16.0f * ImGui::GetFontSize(),
                              chartPlace ? kMinPlot[1] + 4.0f * lines : 4.0f * lines};
    for (int axis : {0, 1}) {
        room.need[axis] = std::max(0.0f, minSize[axis] - node->Size[axis]);
        room.spare[axis] = std::max(0.0f, node->Size[axis] - minSize[axis]);
    }
    return room;
}

// A place with plots drawn: they say what it needs and can give (the controls above a plot
// stay as the plot shrinks). Plots side by side or stacked share what their place gains:
// each one's lack counts, and so does what its place hides of it (a view that scrolls below
// its own minimum), unless the view's plots are meant to scroll.
Room roomByPlots(const std::vector<PlotInPlace>& plots) {
    Room room;
    for (int axis : {0, 1}) {
        float least = INFINITY;
        for (const PlotInPlace& p : plots) {
            const float hidden =
                p.scrolls ? 0.0f : p.plot->frameSize[axis] - shownSize(*p.plot, axis);
            least = std::min(least, margin(*p.plot, axis) - std::max(0.0f, hidden));
            room.need[axis] += std::max({0.0f, -margin(*p.plot, axis), hidden});
        }
        room.spare[axis] = std::max(0.0f, least);
    }
    return room;
}

Room leafRoom(const ImGuiDockNode* node, const Places& places) {
    const auto plots = places.plots.find(node);
    const auto charts = places.hostsCharts.find(node);
    Room room = plots != places.plots.end()
                    ? roomByPlots(plots->second)
                    : roomByLines(node, charts != places.hostsCharts.end() && charts->second);
    if (const auto tables = places.tables.find(node); tables != places.tables.end()) {
        addTableRoom(room, tables->second);
    }
    return room;
}

// Two children's room as their parent's, `moved` pixels having gone from one to the other
// along the split axis: along it they add up, across it the tighter one counts.
Room combine(const Room& a, const Room& b, int axis, float moved) {
    const int across = 1 - axis;
    Room out;
    out.need[axis] = std::max(0.0f, a.need[axis] + b.need[axis] - moved);
    out.spare[axis] = std::max(0.0f, a.spare[axis] + b.spare[axis] - moved);
    out.need[across] = std::max(a.need[across], b.need[across]);
    out.spare[across] = std::min(a.spare[across], b.spare[across]);
    return out;
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
    return combine(a, b, axis, moved);
}

// What a place as a whole needs and could give, as balance finds it, moving nothing.
Room measure(const ImGuiDockNode* node, const Places& places) {
    if (!node->ChildNodes[0] || !node->ChildNodes[1]) {
        return leafRoom(node, places);
    }
    return combine(measure(node->ChildNodes[0], places), measure(node->ChildNodes[1], places),
                   node->SplitAxis, 0.0f);
}

// Makes `node` take up to `share` of its vertical split, as far as its sibling can spare
// (its plots and tables as drawn last: none goes below its minimum). Returns whether it
// moved.
bool growInSplit(ImGuiDockNode* node, float share, const Places& places) {
    ImGuiDockNode* parent = node ? node->ParentNode : nullptr;
    if (!parent || parent->SplitAxis != ImGuiAxis_Y || !parent->ChildNodes[0] ||
        !parent->ChildNodes[1]) {
        return false;
    }
    const float total = parent->Size.y;
    if (total < 4.0f * ImGui::GetFontSize()) {
        return false; // a window too small to share (minimised): both sides must stay > 0
    }
    const ImGuiDockNode* sibling =
        parent->ChildNodes[0] == node ? parent->ChildNodes[1] : parent->ChildNodes[0];
    const float grow = std::min(std::floor(total * share) - node->Size.y,
                                std::floor(measure(sibling, places).spare[ImGuiAxis_Y]));
    if (grow < 1.0f) {
        return false;
    }
    resizeFirstChild(parent, node, node->Size.y + grow);
    return true;
}

bool inFront(const ImGuiWindow* win) {
    return win && win->DockNode && win->DockIsActive && !win->Hidden && win->DockNode->TabBar &&
           win->DockNode->TabBar->SelectedTabId == win->TabId;
}

// What each place shows in front, from the plots and tables drawn last.
Places placesOf(const std::vector<DrawnPlot>& drawnPlots,
                const std::vector<DrawnTable>& drawnTables, const std::vector<Window>& windows) {
    Places places;
    for (const DrawnTable& t : drawnTables) {
        const ImGuiWindow* win = ImGui::FindWindowByName(t.window.c_str());
        if (inFront(win)) {
            places.tables[win->DockNode].push_back(&t);
        }
    }
    for (const DrawnPlot& p : drawnPlots) {
        const ImGuiWindow* win = ImGui::FindWindowByName(p.window.c_str());
        const auto w = std::find_if(windows.begin(), windows.end(),
                                    [&](const Window& w) { return p.window == w.title; });
        if (inFront(win) && w != windows.end()) {
            places.plots[win->DockNode].push_back({&p, w->view && w->view->plotsScroll()});
        }
    }
    for (const Window& w : windows) {
        const ImGuiWindow* win = ImGui::FindWindowByName(w.title);
        if (win && win->DockNode) {
            places.hostsCharts[win->DockNode] |= w.slot != DockSlot::Left &&
                                                 w.slot != DockSlot::LeftBottom &&
                                                 w.slot != DockSlot::Bottom;
        }
    }
    return places;
}

} // namespace

bool WindowSet::giveRoomTo(const Window& w) {
    if (w.roomShare <= 0.0f || (w.view && !w.view->wantsRoom())) {
        return false;
    }
    const ImGuiWindow* win = ImGui::FindWindowByName(w.title);
    return growInSplit(win ? win->DockNode : nullptr, w.roomShare,
                       placesOf(m_lastFramePlots, m_lastFrameTables, m_windows));
}

bool WindowSet::giveRoomToWindowsBroughtForward() {
    bool moved = false;
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
            moved = giveRoomTo(w) || moved;
        }
        w.wantedRoom = wants;
        w.seen = w.seen || win != nullptr;
    }
    return moved;
}

void WindowSet::keepPlotsReadable(ImGuiID dockspace, bool settled) {
    ChartBook& charts = ChartBook::current();
    m_lastFramePlots = std::exchange(charts.plots, {});
    m_lastFrameTables = std::exchange(charts.tables, {});
    // A window grown this frame is balanced from the next one's drawing (this frame's was
    // measured at the sizes before).
    const bool grown = giveRoomToWindowsBroughtForward();
    // Not before the windows and their places have their sizes (the first frames lay them
    // out from the saved sizes).
    ImGuiDockNode* root = ImGui::DockBuilderGetNode(dockspace);
    int moves = grown ? 1 : 0;
    if (root && settled && !grown) {
        balance(root, placesOf(m_lastFramePlots, m_lastFrameTables, m_windows), moves);
    }
    m_framesSinceLayoutMove = moves > 0 ? 0 : m_framesSinceLayoutMove + 1;
    m_movingFrames = moves > 0 ? m_movingFrames + 1 : 0;
}

void WindowSet::writeLayoutReport(const std::filesystem::path& path,
                                  const std::optional<VerdictMark>& mark,
                                  const std::vector<std::string>& selected,
                                  const std::string& menuMessage) const {
    // In whole pixels: a lack under half a pixel is none (balance's kAtLeast).
    nlohmann::json plots = nlohmann::json::array();
    for (const DrawnPlot& p : m_lastFramePlots) {
        plots.push_back({{"window", p.window},
                         {"chart", p.chart},
                         {"x", p.min.x},
                         {"y", p.min.y},
                         {"width", std::round(shownSize(p, 0))},
                         {"height", std::round(shownSize(p, 1))},
                         {"data_width", std::round(dataSize(p, 0))},
                         {"data_height", std::round(dataSize(p, 1))},
                         {"frame_width", std::round(p.frameSize.x)},
                         {"frame_height", std::round(p.frameSize.y)},
                         {"data_box", {p.dataMin.x, p.dataMin.y, p.dataMax.x, p.dataMax.y}},
                         {"legend_box", p.legendMax.x > p.legendMin.x
                                            ? nlohmann::json{p.legendMin.x, p.legendMin.y,
                                                             p.legendMax.x, p.legendMax.y}
                                            : nlohmann::json()},
                         {"notes_over_data", p.notesOverData}});
    }
    nlohmann::json tables = nlohmann::json::array();
    for (const DrawnTable& t : m_lastFrameTables) {
        tables.push_back({{"window", t.window},
                          {"table", t.table},
                          {"rows", t.rows},
                          {"wanted", t.wanted},
                          {"fit", std::floor(t.fit + 0.01f)},
                          {"x", t.topLeft.x},
                          {"y", t.topLeft.y},
                          {"row_height", t.rowHeight}});
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
                                {"tables", tables},
                                {"selected", selected},
                                {"menu_message", menuMessage},
                                {"verdicts", verdicts.report(mark)}};
    engine::writeFileAtomic(path, report.dump(1) + "\n");
}

} // namespace lmprof::ui
