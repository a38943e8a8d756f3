// The window registry's windows and views, and their layout on the first frame: the
// default one, or the saved one with the windows it does not know docked where they belong.

#include "window_set.h"

#include "settings.h"
#include "workspace.h"

#include <algorithm>
#include <cmath>
#include <imgui_internal.h>
#include <implot.h>
#include <stdexcept>

namespace lmprof::ui {

WindowSet::WindowSet(std::string iniFile, bool freshLayout, FileReading& reading)
    : files(reading), m_iniFile(std::move(iniFile)),
      m_layoutProblem(freshLayout ? std::string() : setAsideOversizedLayout(m_iniFile)),
      m_hadLayout(!freshLayout && std::filesystem::exists(m_iniFile)) {
    // The views the app drives are its own members, found by title; the rest are made from
    // their entries.
    const std::pair<const char*, View*> driven[] = {{FilesView::kTitle, &files},
                                                    {SweepView::kTitle, &sweep},
                                                    {PrecisionLabView::kTitle, &precisionLab},
                                                    {StudyView::kTitle, &study}};
    size_t found = 0;
    for (const WindowEntry& entry : windowRegistry()) {
        View* view = nullptr;
        for (const auto& [title, own] : driven) {
            if (std::string_view(title) == entry.title) {
                view = own;
                ++found;
            }
        }
        if (!view) {
            view = m_others.emplace_back(entry.make()).get();
        }
        m_views.push_back(view);
        m_windows.push_back({entry.title, entry.slot, view, entry.roomShare});
        for (const ChartEntry& chart : entry.charts) {
            m_charts.push_back({chart.name, chart.title, [view, draw = chart.draw](ViewContext& c) {
                                    draw(*view, c, ImVec2(-1, -1));
                                }});
        }
    }
    if (found != std::size(driven)) { // a driven view the registry lost would never be drawn
        throw std::logic_error("the window registry lacks a view the app drives (Files, Sweep, "
                               "Precision lab or Study)");
    }
}

bool WindowSet::isWindow(const std::string& title) const {
    return std::any_of(m_windows.begin(), m_windows.end(),
                       [&](const Window& w) { return title == w.title; });
}

std::string WindowSet::windowTitles() const {
    std::string titles;
    for (const Window& w : m_windows) {
        titles += (titles.empty() ? "" : ", ") + std::string(w.title);
    }
    return titles;
}

const Chart* WindowSet::findChart(const std::string& stem) const {
    // A telemetry chart's own "Save PNG" exports the linked charts together.
    const bool telemetryPart = stem == "telemetry-step-time" || stem == "telemetry-cpu" ||
                               stem == "telemetry-clocks" || stem == "telemetry-power";
    const std::string name = telemetryPart ? "telemetry" : stem;
    for (const Chart& c : m_charts) {
        if (name == c.name) {
            return &c;
        }
    }
    return nullptr;
}

std::string WindowSet::chartNames() const {
    std::string names;
    for (const Chart& c : m_charts) {
        names += (names.empty() ? "" : ", ") + std::string(c.name);
    }
    return names;
}

void WindowSet::observe(ViewContext& ctx, const std::vector<engine::SessionEvent>& events) {
    for (View* view : m_views) {
        view->observe(ctx, events);
    }
}

namespace {

// Whether a window, or a child window in it, scrolled vertically at the last frame by more
// than a line (a pane a pixel too short for its plot is not a page to scroll).
bool scrolls(const ImGuiWindow* win) {
    if (!win) {
        return false;
    }
    if (win->ScrollMax.y > ImGui::GetFontSize()) {
        return true;
    }
    return std::any_of(win->DC.ChildWindows.begin(), win->DC.ChildWindows.end(), scrolls);
}

} // namespace

void WindowSet::draw(ImGuiID dockspace, ViewContext& ctx, Workspace& ws) {
    layOutOnce(dockspace, ws);
    for (const Window& w : m_windows) {
        if (auto it = m_pendingDocks.find(w.title); it != m_pendingDocks.end()) {
            ImGui::SetNextWindowDockID(it->second);
            m_pendingDocks.erase(it);
        }
        // In a pane that scrolls, the wheel scrolls the pane and Ctrl+wheel zooms a chart;
        // elsewhere the wheel zooms (docs/WINDOW.md).
        ImPlot::GetInputMap().ZoomMod =
            scrolls(ImGui::FindWindowByName(w.title)) ? ImGuiMod_Ctrl : ImGuiMod_None;
        w.view->draw(ctx);
    }
    ImPlot::GetInputMap().ZoomMod = ImGuiMod_None;
}

void WindowSet::show(const std::string& title) {
    ImGui::SetWindowFocus(title.c_str());
    for (const Window& w : m_windows) {
        if (title == w.title) {
            giveRoomTo(w);
        }
    }
}

void WindowSet::resetLayout() {
    m_layoutBuilt = false;
    m_hadLayout = false;
}

void WindowSet::buildDefaultLayout(ImGuiID dockspace) {
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::DockBuilderRemoveNode(dockspace);
    ImGui::DockBuilderAddNode(dockspace, ImGuiDockNodeFlags_DockSpace);
    ImGui::DockBuilderSetNodeSize(dockspace, viewport->WorkSize);
    ImGuiID left = 0, main = 0, leftTop = 0, leftBottom = 0, charts = 0, bottom = 0;
    ImGui::DockBuilderSplitNode(dockspace, ImGuiDir_Left, 0.23f, &left, &main);
    ImGui::DockBuilderSplitNode(left, ImGuiDir_Down, 0.16f, &leftBottom, &leftTop);
    // The bottom strip (tables) gets about 12 rows, at most 27% of a tall window and at
    // least 20% of a small one, so the charts keep their height at 1280x720.
    const float bottomShare =
        std::clamp(ImGui::GetFontSize() * 17.0f / viewport->WorkSize.y, 0.2f, 0.27f);
    ImGui::DockBuilderSplitNode(main, ImGuiDir_Down, bottomShare, &bottom, &charts);
    ImGuiID chartsLeft = 0, chartsRight = 0, tl = 0, bl = 0, tr = 0, br = 0;
    ImGui::DockBuilderSplitNode(charts, ImGuiDir_Left, 0.5f, &chartsLeft, &chartsRight);
    // Below about 900 px (1280x720) two rows of charts each side leave no plot readable, nor
    // room for the strip's tables (docs/WINDOW.md, "Layout"): each side's lower charts become
    // tabs beside its upper ones (Telemetry beside Step times, Throughput beside Memory).
    if (viewport->WorkSize.y >= 52.0f * ImGui::GetFontSize()) {
        ImGui::DockBuilderSplitNode(chartsLeft, ImGuiDir_Down, 0.5f, &bl, &tl);
        // The Memory view (timeline, breakdown, allocations) gets the taller place.
        ImGui::DockBuilderSplitNode(chartsRight, ImGuiDir_Down, 0.36f, &br, &tr);
    } else {
        tl = bl = chartsLeft;
        tr = br = chartsRight;
    }
    const std::map<DockSlot, ImGuiID> places = {
        {DockSlot::Left, leftTop},     {DockSlot::LeftBottom, leftBottom},
        {DockSlot::ChartTopLeft, tl},  {DockSlot::ChartBottomLeft, bl},
        {DockSlot::ChartTopRight, tr}, {DockSlot::ChartBottomRight, br},
        {DockSlot::Bottom, bottom}};
    for (const Window& w : m_windows) {
        ImGui::DockBuilderDockWindow(w.title, places.at(w.slot));
    }
    ImGui::DockBuilderFinish(dockspace);
}

void WindowSet::dockUnknownWindows() {
    const auto settingsOf = [](const char* title) {
        return ImGui::FindWindowSettingsByID(ImHashStr(title));
    };
    for (const Window& w : m_windows) {
        if (settingsOf(w.title)) {
            continue;
        }
        for (const Window& other : m_windows) {
            const ImGuiWindowSettings* known =
                other.slot == w.slot ? settingsOf(other.title) : nullptr;
            if (known && known->DockId != 0) {
                m_pendingDocks[w.title] = known->DockId;
                break;
            }
        }
    }
}

void WindowSet::layOutOnce(ImGuiID dockspace, Workspace& ws) {
    if (m_layoutBuilt) {
        return;
    }
    // A saved layout made for a window of another size (a smaller screen now, say)
    // would squeeze panes to slivers: the default layout is built for this size.
    const ImVec2 now = ImGui::GetMainViewport()->Size;
    const auto differs = [](float now, int saved) {
        return saved > 0 && std::abs(now - static_cast<float>(saved)) > 0.15f * saved;
    };
    if (m_hadLayout &&
        (differs(now.x, ws.settings.windowWidth) || differs(now.y, ws.settings.windowHeight))) {
        m_hadLayout = false;
        ws.report("the saved layout was made for a " + std::to_string(ws.settings.windowWidth) +
                      "x" + std::to_string(ws.settings.windowHeight) +
                      " window; laid out afresh for this size",
                  false);
    }
    if (!m_hadLayout) {
        buildDefaultLayout(dockspace);
    } else {
        dockUnknownWindows();
    }
    m_layoutBuilt = true;
}

} // namespace lmprof::ui
