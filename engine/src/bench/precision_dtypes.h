// The precision table's number formats (precision.h) as LibTorch scalar types.
#pragma once

#include "lmprof/engine/precision.h"

#include <c10/core/ScalarType.h>

namespace lmprof::engine::bench {

inline c10::ScalarType scalarType(NumberFormat format) {
    switch (format) {
    case NumberFormat::Bf16:
        return c10::kBFloat16;
    case NumberFormat::Fp16:
        return c10::kHalf;
    case NumberFormat::Fp32:
        break;
    }
    return c10::kFloat;
}

} // namespace lmprof::engine::bench
