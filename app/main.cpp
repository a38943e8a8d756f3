// lmprof: the desktop window. Reads the options, checks everything a launch will write
// before anything runs, starts the engine the window drives, then runs one of the modes
// below: the window (window_loop.h), or without a display the watched script alone or the
// CLI's benchmark.
//   lmprof --model tiny --ctx 64 --steps 8 --device cpu --autorun --screenshot out.png
//          --exit-when-done

#include "cli_commands.h"
#include "cli_options.h"
#include "lmprof/engine/local_engine.h"
#include "lmprof/engine/remote_session.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/ui/app.h"
#include "window_loop.h"

#include <GLFW/glfw3.h>
#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

// ---------------------------------------------------------------------------------------
// The launch, step by step: each returns an exit code to stop with, or nothing to go on.

struct Launch {
    app::WindowOptions o;
    bool configGiven = false; // a flag set the run's configuration (asked while parsing)
    std::optional<engine::DdpRequest> ddp;
    std::shared_ptr<engine::SessionInterface> engine; // a server's or a script's; else none
    std::unique_ptr<app::WatchedScript> script;       // `-- python train.py`
    std::string watchAddress;
    std::optional<engine::RunConfig> config;
    std::optional<ui::DemoScript> demo;
    GLFWwindow* window = nullptr; // none: no display
};
using Step = std::optional<int> (*)(Launch&);

std::optional<int> parseOptions(Launch& l, int argc, char** argv) {
    CLI::App cli{"lmprof: watch Transformer LM training steps live"};
    app::addWindowOptions(cli, l.o);
    cli.set_version_flag("--version", app::versionText("lmprof"));
    try {
        app::parseCommandLine(cli, argc, argv);
    } catch (const CLI::ParseError& e) {
        return cli.exit(e) == 0 ? app::kExitOk : app::kExitUsage;
    }
    l.configGiven = l.o.configGiven(); // it reads the parser's options, gone after this
    if (l.o.worldSize > 0) {
        l.ddp = engine::DdpRequest{};
        l.ddp->worldSize = l.o.worldSize;
        l.ddp->strategy = *engine::parseDdpStrategy(l.o.strategy);
        l.ddp->backend = *engine::parseDdpBackend(l.o.backend);
    }
    return std::nullopt;
}

// -- python train.py: the script serves its run on a loopback port of its own, and the
// window is its viewer (docs/WATCH.md). --connect: the server's engine from the start, and
// the configuration is its to check.
std::optional<int> startEngine(Launch& l) {
    const auto& connect = l.o.run.common.connect;
    if (!l.o.watchCommand.empty()) {
        if (!connect.empty()) {
            std::fprintf(stderr, "lmprof: give --connect or a script after --, not both\n");
            return app::kExitUsage;
        }
        try {
            l.script = startWatchedScript(l.o.watchCommand, l.engine, l.watchAddress);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "lmprof: -- %s: %s\n", l.o.watchCommand.front().c_str(), e.what());
            return app::kExitUsage;
        }
    }
    if (!connect.empty()) {
        l.engine = app::openEngine(l.o.run.common, app::Patience::InTheWindow);
        if (!l.engine) {
            return app::kExitFailure;
        }
    } else if (!l.script) {
        // This process's engine, loaded by the first run: a window that only reads files
        // never maps LibTorch (docs/INSTALL.md).
        l.engine = std::make_shared<engine::LocalSession>();
    }
    return std::nullopt;
}

std::optional<int> buildConfig(Launch& l) {
    l.config = app::buildRunConfig(l.o.run, l.ddp, l.script ? nullptr : l.engine.get());
    return l.config ? std::nullopt : std::optional(app::kExitUsage);
}

std::optional<int> loadDemo(Launch& l) {
    if (l.o.demo.empty()) {
        return std::nullopt;
    }
    try {
        l.demo = ui::loadDemoScript(l.o.demo);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lmprof: --demo %s\n", e.what());
        return app::kExitUsage;
    }
    for (size_t i = 0; i < l.demo->steps.size(); ++i) {
        const ui::DemoStep& step = l.demo->steps[i];
        if (step.path.empty()) { // save_chart, screenshot and layout write a file
            continue;
        }
        if (const std::string problem = engine::outputFileProblem(step.path); !problem.empty()) {
            std::fprintf(stderr, "lmprof: --demo %s: steps[%zu].path %s: %s\n", l.o.demo.c_str(), i,
                         step.path.c_str(), problem.c_str());
            return app::kExitUsage;
        }
    }
    return std::nullopt;
}

// Files and folders the launch will write to are checked now, not after the run (a missing
// folder is named; lmprof does not create it, so a typo makes no stray folder).
std::optional<int> checkOutputs(Launch& l) {
    for (const auto& [flag, path] :
         {std::pair{"--save-on-exit", &l.o.saveOnExit}, std::pair{"--record", &l.o.record}}) {
        if (path->empty()) {
            continue;
        }
        if (const std::string problem = engine::outputFileProblem(*path); !problem.empty()) {
            std::fprintf(stderr, "lmprof: %s %s: %s\n", flag, path->c_str(), problem.c_str());
            return app::kExitUsage;
        }
    }
    if (!l.o.exportPlots.empty()) {
        std::error_code ec;
        const char* problem =
            !std::filesystem::is_directory(l.o.exportDir, ec) ? "the folder does not exist"
            : ::access(l.o.exportDir.c_str(), W_OK) != 0      ? "the folder is not writable"
                                                              : nullptr;
        if (problem) {
            std::fprintf(stderr, "lmprof: --export-dir %s: %s\n", l.o.exportDir.c_str(), problem);
            return app::kExitUsage;
        }
    }
    if (const std::string problem = configDirProblem(app::configDir()); !problem.empty()) {
        std::fprintf(stderr,
                     "lmprof: the config folder %s (LMPROF_CONFIG_DIR, else "
                     "$XDG_CONFIG_HOME/lmprof or ~/.config/lmprof): %s\n",
                     app::configDir().c_str(), problem.c_str());
        return app::kExitUsage;
    }
    return std::nullopt;
}

// A window at --window-size, else the size the window last closed at (its layout was made
// for it); none without a display.
std::optional<int> openWindow(Launch& l) {
    glfwSetErrorCallback([](int, const char* what) { g_glfwError = what; });
    if (!glfwInit()) {
        return std::nullopt;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    const auto size = l.o.windowSize;
    const auto saved = ui::App::savedWindowSize(app::configDir());
    int width = size.width > 0 ? size.width : saved ? saved->first : 1600;
    int height = size.width > 0 ? size.height : saved ? saved->second : 1000;
    // A size kept from a larger screen (or the default on a small one) is fitted to this
    // screen's work area; the layout saved for the other size is then laid out afresh.
    // --window-size is taken as asked.
    if (GLFWmonitor* monitor = glfwGetPrimaryMonitor(); monitor && size.width <= 0) {
        int x = 0, y = 0, areaWidth = 0, areaHeight = 0;
        glfwGetMonitorWorkarea(monitor, &x, &y, &areaWidth, &areaHeight);
        if (areaWidth > 0 && areaHeight > 0) {
            width = std::min(width, areaWidth);
            height = std::min(height, areaHeight);
        }
    }
    l.window = glfwCreateWindow(width, height, "lmprof", nullptr, nullptr);
    if (!l.window) {
        glfwTerminate();
        return std::nullopt;
    }
    glfwMakeContextCurrent(l.window);
    glfwSwapInterval(1);
    return std::nullopt;
}

ui::AppOptions appOptionsFor(Launch& l) {
    const app::WindowOptions& o = l.o;
    ui::AppOptions a;
    a.initialConfig = *l.config;
    a.autorun = o.autorun;
    a.resumeConfigure = !l.configGiven && !o.autorun && o.demo.empty() && !l.script;
    a.configDir = app::configDir();
    a.restore = o.restoreLast   ? ui::RestoreChoice::Restore
                : o.discardLast ? ui::RestoreChoice::Discard
                                : ui::RestoreChoice::Ask;
    a.saveOnExit = o.saveOnExit;
    a.showWindows = o.show;
    a.exportPlots = o.exportPlots;
    a.exportDir = o.exportDir;
    a.exportWidth = o.exportSize.width;
    a.exportHeight = o.exportSize.height;
    if (!o.theme.empty()) {
        a.darkTheme = o.theme == "dark";
    }
    a.freshLayout = o.windowSize.width > 0 || l.demo.has_value();
    a.openFiles = o.open;
    a.fontScale = static_cast<float>(o.fontScale);
    a.demo = l.demo;
    a.engine = std::move(l.engine); // the window's alone: switched away, it goes
    // Without --connect, File > Connect... offers AppOptions' default address.
    if (!o.run.common.connect.empty()) {
        a.connectAddress = o.run.common.connect;
    }
    if (l.script) { // the script's run is the autorun: awaited, not submitted
        a.connectAddress = l.watchAddress;
        a.autorun = true;
        a.awaitWatchedRun = true;
        app::WatchedScript* script = l.script.get(); // outlives the window (windowMode)
        a.watchedScriptEnded = [script]() -> std::optional<std::string> {
            const std::optional<int> status = script->poll();
            return status ? std::optional(app::describeExit(*status)) : std::nullopt;
        };
        // Cancel and closing the window: a Ctrl+C to its process group, as stop() begins.
        a.interruptWatchedScript = [script] {
            if (!script->poll()) {
                ::kill(-script->pid(), SIGINT);
            }
        };
    }
    a.connectTokenFile = o.run.common.tokenFile.empty()
                             ? (app::configDir() / "server" / "token").string()
                             : o.run.common.tokenFile;
    return a;
}

int exitStatusOf(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---------------------------------------------------------------------------------------
// The modes

int windowMode(Launch& l) {
    const app::WindowOutcome outcome = app::runWindow(l.window, appOptionsFor(l), l.o);
    glfwDestroyWindow(l.window);
    glfwTerminate();
    if (l.script) {
        // A script whose run has finished is given a few seconds to exit on its own; one
        // still training when the window closed is stopped as a Ctrl+C would stop it.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (outcome.scriptRunEnded && !l.script->poll() &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (!l.script->poll()) {
            std::fprintf(stderr, "lmprof: stopping the watched script\n");
            l.script->stop(std::chrono::seconds(10));
        }
    }
    return outcome.exitCode;
}

// No window to show it in: the script trains on, as if run alone.
int scriptAloneMode(Launch& l) {
    std::fprintf(stderr,
                 "lmprof: no display (%s); the watched script runs without the window "
                 "(lmprof-cli watch prints its steps)\n",
                 g_glfwError.c_str());
    while (!l.script->poll()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return exitStatusOf(*l.script->poll());
}

int cliMode(Launch& l) {
    return fallBackToCli(l.o);
}

struct Mode {
    const char* what;
    bool (*applies)(const Launch&);
    int (*run)(Launch&);
};

// The first that applies runs.
constexpr Mode kModes[] = {
    {"a display: the window, driving this process's engine, a server's (--connect) or a "
     "watched script's (-- python train.py)",
     [](const Launch& l) { return l.window != nullptr; }, windowMode},
    {"no display, a watched script: the script trains on alone",
     [](const Launch& l) { return l.script != nullptr; }, scriptAloneMode},
    {"no display: lmprof-cli's run (or ddp), refusing what only a window can do",
     [](const Launch&) { return true; }, cliMode},
};

} // namespace

int main(int argc, char** argv) {
    Launch launch;
    if (const auto code = parseOptions(launch, argc, argv)) {
        return *code;
    }
    for (const Step step : {startEngine, buildConfig, loadDemo, checkOutputs, openWindow}) {
        if (const auto code = step(launch)) {
            return *code;
        }
    }
    for (const Mode& mode : kModes) {
        if (mode.applies(launch)) {
            return mode.run(launch);
        }
    }
    return app::kExitFailure; // the last mode always applies
}
