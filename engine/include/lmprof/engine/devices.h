// The devices runs execute on: what this machine offers, a device string parsed once into
// a DeviceTarget that is passed down, the refusals only the runtime can make (a device
// that is not there, a precision it cannot run), its memory and the environment a result
// set records. Torch-free; implemented in engine/src/devices.cpp.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/result_set.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

// A resolved device: the CPU or one CUDA device.
struct DeviceTarget {
    bool cuda = false;
    int index = 0;
    std::string name() const; // "cpu", "cuda:1"
    bool operator==(const DeviceTarget&) const = default;
};

// Device choices on this machine: "auto", "cpu", then "cuda:0", "cuda:1", ... per GPU.
std::vector<std::string> availableDevices();

// Parses a device string once: "auto" becomes cuda:0 when a GPU is present and the CPU
// otherwise, "cuda" becomes cuda:0. The syntax is validate()'s to refuse; whether the
// device exists is checkRunnable()'s.
DeviceTarget resolveDevice(std::string_view requested);

// What validate() cannot know, asked of the runtime before a run: is the device there (and
// is this LibTorch built with CUDA), and can it run the precision (a small matmul in that
// precision, probed once per device and precision in a process). Returns the field and the
// reason of the first refusal, or nullopt when the run can start. Runs validate() first.
std::optional<ConfigError> checkRunnable(const RunConfig& config);
// The most intra-op threads a run may ask for here: the CPU count, 2 at least.
int maxRunThreads();
// The same for a device resolved already (the runner resolves once and passes it down).
std::optional<ConfigError> checkRunnable(const RunConfig& config, const DeviceTarget& target);

// Memory of the device: the GPU's, or the machine's RAM for the CPU.
int64_t deviceMemoryBytes(const DeviceTarget& target);

// The machine the runs execute on, for a result set's "environment".
Environment probeEnvironment(const DeviceTarget& target);

} // namespace lmprof::engine
