// Chart PNGs drawn for the file, not cut from the screen: a chart is drawn again, on its
// own, into an offscreen framebuffer of the size asked for, under a title naming what it
// shows and the runs in it, by a second ImGui + ImPlot context that shares only the OpenGL
// context with the window. So a chart behind a tab, or in a collapsed window, exports as
// itself (docs/WINDOW.md, "Exporting charts").
#pragma once

#include "lmprof/engine/session_interface.h"
#include "lmprof/engine/study.h"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

struct ImGuiContext;
struct ImPlotContext;

namespace lmprof::ui {

struct RunView;

// The line under an exported chart's title: the run (its id, batch, steps and device), or
// the runs by their legend names, a few named and the rest counted.
std::string chartRunsLine(const std::vector<RunView*>& runs);

class OffscreenCharts {
public:
    // Creates the second contexts (fonts, theme, the OpenGL3 renderer). Needs the window's
    // OpenGL context current; restores the window's ImGui and ImPlot contexts.
    OffscreenCharts(bool dark, float fontScale);
    ~OffscreenCharts();
    OffscreenCharts(const OffscreenCharts&) = delete;
    OffscreenCharts& operator=(const OffscreenCharts&) = delete;

    // Draws `chart` (which fills the size it is given) under `title` and `subtitle` into a
    // width x height image and writes it to `path`. Two frames are drawn so that anything
    // fitted from a frame's data has settled. Throws std::runtime_error naming the path.
    void render(const std::filesystem::path& path, int width, int height, bool dark,
                const std::string& title, const std::string& subtitle,
                const std::function<void()>& chart);

private:
    // The framebuffer: a colour texture of this size, made again when the size changes;
    // false when OpenGL cannot make it complete.
    bool sizeFramebuffer(int width, int height);
    // Two frames of the chart into the bound framebuffer (the export contexts current).
    void drawFrames(int width, int height, const std::string& title, const std::string& subtitle,
                    const std::function<void()>& chart);

    ImGuiContext* m_imgui = nullptr;
    ImPlotContext* m_implot = nullptr;
    unsigned m_framebuffer = 0, m_color = 0;
    int m_width = 0, m_height = 0;
    bool m_dark;
};

// The study report's charts drawn with `offscreen` (the window's own, or a headless
// context's: lmprof/ui/study_charts.h), each over its own runs and no engine.
void drawStudyCharts(OffscreenCharts& offscreen, const engine::ResultSet& set,
                     const std::vector<engine::StudyChart>& charts,
                     const std::filesystem::path& dir);

} // namespace lmprof::ui
