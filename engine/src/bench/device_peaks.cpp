// Peak table from the vendors' data sheets (dense, no sparsity: half the figures the sheets
// mark "with sparsity"). fp32 uses the non-tensor-core figure because LibTorch's default
// matmul precision does not use TF32; a run with tf32 on uses the TF32 tensor-core figure.

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
    double tf32Tflops; // TF32 tensor cores
};

// First match wins, so the more specific names come first.
constexpr std::array kPeaks{
    PeakEntry{"H200", nullptr, 66.9, 989.4, 494.7},  PeakEntry{"H100", "PCIe", 51.2, 756.0, 378.0},
    PeakEntry{"H100", nullptr, 66.9, 989.4, 494.7},  PeakEntry{"A100", nullptr, 19.5, 312.0, 156.0},
    PeakEntry{"L40S", nullptr, 91.6, 362.05, 183.0}, PeakEntry{"L4", nullptr, 30.3, 121.0, 60.0},
};
} // namespace

std::optional<double> peakFlops(const DeviceInfo& device, Precision precision, bool tf32) {
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
        if (matmul == NumberFormat::Fp32) {
            return (tf32 ? e.tf32Tflops : e.fp32Tflops) * 1e12;
        }
        return e.halfTflops * 1e12;
    }
    return std::nullopt;
}

} // namespace lmprof::engine::bench
