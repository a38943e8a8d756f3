// The list of lmprof-cli's commands (cli_registry.h): each entry is defined in the command's
// own file.

#include "cli_registry.h"

namespace lmprof::app {

CliCommand runEntry();       // cli_run.cpp
CliCommand sweepEntry();     // cli_run.cpp
CliCommand mergeEntry();     // cli_files.cpp
CliCommand serveEntry();     // cli_remote.cpp
CliCommand ddpEntry();       // cli_ddp.cpp
CliCommand showEntry();      // cli_files.cpp
CliCommand compareEntry();   // cli_files.cpp
CliCommand ratioEntry();     // cli_ratio.cpp
CliCommand opsEntry();       // cli_files.cpp
CliCommand precisionEntry(); // cli_precision.cpp
CliCommand columnsEntry();   // cli_files.cpp
CliCommand studyEntry();     // cli_study.cpp
CliCommand watchEntry();     // cli_watch.cpp

const std::vector<CliCommand>& cliCommands() {
    static const std::vector<CliCommand> commands{
        runEntry(),     sweepEntry(),   mergeEntry(), serveEntry(), ddpEntry(),
        showEntry(),    compareEntry(), ratioEntry(), opsEntry(),   precisionEntry(),
        columnsEntry(), studyEntry(),   watchEntry(),
    };
    return commands;
}

} // namespace lmprof::app
