// Synthetic runs that the engine's driver tests and the window-logic tests share: a
// configuration of a preset, and a finished run of it with given measured step times (and
// one 100 ms warmup step per warmup).
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/session.h"

#include <string>
#include <vector>

namespace lmprof::engine::testing {

using engine::Mode;
using engine::Precision;
using engine::RunStatus;

inline engine::RunConfig cfg(const char* preset, int64_t ctx, Precision p = Precision::Fp32,
                             Mode m = Mode::Train, int warmup = 1) {
    engine::RunConfig c;
    c.model = *engine::presetModel(preset);
    c.contextLength = ctx;
    c.precision = p;
    c.mode = m;
    c.warmupSteps = warmup;
    c.measureSteps = 4;
    c.batchSize = 2;
    return c;
}

inline engine::RunResult finished(const engine::RunConfig& c, RunStatus status,
                                  const std::vector<double>& measured,
                                  const std::string& id = "run") {
    engine::RunResult r;
    r.id = id;
    r.config = c;
    r.status = status;
    int index = 0;
    for (int w = 0; w < c.warmupSteps; ++w) {
        engine::StepRecord s;
        s.index = index++;
        s.warmup = true;
        s.totalMs = s.forwardMs = 100.0;
        r.steps.push_back(s);
    }
    for (double ms : measured) {
        engine::StepRecord s;
        s.index = index++;
        s.totalMs = ms;
        s.forwardMs = ms / 3;
        s.backwardMs = ms / 2;
        s.optimizerMs = ms / 6;
        r.steps.push_back(s);
    }
    r.summary = engine::summarize(c, r.steps, std::nullopt);
    return r;
}

} // namespace lmprof::engine::testing
