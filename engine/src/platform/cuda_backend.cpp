// CUDA path of the engine (compiled when LibTorch has CUDA): caching-allocator statistics
// from c10::cuda::CUDACachingAllocator and CUDA events from c10::cuda::CUDAEvent.

#include "platform/cuda_backend.h"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <atomic>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#include <mutex>
#include <torch/csrc/cuda/memory_snapshot.h>

namespace lmprof::engine::cuda {

bool built() {
    return true;
}

std::string runtimeVersion() {
    int v = 0; // e.g. 13020; the loaded runtime's, not the headers'
    if (cudaRuntimeGetVersion(&v) != cudaSuccess) {
        v = CUDART_VERSION;
    }
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int deviceCount() {
    return static_cast<int>(c10::cuda::device_count());
}

DeviceInfo deviceInfo(int index) {
    const cudaDeviceProp* prop =
        at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(index));
    DeviceInfo info;
    info.type = "cuda";
    info.name = prop->name;
    info.memoryBytes = static_cast<int64_t>(prop->totalGlobalMem);
    return info;
}

namespace {
// The caching allocator sizes its per-device tables at CUDA's lazy initialisation; asking
// for statistics before anything was allocated would otherwise fail ("Invalid device").
void initCuda() {
    at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
}
} // namespace

AllocatorStats allocatorStats(int index) {
    initCuda();
    const auto stats =
        c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
    constexpr auto kAll = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    AllocatorStats out;
    out.allocated = stats.allocated_bytes[kAll].current;
    out.allocatedPeak = stats.allocated_bytes[kAll].peak;
    out.reserved = stats.reserved_bytes[kAll].current;
    out.reservedPeak = stats.reserved_bytes[kAll].peak;
    return out;
}

void resetPeakStats(int index) {
    initCuda();
    c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(index));
}

void emptyCache() {
    if (deviceCount() > 0) {
        c10::cuda::CUDACachingAllocator::emptyCache();
    }
}

void synchronize(int index) {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
    c10::cuda::device_synchronize();
}

void setDevice(int index) {
    c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
}

DeviceMemory deviceMemory(int index) {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
    size_t freeBytes = 0;
    size_t totalBytes = 0;
    if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
        (void)cudaGetLastError(); // clear the sticky-free error state for the next call
        return {};
    }
    return {static_cast<int64_t>(totalBytes - freeBytes), static_cast<int64_t>(totalBytes)};
}

std::string pciBusId(int index) {
    char buf[64] = {};
    if (cudaDeviceGetPCIBusId(buf, sizeof(buf), index) != cudaSuccess) {
        (void)cudaGetLastError();
        return {};
    }
    return buf;
}

void startMemoryHistory(int64_t maxEntries) {
    // "all" events with C++ stacks: memory_viz shows where each block was allocated.
    // (Typed arguments: a string literal would convert to bool and pick the other overload.)
    const std::optional<std::string> enabled = "all";
    const std::optional<std::string> context = "all";
    const std::string stacks = "all";
    torch::cuda::_record_memory_history(enabled, context, stacks, static_cast<size_t>(maxEntries),
                                        /*clearHistory=*/true);
}

std::string memorySnapshotPickled() {
    return torch::cuda::_memory_snapshot_pickled();
}

void stopMemoryHistory() {
    torch::cuda::_record_memory_history(std::optional<std::string>());
}

namespace {
// Trackers cannot be detached from the allocator, so one is attached on first use and
// forwards to whichever listener is current.
std::mutex g_listenerMutex;
AllocationListener g_listener;
std::once_flag g_trackerAttached;
} // namespace

void setAllocationListener(AllocationListener listener) {
    std::call_once(g_trackerAttached, [] {
        c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker(
            [](const c10::CachingDeviceAllocator::TraceEntry& e) {
                using Action = c10::CachingDeviceAllocator::TraceEntry::Action;
                if (e.action_ != Action::ALLOC && e.action_ != Action::FREE_COMPLETED) {
                    return;
                }
                std::lock_guard lock(g_listenerMutex);
                if (g_listener) {
                    const auto bytes = static_cast<int64_t>(e.size_);
                    g_listener(e.addr_, e.action_ == Action::ALLOC ? bytes : -bytes);
                }
            });
    });
    std::lock_guard lock(g_listenerMutex);
    g_listener = std::move(listener);
}

// cudaEventExternal is LibTorch's flag (c10/cuda/CUDAEvent.h): record with
// cudaEventRecordExternal while a capture is under way, as a plain record otherwise.
struct EventTimer::Impl {
    c10::cuda::CUDAEvent begin{cudaEventDefault | cudaEventExternal};
    c10::cuda::CUDAEvent end{cudaEventDefault | cudaEventExternal};
};

EventTimer::EventTimer() : m_impl(std::make_unique<Impl>()) {}
EventTimer::~EventTimer() = default;
void EventTimer::start() {
    m_impl->begin.record();
}
void EventTimer::stop() {
    m_impl->end.record();
}
double EventTimer::elapsedMs() const {
    m_impl->end.synchronize();
    return static_cast<double>(m_impl->begin.elapsed_time(m_impl->end));
}

namespace {
std::atomic<int> g_capturing{0};
} // namespace

bool capturing() {
    return g_capturing.load(std::memory_order_relaxed) > 0;
}

struct StepGraph::Impl {
    at::cuda::CUDAGraph graph;
    c10::cuda::CUDAStream stream;
    explicit Impl(int device)
        : stream(c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(device))) {}

    // The current stream's work so far before anything on `stream`, and back.
    void follow(const c10::cuda::CUDAStream& first, const c10::cuda::CUDAStream& then) {
        c10::cuda::CUDAEvent done;
        done.record(first);
        done.block(then);
    }
};

StepGraph::StepGraph(int device) : m_impl(std::make_unique<Impl>(device)) {}
StepGraph::~StepGraph() = default;

void StepGraph::onItsStream(const std::function<void()>& body) {
    const auto current = c10::cuda::getCurrentCUDAStream(m_impl->stream.device_index());
    m_impl->follow(current, m_impl->stream);
    {
        c10::cuda::CUDAStreamGuard onSide(m_impl->stream);
        body();
    }
    m_impl->follow(m_impl->stream, current);
}

void StepGraph::capture(const std::function<void()>& body) {
    const auto current = c10::cuda::getCurrentCUDAStream(m_impl->stream.device_index());
    m_impl->follow(current, m_impl->stream); // after everything the eager steps queued
    {
        c10::cuda::CUDAStreamGuard onSide(m_impl->stream);
        g_capturing.fetch_add(1);
        struct Done {
            ~Done() { g_capturing.fetch_sub(1); }
        } done;
        m_impl->graph.capture_begin(); // a private pool of its own
        try {
            body();
        } catch (...) {
            try {
                m_impl->graph.capture_end(); // ends the capture; its error is the body's
            } catch (...) {
            }
            throw;
        }
        m_impl->graph.capture_end();
    }
    // Uploaded now, so that the first replay does not pay for it inside a measured step.
    if (cudaGraphUpload(m_impl->graph.raw_cuda_graph_exec(), m_impl->stream) != cudaSuccess) {
        (void)cudaGetLastError(); // the first replay uploads it then
    }
    // Replays run on the current stream, which must not overtake the capture's setup.
    m_impl->follow(m_impl->stream, current);
}

void StepGraph::replay() {
    m_impl->graph.replay();
}

} // namespace lmprof::engine::cuda
