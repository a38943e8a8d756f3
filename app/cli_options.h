// The run options shared by lmprof-cli and the lmprof window (same flags, same defaults).
#pragma once

#include "cli_commands.h"

#include <CLI/CLI.hpp>

namespace lmprof::app {

// Every common option but --warmup, which run takes as one count and sweep as a list.
void addCommonOptions(CLI::App& cmd, CommonOptions& o);
// --model, --ctx, --precision, --mode, --warmup and the common options.
void addRunOptions(CLI::App& cmd, RunOptions& o);

// The window's own launch flags on top of the run options (scripted demos and tests).
struct WindowOptions {
    RunOptions run;
    bool autorun = false;
    bool exitWhenDone = false;
    std::string screenshot;
    std::string frameStats;
    std::string saveOnExit;
    bool restoreLast = false;
    bool discardLast = false;
    std::vector<std::string> show;
    std::vector<std::string> exportPlots;
    std::string exportDir = ".";
};
void addWindowOptions(CLI::App& cmd, WindowOptions& o);

} // namespace lmprof::app
