// Starting, stopping and saving memory snapshots (see snapshot.h).

#include "bench/snapshot.h"

#include "lmprof/engine/result_io.h"
#include "platform/cuda_backend.h"

namespace lmprof::engine::bench {

namespace {
constexpr size_t kLargestKept = 25;
}

SnapshotSession::SnapshotSession(const SnapshotRequest& request, std::string runId,
                                 DeviceTarget target, CpuMemoryReporter& cpu,
                                 const RunPosition& position, Clock::time_point runStart)
    : m_request(request), m_runId(std::move(runId)), m_target(target), m_cpu(cpu),
      m_recorder(request.maxEntries, runStart, position) {}

SnapshotSession::~SnapshotSession() {
    try {
        detach();
    } catch (const std::exception&) {
        // Nothing to report to from a destructor; finish() reports failures.
    }
}

bool SnapshotSession::covers(int step) const {
    return step >= m_request.firstStep && step < m_request.firstStep + m_request.stepCount;
}

void SnapshotSession::beforeStep(int step) {
    if (step != m_request.firstStep || m_recording || m_info) {
        return;
    }
    m_recording = true;
    if (m_target.cuda) {
        cuda::setAllocationListener(
            [this](uint64_t address, int64_t bytes) { m_recorder.record(address, bytes); });
        cuda::startMemoryHistory(m_request.maxEntries);
    } else {
        m_cpu.setRecorder(&m_recorder);
    }
}

void SnapshotSession::afterStep(int step) {
    if (m_recording && step == m_request.firstStep + m_request.stepCount - 1) {
        finish();
    }
}

void SnapshotSession::detach() {
    if (!m_recording) {
        return;
    }
    m_recording = false; // first: a throwing stop below must not be retried
    if (m_target.cuda) {
        cuda::setAllocationListener(nullptr);
        cuda::stopMemoryHistory();
    } else {
        m_cpu.setRecorder(nullptr);
    }
}

std::optional<MemorySnapshotInfo> SnapshotSession::finish() {
    if (!m_recording) {
        return m_info;
    }
    try {
        return finishRecording();
    } catch (const std::exception& e) {
        // Out of memory while building the file, or the allocator refusing to stop
        // recording: the run keeps its results and says why there is no snapshot.
        try {
            detach();
        } catch (const std::exception&) {
        }
        MemorySnapshotInfo info = describeRequest();
        info.error = std::string("the memory snapshot could not be saved: ") + e.what();
        m_info = std::move(info);
        return m_info;
    }
}

MemorySnapshotInfo SnapshotSession::describeRequest() const {
    MemorySnapshotInfo info;
    info.path = m_request.path;
    info.format = m_target.cuda ? "cuda-pickle" : kAllocTraceSchema;
    info.firstStep = m_request.firstStep;
    info.stepCount = m_request.stepCount;
    return info;
}

std::optional<MemorySnapshotInfo> SnapshotSession::finishRecording() {
    MemorySnapshotInfo info = describeRequest();
    std::string contents;
    try {
        // The pickle is taken while history is still on, so it holds every event.
        if (m_target.cuda) {
            contents = cuda::memorySnapshotPickled();
        }
    } catch (const std::exception& e) {
        info.error = std::string("taking the CUDA memory snapshot failed: ") + e.what();
    }
    detach();
    AllocationTrace trace = m_recorder.take();
    trace.runId = m_runId;
    trace.device = m_target.cuda ? "cuda:" + std::to_string(m_target.index) : "cpu";
    trace.firstStep = m_request.firstStep;
    trace.stepCount = m_request.stepCount;
    info.entries = static_cast<int64_t>(trace.events.size());
    info.truncated = trace.truncated;
    info.largest = largestAllocations(trace.events, kLargestKept);
    if (!m_target.cuda) {
        contents = allocationTraceToJson(trace);
    }
    if (!info.error) {
        try {
            writeFileAtomic(info.path, contents);
        } catch (const std::exception& e) {
            info.error = e.what();
        }
    }
    m_info = std::move(info);
    return m_info;
}

} // namespace lmprof::engine::bench
