// The run options shared by lmprof-cli and the lmprof window (same flags, same defaults).
#pragma once

#include "cli_commands.h"

#include <CLI/CLI.hpp>

namespace lmprof::app {

// Options whose values lmprof parses itself (cli_options.cpp): a number must be the whole
// value and fit T, a list is comma-separated with no empty entry, a text is not empty. A
// refusal is a CLI::ValidationError naming the flag, the value and the rule. The help text
// gets the default appended.
template <typename T>
CLI::Option* addNumber(CLI::App& cmd, const std::string& name, T& target, const std::string& help);
template <typename T>
CLI::Option* addList(CLI::App& cmd, const std::string& name, std::vector<T>& target,
                     const std::string& help);
CLI::Option* addText(CLI::App& cmd, const std::string& name, std::string& target,
                     const std::string& help);
// A number that must lie in [lo, hi] ("must be between lo and hi, got x").
template <typename T>
CLI::Option* addNumberIn(CLI::App& cmd, const std::string& name, T& target, T lo, T hi,
                         const std::string& help);
// One of `choices`, exactly.
CLI::Option* addChoice(CLI::App& cmd, const std::string& name, std::string& target,
                       const std::vector<std::string>& choices, const std::string& help);
// A size in pixels written WxH (1280x720), each side in [minSide, 16384].
struct PixelSize {
    int width = 0;
    int height = 0;
};
CLI::Option* addPixelSize(CLI::App& cmd, const std::string& name, PixelSize& target, int minSide,
                          const std::string& help);

// app.parse, and an option given twice is refused naming both values (CLI::ValidationError).
void parseCommandLine(CLI::App& app, int argc, char** argv);

// Every common option but --warmup, which run takes as one count and sweep as a list.
// `sweepLists`: the plain fields a sweep can list take a comma-separated list (lmprof-cli
// sweep) into o.valueLists; elsewhere each takes one value.
void addCommonOptions(CLI::App& cmd, CommonOptions& o, bool sweepLists = false);
// --model, --ctx, --precision, --mode, --warmup and the common options.
void addRunOptions(CLI::App& cmd, RunOptions& o);
// --connect HOST:PORT and --token-file F: drive an lmprof-cli serve (run, sweep, window).
void addConnectOptions(CLI::App& cmd, CommonOptions& o);
void addConnectOptions(CLI::App& cmd, std::string& connect, std::string& tokenFile);

// The window's own launch flags on top of the run options (scripted demos and tests).
struct WindowOptions {
    RunOptions run;
    bool autorun = false;
    bool exitWhenDone = false;
    std::string screenshot;
    std::string frameStats;
    std::string layoutReport; // --layout-report: App::writeLayoutReport at exit
    std::string saveOnExit;
    bool restoreLast = false;
    bool discardLast = false;
    std::vector<std::string> show;
    std::vector<std::string> exportPlots;
    std::string exportDir = ".";
    PixelSize exportSize;          // 0 x 0: each chart at the size it is drawn
    std::string theme;             // "dark" or "light" for this launch; empty: the saved choice
    PixelSize windowSize;          // 0 x 0: 1600 x 1000 and the saved layout
    std::vector<std::string> open; // result sets or autosave files opened at launch
    double fontScale = 1.0;
    int maxFps = 30;    // while something moves; an idle window waits for input
    std::string demo;   // a demo script (docs/DEMO.md) the window plays
    std::string record; // an MP4 the window's frames are encoded to (ffmpeg)
    int fps = 30;       // the recording's frame rate
    // A data-parallel configuration (Configure's Data parallel section): 0 ranks is none.
    int worldSize = 0;
    std::string strategy = "naive";
    std::string backend = "gloo";
    // `lmprof -- python train.py`: the window runs this script with the watcher on and shows
    // its run live (docs/WATCH.md).
    std::vector<std::string> watchCommand;
    // The options that set the run's configuration (addRunOptions and the data-parallel
    // ones): when none is given, the window's Configure form starts as it was last left.
    std::vector<const CLI::Option*> configOptions;
    bool configGiven() const;
};
void addWindowOptions(CLI::App& cmd, WindowOptions& o);

} // namespace lmprof::app
