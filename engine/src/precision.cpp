// The precision table (precision.h): one row per precision.

#include "lmprof/engine/precision.h"

#include "enum_names.h"

#include <array>
#include <stdexcept>

namespace lmprof::engine {

namespace {

// Under autocast the matmul outputs are half precision while the residual stream and
// RMSNorm stay fp32 (dense 3 bytes on average); in bf16-pure RMSNorm still computes in
// fp32 (2.5). The logits are kept in the run's format plus an fp32 copy for the loss and
// its log-softmax, together.
constexpr std::array kTable{
    PrecisionTraits{Precision::Fp32, "fp32", "float32 everywhere", std::nullopt, NumberFormat::Fp32,
                    false, 4.0, 4.0, 8.0},
    PrecisionTraits{Precision::Bf16, "bf16", "autocast to bfloat16, fp32 master weights",
                    NumberFormat::Bf16, NumberFormat::Fp32, false, 3.0, 2.0, 10.0},
    PrecisionTraits{Precision::Fp16, "fp16",
                    "autocast to float16, fp32 master weights, dynamic loss scaling",
                    NumberFormat::Fp16, NumberFormat::Fp32, true, 3.0, 2.0, 10.0},
    PrecisionTraits{Precision::Bf16Pure, "bf16-pure", "weights and activations in bfloat16",
                    std::nullopt, NumberFormat::Bf16, false, 2.5, 2.0, 10.0},
};

constexpr bool tableMatchesEnumOrder() {
    if (kTable.size() != kPrecisions.size()) {
        return false;
    }
    for (size_t i = 0; i < kTable.size(); ++i) {
        if (kTable[i].precision != kPrecisions[i]) {
            return false;
        }
    }
    return true;
}
static_assert(tableMatchesEnumOrder(), "one row per precision, in the order of kPrecisions");

} // namespace

int64_t bytesOf(NumberFormat format) {
    return format == NumberFormat::Fp32 ? 4 : 2;
}

const PrecisionTraits& traitsOf(Precision precision) {
    for (const auto& row : kTable) {
        if (row.precision == precision) {
            return row;
        }
    }
    throw std::invalid_argument("precision without a row in the precision table");
}

// A precision's name is its row's (config.h declares both directions).
std::string_view toString(Precision p) {
    return traitsOf(p).name;
}

std::optional<Precision> parsePrecision(std::string_view s) {
    return parseByName(s, kPrecisions);
}

} // namespace lmprof::engine
