// What a caller can add to the runner's step loop without the runner knowing about it: the
// data-parallel gradient sync (ddp/) is the one user. Every call is made on the running
// thread; an exception ends the run as an error, like a failure inside a phase.
#pragma once

#include "lmprof/engine/runner.h"

namespace lmprof::engine::bench {

struct StepContext;

class StepHooks {
public:
    virtual ~StepHooks() = default;
    // The context is built (model, optimizer, batch); before the first step.
    virtual void attach(StepContext& ctx) { (void)ctx; }
    // Before step `index`, outside its timing; may set the run's cancel flag.
    virtual void beforeStep(int index) { (void)index; }
    // Between backward and optimizer, inside total_ms and outside the phase times.
    virtual void afterBackward(int index) { (void)index; }
    // The step is timed and recorded.
    virtual void stepFinished(const StepRecord& step) { (void)step; }
    // The run is over (however it ended) and the context still exists.
    virtual void runEnding(StepContext& ctx) { (void)ctx; }
};

// runBenchmark with hooks (may be null). `cancel` is what the runner polls; hooks that
// decide cancellation themselves (beforeStep) hand the runner a flag they set.
RunResult runBenchmarkWith(const RunConfig& config, const std::string& runId, RunObserver* observer,
                           const std::atomic<bool>* cancel, StepHooks* hooks);

} // namespace lmprof::engine::bench
