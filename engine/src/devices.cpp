// Devices (devices.h): listing, resolving a device string, device memory and the environment
// description. The runtime refusals and the precision probe are bench/precision_probe.cpp's.

#include "lmprof/engine/devices.h"

#include "platform/cuda_backend.h"
#include "platform/nvml.h"
#include "platform/process_info.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

namespace lmprof::engine {

std::string DeviceTarget::name() const {
    return cuda ? "cuda:" + std::to_string(index) : "cpu";
}

std::vector<std::string> availableDevices() {
    std::vector<std::string> out = {"auto", "cpu"};
    for (int i = 0; i < cuda::deviceCount(); ++i) {
        out.push_back(DeviceTarget{true, i}.name());
    }
    return out;
}

DeviceTarget resolveDevice(std::string_view requested) {
    if (requested == "auto") {
        return {cuda::deviceCount() > 0, 0};
    }
    if (const auto index = parseCudaIndex(requested)) {
        return {true, *index};
    }
    return {}; // "cpu" (and strings validate() refuses)
}

int64_t deviceMemoryBytes(const DeviceTarget& target) {
    return target.cuda && target.index < cuda::deviceCount()
               ? cuda::deviceInfo(target.index).memoryBytes
               : platform::totalMemoryBytes();
}

Environment probeEnvironment(const DeviceTarget& target) {
    Environment env;
    env.torch = TORCH_VERSION;
    env.cuda = cuda::runtimeVersion();
    env.cpuModel = platform::cpuModel();
    env.cpuThreads = at::get_num_threads();
    env.host = platform::hostName();
    if (target.cuda && target.index < cuda::deviceCount()) {
        env.device = cuda::deviceInfo(target.index);
        // Asked once: loading NVML for every result set would cost each save its init.
        static const std::string driver = [] {
            std::string why;
            const auto nvml = platform::Nvml::load(why);
            return nvml ? nvml->driverVersion() : std::string();
        }();
        if (!driver.empty()) {
            env.driver = driver;
        }
    } else {
        env.device.type = "cpu";
        env.device.name = env.cpuModel;
        env.device.memoryBytes = platform::totalMemoryBytes();
    }
    return env;
}

} // namespace lmprof::engine
