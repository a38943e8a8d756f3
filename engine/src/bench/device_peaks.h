// Published dense peak throughput of known GPUs, for MFU. Unknown devices (and CPUs)
// have no entry: MFU is then reported as null rather than guessed.
#pragma once

#include "lmprof/engine/records.h"

#include <optional>

namespace lmprof::engine::bench {

// FLOP/s the device can reach at most in this precision, or nullopt if unknown.
std::optional<double> peakFlops(const DeviceInfo& device, Precision precision);

} // namespace lmprof::engine::bench
