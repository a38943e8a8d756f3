// The CUDA-facing parts of the engine behind a torch-free interface: device discovery,
// caching-allocator statistics, event timing. cuda_backend.cpp implements it against
// LibTorch's CUDA API when LibTorch has CUDA; cuda_backend_absent.cpp answers "no CUDA"
// for CPU-only LibTorch builds.
#pragma once

#include "lmprof/engine/records.h"
#include "lmprof/engine/result_set.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace lmprof::engine::cuda {

// True when this build of the engine contains the CUDA code path.
bool built();
// CUDA version LibTorch was built with ("13.2"), empty without CUDA.
std::string runtimeVersion();
// Number of usable GPUs; 0 without a driver or device.
int deviceCount();
DeviceInfo deviceInfo(int index);

struct AllocatorStats {
    int64_t allocated = 0;
    int64_t allocatedPeak = 0;
    int64_t reserved = 0;
    int64_t reservedPeak = 0;
};
AllocatorStats allocatorStats(int index);
void resetPeakStats(int index);
// Returns cached blocks to the driver (after an OOM, between runs).
void emptyCache();
void synchronize(int index);
void setDevice(int index);

// Whole-device memory as the driver sees it (cudaMemGetInfo): every process and context.
struct DeviceMemory {
    int64_t used = 0;
    int64_t total = 0;
};
// Safe to call from any thread; sets the device on the calling thread.
DeviceMemory deviceMemory(int index);
// PCI bus id ("0000:3B:00.0"), for matching the device in NVML; empty if unknown.
std::string pciBusId(int index);

// Allocator history for memory snapshots. startMemoryHistory() records up to maxEntries
// events with C++ stack context; memorySnapshotPickled() returns the snapshot in the
// pickle format pytorch.org/memory_viz reads; stopMemoryHistory() turns recording off.
void startMemoryHistory(int64_t maxEntries);
std::string memorySnapshotPickled();
void stopMemoryHistory();

// Receives every allocation (bytes > 0) and completed free (bytes < 0) of the CUDA caching
// allocator while set; nullptr stops it. Called with the allocator's lock held: it must be
// quick and must not allocate device memory.
using AllocationListener = std::function<void(uint64_t address, int64_t bytes)>;
void setAllocationListener(AllocationListener listener);

// A pair of timing events recorded on the current stream of the current device. Recorded
// while a CUDA graph is being captured, they become event nodes of the graph (external
// events), so each replay records them again and times the phase inside the replay.
class EventTimer {
public:
    EventTimer();
    ~EventTimer();
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;
    void start();
    void stop();
    // Milliseconds between start and stop; blocks until stop has completed.
    double elapsedMs() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// True while a StepGraph is capturing: other threads must not call the CUDA runtime then
// (a capture in the global mode is invalidated by another thread's unsafe call), so the
// memory sampler skips the driver's figures for that moment.
bool capturing();

// A CUDA graph of one whole step (docs/MEASUREMENT.md, "CUDA graphs"): captured once on a
// side stream into a private pool of the caching allocator, then replayed on the current
// stream. The tensors the captured work allocated live in that pool for as long as the
// graph does; the caller keeps the ones it reads (the loss) alive.
class StepGraph {
public:
    explicit StepGraph(int device);
    ~StepGraph();
    StepGraph(const StepGraph&) = delete;
    StepGraph& operator=(const StepGraph&) = delete;
    // Captures what `body` launches (it must not read device values on the host). Throws
    // with CUDA's reason if the capture fails; the graph is then unusable.
    void capture(const std::function<void()>& body);
    void replay();
    // Runs `body` on the graph's stream, as the capture will (the last warmup step runs so:
    // cuBLAS's and cuDNN's per-stream setup then happens before the capture, not in it).
    void onItsStream(const std::function<void()>& body);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace lmprof::engine::cuda
