// lmprof-cli: the headless client of the engine (README.md, "lmprof-cli"). Parse, dispatch, exit.
//   lmprof-cli run   --model small --ctx 256 --precision bf16 --json out.json
//   lmprof-cli ddp   --world-size 2 --strategy naive,flat,bucketed --json ddp.json
//   lmprof-cli sweep --models small,medium --ctx 128,256 --precision fp32,bf16
//   lmprof-cli serve --listen 127.0.0.1:7377    (then run|sweep --connect 127.0.0.1:7377)
//   lmprof-cli show  out.json --format markdown
//   lmprof-cli compare yesterday.json today.json
//   lmprof-cli ops out.json --by op --top 10
//   lmprof-cli ratio --a 91.2,90.8,92.0 --b 67.1,66.9,68.3   (rounds of two programs)
//   lmprof-cli precision dtypes --model toy --precision fp16
//   lmprof-cli columns
// The commands are the registry's (cli_registry.h): each defines its options and its run.

#include "cli_commands.h"
#include "cli_options.h"
#include "cli_registry.h"

#include <CLI/CLI.hpp>

using namespace lmprof::app;

int main(int argc, char** argv) {
    CLI::App app{"lmprof-cli: benchmark Transformer LM training steps with LibTorch"};
    app.require_subcommand(1);
    app.set_version_flag("--version", versionText("lmprof-cli"));
    const std::vector<CliCommand>& commands = cliCommands();
    std::vector<std::pair<CLI::App*, std::function<int()>>> defined;
    for (const CliCommand& c : commands) {
        CLI::App* cmd = app.add_subcommand(c.name, c.description);
        defined.emplace_back(cmd, c.define(*cmd));
    }
    try {
        parseCommandLine(app, argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e); // prints help or the error
        return rc == 0 ? kExitOk : kExitUsage;
    }
    for (size_t i = 0; i < commands.size(); ++i) {
        if (defined[i].first->parsed()) {
            if (commands[i].cancelsOnInterrupt) {
                installInterruptHandler();
            }
            return defined[i].second();
        }
    }
    return kExitUsage; // require_subcommand(1) makes this unreachable
}
