// Runs one rank of a data-parallel run (docs/DISTRIBUTED.md). Every rank of the run calls
// this with the same configuration; the launcher (lmprof-cli ddp, torchrun, Slurm) starts
// the processes and says who is who (RankEndpoint, ddp.h).
#pragma once

#include "lmprof/engine/runner.h"

namespace lmprof::engine {

// Joins the others at endpoint.masterAddr:masterPort (rank 0 hosts LibTorch's TCPStore
// there), trains config.ddp's strategy on this rank's share of the batch, then hands its
// steps to rank 0. Rank 0's result has every rank's steps in result.ddp and whether the
// parameters ended bit-identical; another rank's result has its own. Failures are data: an
// unreachable or dead peer ends the run with an error within config.ddp->timeoutS, and the
// finished steps are kept. On CUDA each rank uses device cuda:<local rank>.
RunResult runDataParallel(const RunConfig& config, const RankEndpoint& endpoint,
                          const std::string& runId, RunObserver* observer,
                          const std::atomic<bool>* cancel);

} // namespace lmprof::engine
