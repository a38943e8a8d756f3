// The memory sampler: a named thread that reads the run's memory (allocator bytes, RSS,
// whole-device use) at a fixed rate, and device/process telemetry (NVML, CPU use) at up to
// 10 Hz, each sample tagged with the run's step and phase. The runner adds a sample at
// every phase boundary. Samples go to the run's result and, as they are taken, to the
// observer (from the sampler thread; boundary samples from the runner's thread).
#pragma once

#include "bench/run_position.h"
#include "bench/step_context.h"
#include "lmprof/engine/runner.h"
#include "platform/nvml.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace lmprof::engine::bench {

class MemorySampler {
public:
    using Clock = std::chrono::steady_clock;
    MemorySampler(const RunConfig& config, DeviceTarget target, const MemoryMeter& meter,
                  const RunPosition& position, Clock::time_point runStart, RunObserver* observer);
    ~MemorySampler(); // stops and joins
    MemorySampler(const MemorySampler&) = delete;
    MemorySampler& operator=(const MemorySampler&) = delete;

    // Takes a boundary sample now, on the calling thread.
    void boundary();
    // Stops the thread (idempotent) and hands over what was recorded.
    void stop();
    std::vector<MemorySample> takeTimeline();
    std::vector<TelemetrySample> takeTelemetry();
    // Why there is no GPU telemetry (NVML missing...), empty if there is or on CPU runs.
    const std::string& telemetryNote() const { return m_telemetryNote; }
    // Why periodic sampling stopped early (a reading threw), empty if it did not; valid
    // after stop().
    const std::string& samplerError() const { return m_samplerError; }
    // CPU time the sampler thread used, valid after stop(); 0 if it never ran.
    double threadCpuMs() const { return m_threadCpuMs; }

private:
    void loop();
    void sampleLoop();
    void sampleMemory(bool boundary); // caller holds m_mutex
    TelemetrySample readTelemetry();  // sampler thread only, without m_mutex
    double nowMs() const;

    DeviceTarget m_target;
    const MemoryMeter& m_meter;
    const RunPosition& m_position;
    Clock::time_point m_runStart;
    RunObserver* m_observer;
    Clock::duration m_memoryPeriod{};    // zero: boundaries only
    Clock::duration m_telemetryPeriod{}; // zero: no telemetry
    std::unique_ptr<platform::Nvml> m_nvml;
    std::string m_telemetryNote;
    std::string m_samplerError;
    double m_lastCpuSeconds = 0.0;
    double m_threadCpuMs = 0.0;
    Clock::time_point m_lastCpuTime;

    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stop = false;
    std::vector<MemorySample> m_timeline;
    std::vector<TelemetrySample> m_telemetry;
    std::thread m_thread; // last: starts after everything above is ready
};

} // namespace lmprof::engine::bench
