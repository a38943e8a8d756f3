// The window's frame loop (window_loop.h).
//
// Sections: closing and waking · the pacer · the loop · runWindow.

#include "window_loop.h"

#include "lmprof/ui/video_recorder.h"

#include <GLFW/glfw3.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <imgui_internal.h>
#include <implot.h>
#include <memory>
#include <optional>
#include <thread>

namespace lmprof::app {

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------
// Closing and waking

// SIGINT/SIGTERM close the window as its close button does, so settings, layout, autosave
// and --save-on-exit are written on the way out; a second signal ends the process at once.
volatile std::sig_atomic_t g_closeRequested = 0;
void requestClose(int sig) {
    if (g_closeRequested) {
        std::signal(sig, SIG_DFL);
        std::raise(sig);
    }
    g_closeRequested = 1;
}

// The engine wakes a loop asleep in glfwWaitEvents once per frame at most: a run publishing
// a step every millisecond posts one empty event until the next frame begins, not a
// thousand (each an X11 message the loop would read).
std::atomic<bool> g_wakePosted{false};
void wakeTheLoop() {
    if (!g_wakePosted.exchange(true)) {
        glfwPostEmptyEvent(); // any thread may call it
    }
}

// A signal handler may not call GLFW: this thread turns a close request into an empty event
// for a loop asleep in glfwWaitEvents (10 checks a second, nothing else).
class CloseWatch {
public:
    CloseWatch() {
        std::signal(SIGINT, requestClose);
        std::signal(SIGTERM, requestClose);
        m_thread = std::thread([this] {
            while (!m_ended.load()) {
                if (g_closeRequested) {
                    glfwPostEmptyEvent();
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
        });
    }
    ~CloseWatch() {
        m_ended.store(true);
        m_thread.join();
    }

private:
    std::atomic<bool> m_ended{false};
    std::thread m_thread;
};

bool softwareRenderer() {
    const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    return renderer && (std::strstr(renderer, "llvmpipe") || std::strstr(renderer, "softpipe") ||
                        std::strstr(renderer, "Software"));
}

// ---------------------------------------------------------------------------------------
// The pacer (docs/WINDOW.md, "Drawing"). While something moves (a run streams, a sweep
// runs) frames come at most --max-fps a second; otherwise the loop sleeps until input
// arrives or the engine wakes it (AppOptions::wake), after a few frames more for ImGui to
// settle hover and focus, and two frames a second for the first seconds after input
// (tooltips appear after a delay). Without vsync (Xvfb) nothing else would slow it.
// - While a CPU run streams and nobody touches the window: 2 frames a second on a software
//   renderer (Mesa's llvmpipe, as under Xvfb), whose frames cost tens of ms of the cores the
//   run is measured on (at 30 fps tiny's CPU steps were 2.9x slower than in lmprof-cli, at
//   2 fps 1.1x; bench/window_cpu.sh), 10 on a hardware one. Input brings the full rate
//   back at once.
// - A recording draws every frame, at most --fps a second in real time; its clock (the
//   demo's pauses) advances 1 / fps per frame however slow drawing is.
class Pacer {
public:
    Pacer(int maxFps, bool softwareGl)
        : m_activeFrame(std::chrono::microseconds(1000000 / maxFps)),
          m_cpuRunFrame(
              std::chrono::microseconds(1000000 / std::min(maxFps, softwareGl ? 2 : 10))) {}

    // Called after polling, with whether the poll brought input.
    void noteFrame(Clock::time_point start, bool input) {
        // Events of the first frames are the window being set up (focus, the pointer's first
        // position), not a person using it.
        m_framesSinceInput = input && m_framesDrawn > kSetupFrames ? 0 : m_framesSinceInput + 1;
        if (input) {
            m_lastInput = start;
        }
        ++m_framesDrawn;
    }

    // Waits until the next frame is due. `busy`: something moves on screen; `change`: when
    // the screen next changes by itself while idle (App::nextQuietChange).
    void wait(Clock::time_point frameStart, bool busy, bool cpuRunStreaming,
              std::optional<Clock::time_point> change) const {
        if (busy || m_framesSinceInput < kFramesAfterInput) {
            if (cpuRunStreaming && m_framesSinceInput > kInteractiveFrames) {
                waitQuietly(frameStart + m_cpuRunFrame);
            } else {
                std::this_thread::sleep_until(frameStart + m_activeFrame);
            }
        } else if (frameStart - m_lastInput < kHoverSettle) {
            glfwWaitEventsTimeout(kIdleWaitS);
        } else if (change) {
            const std::chrono::duration<double> left = *change - Clock::now();
            glfwWaitEventsTimeout(std::max(left.count(), 0.0));
        } else {
            glfwWaitEvents(); // input, the engine's wake, or the close watch
        }
    }

private:
    // Input wakes the loop at once; the engine's wakes do not.
    static void waitQuietly(Clock::time_point until) {
        for (;;) {
            const std::chrono::duration<double> left = until - Clock::now();
            if (left.count() <= 0.0 || g_closeRequested ||
                ImGui::GetCurrentContext()->InputEventsQueue.Size > 0) {
                return;
            }
            glfwWaitEventsTimeout(left.count());
        }
    }

    static constexpr int kInteractiveFrames = 30; // about a second at the full rate after input
    static constexpr double kIdleWaitS = 0.5;
    static constexpr auto kHoverSettle = std::chrono::seconds(2); // then sleep until woken
    static constexpr int kFramesAfterInput = 3;
    static constexpr int kSetupFrames = 3;
    std::chrono::microseconds m_activeFrame;
    std::chrono::microseconds m_cpuRunFrame;
    int m_framesSinceInput = kInteractiveFrames + 1;
    int m_framesDrawn = 0;
    Clock::time_point m_lastInput = Clock::now();
};

// ---------------------------------------------------------------------------------------
// The loop

class FrameLoop {
public:
    FrameLoop(GLFWwindow* window, ui::App& app, const WindowOptions& o, bool hasDemo)
        : m_window(window), m_app(app), m_o(o), m_pacer(o.maxFps, softwareRenderer()),
          m_screenshotPending(!o.screenshot.empty()) {
        if (!o.record.empty()) {
            int width = 0, height = 0;
            glfwGetFramebufferSize(window, &width, &height);
            try {
                m_recorder = std::make_unique<ui::VideoRecorder>(o.record, width, height, o.fps);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "lmprof: --record: %s\n", e.what());
                m_exitCode = kExitUsage;
                glfwSetWindowShouldClose(window, GLFW_TRUE);
            }
        }
        m_exitWhenDone = o.exitWhenDone || (m_recorder && hasDemo);
    }

    // Frames until the window closes or the launch is done; the exit code so far.
    int run() {
        const CloseWatch closeWatch;
        m_launched = Clock::now();
        std::optional<Clock::time_point> closing; // asked to close, waiting for mayClose
        for (;;) {
            if (glfwWindowShouldClose(m_window) || g_closeRequested || m_app.quitRequested()) {
                closing = closing.value_or(Clock::now());
                // A watched script's run ends with its steps first, within a grace: one that
                // ignores Ctrl+C is stopped harder once the window has gone (windowMode).
                if (m_app.mayClose() || Clock::now() - *closing > kCloseGrace) {
                    break;
                }
            }
            const auto frameStart = Clock::now();
            if (!drawFrame(frameStart) || done()) {
                break;
            }
            if (m_recorder) {
                std::this_thread::sleep_until(
                    m_launched +
                    std::chrono::microseconds(static_cast<int64_t>(m_recorder->seconds() * 1e6)));
            } else {
                m_pacer.wait(frameStart, m_app.animating() || m_screenshotPending,
                             m_app.cpuRunStreaming(), m_app.nextQuietChange());
            }
        }
        return m_exitCode;
    }

    // Ends the recording, and says why the launch failed if it did.
    int finish(bool hasDemo) {
        // A demo step that failed (said on stderr when it did) fails the launch, whether the
        // demo closed the window or a person did.
        if (hasDemo && !m_app.demoSucceeded()) {
            fail(kExitFailure);
        }
        if (m_recorder) {
            if (const std::string problem = m_recorder->finish(); !problem.empty()) {
                std::fprintf(stderr, "lmprof: --record: %s\n", problem.c_str());
                fail(kExitFailure);
            } else {
                std::fprintf(stderr, "lmprof: recorded %lld frames (%.1f s at %d fps) to %s\n",
                             static_cast<long long>(m_recorder->frames()), m_recorder->seconds(),
                             m_o.fps, m_o.record.c_str());
            }
        }
        if (!m_app.saveOnExit()) {
            fail(kExitFailure);
        }
        return m_exitCode;
    }

private:
    // How long a close waits for a watched script's run to end (App::mayClose).
    static constexpr auto kCloseGrace = std::chrono::seconds(20);
    void fail(int code) { m_exitCode = m_exitCode == kExitOk ? code : m_exitCode; }
    int m_lastWidth = 0, m_lastHeight = 0; // the window's size at the last frame

    // One frame: events, the App, rendering, the screenshot and the recording. False when
    // the recording failed.
    bool drawFrame(Clock::time_point frameStart) {
        m_app.setClock(m_recorder ? m_recorder->seconds()
                                  : std::chrono::duration<double>(frameStart - m_launched).count());
        glfwPollEvents();
        // After the poll, before the frame drains the engine: an event published from now on
        // posts a wake the next wait sees; one published earlier is drained now.
        g_wakePosted.store(false);
        // A resize counts as input: the layout it starts settles over the next frames (the
        // dock balances, tables fit their columns), which are drawn instead of waiting for
        // the mouse to move.
        int windowWidth = 0, windowHeight = 0;
        glfwGetWindowSize(m_window, &windowWidth, &windowHeight);
        const bool resized = windowWidth != m_lastWidth || windowHeight != m_lastHeight;
        m_lastWidth = windowWidth;
        m_lastHeight = windowHeight;
        m_pacer.noteFrame(frameStart,
                          resized || ImGui::GetCurrentContext()->InputEventsQueue.Size > 0);
        const auto uiStart = Clock::now();
        ImGui_ImplOpenGL3_NewFrame();
        ImGui_ImplGlfw_NewFrame();
        ImGui::NewFrame();
        m_app.frame();
        ImGui::Render();
        const auto uiEnd = Clock::now();
        int width = 0, height = 0;
        glfwGetFramebufferSize(m_window, &width, &height);
        glViewport(0, 0, width, height);
        const float shade = m_app.darkTheme() ? 0.08f : 0.94f;
        glClearColor(shade, shade, shade, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
        m_app.afterRender(width, height); // PNGs asked for in this frame
        takeScreenshot(width, height);
        if (m_recorder && !m_recorder->addFrame(width, height)) {
            std::fprintf(stderr, "lmprof: --record: %s\n", m_recorder->error().c_str());
            fail(kExitFailure);
            return false;
        }
        glfwSwapBuffers(m_window);
        if (!m_o.frameStats.empty()) {
            using Ms = std::chrono::duration<double, std::milli>;
            m_app.recordFrameTime(Ms(uiEnd - uiStart).count(),
                                  Ms(Clock::now() - frameStart).count());
        }
        return true;
    }

    // Once the layout has settled too: a launch without --autorun used to be captured on its
    // first, still empty frame.
    void takeScreenshot(int width, int height) {
        if (!m_screenshotPending || !m_app.autorunSettled() || !m_app.demoFinished() ||
            m_app.animating()) {
            return;
        }
        try {
            ui::writeFramebufferPng(m_o.screenshot, width, height);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "lmprof: screenshot: %s\n", e.what());
            fail(kExitFailure);
        }
        m_screenshotPending = false;
    }

    // --exit-when-done (or a recorded demo): the autorun, the demo, the screenshot and every
    // export are done; a failed autorun or export fails the launch.
    bool done() {
        if (!m_exitWhenDone || m_screenshotPending || !m_app.autorunSettled() ||
            m_app.pngPending() || !m_app.demoFinished()) {
            return false;
        }
        // The App's own flag: a watched script's run is an autorun the command line's
        // --autorun does not name (it exited 0 after that run ended `error`).
        if ((m_app.autorunAsked() && !m_app.autorunSucceeded()) || !m_app.exportsSucceeded()) {
            fail(kExitFailure);
        }
        return true;
    }

    GLFWwindow* m_window;
    ui::App& m_app;
    const WindowOptions& m_o;
    Pacer m_pacer;
    std::unique_ptr<ui::VideoRecorder> m_recorder;
    bool m_screenshotPending;
    bool m_exitWhenDone = false;
    int m_exitCode = kExitOk;
    Clock::time_point m_launched = Clock::now();
};

// The files the options ask for at exit, and the window's size kept with its layout.
void writeExitFiles(GLFWwindow* window, ui::App& app, const WindowOptions& o) {
    if (!o.frameStats.empty()) {
        try {
            app.writeFrameStats(o.frameStats);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "lmprof: frame stats: %s\n", e.what());
        }
    }
    if (!o.layoutReport.empty()) {
        try {
            app.writeLayoutReport(o.layoutReport);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "lmprof: layout report: %s\n", e.what());
        }
    }
    int width = 0, height = 0;
    glfwGetWindowSize(window, &width, &height);
    app.setWindowSize(width, height);
}

} // namespace

// ---------------------------------------------------------------------------------------
// runWindow

WindowOutcome runWindow(GLFWwindow* window, ui::AppOptions appOptions, const WindowOptions& o) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImPlot::CreateContext();
    WindowOutcome outcome;
    {
        const bool hasDemo = appOptions.demo.has_value();
        appOptions.wake = wakeTheLoop;
        ui::App app(std::move(appOptions));
        float scaleX = 1.0f, scaleY = 1.0f;
        glfwGetWindowContentScale(window, &scaleX, &scaleY);
        app.setupStyle(scaleX);
        ImGui_ImplGlfw_InitForOpenGL(window, true);
        ImGui_ImplOpenGL3_Init("#version 330");
        FrameLoop loop(window, app, o, hasDemo);
        loop.run();
        outcome.scriptRunEnded = app.autorunSettled();
        outcome.exitCode = loop.finish(hasDemo);
        writeExitFiles(window, app, o);
        ImGui_ImplOpenGL3_Shutdown();
        ImGui_ImplGlfw_Shutdown();
    }
    ImPlot::DestroyContext();
    ImGui::DestroyContext();
    return outcome;
}

} // namespace lmprof::app
