// Built instead of cuda_backend.cpp when LibTorch has no CUDA: the engine then runs on the
// CPU only, and every CUDA query answers "none".

#include "platform/cuda_backend.h"

#include <stdexcept>

namespace lmprof::engine::cuda {

namespace {
[[noreturn]] void unavailable() {
    throw std::logic_error("lmprof was built against a LibTorch without CUDA");
}
} // namespace

bool built() {
    return false;
}
std::string runtimeVersion() {
    return {};
}
int deviceCount() {
    return 0;
}
DeviceInfo deviceInfo(int) {
    unavailable();
}
AllocatorStats allocatorStats(int) {
    unavailable();
}
void resetPeakStats(int) {
    unavailable();
}
void emptyCache() {}
void synchronize(int) {
    unavailable();
}
void setDevice(int) {
    unavailable();
}

DeviceMemory deviceMemory(int) {
    unavailable();
}
std::string pciBusId(int) {
    return {};
}
void startMemoryHistory(int64_t) {
    unavailable();
}
std::string memorySnapshotPickled() {
    unavailable();
}
void stopMemoryHistory() {}
void setAllocationListener(AllocationListener) {}

struct EventTimer::Impl {};
EventTimer::EventTimer() {
    unavailable();
}
EventTimer::~EventTimer() = default;
void EventTimer::start() {
    unavailable();
}
void EventTimer::stop() {
    unavailable();
}
double EventTimer::elapsedMs() const {
    unavailable();
}

bool capturing() {
    return false;
}

struct StepGraph::Impl {};
StepGraph::StepGraph(int) {
    unavailable();
}
StepGraph::~StepGraph() = default;
void StepGraph::capture(const std::function<void()>&) {
    unavailable();
}
void StepGraph::replay() {
    unavailable();
}
void StepGraph::onItsStream(const std::function<void()>&) {
    unavailable();
}

} // namespace lmprof::engine::cuda
