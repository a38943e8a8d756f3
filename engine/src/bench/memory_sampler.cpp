// The sampler thread's loop and its readings (see memory_sampler.h).

#include "bench/memory_sampler.h"

#include "platform/cuda_backend.h"
#include "platform/process_info.h"

#include <ctime>
#include <pthread.h>
#include <tuple>

namespace lmprof::engine::bench {

namespace {
MemorySampler::Clock::duration periodOf(double hz) {
    if (hz <= 0.0) {
        return MemorySampler::Clock::duration::zero();
    }
    return std::chrono::duration_cast<MemorySampler::Clock::duration>(
        std::chrono::duration<double>(1.0 / hz));
}
} // namespace

MemorySampler::MemorySampler(const RunConfig& config, DeviceTarget target, const MemoryMeter& meter,
                             const RunPosition& position, Clock::time_point runStart,
                             RunObserver* observer)
    : m_target(target), m_meter(meter), m_position(position), m_runStart(runStart),
      m_observer(observer), m_memoryPeriod(periodOf(config.sampleHz)),
      m_telemetryPeriod(periodOf(std::min(config.telemetryHz, 10.0))) {
    if (m_telemetryPeriod != Clock::duration::zero()) {
        if (m_target.cuda) {
            m_nvml = platform::Nvml::load(m_telemetryNote);
            if (m_nvml && !m_nvml->selectDevice(cuda::pciBusId(m_target.index), m_target.index,
                                                m_telemetryNote)) {
                m_nvml.reset();
            }
        }
        m_lastCpuSeconds = platform::processCpuSeconds();
        m_lastCpuTime = Clock::now();
    }
    if (m_memoryPeriod != Clock::duration::zero() || m_telemetryPeriod != Clock::duration::zero()) {
        m_thread = std::thread([this] { loop(); });
    }
}

MemorySampler::~MemorySampler() {
    stop();
}

void MemorySampler::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void MemorySampler::boundary() {
    std::lock_guard lock(m_mutex);
    sampleMemory(true);
}

std::vector<MemorySample> MemorySampler::takeTimeline() {
    std::lock_guard lock(m_mutex);
    return std::move(m_timeline);
}

std::vector<TelemetrySample> MemorySampler::takeTelemetry() {
    std::lock_guard lock(m_mutex);
    return std::move(m_telemetry);
}

double MemorySampler::nowMs() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - m_runStart).count();
}

void MemorySampler::loop() {
    pthread_setname_np(pthread_self(), "lmprof-sampler");
    // The thread's own CPU time, reported at the end: what sampling cost the machine.
    struct CpuClock {
        double& outMs;
        ~CpuClock() {
            timespec ts{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
            outMs = static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
        }
    } cpuClock{m_threadCpuMs};
    try {
        sampleLoop();
    } catch (const std::exception& e) {
        // A failing reading (a CUDA error, memory exhausted) stops the sampling, never the
        // process; the run goes on with its boundary samples and says why.
        std::lock_guard lock(m_mutex);
        m_samplerError = std::string("the memory sampler stopped: ") + e.what();
    }
}

void MemorySampler::sampleLoop() {
    const auto zero = Clock::duration::zero();
    auto nextMemory = Clock::now() + m_memoryPeriod;
    auto nextTelemetry = Clock::now() + m_telemetryPeriod;
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
        // Deadlines advance by whole periods, so the rate holds even when a wakeup is late.
        auto wakeAt = Clock::time_point::max();
        if (m_memoryPeriod != zero) {
            wakeAt = std::min(wakeAt, nextMemory);
        }
        if (m_telemetryPeriod != zero) {
            wakeAt = std::min(wakeAt, nextTelemetry);
        }
        if (m_wake.wait_until(lock, wakeAt, [this] { return m_stop; })) {
            break;
        }
        const auto now = Clock::now();
        if (m_memoryPeriod != zero && now >= nextMemory) {
            sampleMemory(false);
            while (nextMemory <= now) {
                nextMemory += m_memoryPeriod;
            }
        }
        if (m_telemetryPeriod != zero && now >= nextTelemetry) {
            // NVML queries can take a millisecond; boundary samples must not wait on them.
            lock.unlock();
            TelemetrySample t = readTelemetry();
            lock.lock();
            m_telemetry.push_back(t);
            if (m_observer) {
                m_observer->onTelemetrySample(t);
            }
            while (nextTelemetry <= now) {
                nextTelemetry += m_telemetryPeriod;
            }
        }
    }
}

void MemorySampler::sampleMemory(bool boundary) {
    MemorySample s;
    s.tMs = nowMs();
    s.allocated = m_meter.allocated();
    s.reserved = m_meter.reserved();
    s.rss = platform::residentBytes();
    if (m_target.cuda && !cuda::capturing()) {
        const auto device = cuda::deviceMemory(m_target.index);
        s.deviceUsed = device.used;
        s.deviceTotal = device.total;
    }
    std::tie(s.step, s.phase) = m_position.get();
    s.boundary = boundary;
    m_timeline.push_back(s);
    if (m_observer) {
        m_observer->onMemorySample(s);
    }
}

TelemetrySample MemorySampler::readTelemetry() {
    TelemetrySample t;
    const auto now = Clock::now();
    t.tMs = std::chrono::duration<double, std::milli>(now - m_runStart).count();
    const double cpu = platform::processCpuSeconds();
    const double wall = std::chrono::duration<double>(now - m_lastCpuTime).count();
    t.cpuPercent = wall > 0.0 ? 100.0 * (cpu - m_lastCpuSeconds) / wall : 0.0;
    m_lastCpuSeconds = cpu;
    m_lastCpuTime = now;
    t.rss = platform::residentBytes();
    if (m_nvml) {
        m_nvml->read(t);
    }
    return t;
}

} // namespace lmprof::engine::bench
