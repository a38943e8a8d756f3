// NVTX3 calls live in this one file so the rest of the engine does not include its headers.

#include "nvtx/nvtx_ranges.h"

#if LMPROF_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace lmprof::engine::nvtx {

#if LMPROF_HAVE_NVTX
namespace {
nvtxDomainHandle_t domain() {
    // Created on first use; NVTX reads NVTX_INJECTION64_PATH at its first call.
    static const nvtxDomainHandle_t handle = nvtxDomainCreateA("lmprof");
    return handle;
}
} // namespace

void pushRange(const char* name) {
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name;
    nvtxDomainRangePushEx(domain(), &attr);
}

void popRange() {
    nvtxDomainRangePop(domain());
}
#else
void pushRange(const char*) {}
void popRange() {}
#endif

} // namespace lmprof::engine::nvtx
