// The windows of the registry (views/registry.cpp), their views and their layout: which
// window goes where on a first launch, the room a window gets when it comes forward, and
// the plots kept readable whatever the layout (window_set.cpp, window_layout.cpp).
#pragma once

#include "views/files_view.h"
#include "views/plot_helpers.h"
#include "views/precision_lab_view.h"
#include "views/study_view.h"
#include "views/sweep_view.h"
#include "views/table_cells.h"
#include "views/verdict_strip.h"
#include "views/view.h"

#include <filesystem>
#include <functional>
#include <imgui.h>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::ui {

struct Workspace;

// One window of the registry: its title (the view's kTitle), its place in the default
// layout and how to draw it. The registry drives the default layout, the View menu, --show
// and the frame's draw calls.
struct Window {
    const char* title;
    DockSlot slot;
    View* view;
    // The share of its split a window's dock place grows to when the window is brought
    // forward (its tab selected, or --show), if it is smaller: 0 keeps the place as it is.
    float roomShare = 0.0f;
    bool wantedRoom = false; // last frame: in front, with something to show
    bool seen = false;       // it has existed for a frame
};

// A chart that exports as itself (chart_export.h): its name (the PNG's file stem), the
// title written above it, and how to draw it alone into the space left.
struct Chart {
    const char* name;
    const char* title;
    std::function<void(ViewContext&)> draw;
};

// Frames drawn after the autorun run finished before it counts as settled (the charts'
// auto-fit needs a frame or two to take the final data into account).
inline constexpr int kSettleFrames = 5;
// A layout that has not come to rest after this many frames is let be: the autorun counts
// as settled, and frames stop being drawn for it.
inline constexpr int kLayoutPatienceFrames = 120;

class WindowSet {
public:
    // `iniFile`: ImGui's saved layout; `freshLayout`: lay out afresh and leave it alone.
    // `reading`: the app's background file reader, which the Files view starts and shows.
    WindowSet(std::string iniFile, bool freshLayout, FileReading& reading);
    WindowSet(const WindowSet&) = delete;
    WindowSet& operator=(const WindowSet&) = delete;

    // The views the app itself drives (the registry's entries for them use these).
    FilesView files;
    SweepView sweep;
    PrecisionLabView precisionLab;
    StudyView study;
    VerdictStrip verdicts; // not a window: the line under the dock space (verdict_strip.h)

    const std::vector<Window>& windows() const { return m_windows; }
    bool isWindow(const std::string& title) const;
    std::string windowTitles() const; // "Configure, Files, ..." for messages
    const Chart* findChart(const std::string& stem) const;
    std::string chartNames() const; // "step-times, distribution, ..." for messages

    // Every view sees every frame's events, in the registry's order.
    void observe(ViewContext& ctx, const std::vector<engine::SessionEvent>& events);
    // Lays the windows out on the first frame, then draws them all.
    void draw(ImGuiID dockspace, ViewContext& ctx, Workspace& ws);
    // Brings a window forward as --show does, growing its place if it wants room.
    void show(const std::string& title);
    // After the windows are drawn: grows the dock place of a window with a roomShare as it
    // comes to the front (when its view has something to fill it with), then moves room
    // between the dock places so that no plot drawn this frame is smaller than kMinPlot
    // while a neighbour has room to spare, whatever the layout was (a crushed one saved by
    // an earlier version is repaired in the first frames). `settled`: the first frames,
    // which lay the places out from their saved sizes, are past.
    void keepPlotsReadable(ImGuiID dockspace, bool settled);
    int framesSinceLayoutMove() const { return m_framesSinceLayoutMove; }
    // The layout is still moving room between places (or moved it within kSettleFrames):
    // frames are to be drawn until it has settled, input or not. A layout that moves for
    // kLayoutPatienceFrames in a row is let be (it would otherwise draw without end).
    bool layoutSettling() const {
        return m_framesSinceLayoutMove < kSettleFrames && m_movingFrames < kLayoutPatienceFrames;
    }
    // The plots of the last frame drawn and the windows in front, as JSON (a demo's
    // "layout" step; docs/DEMO.md): what gui_e2e checks the layout by.
    // `mark`: the verdict marked, which the strip's part of the report names; `selected`:
    // the ids of the runs selected, in selection order; `menuMessage`: the status message
    // the menu bar showed in that frame ("" for none).
    void writeLayoutReport(const std::filesystem::path& path,
                           const std::optional<VerdictMark>& mark,
                           const std::vector<std::string>& selected,
                           const std::string& menuMessage = {}) const;
    // View > Reset layout: the default layout at the next frame.
    void resetLayout();
    // An oversized imgui.ini set aside at launch (empty: none).
    const std::string& layoutProblem() const { return m_layoutProblem; }
    const std::string& iniFile() const { return m_iniFile; }

private:
    std::vector<std::unique_ptr<View>> m_others; // the registry's other views
    std::vector<View*> m_views;                  // all of them, in the registry's order
    std::vector<Window> m_windows;
    std::vector<Chart> m_charts;
    std::string m_iniFile;
    std::string m_layoutProblem;
    bool m_hadLayout;
    bool m_layoutBuilt = false;
    // Windows the saved layout does not know (added by a later version) join, as a tab, a
    // window it knows from the same default place, instead of floating over the layout.
    std::map<std::string, ImGuiID> m_pendingDocks; // title -> dock node, for the first frame
    std::vector<DrawnPlot> m_lastFramePlots;
    std::vector<DrawnTable> m_lastFrameTables;
    int m_framesSinceLayoutMove = 0; // frames since keepPlotsReadable last moved room
    int m_movingFrames = 0;          // frames in a row that moved it

    void buildDefaultLayout(ImGuiID dockspace);
    // The first frame's layout: the saved one, or the default when there is none or it was
    // made for a window of another size.
    void layOutOnce(ImGuiID dockspace, Workspace& ws);
    void dockUnknownWindows();
    bool giveRoomTo(const Window& w); // whether its place grew
    bool giveRoomToWindowsBroughtForward();
};

} // namespace lmprof::ui
