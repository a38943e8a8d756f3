// Small configurations the engine tests share: the tiny preset on the CPU, short context.
#pragma once

#include "lmprof/engine/config.h"

namespace lmprof::engine::testing {

inline RunConfig tinyCpu(Mode mode = Mode::Train, int warmup = 1, int steps = 2) {
    RunConfig c;
    c.model = *presetModel("tiny");
    c.contextLength = 32;
    c.batchSize = 2;
    c.mode = mode;
    c.warmupSteps = warmup;
    c.measureSteps = steps;
    c.device = "cpu";
    return c;
}

} // namespace lmprof::engine::testing
