// KernelClock over CUPTI's activity API, loaded with dlopen (kernel_clock.h).

#include "platform/kernel_clock.h"

#if LMPROF_HAVE_CUPTI

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cupti_activity.h>
#include <dlfcn.h>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace lmprof::engine::cupti {

// A kernel record's start and end are read through CUpti_ActivityKernel10 whatever version
// the library writes (bufferCompleted): they sit at the same offsets in 10 and 11.
static_assert(offsetof(CUpti_ActivityKernel10, start) == 16 &&
              offsetof(CUpti_ActivityKernel10, end) == 24);

namespace {

// The CUPTI entry points KernelClock calls, resolved once.
struct Api {
    decltype(&cuptiActivityRegisterCallbacks) registerCallbacks = nullptr;
    decltype(&cuptiActivityEnable) enable = nullptr;
    decltype(&cuptiActivityDisable) disable = nullptr;
    decltype(&cuptiActivityFlushAll) flushAll = nullptr;
    decltype(&cuptiActivityGetNextRecord) nextRecord = nullptr;
    decltype(&cuptiGetTimestamp) timestamp = nullptr;
    decltype(&cuptiGetResultString) resultString = nullptr;
    std::string error; // why it could not be loaded
};

const Api& api() {
    static const Api loaded = [] {
        Api a;
        void* handle = nullptr;
        // LibTorch's profiler has normally loaded the first already; the others are for a
        // user's own LibTorch or toolkit.
        for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
            if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
                break;
            }
        }
        if (!handle) {
            const char* why = dlerror();
            a.error = std::string("cannot load CUPTI (libcupti.so): ") + (why ? why : "not found");
            return a;
        }
        std::string missing;
        auto resolve = [&](auto& fn, const char* symbol) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, symbol));
            if (!fn) {
                missing += (missing.empty() ? "" : ", ") + std::string(symbol);
            }
        };
        resolve(a.registerCallbacks, "cuptiActivityRegisterCallbacks");
        resolve(a.enable, "cuptiActivityEnable");
        resolve(a.disable, "cuptiActivityDisable");
        resolve(a.flushAll, "cuptiActivityFlushAll");
        resolve(a.nextRecord, "cuptiActivityGetNextRecord");
        resolve(a.timestamp, "cuptiGetTimestamp");
        resolve(a.resultString, "cuptiGetResultString");
        if (!missing.empty()) {
            a.error = "CUPTI lacks " + missing;
        }
        return a;
    }();
    return loaded;
}

std::string describe(CUptiResult r) {
    const char* s = nullptr;
    if (api().resultString) {
        api().resultString(r, &s);
    }
    return s ? s : "CUPTI error " + std::to_string(static_cast<int>(r));
}

constexpr size_t kBufferBytes = 4 << 20;
constexpr size_t kAlign = 8;
// Intervals kept between two busyMs calls: a step of a big model launches thousands of
// kernels; a bound keeps a runaway from holding memory (the rest are counted as dropped).
constexpr size_t kMaxIntervals = 4'000'000;

// What the callbacks fill (CUPTI calls them from its own threads). On the heap and never
// freed: CUPTI may complete a buffer after main returns, when statics are gone.
struct State {
    std::mutex mutex;
    std::vector<std::pair<uint64_t, uint64_t>> intervals; // kernel [start, end] in ns
    size_t dropped = 0;
    // The buffers this clock handed CUPTI. The callbacks are CUPTI's one pair for the process:
    // LibTorch's profiler registers its own whenever it starts, and a buffer the other owner
    // handed out may come back here (or ours go there). Only ours are read and freed.
    std::set<uint8_t*> ours;
};
State& state() {
    static State* s = new State;
    return *s;
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxRecords = 0; // as many as fit
    if (*buffer) {
        std::lock_guard lock(state().mutex);
        state().ours.insert(*buffer);
    }
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.ours.erase(buffer) == 0) {
        return; // another owner's buffer (LibTorch's profiler): not ours to read or free
    }
    CUpti_Activity* record = nullptr;
    while (api().nextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
        if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            // Read as CUpti_ActivityKernel10, which CUDA 13.0's CUPTI (130001) and 13.2's
            // (130202, whose records are CUpti_ActivityKernel11) both declare: start and end
            // lie at offsets 16 and 24 in both layouts.
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
            if (s.intervals.size() < kMaxIntervals) {
                s.intervals.emplace_back(k->start, k->end);
            } else {
                ++s.dropped;
            }
        }
    }
    std::free(buffer);
}

std::mutex g_running; // one clock at a time

} // namespace

struct KernelClock::Impl {
    std::unique_lock<std::mutex> running{g_running, std::try_to_lock};
};

std::unique_ptr<KernelClock> KernelClock::start(std::string& whyNot) {
    const Api& a = api();
    if (!a.error.empty()) {
        whyNot = a.error;
        return nullptr;
    }
    auto impl = std::make_unique<Impl>();
    if (!impl->running.owns_lock()) {
        whyNot = "another run in this process is measuring kernel time";
        return nullptr;
    }
    // Whatever a previous owner of the callbacks left in CUPTI's buffers goes back to it first.
    a.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    {
        std::lock_guard lock(state().mutex);
        state().intervals.clear();
        state().dropped = 0;
    }
    if (CUptiResult r = a.registerCallbacks(bufferRequested, bufferCompleted); r != CUPTI_SUCCESS) {
        whyNot = "CUPTI refused its activity callbacks: " + describe(r);
        return nullptr;
    }
    // Concurrent kernels: recorded without serialising them (CUPTI's KERNEL kind would).
    if (CUptiResult r = a.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS) {
        whyNot = "CUPTI cannot record kernel activity: " + describe(r);
        return nullptr;
    }
    return std::unique_ptr<KernelClock>(new KernelClock(std::move(impl)));
}

KernelClock::KernelClock(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

KernelClock::~KernelClock() {
    api().disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    api().flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard lock(state().mutex);
    state().intervals.clear();
    state().intervals.shrink_to_fit();
}

uint64_t KernelClock::now() const {
    uint64_t t = 0;
    api().timestamp(&t);
    return t;
}

double KernelClock::busyMs(uint64_t from, uint64_t to) {
    api().flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::vector<std::pair<uint64_t, uint64_t>> kernels;
    {
        std::lock_guard lock(state().mutex);
        kernels.swap(state().intervals);
    }
    std::sort(kernels.begin(), kernels.end());
    // The union of [start, end] clipped to the window.
    uint64_t busy = 0, coveredTo = from;
    for (auto [start, end] : kernels) {
        start = std::max(start, coveredTo);
        end = std::min(end, to);
        if (end > start) {
            busy += end - start;
            coveredTo = end;
        }
    }
    return static_cast<double>(busy) / 1e6;
}

} // namespace lmprof::engine::cupti

#else // no CUPTI header in this build

namespace lmprof::engine::cupti {

struct KernelClock::Impl {};

std::unique_ptr<KernelClock> KernelClock::start(std::string& whyNot) {
    whyNot = "this build has no CUPTI (built without CUDA, or cupti_activity.h was not found)";
    return nullptr;
}
KernelClock::KernelClock(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
KernelClock::~KernelClock() = default;
uint64_t KernelClock::now() const {
    return 0;
}
double KernelClock::busyMs(uint64_t, uint64_t) {
    return 0.0;
}

} // namespace lmprof::engine::cupti

#endif
