// lmprof-cli: the headless client of the engine (README.md, "lmprof-cli"). Parse, dispatch, exit.
//   lmprof-cli run   --model small --ctx 256 --precision bf16 --json out.json
//   lmprof-cli sweep --models small,medium --ctx 128,256 --precision fp32,bf16
//   lmprof-cli show  out.json --format markdown
//   lmprof-cli compare yesterday.json today.json
//   lmprof-cli ops out.json --by op --top 10
//   lmprof-cli columns

#include "cli_commands.h"
#include "cli_options.h"

#include <CLI/CLI.hpp>
#include <iostream>

using namespace lmprof::app;

int main(int argc, char** argv) {
    CLI::App app{"lmprof-cli: benchmark Transformer LM training steps with LibTorch"};
    app.require_subcommand(1);

    RunOptions run;
    CLI::App* runCmd = app.add_subcommand("run", "benchmark one configuration");
    addRunOptions(*runCmd, run);

    SweepOptions sweep;
    CLI::App* sweepCmd = app.add_subcommand("sweep", "benchmark every combination of lists");
    sweepCmd->add_option("--models", sweep.models, "comma-separated presets")->delimiter(',');
    sweepCmd->add_option("--ctx", sweep.ctx, "comma-separated context lengths")->delimiter(',');
    sweepCmd
        ->add_option("--precision", sweep.precisions,
                     "comma-separated, of " +
                         lmprof::engine::joinNames(lmprof::engine::kPrecisions, ","))
        ->delimiter(',');
    sweepCmd
        ->add_option("--mode", sweep.modes,
                     "comma-separated, of " +
                         lmprof::engine::joinNames(lmprof::engine::kModes, ","))
        ->delimiter(',');
    sweepCmd->add_option("--warmup", sweep.warmups, "comma-separated warmup step counts")
        ->delimiter(',')
        ->capture_default_str();
    sweepCmd->add_option("--autosave", sweep.autosavePath,
                         "append each finished run to FILE.jsonl (fsynced)");
    sweepCmd->add_flag("--keep-after-oom", sweep.keepAfterOom,
                       "also run larger configurations after an out-of-memory run");
    addCommonOptions(*sweepCmd, sweep.common);

    ShowOptions show;
    CLI::App* showCmd = app.add_subcommand("show", "print a saved result set");
    showCmd->add_option("file", show.path, "result set (.json) or autosave file (.jsonl)")
        ->required();
    showCmd->add_option("--format", show.format, "table|markdown|csv")->capture_default_str();

    CompareOptions compare;
    CLI::App* compareCmd =
        app.add_subcommand("compare", "compare two result sets run by run (B against A)");
    compareCmd->add_option("a", compare.pathA, "baseline result set (.json)")->required();
    compareCmd->add_option("b", compare.pathB, "result set to compare (.json)")->required();
    compareCmd->add_option("--format", compare.format, "table|markdown|csv")->capture_default_str();
    compareCmd->add_flag("--fail-on-regression", compare.failOnRegression,
                         "exit 1 if a run of B is slower beyond noise");

    OpsOptions ops;
    CLI::App* opsCmd =
        app.add_subcommand("ops", "print the op/kernel profile of a saved run (--profile-ops)");
    opsCmd->add_option("file", ops.path, "result set (.json) or autosave file (.jsonl)")
        ->required();
    opsCmd->add_option("--run", ops.runId, "only this run id (default: every profiled run)");
    opsCmd
        ->add_option("--by", ops.by,
                     "region|op|row: group by region, by op/kernel name, or "
                     "one row per (region, name)")
        ->capture_default_str();
    opsCmd->add_option("--top", ops.top, "most rows per phase (0: all)")->capture_default_str();
    opsCmd->add_option("--phase", ops.phase, "only this phase (forward|backward|optimizer)");
    opsCmd->add_option("--format", ops.format, "table|markdown|csv")->capture_default_str();

    CLI::App* columnsCmd =
        app.add_subcommand("columns", "list the CSV export's columns with their units");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e); // prints help or the error
        return rc == 0 ? kExitOk : kExitUsage;
    }

    // Only the commands that run benchmarks turn a signal into a cancel; the readers keep the
    // default, so Ctrl+C ends them at once.
    if (runCmd->parsed()) {
        installInterruptHandler();
        return runCommand(run);
    }
    if (sweepCmd->parsed()) {
        installInterruptHandler();
        return sweepCommand(sweep);
    }
    if (compareCmd->parsed()) {
        return compareCommand(compare);
    }
    if (opsCmd->parsed()) {
        return opsCommand(ops);
    }
    if (columnsCmd->parsed()) {
        return columnsCommand();
    }
    return showCommand(show);
}
