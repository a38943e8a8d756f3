// NVIDIA's management library (NVML) loaded at run time with dlopen, so lmprof starts on
// machines without a driver: telemetry then simply has no GPU fields. Only the handful of
// NVML calls lmprof needs are resolved; their C signatures are declared in nvml.cpp.
#pragma once

#include "lmprof/engine/records.h"

#include <memory>
#include <string>
#include <vector>

namespace lmprof::engine::platform {

// A GPU as the driver lists it, in NVML's order.
struct NvmlGpu {
    std::string name;
    std::string uuid; // "GPU-8c2...", as CUDA_VISIBLE_DEVICES may name it
    int64_t memoryBytes = 0;
};

class Nvml {
public:
    static constexpr const char* kLibrary = "libnvidia-ml.so.1";

    // Opens `library`, resolves the functions and initialises NVML. On failure returns
    // nullptr and says why in `error` (library missing, symbol missing, init failed).
    static std::unique_ptr<Nvml> load(std::string& error, const char* library = kLibrary);
    ~Nvml();
    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;

    // Picks the device by PCI bus id (CUDA and NVML may number devices differently), or by
    // index when the bus id is empty. False with a reason if NVML does not know it.
    bool selectDevice(const std::string& pciBusId, int index, std::string& error);

    // Fills the GPU fields of `out` that the device reports; others stay empty.
    void read(TelemetrySample& out) const;
    // Every GPU the driver knows (name and memory), without initialising CUDA: the window's
    // device list before the engine is loaded (local_engine.cpp).
    std::vector<NvmlGpu> devices() const;
    // The driver's version ("580.65.06"); empty if this NVML cannot say.
    std::string driverVersion() const;

private:
    struct Api;
    Nvml(void* handle, std::unique_ptr<Api> api);
    void* m_handle = nullptr;
    std::unique_ptr<Api> m_api;
    void* m_device = nullptr;
};

} // namespace lmprof::engine::platform
