// NVTX ranges of docs/NVTX.md in the "lmprof" domain, so nsys attributes kernels to steps,
// phases and attention parts. Header-only NVTX3: a push/pop is a branch on a null function
// pointer when no tool is attached. Without NVTX3 headers at build time they compile away.
#pragma once

namespace lmprof::engine::nvtx {

void pushRange(const char* name);
void popRange();
// Scoped ranges are nvtx::Region (region.h), which the op profiler sees as well.

} // namespace lmprof::engine::nvtx
