// The NVML loader: dlopen, dlsym of each function we call, and readings into a
// TelemetrySample. Types are declared here from NVML's documented C API (the header is
// not part of the CUDA toolkit), keeping the engine free of a build-time NVML dependency.

#include "platform/nvml.h"

#include <dlfcn.h>

namespace lmprof::engine::platform {

namespace {

using NvmlReturn = int; // nvmlReturn_t; NVML_SUCCESS is 0
using NvmlDevice = void*;
constexpr NvmlReturn kSuccess = 0;
constexpr int kClockSm = 1;  // NVML_CLOCK_SM
constexpr int kClockMem = 2; // NVML_CLOCK_MEM
constexpr int kTempGpu = 0;  // NVML_TEMPERATURE_GPU

struct NvmlMemory {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct NvmlUtilization {
    unsigned int gpu;
    unsigned int memory;
};

} // namespace

struct Nvml::Api {
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    const char* (*errorString)(NvmlReturn) = nullptr;
    NvmlReturn (*byIndex)(unsigned int, NvmlDevice*) = nullptr;
    NvmlReturn (*byPciBusId)(const char*, NvmlDevice*) = nullptr;
    NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
    NvmlReturn (*power)(NvmlDevice, unsigned int*) = nullptr; // milliwatts
    NvmlReturn (*clock)(NvmlDevice, int, unsigned int*) = nullptr;
    NvmlReturn (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;
    NvmlReturn (*eventReasons)(NvmlDevice, unsigned long long*) = nullptr;
    NvmlReturn (*driverVersion)(char*, unsigned int) = nullptr; // optional
    NvmlReturn (*count)(unsigned int*) = nullptr;               // optional, as the two below
    NvmlReturn (*name)(NvmlDevice, char*, unsigned int) = nullptr;
    NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
    NvmlReturn (*uuid)(NvmlDevice, char*, unsigned int) = nullptr;

    std::string describe(NvmlReturn r) const {
        const char* s = errorString ? errorString(r) : nullptr;
        return s ? s : "NVML error " + std::to_string(r);
    }
};

Nvml::Nvml(void* handle, std::unique_ptr<Api> api) : m_handle(handle), m_api(std::move(api)) {}

Nvml::~Nvml() {
    m_api->shutdown();
    dlclose(m_handle);
}

std::unique_ptr<Nvml> Nvml::load(std::string& error, const char* library) {
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        error = std::string("cannot load ") + library + ": " + (why ? why : "unknown reason");
        return nullptr;
    }
    auto api = std::make_unique<Api>();
    std::string missing;
    auto resolve = [&](auto& fn, const char* name, const char* fallback = nullptr) {
        void* sym = dlsym(handle, name);
        if (!sym && fallback) {
            sym = dlsym(handle, fallback);
        }
        if (!sym) {
            missing += (missing.empty() ? "" : ", ") + std::string(name);
        }
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(sym);
    };
    resolve(api->init, "nvmlInit_v2");
    resolve(api->shutdown, "nvmlShutdown");
    resolve(api->errorString, "nvmlErrorString");
    resolve(api->byIndex, "nvmlDeviceGetHandleByIndex_v2");
    resolve(api->byPciBusId, "nvmlDeviceGetHandleByPciBusId_v2");
    resolve(api->utilization, "nvmlDeviceGetUtilizationRates");
    resolve(api->power, "nvmlDeviceGetPowerUsage");
    resolve(api->clock, "nvmlDeviceGetClockInfo");
    resolve(api->temperature, "nvmlDeviceGetTemperature");
    // Renamed in newer drivers; the older name is kept as an alias for a while.
    resolve(api->eventReasons, "nvmlDeviceGetCurrentClocksEventReasons",
            "nvmlDeviceGetCurrentClocksThrottleReasons");
    // Optional: a header's fact, not a reading.
    api->driverVersion =
        reinterpret_cast<decltype(api->driverVersion)>(dlsym(handle, "nvmlSystemGetDriverVersion"));
    api->count = reinterpret_cast<decltype(api->count)>(dlsym(handle, "nvmlDeviceGetCount_v2"));
    api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, "nvmlDeviceGetName"));
    api->memory = reinterpret_cast<decltype(api->memory)>(dlsym(handle, "nvmlDeviceGetMemoryInfo"));
    api->uuid = reinterpret_cast<decltype(api->uuid)>(dlsym(handle, "nvmlDeviceGetUUID"));
    if (!missing.empty()) {
        error = std::string(library) + " lacks " + missing + " (not NVML, or too old)";
        dlclose(handle);
        return nullptr;
    }
    if (const NvmlReturn r = api->init(); r != kSuccess) {
        error = "nvmlInit failed: " + api->describe(r);
        dlclose(handle);
        return nullptr;
    }
    return std::unique_ptr<Nvml>(new Nvml(handle, std::move(api)));
}

bool Nvml::selectDevice(const std::string& pciBusId, int index, std::string& error) {
    NvmlDevice device = nullptr;
    const NvmlReturn r = pciBusId.empty()
                             ? m_api->byIndex(static_cast<unsigned int>(index), &device)
                             : m_api->byPciBusId(pciBusId.c_str(), &device);
    if (r != kSuccess) {
        error = "NVML does not know device " +
                (pciBusId.empty() ? std::to_string(index) : pciBusId) + ": " + m_api->describe(r);
        return false;
    }
    m_device = device;
    return true;
}

std::string Nvml::driverVersion() const {
    char text[96] = {}; // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
    if (m_api->driverVersion && m_api->driverVersion(text, sizeof(text)) == kSuccess) {
        return text;
    }
    return {};
}

std::vector<NvmlGpu> Nvml::devices() const {
    std::vector<NvmlGpu> out;
    unsigned int count = 0;
    if (!m_api->count || !m_api->name || !m_api->memory || m_api->count(&count) != kSuccess) {
        return out;
    }
    for (unsigned int i = 0; i < count; ++i) {
        NvmlDevice device = nullptr;
        if (m_api->byIndex(i, &device) != kSuccess) {
            break;
        }
        char name[96] = {}; // NVML_DEVICE_NAME_V2_BUFFER_SIZE is 96
        NvmlMemory memory{};
        NvmlGpu gpu;
        gpu.name = m_api->name(device, name, sizeof(name)) == kSuccess ? name : "GPU";
        char uuid[96] = {}; // NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96
        if (m_api->uuid && m_api->uuid(device, uuid, sizeof(uuid)) == kSuccess) {
            gpu.uuid = uuid;
        }
        gpu.memoryBytes =
            m_api->memory(device, &memory) == kSuccess ? static_cast<int64_t>(memory.total) : 0;
        out.push_back(std::move(gpu));
    }
    return out;
}

void Nvml::read(TelemetrySample& out) const {
    if (!m_device) {
        return;
    }
    NvmlUtilization util{};
    if (m_api->utilization(m_device, &util) == kSuccess) {
        out.gpuUtilPercent = util.gpu;
        out.memUtilPercent = util.memory;
    }
    unsigned int value = 0;
    if (m_api->power(m_device, &value) == kSuccess) {
        out.powerW = value / 1000.0;
    }
    if (m_api->clock(m_device, kClockSm, &value) == kSuccess) {
        out.smClockMHz = value;
    }
    if (m_api->clock(m_device, kClockMem, &value) == kSuccess) {
        out.memClockMHz = value;
    }
    if (m_api->temperature(m_device, kTempGpu, &value) == kSuccess) {
        out.temperatureC = value;
    }
    unsigned long long reasons = 0;
    if (m_api->eventReasons(m_device, &reasons) == kSuccess) {
        out.throttleReasons = reasons;
    }
}

} // namespace lmprof::engine::platform
