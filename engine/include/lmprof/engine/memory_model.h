// What a training step's memory is made of: parameters, gradients, AdamW moments and the
// rest (activations saved for backward plus temporaries). Predicted from the configuration
// before a run, and split from a measured peak after it. Torch-free.
#pragma once

#include "lmprof/engine/config.h"

#include <cstdint>
#include <string>

namespace lmprof::engine {

struct MemoryBreakdown {
    int64_t parameters = 0;
    int64_t gradients = 0;      // 0 in forward mode
    int64_t optimizerState = 0; // AdamW's two moments; 0 unless the mode is train
    int64_t activations = 0;    // activations and temporaries: everything else
    int64_t staticBytes() const { return parameters + gradients + optimizerState; }
    int64_t total() const { return staticBytes() + activations; }
};

// Bytes of one parameter (and of its gradient and moments): 2 for bf16-pure, else 4.
int64_t parameterElementBytes(Precision precision);

// The predicted peak allocated bytes of a step, reached as backward starts. The static
// parts are exact; activations count the tensors our model saves for backward (per layer
// 12·B·T·d + 4·B·T·d_ff elements, 3·B·h·T² more for attention that materializes its
// scores, naive or SDPA's math, B·h·T row statistics for SDPA's fused kernels; then the
// final norm and the logits with their log-softmax), the loss's (B, T, V) gradient when
// there is a backward, bytes per element by precision, and autocast's low-precision
// weight copies, less the parameters' gradients, which do not exist yet at that moment.
// An estimate: the tests hold it to the measured CPU peak within a stated tolerance.
MemoryBreakdown predictPeak(const RunConfig& config);

// Splits a measured peak: the static parts as predicted (they are exact) and activations
// = peak − static. A peak below the static parts (a run that failed early) leaves
// activations at 0 and shrinks nothing: total() is then above the peak, and
// fitsMeasured() says so.
MemoryBreakdown measuredBreakdown(const RunConfig& config, int64_t measuredPeak);

// Whether the predicted peak fits in deviceBytes; the message says by how much it does
// not ("predicted peak 41.2 GiB exceeds the device's 39.5 GiB"), empty when it fits or
// the device size is unknown (0).
std::string fitWarning(const RunConfig& config, int64_t deviceBytes);

} // namespace lmprof::engine
