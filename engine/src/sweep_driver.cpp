// SweepDriver: one configuration at a time on the Session, the skip-after-OOM rule of the
// engine, and an ETA from the FLOP rate the sweep's own steps have shown.

#include "lmprof/engine/sweep_driver.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace lmprof::engine {

void SweepDriver::start(std::vector<RunConfig> configs, bool runAfterOom, SubmitFn submit,
                        SkippedFn skipped) {
    auto clock = std::move(m_nowMs);
    *this = SweepDriver();
    m_nowMs = clock ? std::move(clock) : [] {
        return std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    };
    m_configs = std::move(configs);
    m_runAfterOom = runAfterOom;
    m_submit = std::move(submit);
    m_skipped = std::move(skipped);
    m_running = true;
    submitNext();
}

void SweepDriver::submitNext() {
    while (m_next < m_configs.size()) {
        const RunConfig& c = m_configs[m_next++];
        if (!m_runAfterOom) {
            if (auto skipped = m_skipper.skip(c)) {
                ++m_skippedCount;
                m_skipped(*skipped);
                continue;
            }
        }
        m_currentConfig = m_next - 1;
        m_currentSteps = 0;
        m_currentMs = 0.0;
        m_submittedAtMs = m_nowMs();
        m_currentIndex = m_submit(c);
        return;
    }
    m_currentIndex = -1;
    m_running = false;
}

void SweepDriver::observe(const std::vector<SessionEvent>& events) {
    for (const auto& event : events) {
        observe(event);
    }
}

void SweepDriver::observe(const SessionEvent& event) {
    if (m_currentIndex < 0) {
        return;
    }
    if (const auto* step = std::get_if<StepFinished>(&event);
        step && step->runIndex == m_currentIndex) {
        ++m_currentSteps;
        m_flopsDone += stepFlops(m_configs[m_currentConfig]);
        m_msDone += step->step.totalMs;
        m_currentMs += step->step.totalMs;
    } else if (const auto* fin = std::get_if<RunFinished>(&event);
               fin && fin->runIndex == m_currentIndex) {
        m_outsideStepsMs += std::max(0.0, m_nowMs() - m_submittedAtMs - m_currentMs);
        ++m_runsTimed;
        ++m_finished;
        const RunStatus status = fin->result.status;
        m_failed += status == RunStatus::Oom || status == RunStatus::Error;
        m_skipper.record(fin->result);
        m_currentIndex = -1;
        if (status == RunStatus::Cancelled || !m_running) {
            m_running = false;
        } else {
            submitNext();
        }
    }
}

void SweepDriver::cancel() {
    // The run in flight still ends (as cancelled) and is counted by observe().
    m_running = false;
    m_next = m_configs.size();
}

SweepDriver::Progress SweepDriver::progress() const {
    Progress p;
    p.total = m_configs.size();
    p.finished = m_finished;
    p.skipped = m_skippedCount;
    p.failed = m_failed;
    if (m_msDone <= 0.0 || m_flopsDone <= 0.0) {
        return p;
    }
    const double flopsPerMs = m_flopsDone / m_msDone;
    const double outsideStepsMs = m_runsTimed > 0 ? m_outsideStepsMs / m_runsTimed : 0.0;
    const auto estimateMs = [&](const RunConfig& c) {
        return runFlops(c) / flopsPerMs + outsideStepsMs;
    };
    double leftMs = 0.0;
    if (m_currentIndex >= 0) {
        const RunConfig& c = m_configs[m_currentConfig];
        const int stepsLeft = std::max(0, c.warmupSteps + c.measureSteps - m_currentSteps);
        // Its own steps say best how long the rest of it takes (a larger model than the runs
        // before it is slower per FLOP, not faster).
        leftMs +=
            m_currentSteps > 0
                ? m_currentMs / m_currentSteps * stepsLeft +
                      std::max(0.0, outsideStepsMs - (m_nowMs() - m_submittedAtMs - m_currentMs))
                : std::max(0.0, estimateMs(c) - (m_nowMs() - m_submittedAtMs));
    }
    for (size_t i = m_next; i < m_configs.size(); ++i) {
        leftMs += estimateMs(m_configs[i]);
    }
    p.etaSeconds = leftMs / 1000.0;
    return p;
}

} // namespace lmprof::engine
