// The engine module's loader and the LocalSession that loads it on the first run
// (local_engine.h). The preview of the devices before then asks NVML and /proc, never
// LibTorch.

#include "lmprof/engine/local_engine.h"

#include "lmprof_version.h"
#include "platform/nvml.h"
#include "platform/process_info.h"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <thread>
#include <utility>

namespace lmprof::engine {

namespace {

constexpr const char* kModuleName = "lmprof-engine.so";

struct Loaded {
    std::once_flag once;
    std::atomic<const EngineModule*> module{nullptr};
    std::string why; // written once, inside `once`
};

Loaded& loaded() {
    static Loaded state;
    return state;
}

constexpr const char* kThisVersion = LMPROF_VERSION " (" LMPROF_GIT_REVISION ")";

// Why a module's table is not this program's, or "" when it is.
std::string mismatch(const EngineModule& module) {
    if (module.abi == EngineModule::kAbi && module.fingerprint == engineInterfaceFingerprint() &&
        module.version && std::string_view(module.version) == kThisVersion) {
        return {};
    }
    return std::string("it is from another build (") +
           (module.version ? module.version : "no version") + ", interface " +
           std::to_string(module.abi) + "/" + std::to_string(module.fingerprint % 100000) +
           "; this program: " + kThisVersion + ", interface " + std::to_string(EngineModule::kAbi) +
           "/" + std::to_string(engineInterfaceFingerprint() % 100000) +
           "): rebuild or reinstall the two together";
}

const EngineModule* openModule(std::string& why) {
    const std::string path = engineModulePath();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        why = noEngineMessage();
        return nullptr;
    }
    // RTLD_LOCAL: the module's copy of lmprof_core and LibTorch's symbols stay its own.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* error = dlerror();
        why = "the engine " + path + " cannot be loaded: " + (error ? error : "unknown reason");
        return nullptr;
    }
    using Entry = const EngineModule* (*)();
    const auto entry = reinterpret_cast<Entry>(dlsym(handle, "lmprof_engine_module"));
    const EngineModule* module = entry ? entry() : nullptr;
    const std::string other = module ? mismatch(*module) : std::string();
    why = !module ? "the engine " + path + " is not lmprof's (no lmprof_engine_module entry)"
          : other.empty() ? std::string()
                          : "the engine " + path + ": " + other;
    if (!why.empty()) {
        dlclose(handle); // what was opened by mistake goes; a good module is never closed
        return nullptr;
    }
    // Kept open: LibTorch does not unload cleanly, and the process ends soon enough.
    return module;
}

// The GPUs CUDA_VISIBLE_DEVICES leaves, in its order: each entry an NVML index or a UUID
// (or its start); as CUDA does, an entry that names no GPU hides it and every later one.
std::vector<platform::NvmlGpu> visibleGpus(const std::vector<platform::NvmlGpu>& all,
                                           const std::string& visible) {
    std::vector<platform::NvmlGpu> out;
    size_t start = 0;
    while (start <= visible.size()) {
        const size_t comma = std::min(visible.find(',', start), visible.size());
        const std::string entry = visible.substr(start, comma - start);
        start = comma + 1;
        const bool index = !entry.empty() && entry.size() < 7 &&
                           entry.find_first_not_of("0123456789") == std::string::npos;
        const long wanted = index ? std::stol(entry) : -1;
        const auto named = std::find_if(all.begin(), all.end(), [&](const platform::NvmlGpu& g) {
            return index ? &g - all.data() == wanted
                         : !entry.empty() && g.uuid.rfind(entry, 0) == 0;
        });
        if (named == all.end()) {
            break;
        }
        out.push_back(*named);
    }
    return out;
}

// GPUs the driver reports, numbered as CUDA numbers them for this process. NVML lists them
// in PCI order, as CUDA_DEVICE_ORDER=PCI_BUS_ID does; CUDA's default puts the fastest first,
// which differs only on a machine of mixed GPUs, until the engine's own answer replaces this.
const std::vector<platform::NvmlGpu>& previewGpus() {
    static const std::vector<platform::NvmlGpu> gpus = [] {
        std::string why;
        const auto nvml = platform::Nvml::load(why);
        const std::vector<platform::NvmlGpu> all =
            nvml ? nvml->devices() : std::vector<platform::NvmlGpu>{};
        const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
        return visible ? visibleGpus(all, visible) : all;
    }();
    return gpus;
}

// The previewed GPU a device string names ("auto" and "cuda" name the first), or nullptr for
// the CPU and for a GPU this machine does not have.
const platform::NvmlGpu* previewGpu(std::string_view device) {
    const auto& gpus = previewGpus();
    const std::optional<int> index =
        device == "auto" || device == "cuda" ? std::optional<int>(0) : parseCudaIndex(device);
    return index && *index < static_cast<int>(gpus.size()) ? &gpus[*index] : nullptr;
}

} // namespace

std::string engineModulePath() {
    if (const char* path = std::getenv("LMPROF_ENGINE_MODULE"); path && *path) {
        return path;
    }
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
    const auto beside = self / kModuleName;
    const auto installed = self.parent_path() / "lib" / "lmprof" / kModuleName;
    return std::filesystem::exists(beside, ec) || !std::filesystem::exists(installed, ec)
               ? beside.string()
               : installed.string();
}

bool engineAvailable() {
    std::error_code ec;
    return std::filesystem::exists(engineModulePath(), ec);
}

const EngineModule* loadEngineModule(std::string* why) {
    Loaded& state = loaded();
    std::call_once(state.once, [&state] { state.module.store(openModule(state.why)); });
    const EngineModule* module = state.module.load();
    if (!module && why) {
        *why = state.why;
    }
    return module;
}

bool engineLoaded() {
    return loaded().module.load() != nullptr;
}

std::string noEngineMessage() {
    return "this lmprof has no engine (a viewer build, or " + engineModulePath() +
           " is missing): connect to a server (File > Connect, or --connect host:port), or "
           "use the full build (docs/INSTALL.md)";
}

std::optional<ConfigError> checkRunnableHere(const RunConfig& config) {
    if (auto errors = validate(config); !errors.empty()) {
        return errors.front();
    }
    if (engineLoaded()) {
        return loadEngineModule()->checkRunnable(config);
    }
    return std::nullopt;
}

Environment environmentHere(std::string_view device) {
    if (engineLoaded()) {
        return loadEngineModule()->probeEnvironment(device);
    }
    Environment env;
    env.cpuModel = platform::cpuModel();
    env.cpuThreads = static_cast<int>(std::thread::hardware_concurrency());
    env.host = platform::hostName();
    if (const platform::NvmlGpu* gpu = previewGpu(device)) {
        env.device.type = "cuda";
        env.device.name = gpu->name;
        env.device.memoryBytes = gpu->memoryBytes;
    } else {
        env.device.type = "cpu";
        env.device.name = env.cpuModel;
        env.device.memoryBytes = platform::totalMemoryBytes();
    }
    return env;
}

// ---------------------------------------------------------------------------------------
// LocalSession

LocalSession::LocalSession(int firstRunIndex, std::optional<RankProgram> ranks)
    : m_ranks(std::move(ranks)), m_nextRun(firstRunIndex) {}

LocalSession::~LocalSession() {
    std::unique_ptr<SessionInterface> engine;
    {
        std::lock_guard lock(m_mutex);
        engine = std::move(m_engine);
        m_loaded.store(nullptr);
    }
    // The Session's destructor cancels and joins its worker, outside the lock.
}

SessionInterface* LocalSession::engine() const {
    return m_loaded.load();
}

std::string LocalSession::refusal() const {
    {
        std::lock_guard lock(m_mutex);
        if (!m_refusal.empty()) {
            return m_refusal; // a load failed: every run is refused, and says so
        }
    }
    return engineAvailable() ? std::string() : noEngineMessage();
}

bool LocalSession::start(std::string* why) {
    if (engineOrLoad()) {
        return true;
    }
    if (why) {
        std::lock_guard lock(m_mutex);
        *why = m_refusal;
    }
    return false;
}

SessionInterface* LocalSession::engineOrLoad() {
    if (SessionInterface* e = engine()) {
        return e;
    }
    std::lock_guard lock(m_mutex);
    if (m_engine) {
        return m_engine.get();
    }
    if (!m_refusal.empty()) {
        return nullptr;
    }
    std::string why;
    const EngineModule* module = loadEngineModule(&why);
    if (!module) {
        m_refusal = why;
        return nullptr;
    }
    m_engine.reset(module->makeSession(m_nextRun, m_ranks ? &*m_ranks : nullptr));
    m_engine->setWaker([this] { wake(); });
    m_loaded.store(m_engine.get());
    return m_engine.get();
}

int LocalSession::submit(const RunConfig& config) {
    if (SessionInterface* e = engineOrLoad()) {
        return e->submit(config);
    }
    int index = 0;
    {
        std::lock_guard lock(m_mutex);
        index = m_nextRun++;
        const std::string id = runLabel(config) + "-" + std::to_string(index + 1);
        m_refused.push_back(
            RunFinished{index, unstartedRun(id, config, RunStatus::Error, m_refusal)});
    }
    wake();
    return index;
}

int LocalSession::submitLab(const LabRequest& request) {
    if (SessionInterface* e = engineOrLoad()) {
        return e->submitLab(request);
    }
    int index = 0;
    {
        std::lock_guard lock(m_mutex);
        index = m_nextLab++;
        m_refused.push_back(LabFinished{index, unstartedLab(request, m_refusal)});
    }
    wake();
    return index;
}

void LocalSession::cancel() {
    if (SessionInterface* e = engine()) {
        e->cancel();
    }
}

void LocalSession::cancelLab(int labIndex) {
    if (SessionInterface* e = engine()) {
        e->cancelLab(labIndex);
    }
}

std::vector<SessionEvent> LocalSession::drain() {
    if (SessionInterface* e = engine()) {
        return e->drain();
    }
    std::lock_guard lock(m_mutex);
    return std::exchange(m_refused, {});
}

bool LocalSession::waitForEvents(std::chrono::milliseconds timeout) {
    if (SessionInterface* e = engine()) {
        return e->waitForEvents(timeout);
    }
    {
        std::lock_guard lock(m_mutex);
        if (!m_refused.empty()) {
            return true;
        }
    }
    // Nothing was submitted, or only refused work already drained: nothing will come.
    std::this_thread::sleep_for(timeout);
    return false;
}

bool LocalSession::busy() const {
    const SessionInterface* e = engine();
    return e && e->busy();
}

std::vector<std::string> LocalSession::devices() const {
    if (const SessionInterface* e = engine()) {
        return e->devices();
    }
    if (!refusal().empty()) {
        return {};
    }
    std::vector<std::string> out = {"auto", "cpu"};
    for (size_t i = 0; i < previewGpus().size(); ++i) {
        out.push_back("cuda:" + std::to_string(i));
    }
    return out;
}

bool LocalSession::isCuda(std::string_view device) const {
    if (const SessionInterface* e = engine()) {
        return e->isCuda(device);
    }
    return previewGpu(device) != nullptr;
}

int64_t LocalSession::deviceMemoryBytes(std::string_view device) const {
    if (const SessionInterface* e = engine()) {
        return e->deviceMemoryBytes(device);
    }
    const platform::NvmlGpu* gpu = previewGpu(device);
    return gpu ? gpu->memoryBytes : platform::totalMemoryBytes();
}

std::optional<ConfigError> LocalSession::checkRunnable(const RunConfig& config) const {
    if (const SessionInterface* e = engine()) {
        return e->checkRunnable(config);
    }
    // Before the first run the engine's own refusals (a precision this device cannot run)
    // are not known: the run answers them, as an invalid config is answered.
    if (auto errors = validate(config); !errors.empty()) {
        return errors.front();
    }
    if (const std::string why = refusal(); !why.empty()) {
        return ConfigError{"device", why};
    }
    if (config.device != "auto" && config.device != "cpu" && !isCuda(config.device)) {
        return ConfigError{"device", config.device + " is not a device of this machine"};
    }
    return std::nullopt;
}

Environment LocalSession::environment(std::string_view device) const {
    if (const SessionInterface* e = engine()) {
        return e->environment(device);
    }
    return environmentHere(device);
}

EngineInfo LocalSession::info() const {
    if (const SessionInterface* e = engine()) {
        return e->info();
    }
    EngineInfo info;
    if (const std::string why = refusal(); !why.empty()) {
        info.connected = false;
        info.problem = why;
        return info;
    }
    // Asked every frame by the engine indicator: the preview's name is read once.
    std::call_once(m_previewOnce, [this] { m_previewName = environmentHere("auto").device.name; });
    info.deviceName = m_previewName;
    return info;
}

} // namespace lmprof::engine
