// The analytic memory model of a step (see memory_model.h for what each part counts).

#include "lmprof/engine/memory_model.h"

#include "lmprof/engine/report.h"

#include <algorithm>

namespace lmprof::engine {

namespace {

// Average bytes of one saved activation element. Under autocast the matmul outputs are
// half precision while the residual stream, the RMSNorm internals and the loss stay fp32;
// 3 bytes is the mix measured on our model (tests/engine/memory_model_test.cpp).
double activationElementBytes(Precision p) {
    switch (p) {
    case Precision::Fp32:
        return 4.0;
    case Precision::Bf16:
    case Precision::Fp16:
        return 3.0;
    case Precision::Bf16Pure:
        return 2.0;
    }
    return 4.0;
}

double savedActivationElements(const RunConfig& c) {
    const double b = static_cast<double>(c.batchSize);
    const double t = static_cast<double>(c.contextLength);
    const double d = static_cast<double>(c.model.dModel);
    const double f = static_cast<double>(c.model.dFf);
    const double h = static_cast<double>(c.model.numHeads);
    const double v = static_cast<double>(c.model.vocabSize);
    const double perLayer = 12.0 * b * t * d + 4.0 * b * t * f + 3.0 * b * h * t * t;
    return static_cast<double>(c.model.numLayers) * perLayer + 3.0 * b * t * d + 2.0 * b * t * v;
}

} // namespace

int64_t parameterElementBytes(Precision precision) {
    return precision == Precision::Bf16Pure ? 2 : 4;
}

MemoryBreakdown predictPeak(const RunConfig& c) {
    MemoryBreakdown m;
    const int64_t n = parameterCount(c.model);
    const int64_t bytes = parameterElementBytes(c.precision);
    m.parameters = n * bytes;
    m.gradients = c.mode == Mode::Forward ? 0 : n * bytes;
    m.optimizerState = c.mode == Mode::Train ? 2 * n * bytes : 0;
    double act = savedActivationElements(c) * activationElementBytes(c.precision);
    if (c.precision == Precision::Bf16 || c.precision == Precision::Fp16) {
        // Autocast keeps a half-precision copy of every matmul weight for the step (the
        // embedding table is looked up, not multiplied, so it is not copied).
        act += 2.0 * static_cast<double>(n - c.model.vocabSize * c.model.dModel);
    }
    m.activations = static_cast<int64_t>(act);
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
