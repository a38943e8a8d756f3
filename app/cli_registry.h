// lmprof-cli's commands, one entry each (cli_registry.cpp lists them): a command is its own
// file, which defines its entry (name, description, whether Ctrl+C cancels, its options and
// what it runs), and one line in the list. cli_main.cpp parses and runs the one named.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace lmprof::app {

struct CliCommand {
    std::string name;        // "run": the subcommand
    std::string description; // one line for --help
    // Whether a signal cancels its current run (results so far are still reported and
    // saved); the readers keep the default, so Ctrl+C ends them at once.
    bool cancelsOnInterrupt = false;
    // Adds the command's options (and subcommands) to `cmd`, bound to options it owns, and
    // returns what runs the command with them once parsed, giving its exit code.
    std::function<std::function<int()>(CLI::App& cmd)> define;
};

// Every command, in the order --help lists them.
const std::vector<CliCommand>& cliCommands();

} // namespace lmprof::app
