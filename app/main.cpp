// lmprof: the desktop window. Set up GLFW + OpenGL 3 + Dear ImGui + ImPlot, run the frame
// loop, tear down in reverse order. Without a display it runs the CLI's benchmark instead.
//   lmprof --model tiny --ctx 64 --steps 8 --device cpu --autorun --screenshot out.png
//          --exit-when-done

#include "cli_commands.h"
#include "cli_options.h"
#include "lmprof/engine/remote_session.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/ui/app.h"
#include "lmprof/ui/video_recorder.h"

#include <GLFW/glfw3.h>
#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <imgui_internal.h>
#include <implot.h>
#include <memory>
#include <netinet/in.h>
#include <optional>
#include <random>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace lmprof;

namespace {

std::string g_glfwError = "unknown reason";

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

// Why the config folder (layout, settings, autosave) cannot be used, or "" when it can. It
// is checked before a window opens, so a bad one is a message rather than an abort.
std::string configDirProblem(const std::filesystem::path& dir) {
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
        return "it exists and is not a folder";
    }
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        return "cannot create it (" + ec.message() + ")";
    }
    if (::access(dir.c_str(), R_OK | W_OK | X_OK) != 0) {
        return std::string("cannot read and write in it (") + std::strerror(errno) + ")";
    }
    return {};
}

int fallBackToCli(const app::WindowOptions& o) {
    const app::RunOptions& run = o.run;
    // What only a window can do is refused, not replaced by a terminal run that exits 0.
    for (const auto& [flag, given] :
         {std::pair{"--demo", !o.demo.empty()}, std::pair{"--record", !o.record.empty()},
          std::pair{"--screenshot", !o.screenshot.empty()},
          std::pair{"--export-plots", !o.exportPlots.empty()}}) {
        if (given) {
            std::fprintf(stderr,
                         "lmprof: %s needs a window, and none can be opened (%s); on a machine "
                         "without a display run it under Xvfb (xvfb-run lmprof ...), or use "
                         "lmprof-cli for a headless run\n",
                         flag, g_glfwError.empty() ? "no display" : g_glfwError.c_str());
            return app::kExitUsage;
        }
    }
    std::fprintf(stderr,
                 "lmprof: cannot open a window (%s); running the benchmark with the "
                 "command-line client instead\n",
                 g_glfwError.c_str());
    app::installInterruptHandler();
    if (o.worldSize > 0) {
        app::DdpOptions ddp;
        ddp.run = run;
        ddp.worldSize = o.worldSize;
        ddp.backend = o.backend;
        ddp.strategies = {o.strategy};
        return app::ddpCommand(ddp);
    }
    return app::runCommand(run);
}

// A free port on loopback for a watched script to listen on (the system's pick).
int freeLoopbackPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
    if (fd >= 0) {
        ::close(fd);
    }
    if (!ok) {
        throw std::runtime_error("no free port on 127.0.0.1 for the script to listen on");
    }
    return ntohs(address.sin_port);
}

// `lmprof -- python train.py`: the script runs with the watcher serving its run on a free
// loopback port, with a token made for it, and the window's engine is the client of that
// server (it retries until the script's first step opens the port).
std::unique_ptr<app::WatchedScript>
startWatchedScript(const std::vector<std::string>& command,
                   std::shared_ptr<engine::SessionInterface>& engine, std::string& address) {
    std::random_device random;
    std::string token;
    for (int i = 0; i < 8; ++i) {
        char part[9];
        std::snprintf(part, sizeof part, "%08x", random());
        token += part;
    }
    app::WatchLaunch launch;
    launch.command = command;
    const int port = freeLoopbackPort();
    launch.listen = "127.0.0.1:" + std::to_string(port);
    launch.token = token;
    // The Memory view's timeline. A Python sampler takes the script's GIL at each sample
    // (about 0.1 ms of the training thread on 2 cores, bench/README.md), so it samples at
    // 20 Hz, not at the engine's 100.
    launch.memoryHz = 20.0;
    auto script = std::make_unique<app::WatchedScript>(launch);
    engine::remote::ConnectOptions options;
    options.port = port;
    options.token = token;
    options.clientName = "lmprof " + engine::toolInfo().version + " (watching a script)";
    engine = std::make_shared<engine::remote::RemoteSession>(options);
    address = launch.listen;
    return script;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App cli{"lmprof: watch Transformer LM training steps live"};
    app::WindowOptions o;
    app::addWindowOptions(cli, o);
    const app::RunOptions& run = o.run;
    try {
        app::parseCommandLine(cli, argc, argv);
    } catch (const CLI::ParseError& e) {
        return cli.exit(e) == 0 ? app::kExitOk : app::kExitUsage;
    }
    std::optional<engine::DdpRequest> ddp;
    if (o.worldSize > 0) {
        ddp = engine::DdpRequest{};
        ddp->worldSize = o.worldSize;
        ddp->strategy = *engine::parseDdpStrategy(o.strategy);
        ddp->backend = *engine::parseDdpBackend(o.backend);
    }
    // -- python train.py: the script serves its run on a loopback port of its own, and the
    // window is its viewer (docs/WATCH.md).
    std::shared_ptr<engine::SessionInterface> remoteEngine;
    std::unique_ptr<app::WatchedScript> script;
    std::string watchAddress;
    if (!o.watchCommand.empty()) {
        if (!run.common.connect.empty()) {
            std::fprintf(stderr, "lmprof: give --connect or a script after --, not both\n");
            return app::kExitUsage;
        }
        try {
            script = startWatchedScript(o.watchCommand, remoteEngine, watchAddress);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "lmprof: -- %s: %s\n", o.watchCommand.front().c_str(), e.what());
            return app::kExitUsage;
        }
    }
    // --connect: the server's engine from the start, and the configuration is its to check.
    if (!run.common.connect.empty()) {
        remoteEngine = app::openEngine(run.common);
        if (!remoteEngine) {
            return app::kExitFailure;
        }
    }
    const auto config = app::buildRunConfig(run, ddp, script ? nullptr : remoteEngine.get());
    if (!config) {
        return app::kExitUsage;
    }
    for (const auto& [flag, path] :
         {std::pair{"--save-on-exit", &o.saveOnExit}, std::pair{"--record", &o.record}}) {
        if (path->empty()) {
            continue;
        }
        if (const std::string problem = engine::outputFileProblem(*path); !problem.empty()) {
            std::fprintf(stderr, "lmprof: %s %s: %s\n", flag, path->c_str(), problem.c_str());
            return app::kExitUsage;
        }
    }
    std::optional<ui::DemoScript> demo;
    if (!o.demo.empty()) {
        try {
            demo = ui::loadDemoScript(o.demo);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "lmprof: --demo %s\n", e.what());
            return app::kExitUsage;
        }
    }
    // Folders that files will be written to are checked now, not after the run (a missing
    // folder is named; lmprof does not create it, so a typo makes no stray folder).
    if (!o.exportPlots.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(o.exportDir, ec)) {
            std::fprintf(stderr, "lmprof: --export-dir %s: the folder does not exist\n",
                         o.exportDir.c_str());
            return app::kExitUsage;
        }
        if (::access(o.exportDir.c_str(), W_OK) != 0) {
            std::fprintf(stderr, "lmprof: --export-dir %s: the folder is not writable\n",
                         o.exportDir.c_str());
            return app::kExitUsage;
        }
    }
    if (demo) {
        for (size_t i = 0; i < demo->steps.size(); ++i) {
            const ui::DemoStep& step = demo->steps[i];
            if (step.path.empty()) { // save_chart, screenshot and layout write a file
                continue;
            }
            if (const std::string problem = engine::outputFileProblem(step.path);
                !problem.empty()) {
                std::fprintf(stderr, "lmprof: --demo %s: steps[%zu].path %s: %s\n", o.demo.c_str(),
                             i, step.path.c_str(), problem.c_str());
                return app::kExitUsage;
            }
        }
    }
    if (const std::string problem = configDirProblem(app::configDir()); !problem.empty()) {
        std::fprintf(stderr,
                     "lmprof: the config folder %s (LMPROF_CONFIG_DIR, else "
                     "$XDG_CONFIG_HOME/lmprof or ~/.config/lmprof): %s\n",
                     app::configDir().c_str(), problem.c_str());
        return app::kExitUsage;
    }

    glfwSetErrorCallback([](int, const char* what) { g_glfwError = what; });
    if (!glfwInit()) {
        if (script) { // no window to show it in: the script trains on, as if run alone
            std::fprintf(stderr,
                         "lmprof: no display (%s); the watched script runs without "
                         "the window (lmprof-cli watch prints its steps)\n",
                         g_glfwError.c_str());
            while (!script->poll()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
            const int status = *script->poll();
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        return fallBackToCli(o);
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    // --window-size, else the size the window last closed at (its layout was made for it).
    const bool sized = o.windowSize.width > 0;
    const auto saved = ui::App::savedWindowSize(app::configDir());
    const int openWidth = sized ? o.windowSize.width : saved ? saved->first : 1600;
    const int openHeight = sized ? o.windowSize.height : saved ? saved->second : 1000;
    GLFWwindow* window = glfwCreateWindow(openWidth, openHeight, "lmprof", nullptr, nullptr);
    if (!window) {
        glfwTerminate();
        return fallBackToCli(o);
    }
    glfwMakeContextCurrent(window);
    glfwSwapInterval(1);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImPlot::CreateContext();
    int exitCode = app::kExitOk;
    bool scriptRunEnded = false; // the watched script's run finished in the window
    {
        const auto answer = o.restoreLast   ? ui::RestoreChoice::Restore
                            : o.discardLast ? ui::RestoreChoice::Discard
                                            : ui::RestoreChoice::Ask;
        ui::AppOptions appOptions;
        appOptions.initialConfig = *config;
        appOptions.autorun = o.autorun;
        appOptions.resumeConfigure =
            !o.configGiven() && !o.autorun && o.demo.empty() && o.watchCommand.empty();
        appOptions.configDir = app::configDir();
        appOptions.restore = answer;
        appOptions.saveOnExit = o.saveOnExit;
        appOptions.showWindows = o.show;
        appOptions.exportPlots = o.exportPlots;
        appOptions.exportDir = o.exportDir;
        appOptions.exportWidth = o.exportSize.width;
        appOptions.exportHeight = o.exportSize.height;
        if (!o.theme.empty()) {
            appOptions.darkTheme = o.theme == "dark";
        }
        appOptions.freshLayout = sized || demo.has_value();
        appOptions.openFiles = o.open;
        appOptions.fontScale = static_cast<float>(o.fontScale);
        appOptions.demo = demo;
        appOptions.wake = wakeTheLoop;
        appOptions.engine = std::move(remoteEngine); // the window's alone: switched away, it goes
        if (!run.common.connect.empty()) {
            appOptions.connectAddress = run.common.connect;
        }
        if (script) { // the script's run is the autorun: awaited, not submitted
            appOptions.connectAddress = watchAddress;
            appOptions.autorun = true;
            appOptions.awaitWatchedRun = true;
        }
        appOptions.connectTokenFile = run.common.tokenFile.empty()
                                          ? (app::configDir() / "server" / "token").string()
                                          : run.common.tokenFile;
        ui::App lmprofApp(std::move(appOptions));
        float scaleX = 1.0f, scaleY = 1.0f;
        glfwGetWindowContentScale(window, &scaleX, &scaleY);
        lmprofApp.setupStyle(scaleX);
        ImGui_ImplGlfw_InitForOpenGL(window, true);
        ImGui_ImplOpenGL3_Init("#version 330");

        // Frame pacing (docs/WINDOW.md, "Drawing"). While something moves (a run streams, a
        // sweep runs) frames come at most --max-fps a second; otherwise the loop sleeps until
        // input arrives or the engine wakes it (AppOptions::wake), after a few frames more
        // for ImGui to settle hover and focus, and two frames a second for the first
        // seconds after input (tooltips appear after a delay). Without vsync (Xvfb) nothing
        // else would slow it.
        // - While a CPU run streams and nobody touches the window: 2 frames a second on a
        //   software renderer (Mesa's llvmpipe, as under Xvfb), whose frames cost tens of ms
        //   of the cores the run is measured on (at 30 fps tiny's CPU steps were 2.9x slower
        //   than in lmprof-cli, at 2 fps 1.1x; bench/window_cpu.sh), 10 on a hardware one.
        //   Input brings the full rate back at once.
        // - A recording draws every frame, at most --fps a second in real time; its clock
        //   (the demo's pauses) advances 1 / fps per frame however slow drawing is.
        const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
        const bool softwareGl =
            renderer && (std::strstr(renderer, "llvmpipe") || std::strstr(renderer, "softpipe") ||
                         std::strstr(renderer, "Software"));
        const int kCpuRunFps = softwareGl ? 2 : 10;
        const auto activeFrame = std::chrono::microseconds(1000000 / o.maxFps);
        const auto cpuRunFrame =
            std::chrono::microseconds(1000000 / std::min(o.maxFps, kCpuRunFps));
        constexpr int kInteractiveFrames = 30; // about a second at the full rate after input
        constexpr double kIdleWaitS = 0.5;
        constexpr auto kHoverSettle = std::chrono::seconds(2); // then sleep until woken
        constexpr int kFramesAfterInput = 3;
        constexpr int kSetupFrames = 3;
        int framesSinceInput = kInteractiveFrames + 1;
        int framesDrawn = 0;
        bool screenshotPending = !o.screenshot.empty();
        std::unique_ptr<ui::VideoRecorder> recorder;
        if (!o.record.empty()) {
            int fbWidth = 0, fbHeight = 0;
            glfwGetFramebufferSize(window, &fbWidth, &fbHeight);
            try {
                recorder = std::make_unique<ui::VideoRecorder>(o.record, fbWidth, fbHeight, o.fps);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "lmprof: --record: %s\n", e.what());
                exitCode = app::kExitUsage;
                glfwSetWindowShouldClose(window, GLFW_TRUE);
            }
        }
        const bool exitWhenDone = o.exitWhenDone || (recorder && demo);
        const auto launched = std::chrono::steady_clock::now();
        auto lastInput = launched;
        std::signal(SIGINT, requestClose);
        std::signal(SIGTERM, requestClose);
        // A signal handler may not call GLFW: this thread turns a close request into an
        // empty event for a loop asleep in glfwWaitEvents (10 checks a second, nothing else).
        std::atomic<bool> loopEnded{false};
        std::thread closeWatch([&loopEnded] {
            while (!loopEnded.load()) {
                if (g_closeRequested) {
                    glfwPostEmptyEvent();
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
        });
        while (!glfwWindowShouldClose(window) && !g_closeRequested && !lmprofApp.quitRequested()) {
            const auto frameStart = std::chrono::steady_clock::now();
            lmprofApp.setClock(recorder
                                   ? recorder->seconds()
                                   : std::chrono::duration<double>(frameStart - launched).count());
            glfwPollEvents();
            // After the poll, before the frame drains the engine: an event published from
            // now on posts a wake the next wait sees; one published earlier is drained now.
            g_wakePosted.store(false);
            // Events of the first frames are the window being set up (focus, the pointer's
            // first position), not a person using it.
            const bool input = ImGui::GetCurrentContext()->InputEventsQueue.Size > 0;
            framesSinceInput = input && framesDrawn > kSetupFrames ? 0 : framesSinceInput + 1;
            if (input) {
                lastInput = frameStart;
            }
            ++framesDrawn;
            const auto uiStart = std::chrono::steady_clock::now();
            ImGui_ImplOpenGL3_NewFrame();
            ImGui_ImplGlfw_NewFrame();
            ImGui::NewFrame();
            lmprofApp.frame();
            ImGui::Render();
            const auto uiEnd = std::chrono::steady_clock::now();
            int width = 0, height = 0;
            glfwGetFramebufferSize(window, &width, &height);
            glViewport(0, 0, width, height);
            const float shade = lmprofApp.darkTheme() ? 0.08f : 0.94f;
            glClearColor(shade, shade, shade, 1.0f);
            glClear(GL_COLOR_BUFFER_BIT);
            ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
            lmprofApp.afterRender(width, height); // PNGs asked for in this frame
            // Once the layout has settled too: a launch without --autorun used to be
            // captured on its first, still empty frame.
            if (screenshotPending && lmprofApp.autorunSettled() && lmprofApp.demoFinished() &&
                !lmprofApp.animating()) {
                try {
                    ui::writeFramebufferPng(o.screenshot, width, height);
                } catch (const std::exception& e) {
                    std::fprintf(stderr, "lmprof: screenshot: %s\n", e.what());
                    exitCode = app::kExitFailure;
                }
                screenshotPending = false;
            }
            if (recorder && !recorder->addFrame(width, height)) {
                std::fprintf(stderr, "lmprof: --record: %s\n", recorder->error().c_str());
                exitCode = app::kExitFailure;
                break;
            }
            glfwSwapBuffers(window);
            if (!o.frameStats.empty()) {
                using Ms = std::chrono::duration<double, std::milli>;
                lmprofApp.recordFrameTime(
                    Ms(uiEnd - uiStart).count(),
                    Ms(std::chrono::steady_clock::now() - frameStart).count());
            }
            if (exitWhenDone && !screenshotPending && lmprofApp.autorunSettled() &&
                !lmprofApp.pngPending() && lmprofApp.demoFinished()) {
                if (exitCode == app::kExitOk && ((o.autorun && !lmprofApp.autorunSucceeded()) ||
                                                 !lmprofApp.exportsSucceeded())) {
                    exitCode = app::kExitFailure;
                }
                break;
            }
            if (recorder) {
                std::this_thread::sleep_until(
                    launched +
                    std::chrono::microseconds(static_cast<int64_t>(recorder->seconds() * 1e6)));
            } else if (lmprofApp.animating() || screenshotPending ||
                       framesSinceInput < kFramesAfterInput) {
                const bool quiet =
                    lmprofApp.cpuRunStreaming() && framesSinceInput > kInteractiveFrames;
                if (quiet) { // input wakes the loop at once; the engine's wakes do not
                    for (;;) {
                        const std::chrono::duration<double> left =
                            frameStart + cpuRunFrame - std::chrono::steady_clock::now();
                        if (left.count() <= 0.0 || g_closeRequested ||
                            ImGui::GetCurrentContext()->InputEventsQueue.Size > 0) {
                            break;
                        }
                        glfwWaitEventsTimeout(left.count());
                    }
                } else {
                    std::this_thread::sleep_until(frameStart + activeFrame);
                }
            } else if (frameStart - lastInput < kHoverSettle) {
                glfwWaitEventsTimeout(kIdleWaitS);
            } else {
                glfwWaitEvents(); // input, the engine's wake, or closeWatch
            }
        }
        loopEnded.store(true);
        scriptRunEnded = lmprofApp.autorunSettled();
        closeWatch.join();
        // A demo step that failed (said on stderr when it did) fails the launch, whether the
        // demo closed the window or a person did.
        if (demo && !lmprofApp.demoSucceeded() && exitCode == app::kExitOk) {
            exitCode = app::kExitFailure;
        }
        if (recorder) {
            if (const std::string problem = recorder->finish(); !problem.empty()) {
                std::fprintf(stderr, "lmprof: --record: %s\n", problem.c_str());
                exitCode = exitCode == app::kExitOk ? app::kExitFailure : exitCode;
            } else {
                std::fprintf(stderr, "lmprof: recorded %lld frames (%.1f s at %d fps) to %s\n",
                             static_cast<long long>(recorder->frames()), recorder->seconds(), o.fps,
                             o.record.c_str());
            }
        }
        if (!lmprofApp.saveOnExit() && exitCode == app::kExitOk) {
            exitCode = app::kExitFailure;
        }
        if (!o.frameStats.empty()) {
            try {
                lmprofApp.writeFrameStats(o.frameStats);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "lmprof: frame stats: %s\n", e.what());
            }
        }
        if (!o.layoutReport.empty()) {
            try {
                lmprofApp.writeLayoutReport(o.layoutReport);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "lmprof: layout report: %s\n", e.what());
            }
        }
        int windowWidth = 0, windowHeight = 0;
        glfwGetWindowSize(window, &windowWidth, &windowHeight);
        lmprofApp.setWindowSize(windowWidth, windowHeight); // kept with the layout
        ImGui_ImplOpenGL3_Shutdown();
        ImGui_ImplGlfw_Shutdown();
    }
    ImPlot::DestroyContext();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    if (script) {
        // A script whose run has finished is given a few seconds to exit on its own; one
        // still training when the window closed is stopped as a Ctrl+C would stop it.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (scriptRunEnded && !script->poll() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (!script->poll()) {
            std::fprintf(stderr, "lmprof: stopping the watched script\n");
            script->stop(std::chrono::seconds(10));
        }
    }
    return exitCode;
}
