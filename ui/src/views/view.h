// A window of the app and its registry entry. Each view is a class in its own file (its UI
// state as members) with an entry function naming the window's dock place and the charts
// it can export as PNGs; registry.cpp lists the entries in draw order. The app builds its
// windows, the View menu, --show, the default layout and --export-plots from the registry,
// so a new window is its view file plus one line there (docs/ARCHITECTURE.md).
//
//   WindowEntry throughputWindow() {
//       return windowOf<ThroughputView>(DockSlot::ChartBottomRight,
//                                       {chart<ThroughputView>(engine::chart::kThroughput, "...",
//                                                              &ThroughputView::drawChart)});
//   }
#pragma once

#include "lmprof/engine/charts.h"
#include "view_context.h"

#include <functional>
#include <imgui.h>
#include <memory>
#include <vector>

namespace lmprof::ui {

class View {
public:
    virtual ~View() = default;
    virtual void draw(ViewContext& ctx) = 0;
    // Every frame's engine events, before the run store takes them, whether the window is
    // drawn or not (a sweep or a study goes on behind another tab); `ctx` is this frame's.
    virtual void observe(ViewContext&, const std::vector<engine::SessionEvent>&) {}
    // Whether its window has something to fill a grown place with (WindowEntry::roomShare):
    // an empty one brought forward keeps its place, and its neighbours theirs.
    virtual bool wantsRoom() const { return true; }
    // Whether its plots lie in a page meant to scroll (the Study's report): then a plot
    // partly out of sight asks no room of its neighbours.
    virtual bool plotsScroll() const { return false; }
};

// Where the default layout docks a window: a left column (with a small place under it),
// four chart places in a 2 × 2 grid, and a strip along the bottom.
enum class DockSlot {
    Left,
    LeftBottom,
    ChartTopLeft,
    ChartBottomLeft,
    ChartTopRight,
    ChartBottomRight,
    Bottom
};

// A chart that exports as itself (chart_export.h): its name (the PNG's file stem), the
// title written above it, and how its view draws it alone into `size`.
struct ChartEntry {
    const char* name;
    const char* title;
    std::function<void(View&, ViewContext&, ImVec2 size)> draw;
};

struct WindowEntry {
    const char* title; // the view's kTitle: the tab, the View menu, --show
    DockSlot slot;
    std::function<std::unique_ptr<View>()> make;
    std::vector<ChartEntry> charts;
    // The share of its split a window's dock place grows to when the window is brought
    // forward (its tab selected, or --show), if it is smaller: 0 keeps the place as it is.
    float roomShare = 0.0f;
};

// The entry of view class V: its kTitle, made with its default constructor.
template <typename V>
WindowEntry windowOf(DockSlot slot, std::vector<ChartEntry> charts = {}, float roomShare = 0.0f) {
    return {V::kTitle, slot, [] { return std::make_unique<V>(); }, std::move(charts), roomShare};
}

// A chart of view class V drawn by `draw(V&, ViewContext&, ImVec2)` (a member function
// taking (ctx, size), or a lambda), named by its id in the engine's chart registry
// (lmprof/engine/charts.h), which the study's report names charts from.
template <typename V, typename Draw>
ChartEntry chart(engine::ChartId id, const char* title, Draw draw) {
    return {id.name, title, [draw](View& view, ViewContext& ctx, ImVec2 size) {
                std::invoke(draw, static_cast<V&>(view), ctx, size);
            }};
}

// Every window, in draw order (registry.cpp).
const std::vector<WindowEntry>& windowRegistry();

} // namespace lmprof::ui
