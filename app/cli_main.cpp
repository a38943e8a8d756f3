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
    addConnectOptions(*runCmd, run.common);

    SweepOptions sweep;
    CLI::App* sweepCmd = app.add_subcommand("sweep", "benchmark every combination of lists");
    addList(*sweepCmd, "--models", sweep.models, "comma-separated presets");
    addList(*sweepCmd, "--ctx", sweep.ctx, "comma-separated context lengths");
    addList(*sweepCmd, "--precision", sweep.precisions,
            "comma-separated, of " + lmprof::engine::joinNames(lmprof::engine::kPrecisions, ","));
    addList(*sweepCmd, "--mode", sweep.modes,
            "comma-separated, of " + lmprof::engine::joinNames(lmprof::engine::kModes, ","));
    addList(*sweepCmd, "--warmup", sweep.warmups, "comma-separated warmup step counts");
    addText(*sweepCmd, "--autosave", sweep.autosavePath,
            "append each finished run to FILE.jsonl (fsynced)");
    sweepCmd->add_flag("--keep-after-oom", sweep.keepAfterOom,
                       "also run larger configurations after an out-of-memory run");
    addText(*sweepCmd, "--shard", sweep.shard,
            "i/n: run every n-th configuration from the i-th (split a sweep across machines)");

    MergeOptions merge;
    CLI::App* mergeCmd = app.add_subcommand(
        "merge", "join result sets or autosave files (sweep shards) into one result set");
    mergeCmd->add_option("files", merge.paths, "result sets (.json) or autosave files (.jsonl)")
        ->required();
    addText(*mergeCmd, "--json", merge.jsonPath, "write the merged result set (.json)");
    addText(*mergeCmd, "--format", merge.format, "table|markdown|csv");
    addCommonOptions(*sweepCmd, sweep.common);
    addConnectOptions(*sweepCmd, sweep.common);

    ServeOptions serve;
    CLI::App* serveCmd = app.add_subcommand(
        "serve", "serve this machine's engine to the window and CLI clients (docs/REMOTE.md)");
    addText(*serveCmd, "--listen", serve.listen,
            "HOST:PORT to listen on; loopback unless --allow-remote (port 0: any free one)");
    addText(*serveCmd, "--token-file", serve.tokenFile,
            "the token clients must present (default: <config dir>/server/token, made with "
            "mode 0600 at the first start)");
    serveCmd->add_flag("--allow-remote", serve.allowRemote,
                       "allow a --listen address other machines can reach (prefer ssh -L)");
    addText(*serveCmd, "--state-dir", serve.stateDir,
            "where finished runs are autosaved and runs' files go (default: <config "
            "dir>/server)");
    addNumberIn(*serveCmd, "--max-world-size", serve.maxWorldSize, 0,
                lmprof::engine::kMaxWorldSize,
                "most ranks a client's data-parallel run may have (0: the cores, and RAM / 512 MiB)");
    addNumberIn(*serveCmd, "--max-host-memory", serve.maxHostMemoryGiB, 0.0, 1048576.0,
                "GiB a client's CPU run may need by the memory model (0: the machine's RAM)");
    addNumberIn(*serveCmd, "--max-queued-runs", serve.maxQueuedRuns, 1, 100000,
                "runs clients may have submitted and not finished");
    addNumberIn(*serveCmd, "--max-connections", serve.maxConnections, 0, 1024,
                "open connections (0: the descriptor limit less 32 kept for runs)");

    DdpOptions ddp;
    CLI::App* ddpCmd = app.add_subcommand(
        "ddp", "data-parallel training over local ranks (or one rank under torchrun/Slurm)");
    addRunOptions(*ddpCmd, ddp.run);
    addNumberIn(*ddpCmd, "--world-size", ddp.worldSize, 1, lmprof::engine::kMaxWorldSize,
                "ranks (processes); under torchrun, WORLD_SIZE");
    addChoice(*ddpCmd, "--backend", ddp.backend, {"gloo", "nccl"},
              "c10d process group: gloo (CPU) or nccl (GPUs) [gloo]");
    addList(*ddpCmd, "--strategy", ddp.strategies,
            "comma-separated, of " +
                lmprof::engine::joinNames(lmprof::engine::kDdpStrategies, ","));
    addNumberIn(*ddpCmd, "--bucket-mb", ddp.bucketMb, 0.001, 65536.0,
                "bucketed: MiB of gradients per all-reduce");
    addNumberIn(*ddpCmd, "--timeout-s", ddp.timeoutS, 1.0, 86400.0,
                "how long a rank waits for a peer before the run ends with an error");
    addNumberIn(*ddpCmd, "--master-port", ddp.masterPort, 0, 65535,
                "the launcher's rendezvous port (0: a free one)");

    ShowOptions show;
    CLI::App* showCmd = app.add_subcommand("show", "print a saved result set");
    showCmd->add_option("file", show.path, "result set (.json) or autosave file (.jsonl)")
        ->required();
    addText(*showCmd, "--format", show.format, "table|markdown|csv");

    CompareOptions compare;
    CLI::App* compareCmd =
        app.add_subcommand("compare", "compare two result sets run by run (B against A)");
    compareCmd->add_option("a", compare.pathA, "baseline result set (.json)")->required();
    compareCmd->add_option("b", compare.pathB, "result set to compare (.json)")->required();
    addText(*compareCmd, "--format", compare.format, "table|markdown|csv");
    compareCmd->add_flag("--fail-on-regression", compare.failOnRegression,
                         "exit 1 if a run of B is slower beyond noise");

    RatioOptions ratio;
    CLI::App* ratioCmd = app.add_subcommand(
        "ratio", "mean(B)/mean(A) of two lists of measurements, 95% interval and verdict");
    addText(*ratioCmd, "--a", ratio.a, "comma-separated positive values (the baseline)")
        ->required();
    addText(*ratioCmd, "--b", ratio.b, "comma-separated positive values (compared with A)")
        ->required();
    addChoice(*ratioCmd, "--format", ratio.format, {"table", "json"}, "table|json [table]");

    OpsOptions ops;
    CLI::App* opsCmd =
        app.add_subcommand("ops", "print the op/kernel profile of a saved run (--profile-ops)");
    opsCmd->add_option("file", ops.path, "result set (.json) or autosave file (.jsonl)")
        ->required();
    addText(*opsCmd, "--run", ops.runId, "only this run id (default: every profiled run)");
    addText(*opsCmd, "--by", ops.by,
            "region|op|row: group by region, by op/kernel name, or one row per (region, name)");
    addNumber(*opsCmd, "--top", ops.top, "most rows per phase (0: all)");
    addText(*opsCmd, "--phase", ops.phase, "only this phase (forward|backward|optimizer)");
    addText(*opsCmd, "--format", ops.format, "table|markdown|csv");

    PrecisionOptions lab;
    CLI::App* precisionCmd = app.add_subcommand(
        "precision", "the precision lab: accumulation error, and dtypes under autocast");
    precisionCmd->require_subcommand(1);
    CLI::App* accumulateCmd = precisionCmd->add_subcommand(
        "accumulate", "add 0.01 in fp32/fp16/bf16 accumulators: the seeds' loops and a grid");
    CLI::App* dtypesCmd = precisionCmd->add_subcommand(
        "dtypes", "the dtype of every module's parameters, input, output and gradients");
    for (CLI::App* cmd : {accumulateCmd, dtypesCmd}) {
        addText(*cmd, "--device", lab.device, "auto|cpu|cuda|cuda:N");
        addText(*cmd, "--json", lab.jsonPath, "save the tables in a result set (.json)");
        addText(*cmd, "--format", lab.format, "table|markdown|csv");
        addConnectOptions(*cmd, lab.connect, lab.tokenFile);
    }
    addNumberIn(*accumulateCmd, "--max-terms", lab.maxTerms, lmprof::engine::kMinGridTerms,
                lmprof::engine::kMaxGridTerms, "the grid's largest number of terms");
    addChoice(*dtypesCmd, "--model", lab.model, lmprof::engine::dtypeModelNames(),
              "the seeds' ToyModel or an LM preset [toy]");
    std::vector<std::string> precisionChoices{"all"};
    for (auto p : lmprof::engine::kPrecisions) {
        precisionChoices.emplace_back(lmprof::engine::toString(p));
    }
    addChoice(*dtypesCmd, "--precision", lab.precision, precisionChoices,
              "one precision, or all of them [all]");

    CLI::App* columnsCmd =
        app.add_subcommand("columns", "list the CSV export's columns with their units");

    try {
        parseCommandLine(app, argc, argv);
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
    if (ddpCmd->parsed()) {
        installInterruptHandler();
        return ddpCommand(ddp);
    }
    if (sweepCmd->parsed()) {
        installInterruptHandler();
        return sweepCommand(sweep);
    }
    if (serveCmd->parsed()) {
        installInterruptHandler();
        return serveCommand(serve);
    }
    if (mergeCmd->parsed()) {
        return mergeCommand(merge);
    }
    if (compareCmd->parsed()) {
        return compareCommand(compare);
    }
    if (ratioCmd->parsed()) {
        return ratioCommand(ratio);
    }
    if (opsCmd->parsed()) {
        return opsCommand(ops);
    }
    if (accumulateCmd->parsed()) {
        installInterruptHandler();
        return precisionAccumulateCommand(lab);
    }
    if (dtypesCmd->parsed()) {
        installInterruptHandler();
        return precisionDtypesCommand(lab);
    }
    if (columnsCmd->parsed()) {
        return columnsCommand();
    }
    return showCommand(show);
}
