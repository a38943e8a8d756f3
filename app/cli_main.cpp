// lmprof-cli: the headless client of the engine (SPEC §5). Parse, dispatch, exit.
//   lmprof-cli run   --model small --ctx 256 --precision bf16 --json out.json
//   lmprof-cli sweep --models small,medium --ctx 128,256 --precision fp32,bf16
//   lmprof-cli show  out.json --format markdown

#include "cli_commands.h"

#include <CLI/CLI.hpp>

#include <iostream>

using namespace lmprof::app;

namespace {

void addCommon(CLI::App& cmd, CommonOptions& o) {
    cmd.add_option("--d-model", o.dModel, "custom model: d_model");
    cmd.add_option("--d-ff", o.dFf, "custom model: feed-forward width");
    cmd.add_option("--layers", o.layers, "custom model: number of blocks");
    cmd.add_option("--heads", o.heads, "custom model: attention heads");
    cmd.add_option("--vocab", o.vocab, "vocabulary size")->capture_default_str();
    cmd.add_option("--batch", o.batch, "batch size")->capture_default_str();
    cmd.add_option("--warmup", o.warmup, "warmup steps (recorded, not summarised)")
        ->capture_default_str();
    cmd.add_option("--steps", o.steps, "measured steps")->capture_default_str();
    cmd.add_option("--device", o.device, "auto|cpu|cuda[:i]")->capture_default_str();
    cmd.add_option("--seed", o.seed, "seed for weights and tokens")->capture_default_str();
    cmd.add_option("--threads", o.threads, "CPU intra-op threads (0: LibTorch default)")
        ->capture_default_str();
    cmd.add_option("--json", o.jsonPath, "write the result set to FILE (atomically)");
    cmd.add_option("--format", o.format, "table|markdown|csv")->capture_default_str();
    cmd.add_flag("--quiet,-q", o.quiet, "no per-step progress on stderr");
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"lmprof-cli: benchmark Transformer LM training steps with LibTorch"};
    app.require_subcommand(1);

    RunOptions run;
    CLI::App* runCmd = app.add_subcommand("run", "benchmark one configuration");
    runCmd->add_option("--model", run.model, "tiny|small|medium|large|xl|2.7B|custom")
        ->capture_default_str();
    runCmd->add_option("--ctx", run.ctx, "context length")->capture_default_str();
    runCmd->add_option("--precision", run.precision, "fp32|bf16|fp16|bf16-pure")
        ->capture_default_str();
    runCmd->add_option("--mode", run.mode, "forward|forward-backward|train")->capture_default_str();
    addCommon(*runCmd, run.common);

    SweepOptions sweep;
    CLI::App* sweepCmd = app.add_subcommand("sweep", "benchmark every combination of lists");
    sweepCmd->add_option("--models", sweep.models, "comma-separated presets")->delimiter(',');
    sweepCmd->add_option("--ctx", sweep.ctx, "comma-separated context lengths")->delimiter(',');
    sweepCmd->add_option("--precision", sweep.precisions, "comma-separated precisions")
        ->delimiter(',');
    sweepCmd->add_option("--mode", sweep.modes, "comma-separated modes")->delimiter(',');
    sweepCmd->add_option("--autosave", sweep.autosavePath,
                         "append each finished run to FILE.jsonl (fsynced)");
    sweepCmd->add_flag("--keep-after-oom", sweep.keepAfterOom,
                       "also run larger configurations after an out-of-memory run");
    addCommon(*sweepCmd, sweep.common);

    ShowOptions show;
    CLI::App* showCmd = app.add_subcommand("show", "print a saved result set");
    showCmd->add_option("file", show.path, "result set (.json)")->required();
    showCmd->add_option("--format", show.format, "table|markdown|csv")->capture_default_str();

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e); // prints help or the error
        return rc == 0 ? kExitOk : kExitUsage;
    }

    installInterruptHandler();
    if (runCmd->parsed()) {
        return runCommand(run);
    }
    if (sweepCmd->parsed()) {
        return sweepCommand(sweep);
    }
    return showCommand(show);
}
