// Where the run is (step and phase), published by the runner between phases and read by
// the sampler thread and the allocation recorders to tag what they record.
#pragma once

#include "lmprof/engine/config.h"

#include <atomic>

namespace lmprof::engine::bench {

struct RunPosition {
    void set(int step, Phase phase) {
        m_step.store(step, std::memory_order_relaxed);
        m_phase.store(static_cast<int>(phase), std::memory_order_relaxed);
    }
    int step() const { return m_step.load(std::memory_order_relaxed); }
    Phase phase() const { return static_cast<Phase>(m_phase.load(std::memory_order_relaxed)); }

private:
    std::atomic<int> m_step{0};
    std::atomic<int> m_phase{0};
};

} // namespace lmprof::engine::bench
