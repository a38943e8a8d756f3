// Sweeps: the cartesian product of models × context lengths × batch sizes × precisions ×
// modes × warmup counts × the execution variants listed, ordered cheaper first, and the rule that
// skips configurations an out-of-memory run has shown to be too large. Plain data; the CLI and the
// GUI's sweep driver share it.
//
// Usage:
//   SweepSpec spec{base, {tiny, small}, {128, 256}, {Precision::Fp32}, {Mode::Train}, {0, 5}};
//   OomSkipper skipper;
//   for (const RunConfig& c : expandSweep(spec)) {        // cheapest first
//       if (auto skipped = skipper.skip(c)) { record(*skipped); continue; }
//       RunResult r = run(c);
//       skipper.record(r);                                 // remembers OOMs
//   }
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/records.h"

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace lmprof::engine {

struct SweepSpec {
    RunConfig base; // everything not swept: measured steps, device, seed, threads
    std::vector<ModelConfig> models;
    std::vector<int64_t> contexts;
    std::vector<Precision> precisions;
    std::vector<Mode> modes;
    std::vector<int> warmups;     // warmup step counts; empty means base.warmupSteps only
    std::vector<int64_t> batches; // batch sizes; empty means base.batchSize only
    // Execution variants swept (ChoiceField, config.h): a field's key and its values' names; a
    // field not listed keeps the base's value.
    std::vector<std::pair<std::string, std::vector<std::string>>> choices;
    // Plain fields swept (ValueField::sweepAxis, config.h): a field's key and its values; a
    // field not listed keeps the base's value.
    using ValueList = std::pair<std::string, std::vector<int64_t>>;
    std::vector<ValueList> values;
};

// Number of configurations expandSweep() returns: the product of the list sizes.
size_t sweepSize(const SweepSpec& spec);

// Every combination, cheapest first (see orderCheapestFirst). Validation is the caller's.
// An op profile request keeps its offset from the end of the warmup in every run (by
// default each run profiles its first step after the warmup).
std::vector<RunConfig> expandSweep(const SweepSpec& spec);

// Shard `index` (1-based) of `count`: every count-th configuration of the expanded sweep,
// starting at the index-th, so n machines (a Slurm array, several servers) split one sweep
// with similar costs each. Empty when index is outside 1..count.
std::vector<RunConfig> sweepShard(const std::vector<RunConfig>& configs, int index, int count);

// Sorts by FLOPs of one step, then by the number of steps, keeping the given order among
// equals. Cheap runs first means results arrive early, and an out-of-memory error is met
// by the smallest configuration that hits it, so the skip rule can spare the larger ones.
void orderCheapestFirst(std::vector<RunConfig>& configs);

// Analytic FLOPs of a whole run: one step's FLOPs × (warmup + measured steps).
double runFlops(const RunConfig& config);
double totalFlops(std::span<const RunConfig> configs);

// True if `candidate` is in the same family as `failed` (same precision, mode and execution
// variants: fused attention or graphs change what a step holds) and at
// least as large in batch, parameters and context, so it would run out of memory as well.
// Warmup and measured step counts do not change the memory a step needs.
bool exceedsOom(const RunConfig& failed, const RunConfig& candidate);

// Remembers the out-of-memory runs of a sweep and turns later configurations they cover
// into Skipped results (error "skipped after out-of-memory in <id>") instead of runs.
class OomSkipper {
public:
    // Call with every finished run; only status Oom is remembered.
    void record(const RunResult& finished);
    std::optional<RunResult> skip(const RunConfig& candidate) const;
    bool empty() const { return m_ooms.empty(); }

private:
    std::vector<RunResult> m_ooms;
};

} // namespace lmprof::engine
