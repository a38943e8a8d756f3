// Where the run is (step and phase), published by the runner between phases and read by
// the sampler thread and the allocation recorders to tag what they record.
#pragma once

#include "lmprof/engine/config.h"

#include <atomic>
#include <cstdint>
#include <utility>

namespace lmprof::engine::bench {

struct RunPosition {
    // One atomic word, so a reader never pairs one step with another step's phase.
    void set(int step, Phase phase) {
        m_packed.store((static_cast<int64_t>(step) << 8) | static_cast<int64_t>(phase),
                       std::memory_order_relaxed);
    }
    // Both from one load.
    std::pair<int, Phase> get() const {
        const int64_t v = m_packed.load(std::memory_order_relaxed);
        return {static_cast<int>(v >> 8), static_cast<Phase>(v & 0xff)};
    }

private:
    std::atomic<int64_t> m_packed{0};
};

} // namespace lmprof::engine::bench
