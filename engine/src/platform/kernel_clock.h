// The GPU's busy time, from CUPTI's kernel activity records (docs/MEASUREMENT.md, "Where
// the GPU waits"): how long kernels ran in a window of time, overlapping kernels counted
// once. CUPTI is loaded at run time (dlopen of the libcupti LibTorch already loaded, for its
// profiler), so lmprof starts where it is missing and says why instead.
//
// One clock at a time per process, and never while LibTorch's profiler runs (both use
// CUPTI's one set of activity callbacks; LibTorch registers its own again whenever it
// starts): the runner does not start one for an op-profiled run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace lmprof::engine::cupti {

class KernelClock {
public:
    // Starts recording kernel activity; nullptr and `whyNot` when CUPTI cannot be loaded or
    // refuses (another tool holds it, this build has no CUDA).
    static std::unique_ptr<KernelClock> start(std::string& whyNot);
    ~KernelClock(); // stops recording
    KernelClock(const KernelClock&) = delete;
    KernelClock& operator=(const KernelClock&) = delete;

    // CUPTI's clock, in ns: the one kernel records are stamped with.
    uint64_t now() const;
    // Milliseconds within [from, to] during which at least one kernel ran. Flushes CUPTI's
    // buffers first, so call it after the work has completed (after a synchronize); records
    // before `from` are dropped.
    double busyMs(uint64_t from, uint64_t to);

    struct Impl;

private:
    explicit KernelClock(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace lmprof::engine::cupti
