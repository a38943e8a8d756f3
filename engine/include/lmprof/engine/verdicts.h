// Verdicts (docs/VERDICTS.md): what bounds a run's steps, how sure lmprof is, and what to
// try next, computed from the recorded steps alone, so an engine run, a watched script and
// an old result set are judged by the same rules. Torch-free.
#pragma once

#include "lmprof/engine/run_verdict.h"

#include <span>
#include <string>
#include <vector>

namespace lmprof::engine {

struct RunResult; // records.h

// Every verdict on the run's recorded steps: the kinds that apply to it (input-bound needs a
// data phase, host-bound a GPU's kernel times, ...), each firm, likely or abstained. Warnings
// and criticals first, then info, in kind order within each.
std::vector<RunVerdict> judgeRun(const RunResult& run);

// The verdicts about several runs together (a result set's top-level "verdicts"): a
// straggler among the ranks of a watched script under torchrun (runs named
// "<name>-rank<N>", docs/WATCH.md), one verdict per group of ranks, naming its runs.
std::vector<RunVerdict> judgeRuns(std::span<const RunResult> runs);

// "warn input-bound: 38.1% [31.0%, 45.2%] of the step (threshold 10%)": one line for the
// CLI and the window.
std::string verdictLine(const RunVerdict& v);
// The verdicts for machines, as the CSV's verdicts column holds them: "warn input-bound
// firm 0.3810 [0.3100, 0.4520]", one per verdict (an abstention without figures), joined
// by "; ".
std::string verdictsText(const std::vector<RunVerdict>& verdicts);
// The value in its unit for people: "38.1%", "2.0 MiB", "7 steps".
std::string verdictValueText(const RunVerdict& v, double value);

} // namespace lmprof::engine
