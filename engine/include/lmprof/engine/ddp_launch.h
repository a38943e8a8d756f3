// Launching a data-parallel run's ranks on this machine (docs/DISTRIBUTED.md): the one
// launcher behind `lmprof-cli ddp` and the window's Distributed runs. It starts
// config.ddp->worldSize processes of a rank program (lmprof-cli), each told who it is with
// torchrun's variables and what to run with a header file, relays rank 0's finished steps
// as they come, watches the ranks (one that dies ends the others within the timeout), and
// returns rank 0's result with every rank's records. Torch-free: the ranks do the training.
#pragma once

#include "lmprof/engine/ddp.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/runner.h"

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::engine {

// The program a rank runs: lmprof-cli with `ddp`, which reads the variables below, and the
// port its ranks meet on.
struct RankProgram {
    std::filesystem::path executable;
    std::vector<std::string> args; // after argv[0]
    int masterPort = 0;            // the rendezvous port; 0: a free one at each launch
};

// lmprof-cli in the folder of the running program (lmprof and lmprof-cli are built and
// installed side by side). Its absence is reported by launchDataParallel.
RankProgram rankProgramBesideThisOne();

// The variables a launched rank reads besides torchrun's (RANK, WORLD_SIZE, ...).
inline constexpr const char* kDdpRunVar = "LMPROF_DDP_RUN";           // the header file
inline constexpr const char* kDdpResultVar = "LMPROF_DDP_RESULT";     // rank 0's result set
inline constexpr const char* kDdpProgressVar = "LMPROF_DDP_PROGRESS"; // rank 0's steps

// Runs config (which has a ddp request) as local ranks of `program` and waits for them,
// meeting on the program's masterPort (0: a free one). observer (may be null) hears onRunStarted at
// once and rank 0's steps as they finish; a set cancel is passed on to the ranks (SIGINT), which
// stop together after the current step. Never throws for a failed run: a rank that cannot
// start, dies or fails makes the result an error saying which rank and how, and the steps
// rank 0 finished are kept.
RunResult launchDataParallel(const RunConfig& config, const std::string& runId,
                             const RankProgram& program, RunObserver* observer,
                             const std::atomic<bool>* cancel);

// What a rank started by launchDataParallel was given; nullopt when kDdpRunVar is unset
// (a rank of torchrun or Slurm, configured by its own options). Throws ResultFormatError
// naming the file when the header cannot be read.
struct LaunchedRank {
    RunResult header; // the run's id and configuration
    std::filesystem::path resultPath;
    std::filesystem::path progressPath;
};
std::optional<LaunchedRank> launchedRankFromEnvironment(EnvLookup getenv);

// Appends one finished step to the progress file a launcher reads (rank 0 only).
void reportLaunchedStep(const LaunchedRank& launched, const StepRecord& step);

} // namespace lmprof::engine
