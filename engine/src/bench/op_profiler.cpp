// Kineto around the profiled steps, and its events turned into profile::RawEvent.

#include "bench/op_profiler.h"

#include <ATen/record_function.h>
#include <algorithm>
#include <c10/util/Exception.h>
#include <cstdlib>
#include <functional>
#include <kineto/ActivityType.h>
#include <kineto/libkineto.h>
#include <limits>
#include <mutex>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/profiler/collection.h>

namespace lmprof::engine::bench {

namespace {

namespace tp = torch::profiler::impl;
namespace kp = torch::autograd::profiler;
using profile::RawEvent;
using KinetoType = libkineto::ActivityType;

tp::ProfilerConfig profilerConfig() {
    // Input shapes and FLOPs for the rows; memory for replayAllocations().
    return tp::ProfilerConfig(tp::ProfilerState::KINETO, /*report_input_shapes=*/true,
                              /*profile_memory=*/true, /*with_stack=*/false,
                              /*with_flops=*/true, /*with_modules=*/false);
}

std::set<tp::ActivityType> activitiesFor(const DeviceTarget& target) {
    std::set<tp::ActivityType> a{tp::ActivityType::CPU};
    if (target.cuda) {
        a.insert(tp::ActivityType::CUDA);
    }
    return a;
}

std::optional<RawEvent::Type> typeOf(const kp::KinetoEvent& k) {
    switch (static_cast<KinetoType>(k.activityType())) {
    case KinetoType::CPU_OP:
        return k.scope() == static_cast<uint8_t>(at::RecordScope::USER_SCOPE)
                   ? RawEvent::Type::Range
                   : RawEvent::Type::Op;
    case KinetoType::USER_ANNOTATION:
        return RawEvent::Type::Range;
    case KinetoType::CUDA_RUNTIME:
    case KinetoType::CUDA_DRIVER:
        return RawEvent::Type::Runtime;
    case KinetoType::CONCURRENT_KERNEL:
    case KinetoType::GPU_MEMCPY:
    case KinetoType::GPU_MEMSET:
        return RawEvent::Type::Kernel;
    default:
        return std::nullopt; // device-side copies of annotations, memory and instant events
    }
}

RawEvent toRaw(const kp::KinetoEvent& k, RawEvent::Type type) {
    RawEvent e;
    e.type = type;
    e.name = k.name();
    e.thread = type == RawEvent::Type::Kernel ? static_cast<uint64_t>(k.deviceResourceId())
                                              : k.startThreadId();
    e.startNs = static_cast<int64_t>(k.startNs());
    e.endNs = std::max(e.startNs, static_cast<int64_t>(k.endNs()));
    e.sequenceNr = k.sequenceNr();
    e.forwardThread = k.fwdThreadId();
    e.backwardNode = k.scope() == static_cast<uint8_t>(at::RecordScope::BACKWARD_FUNCTION);
    e.correlation = k.correlationId();
    e.flops = static_cast<double>(k.flops());
    if (type == RawEvent::Type::Op && k.hasShapes()) {
        const auto shapes = k.shapes();
        e.shapes.assign(shapes.begin(), shapes.end());
    }
    return e;
}

// Kineto runs its client's init (torch's) only on the thread that registered the client,
// which is the thread that loaded libtorch (the one that opened the engine module); on any
// other it prints "ERROR: External init callback must run in same thread as
// registerClient" and skips it. The engine profiles on its own thread, so before Kineto
// first starts, the same client is registered again from here, which makes this the
// registering thread. Once Kineto has its profiler the client's init has run (or been
// skipped) for good, and nothing is changed.
void registerKinetoClientHere() {
    static std::once_flag once;
    std::call_once(once, [] {
        libkineto::LibkinetoApi& kineto = libkineto::api();
        if (!kineto.isProfilerRegistered() && kineto.client() != nullptr) {
            kineto.registerClient(kineto.client());
        }
    });
}

} // namespace

void quietKinetoWithoutGpu(bool anyGpu) {
    if (!anyGpu) {
        ::setenv("KINETO_LOG_LEVEL", "6", /*overwrite=*/0);
    }
}

OpProfiler::OpProfiler(const OpProfileRequest& request, DeviceTarget target,
                       const RunConfig& config)
    : m_request(request), m_target(target), m_config(config) {}

OpProfiler::~OpProfiler() {
    if (m_active) {
        try {
            (void)kp::disableProfiler();
        } catch (...) { // NOLINT(bugprone-empty-catch): nothing left to report it to
        }
    }
}

bool OpProfiler::covers(int step) const {
    return step >= m_request.firstStep && step < m_request.firstStep + m_request.stepCount;
}

void OpProfiler::start() {
    const auto config = profilerConfig();
    const auto activities = activitiesFor(m_target);
    registerKinetoClientHere();
    kp::prepareProfiler(config, activities);
    kp::enableProfiler(config, activities);
    m_active = true;
}

void OpProfiler::stop(int completedSteps) {
    if (!m_active) {
        return;
    }
    m_active = false;
    std::unique_ptr<kp::ProfilerResult> result = kp::disableProfiler();

    profile::AnalysisInput input;
    input.firstStep = m_request.firstStep;
    input.completedSteps = completedSteps;
    input.stepThreadRecordId = at::RecordFunction::currentThreadId(); // stop() runs there too
    bool anyKernel = false;
    for (const auto& k : result->events()) {
        if (const auto type = typeOf(k)) {
            input.events.push_back(toRaw(k, *type));
            anyKernel = anyKernel || *type == RawEvent::Type::Kernel;
        }
    }
    // Allocations with their addresses, for the replay (the flat list has sizes only).
    std::function<void(const std::shared_ptr<tp::Result>&)> visit =
        [&](const std::shared_ptr<tp::Result>& r) {
            if (const auto* a =
                    std::get_if<tp::ExtraFields<tp::EventType::Allocation>>(&r->extra_fields_)) {
                m_allocations.push_back(
                    {r->start_time_ns_, a->ptr_, a->alloc_size_, a->device_type_ == c10::kCPU});
            }
            for (const auto& child : r->children_) {
                visit(child);
            }
        };
    for (const auto& root : result->event_tree()) {
        visit(root);
    }
    std::stable_sort(m_allocations.begin(), m_allocations.end(),
                     [](const Allocation& a, const Allocation& b) { return a.tNs < b.tNs; });
    m_frame = profile::findFrame(input.events, completedSteps);

    OpProfile p = profile::analyze(std::move(input), m_frame, m_config);
    if (m_target.cuda && !anyKernel) {
        p.notes.emplace_back("no GPU kernels were recorded: CUPTI, which Kineto uses, did "
                             "not start (see the profiler's warnings on stderr)");
    }
    if (const std::string& path = m_request.tracePath; !path.empty()) {
        try {
            result->save(path);
            p.trace = path;
        } catch (const std::exception& e) {
            p.traceError = "could not write the trace " + path + ": " + e.what();
        }
    }
    m_profile = std::move(p);
}

void OpProfiler::replayAllocations(CpuMemoryReporter& reporter, std::span<StepRecord> steps) const {
    size_t next = 0;
    auto applyUntil = [&](int64_t t) {
        for (; next < m_allocations.size() && m_allocations[next].tNs < t; ++next) {
            const Allocation& a = m_allocations[next];
            if (a.cpu) {
                reporter.reportMemoryUsage(a.ptr, a.bytes, 0, 0, c10::Device(c10::kCPU));
            }
        }
    };
    std::vector<bool> reset(steps.size(), false);
    for (const auto& span : m_frame.phases) {
        applyUntil(span.startNs);
        reporter.resetPeak();
        applyUntil(span.endNs + 1);
        const auto s = static_cast<size_t>(span.step);
        if (m_target.cuda || s >= steps.size()) {
            continue; // CUDA peaks come from the caching allocator, which Kineto leaves alone
        }
        StepRecord& rec = steps[s];
        if (!reset[s]) { // the stale figures of the detached reporter go
            rec.peakAllocatedBytes = rec.peakReservedBytes = 0;
            reset[s] = true;
        }
        rec.phasePeakBytes.of(span.phase) = reporter.peak();
        rec.peakAllocatedBytes = std::max(rec.peakAllocatedBytes, reporter.peak());
        rec.peakReservedBytes = std::max(rec.peakReservedBytes, reporter.peak());
    }
    applyUntil(std::numeric_limits<int64_t>::max());
}

std::shared_ptr<const OpProfile> OpProfiler::take() {
    if (!m_profile) {
        return nullptr;
    }
    auto profile = std::make_shared<const OpProfile>(std::move(*m_profile));
    m_profile.reset();
    return profile;
}

} // namespace lmprof::engine::bench
