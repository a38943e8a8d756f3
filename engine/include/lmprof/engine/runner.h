// Runs one benchmark (warmup + measured steps of a mode) on the calling thread and returns
// its result. Failures come back as data (status, error, failed phase), never as exceptions.
// Most callers want Session (session.h), which runs this on its own worker thread.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/records.h"

#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace lmprof::engine {

// Called as the run progresses: onRunStarted and onStepFinished on the running thread,
// between phases; onMemorySample and onTelemetrySample from the sampler thread (boundary
// samples from the running thread), one at a time but concurrently with the others. Keep
// the callbacks short and thread-safe.
class RunObserver {
public:
    virtual ~RunObserver() = default;
    virtual void onRunStarted(const RunResult& header) { (void)header; }
    virtual void onStepFinished(const StepRecord& step) { (void)step; }
    virtual void onMemorySample(const MemorySample& sample) { (void)sample; }
    virtual void onTelemetrySample(const TelemetrySample& sample) { (void)sample; }
};

// Runs the benchmark: validate(), then the device is resolved once and checkRunnable()
// asked (devices.h). `cancel` is polled between phases and steps: a cancelled run keeps
// the steps it finished and ends with status Cancelled.
RunResult runBenchmark(const RunConfig& config, const std::string& runId, RunObserver* observer,
                       const std::atomic<bool>* cancel);

} // namespace lmprof::engine
