// Peak table from the vendors' data sheets (dense, no sparsity). fp32 uses the non-tensor-core
// figure because LibTorch's default matmul precision does not use TF32.

#include "bench/device_peaks.h"

#include "lmprof/engine/precision.h"

#include <array>

namespace lmprof::engine::bench {

namespace {
struct PeakEntry {
    const char* nameContains;
    const char* alsoContains; // nullptr: no second condition
    double fp32Tflops;
    double halfTflops; // bf16 and fp16 tensor cores
};

// First match wins, so the more specific names come first.
constexpr std::array kPeaks{
    PeakEntry{"H200", nullptr, 66.9, 989.4},  PeakEntry{"H100", "PCIe", 51.2, 756.0},
    PeakEntry{"H100", nullptr, 66.9, 989.4},  PeakEntry{"A100", nullptr, 19.5, 312.0},
    PeakEntry{"L40S", nullptr, 91.6, 362.05}, PeakEntry{"L4", nullptr, 30.3, 121.0},
};
} // namespace

std::optional<double> peakFlops(const DeviceInfo& device, Precision precision) {
    if (device.type != "cuda") {
        return std::nullopt;
    }
    for (const auto& e : kPeaks) {
        if (device.name.find(e.nameContains) == std::string::npos) {
            continue;
        }
        if (e.alsoContains && device.name.find(e.alsoContains) == std::string::npos) {
            continue;
        }
        // The matmuls run in the autocast format, or in the weights' own without autocast.
        const PrecisionTraits& traits = traitsOf(precision);
        const NumberFormat matmul = traits.autocast.value_or(traits.weights);
        return (matmul == NumberFormat::Fp32 ? e.fp32Tflops : e.halfTflops) * 1e12;
    }
    return std::nullopt;
}

} // namespace lmprof::engine::bench
