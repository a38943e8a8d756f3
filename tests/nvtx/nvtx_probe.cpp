// An NVTX injection library for tests: NVTX loads it through NVTX_INJECTION64_PATH, and it
// records every range push and pop of every domain as "push <domain>/<name>" / "pop".
// The test reaches the record through dlopen(RTLD_NOLOAD) + dlsym of lmprofNvtxProbeEvents.

#include <mutex>
#include <nvtx3/nvToolsExt.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

std::mutex g_mutex;
std::vector<std::string> g_events;
std::unordered_map<const void*, std::string> g_domainNames;
int g_nextDomain = 1;

nvtxDomainHandle_t NVTX_API domainCreateA(const char* name) {
    std::lock_guard lock(g_mutex);
    // Any unique non-null pointer serves as a handle.
    auto* handle = reinterpret_cast<nvtxDomainHandle_t>(static_cast<intptr_t>(g_nextDomain++));
    g_domainNames[handle] = name ? name : "";
    return handle;
}

int NVTX_API domainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
    std::lock_guard lock(g_mutex);
    std::string name = "?";
    if (attr && attr->messageType == NVTX_MESSAGE_TYPE_ASCII && attr->message.ascii) {
        name = attr->message.ascii;
    }
    g_events.push_back("push " + g_domainNames[domain] + "/" + name);
    return static_cast<int>(g_events.size());
}

int NVTX_API domainRangePop(nvtxDomainHandle_t domain) {
    std::lock_guard lock(g_mutex);
    g_events.push_back("pop " + g_domainNames[domain]);
    return 0;
}

} // namespace

extern "C" {

// Copies of the events so far (the caller owns nothing but the vector it passes).
__attribute__((visibility("default"))) void lmprofNvtxProbeEvents(std::vector<std::string>* out) {
    std::lock_guard lock(g_mutex);
    *out = g_events;
}

__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
    const auto* callbacks =
        static_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
    if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) {
        return 0;
    }
    NvtxFunctionTable table = nullptr;
    unsigned int size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) {
        return 0;
    }
    auto set = [&](unsigned int id, auto fn) {
        if (id < size && table[id]) {
            *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
        }
    };
    set(NVTX_CBID_CORE2_DomainCreateA, &domainCreateA);
    set(NVTX_CBID_CORE2_DomainRangePushEx, &domainRangePushEx);
    set(NVTX_CBID_CORE2_DomainRangePop, &domainRangePop);
    return 1;
}

} // extern "C"
