// Published dense peak throughput of known GPUs, for MFU. Unknown devices (and CPUs)
// have no entry: MFU is then reported as null rather than guessed.
#pragma once

#include "lmprof/engine/records.h"
#include "lmprof/engine/result_set.h"

#include <optional>

namespace lmprof::engine::bench {

// FLOP/s the device can reach at most in this precision, or nullopt if unknown; fp32
// matmuls on TF32 tensor cores (RunConfig::tf32) use the TF32 figure.
std::optional<double> peakFlops(const DeviceInfo& device, Precision precision, bool tf32 = false);

} // namespace lmprof::engine::bench
