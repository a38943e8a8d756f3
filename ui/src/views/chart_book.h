// What lmprof keeps of its charts between frames, beside what ImPlot keeps of a plot (its
// axes and flags): each chart's own state (ChartState: its notes, a legend hidden for
// width, its lines' point budget), what the frame drew for the window's layout
// (DrawnPlot, DrawnTable), and whether its charts are drawn for a file. One book per ImGui
// context, the window's or a chart export's, made on first use and freed with its context:
// no chart's state is a global, and the export's charts never share state with the window's.
#pragma once

#include <imgui.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace lmprof::ui {

// A plot drawn on screen (not for a file), with the window it lies in and its frame (axis
// labels included) and data area in pixels, as far as they show: the layout report's
// figures (App::writeLayoutReport). plot::endPlot records it.
struct DrawnPlot {
    std::string window;      // the docked window's title: "Memory"
    std::string chart;       // the chart's file stem: "memory"
    ImVec2 min, max;         // what shows of its frame, cut by the window's scrolling and edges
    ImVec2 dataMin, dataMax; // what shows of its data area (inside the axes and legend)
    ImVec2 frameSize;        // its whole frame, hidden parts included
    // Its legend's box when one is drawn (else empty), and whether a note was drawn over its
    // data this frame (a note new to the plot, before it is laid out above): the layout
    // report's check that no text covers data.
    ImVec2 legendMin, legendMax;
    bool notesOverData = false;
};

// A table drawn on screen this frame as its window's main content (docs/WINDOW.md,
// "Layout"): the rows its view wants in view, and how many fit in what shows of it. The
// layout grows a place whose table shows fewer, and takes room from one only down to them.
// noteTableRows (table_cells.h) records it.
struct DrawnTable {
    std::string window; // the docked window's title: "Runs"
    std::string table;  // what it lists: "runs"
    int rows = 0;       // its body rows
    int wanted = 0;     // those the view wants in view (at most rows)
    float fit = 0.0f;   // body rows that fit in what shows of it, fractions included
    float rowHeight = 0.0f;
    ImVec2 topLeft; // of its header row, on the screen
};

// One chart's state (a plot, by its ImGui id), for the frame being drawn.
struct ChartState {
    // Its notes (plot::cornerNote): last frame's, drawn above the data as the plot's title
    // lines, and this frame's, shown from the next one; and how far down the notes new this
    // frame were drawn in the corner, over the data, until the plot is laid out for them.
    std::vector<std::string> shownNotes;
    std::vector<std::string> pendingNotes;
    float notesBelow = 0.0f;
    // Its legend was hidden for want of width (plot::setupLegendOf), so it is shown again
    // once it fits; a legend the user hid from the plot's menu stays hidden.
    bool legendHiddenForWidth = false;
    // Points per pixel column of its lines and bands this frame (plot::linesOfRuns).
    float pointsPerPixel = 1.0f;
    int frame = -1; // the frame the per-frame parts are of
};

class ChartBook {
public:
    // The book of the current ImGui context, made on its first call in that context.
    static ChartBook& current();

    // The chart being drawn (ImPlot's current plot). The first call in a frame begins the
    // frame's part: last frame's notes become the shown ones, the budget resets.
    ChartState& chartBeingDrawn();

    // What this frame drew on screen; the window takes both lists each frame
    // (WindowSet::keepPlotsReadable).
    std::vector<DrawnPlot> plots;
    std::vector<DrawnTable> tables;
    // The context draws charts for files (OffscreenCharts): axes show what the window
    // showed, and nothing is recorded for the window's layout (plot::exporting()).
    bool drawsForFile = false;

private:
    // Kept while the context lives: a chart hidden behind a tab keeps its notes, so it comes
    // back laid out for them. Bounded by the charts the views have (one entry per plot id).
    std::unordered_map<ImGuiID, ChartState> m_charts;
};

} // namespace lmprof::ui
