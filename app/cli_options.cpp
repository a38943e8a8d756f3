// CLI11 definitions of the run options (see cli_options.h).

#include "cli_options.h"

namespace lmprof::app {

void addCommonOptions(CLI::App& cmd, CommonOptions& o) {
    cmd.add_option("--d-model", o.dModel, "custom model: d_model");
    cmd.add_option("--d-ff", o.dFf, "custom model: feed-forward width");
    cmd.add_option("--layers", o.layers, "custom model: number of blocks");
    cmd.add_option("--heads", o.heads, "custom model: attention heads");
    cmd.add_option("--vocab", o.vocab, "vocabulary size")->capture_default_str();
    cmd.add_option("--batch", o.batch, "batch size")->capture_default_str();
    cmd.add_option("--steps", o.steps, "measured steps")->capture_default_str();
    cmd.add_option("--device", o.device, "auto|cpu|cuda[:i]")->capture_default_str();
    cmd.add_option("--seed", o.seed, "seed for weights and tokens")->capture_default_str();
    cmd.add_option("--threads", o.threads, "CPU intra-op threads (0: LibTorch default)")
        ->capture_default_str();
    cmd.add_option("--json", o.jsonPath, "write the result set to FILE (atomically)");
    cmd.add_option("--format", o.format, "table|markdown|csv")->capture_default_str();
    cmd.add_flag("--quiet,-q", o.quiet, "no per-step progress on stderr");
    cmd.add_option("--sample-hz", o.sampleHz, "memory sampler rate in Hz, 0: phase boundaries only")
        ->capture_default_str();
    cmd.add_option("--telemetry-hz", o.telemetryHz,
                   "GPU (NVML) / CPU telemetry rate in Hz, at most 10; 0: off")
        ->capture_default_str();
    auto* ops = cmd.add_flag("--profile-ops", o.profileOps,
                             "profile every op (and GPU kernel) of chosen steps by region");
    cmd.add_option("--profile-step", o.profileStep,
                   "first step to profile (default: the first after the warmup)")
        ->needs(ops);
    cmd.add_option("--profile-steps", o.profileSteps, "number of steps to profile")
        ->capture_default_str()
        ->needs(ops);
    cmd.add_option("--profile-trace", o.profileTrace,
                   "Chrome trace of the profiled steps ({run}: the run id; default: beside "
                   "--json, else {run}.trace.json)")
        ->needs(ops);
}

void addRunOptions(CLI::App& cmd, RunOptions& o) {
    cmd.add_option("--model", o.model, "tiny|small|medium|large|xl|2.7B|custom")
        ->capture_default_str();
    cmd.add_option("--ctx", o.ctx, "context length")->capture_default_str();
    cmd.add_option("--precision", o.precision, engine::joinNames(engine::kPrecisions, "|"))
        ->capture_default_str();
    cmd.add_option("--mode", o.mode, engine::joinNames(engine::kModes, "|"))->capture_default_str();
    cmd.add_option("--warmup", o.common.warmup, "warmup steps (recorded, not summarised)")
        ->capture_default_str();
    cmd.add_option("--memory-snapshot", o.snapshotPath,
                   "record allocations of chosen steps to FILE (CUDA: memory_viz pickle; CPU: "
                   "JSON allocation trace)");
    cmd.add_option("--snapshot-step", o.snapshotStep,
                   "first step to record (default: the last warmup step)");
    cmd.add_option("--snapshot-steps", o.snapshotSteps, "number of steps to record")
        ->capture_default_str();
    cmd.add_option("--snapshot-max-entries", o.snapshotMaxEntries,
                   "most allocation events kept in the snapshot")
        ->capture_default_str();
    addCommonOptions(cmd, o.common);
}

void addWindowOptions(CLI::App& cmd, WindowOptions& o) {
    addRunOptions(cmd, o.run);
    cmd.add_flag("--autorun", o.autorun, "start the configured run at launch");
    cmd.add_option("--screenshot", o.screenshot, "write a PNG once the run has finished and drawn");
    cmd.add_flag("--exit-when-done", o.exitWhenDone, "exit after the autorun run (and screenshot)");
    cmd.add_option("--frame-stats", o.frameStats, "write per-frame work times as JSON at exit");
    auto* restore =
        cmd.add_flag("--restore-last", o.restoreLast, "restore the last session's runs");
    cmd.add_flag("--discard-last", o.discardLast, "do not offer the last session's runs")
        ->excludes(restore);
    cmd.add_option("--save-on-exit", o.saveOnExit, "save the finished runs to FILE at exit");
    cmd.add_option("--show", o.show, "bring these windows to the front, e.g. Summary,Heatmap")
        ->delimiter(',');
    cmd.add_option("--export-plots", o.exportPlots,
                   "after the autorun, save these charts as PNG, e.g. step-times,memory")
        ->delimiter(',');
    cmd.add_option("--export-dir", o.exportDir, "folder for --export-plots")->capture_default_str();
}

} // namespace lmprof::app
