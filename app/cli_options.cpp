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

void addRunOptions(CLI::App& cmd, RunOptions& o) {
    cmd.add_option("--model", o.model, "tiny|small|medium|large|xl|2.7B|custom")
        ->capture_default_str();
    cmd.add_option("--ctx", o.ctx, "context length")->capture_default_str();
    cmd.add_option("--precision", o.precision, "fp32|bf16|fp16|bf16-pure")->capture_default_str();
    cmd.add_option("--mode", o.mode, "forward|forward-backward|train")->capture_default_str();
    addCommonOptions(cmd, o.common);
}

} // namespace lmprof::app
