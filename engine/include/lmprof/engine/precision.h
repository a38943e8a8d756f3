// Everything lmprof knows about a precision, in one table: its name, what autocast does,
// the format of the weights, loss scaling and the memory model's bytes per element. The
// runner, the memory model, the precision probe, the CLI and every combo box read it.
// Adding a precision: a value in `Precision` and `kPrecisions` (config.h), a row in
// precision.cpp, and the runner's code path if its traits call for a new one
// (docs/ARCHITECTURE.md).
#pragma once

#include "lmprof/engine/config.h"

#include <optional>
#include <string_view>

namespace lmprof::engine {

// Number formats the traits speak of, without LibTorch types (the engine maps them to
// at::ScalarType in bench/precision_dtypes.h).
enum class NumberFormat { Fp32, Bf16, Fp16 };

// Bytes of one element of the format.
int64_t bytesOf(NumberFormat format);

struct PrecisionTraits {
    Precision precision;
    std::string_view name;                // CLI, JSON and combo boxes: "bf16-pure"
    std::string_view description;         // one line for help texts and tooltips
    std::optional<NumberFormat> autocast; // matmuls autocast to this format, or no autocast
    NumberFormat weights;                 // parameters, gradients and AdamW moments
    bool lossScaling = false;             // dynamic loss scaling (the GradScaler recipe)
    // Memory model: bytes per element of the activations saved for backward, by kind
    // (dense (B,T,·) tensors, (B,h,T,T) scores, (B,T,V) logits with their fp32 copies);
    // calibrated against exact CPU tensor bytes (tests/engine/memory_model_test.cpp).
    double denseBytes = 4.0;
    double scoreBytes = 4.0;
    double logitBytes = 8.0;
};
// Which devices run a precision is not a trait: checkRunnable() probes the device.

// The row of a precision (precision.cpp holds one per value of kPrecisions, in order).
const PrecisionTraits& traitsOf(Precision precision);

} // namespace lmprof::engine
