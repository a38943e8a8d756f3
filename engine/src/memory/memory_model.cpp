// The analytic memory model of a step (see memory_model.h for what each part counts).

#include "lmprof/engine/memory_model.h"

#include "lmprof/engine/format.h"
#include "lmprof/engine/precision.h"

#include <algorithm>

namespace lmprof::engine {

namespace {

// Saved activations: dense (B, T, d) and (B, T, d_ff) tensors, (B, h, T, T) attention
// tensors and (B, T, V) logits, each at its precision's bytes per element (precision.h).
double activationBytes(const RunConfig& c) {
    const double b = static_cast<double>(c.batchSize);
    const double t = static_cast<double>(c.contextLength);
    const double d = static_cast<double>(c.model.dModel);
    const double f = static_cast<double>(c.model.dFf);
    const double h = static_cast<double>(c.model.numHeads);
    const double v = static_cast<double>(c.model.vocabSize);
    const double layers = static_cast<double>(c.model.numLayers);
    const PrecisionTraits& e = traitsOf(c.precision);
    const double dense = layers * (12.0 * b * t * d + 4.0 * b * t * f) + 3.0 * b * t * d;
    // The CS336 math and SDPA's math backend hold (B, h, T, T) scores and probabilities.
    const bool materialized =
        c.attention == AttentionKind::Naive || c.attention == AttentionKind::SdpaMath;
    const double scores = materialized ? layers * 3.0 * b * h * t * t : 0.0;
    // SDPA's fused kernels (flash, memory-efficient, cuDNN; flash on the CPU) never hold
    // one: each layer saves its (B, h, T) row log-sum-exp, in fp32.
    const double rowStats = materialized ? 0.0 : layers * b * h * t * 4.0;
    // Backward starts with every saved tensor alive and adds the loss's gradient with
    // respect to the logits, (B, T, V) in the logits' format (the matmuls').
    const double lossGradBytes = c.mode == Mode::Forward
                                     ? 0.0
                                     : static_cast<double>(bytesOf(e.autocast.value_or(e.weights)));
    return dense * e.denseBytes + scores * e.scoreBytes + rowStats +
           b * t * v * (e.logitBytes + lossGradBytes);
}

} // namespace

int64_t parameterElementBytes(Precision precision) {
    return bytesOf(traitsOf(precision).weights);
}

MemoryBreakdown predictPeak(const RunConfig& c) {
    MemoryBreakdown m;
    const int64_t n = parameterCount(c.model);
    const int64_t bytes = parameterElementBytes(c.precision);
    m.parameters = n * bytes;
    m.gradients = c.mode == Mode::Forward ? 0 : n * bytes;
    m.optimizerState = c.mode == Mode::Train ? 2 * n * bytes : 0;
    double act = activationBytes(c);
    if (const auto autocast = traitsOf(c.precision).autocast) {
        // Autocast keeps a copy of every matmul weight in its format for the step (the
        // embedding table is looked up, not multiplied, so it is not copied).
        act += static_cast<double>(bytesOf(*autocast)) *
               static_cast<double>(n - c.model.vocabSize * c.model.dModel);
    }
    // The peak comes as backward starts: every saved tensor and the loss's gradient, while
    // the parameters' gradients do not exist yet (each step starts without them). It is
    // counted as the static parts plus what exceeds them, like a measured peak.
    act = std::max(0.0, act - static_cast<double>(m.gradients));
    // Unvalidated input (the form is being edited) can be astronomically large.
    m.activations = act < 9.0e18 ? static_cast<int64_t>(act) : int64_t{9'000'000'000'000'000'000};
    return m;
}

MemoryBreakdown measuredBreakdown(const RunConfig& c, int64_t measuredPeak) {
    MemoryBreakdown m = predictPeak(c);
    m.activations = std::max<int64_t>(0, measuredPeak - m.staticBytes());
    return m;
}

std::string fitWarning(const RunConfig& c, int64_t deviceBytes) {
    if (deviceBytes <= 0) {
        return {};
    }
    const int64_t predicted = predictPeak(c).total();
    if (predicted <= deviceBytes) {
        return {};
    }
    return "predicted peak " + formatBytes(predicted) + " exceeds the device's " +
           formatBytes(deviceBytes) + ": the run will likely end out of memory";
}

} // namespace lmprof::engine
