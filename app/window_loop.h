// The window's frame loop (docs/WINDOW.md, "Drawing"): ImGui and ImPlot on a GLFW window,
// the App drawn frame after frame, paced so an idle window sleeps and a CPU run is not
// slowed by drawing, the screenshot, the recording and the files written at exit. app/main.cpp
// decides that there is a window and with what; this file runs it.
#pragma once

#include "cli_options.h"
#include "lmprof/ui/app.h"

struct GLFWwindow;

namespace lmprof::app {

struct WindowOutcome {
    int exitCode = kExitOk;
    bool scriptRunEnded = false; // the awaited run (autorun or watched script) finished
};

// Draws `window` until it is closed (by a person, SIGINT/SIGTERM, the App, or
// --exit-when-done once the autorun, demo and exports are done), then writes what the
// options ask for at exit (frame stats, layout report) and tears ImGui down. Sets
// `app.wake`. The window itself is the caller's to destroy.
WindowOutcome runWindow(GLFWwindow* window, ui::AppOptions app, const WindowOptions& options);

} // namespace lmprof::app
