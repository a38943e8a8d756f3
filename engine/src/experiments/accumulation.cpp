// The accumulation experiment (precision_lab.h, docs/PRECISION_LAB.md): 0.01 added over
// and over into 0-d tensors of each format, run by LibTorch on the chosen device.
//
// The grid keeps three lanes per accumulator format in one tensor, one per addend format.
// The addends travel as fp32 holding exactly the value each format stores 0.01 as: an
// in-place add of any two of these formats computes in fp32 (type promotion, or the fp32
// math LibTorch's fp16/bf16 kernels use) and rounds once to the accumulator's format, so a
// lane gives the same sums as `acc += x` with x in its own format, at a third of the ops.
// A lane whose sum stops changing stays stuck for good (the sum only grows and each step
// depends only on it), so an accumulator ends once its three lanes have stalled.

#include "bench/precision_dtypes.h"
#include "bench/step_context.h"
#include "experiments/lab_checks.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/precision_lab.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

namespace lmprof::engine {

namespace {

using bench::scalarType;

// Additions between checks for a stall or a cancel.
constexpr int64_t kChunk = 4096;

at::TensorOptions optionsOf(const at::Device& device, NumberFormat f) {
    return at::TensorOptions().device(device).dtype(scalarType(f));
}

double toDouble(const at::Tensor& t) {
    return t.to(at::kCPU).to(at::kDouble).item<double>();
}

void runSeedLoops(AccumulationReport& report, const at::Device& device) {
    struct Spec {
        NumberFormat accumulator, addend;
        bool castPerAdd;
        const char* label;
    };
    const Spec specs[] = {
        {NumberFormat::Fp32, NumberFormat::Fp32, false, "fp32 += fp32"},
        {NumberFormat::Fp16, NumberFormat::Fp16, false, "fp16 += fp16"},
        {NumberFormat::Fp32, NumberFormat::Fp16, false, "fp32 += fp16"},
        {NumberFormat::Fp32, NumberFormat::Fp16, true, "fp32 += fp16 cast to fp32"},
    };
    for (const Spec& spec : specs) {
        at::Tensor s = at::zeros({}, optionsOf(device, spec.accumulator));
        const at::Tensor x = at::full({}, kAddend, optionsOf(device, spec.addend));
        for (int64_t i = 0; i < kSeedTerms; ++i) {
            s.add_(spec.castPerAdd ? x.to(at::kFloat) : x);
        }
        SeedLoop loop;
        loop.label = spec.label;
        loop.accumulator = spec.accumulator;
        loop.addend = spec.addend;
        loop.castPerAdd = spec.castPerAdd;
        loop.addendValue = toDouble(x);
        loop.result = toDouble(s);
        report.seedLoops.push_back(loop);
    }
}

// Replays up to `length` additions one by one from `start` (lane `lane`) to find the first
// that left the sum unchanged; returns its number (1-based), or 0 if none did.
int64_t findStall(const at::Tensor& start, const at::Tensor& addends, int64_t lane,
                  int64_t length) {
    at::Tensor s = start.select(0, lane).clone();
    const at::Tensor x = addends.select(0, lane);
    for (int64_t j = 1; j <= length; ++j) {
        const double before = toDouble(s);
        s.add_(x);
        if (toDouble(s) == before) {
            return j;
        }
    }
    return 0;
}

// One accumulator format against every addend format: three series, or false if cancelled.
bool runAccumulator(AccumulationReport& report, const at::Device& device, NumberFormat acc,
                    const std::vector<int64_t>& checkpoints, const std::atomic<bool>* cancel) {
    std::vector<at::Tensor> carriers;
    for (NumberFormat add : kNumberFormats) {
        carriers.push_back(at::full({}, kAddend, optionsOf(device, add)).to(at::kFloat));
    }
    const at::Tensor addends = at::stack(carriers); // (3,) fp32
    const int64_t lanes = addends.size(0);
    at::Tensor s = at::zeros({lanes}, optionsOf(device, acc));

    std::vector<AccumulationSeries> series(static_cast<size_t>(lanes));
    for (int64_t lane = 0; lane < lanes; ++lane) {
        auto& out = series[static_cast<size_t>(lane)];
        out.accumulator = acc;
        out.addend = kNumberFormats[static_cast<size_t>(lane)];
        out.addendValue = toDouble(addends.select(0, lane));
    }
    std::vector<at::Tensor> atCheckpoint;
    int64_t n = 0;
    size_t next = 0;
    int stalled = 0;
    while (next < checkpoints.size()) {
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            return false;
        }
        if (stalled == lanes) { // nothing changes any more
            atCheckpoint.push_back(s.clone());
            ++next;
            continue;
        }
        const int64_t end = std::min(checkpoints[next], n + kChunk);
        const at::Tensor start = s.clone();
        const int64_t chunkStart = n;
        for (; n < end; ++n) {
            s.add_(addends);
        }
        if (n == checkpoints[next]) {
            atCheckpoint.push_back(s.clone());
            ++next;
        }
        // A lane that one more addition leaves unchanged has stalled, at an addition of this
        // chunk or the next one (it was still growing at the last check). The next one is
        // only counted if it will be made.
        at::Tensor oneMore = s.clone();
        oneMore.add_(addends);
        const at::Tensor stuck = oneMore.eq(s).to(at::kCPU);
        const int64_t replay = n - chunkStart + (n < checkpoints.back() ? 1 : 0);
        for (int64_t lane = 0; lane < lanes; ++lane) {
            auto& out = series[static_cast<size_t>(lane)];
            if (out.stallTerms || !stuck[lane].item<bool>()) {
                continue;
            }
            if (const int64_t j = findStall(start, addends, lane, replay); j > 0) {
                out.stallTerms = chunkStart + j;
                out.stallSum = toDouble(s.select(0, lane));
                ++stalled;
            }
        }
    }
    const at::Tensor sums = at::stack(atCheckpoint).to(at::kCPU).to(at::kDouble);
    for (int64_t lane = 0; lane < lanes; ++lane) {
        auto& out = series[static_cast<size_t>(lane)];
        for (size_t k = 0; k < checkpoints.size(); ++k) {
            out.points.push_back(
                {checkpoints[k], sums[static_cast<int64_t>(k)][lane].item<double>()});
        }
        report.series.push_back(std::move(out));
    }
    return true;
}

// LibTorch's own reduction of the same addends, accumulated in fp32.
void runLibTorchSums(AccumulationReport& report, const at::Device& device,
                     const std::vector<int64_t>& checkpoints) {
    for (NumberFormat add : kNumberFormats) {
        AccumulationSeries out;
        out.addend = add;
        const at::Tensor all = at::full({checkpoints.back()}, kAddend, optionsOf(device, add));
        out.addendValue = toDouble(all[0]);
        for (int64_t terms : checkpoints) {
            out.points.push_back({terms, toDouble(all.slice(0, 0, terms).sum(at::kFloat))});
        }
        report.series.push_back(std::move(out));
    }
}

} // namespace

AccumulationReport runAccumulation(const AccumulationRequest& request,
                                   const std::atomic<bool>* cancel) {
    AccumulationReport report;
    report.maxTerms = request.maxTerms;
    if (auto errors = validate(request); !errors.empty()) {
        report.error = errors.front().message();
        return report;
    }
    const DeviceTarget target = resolveDevice(request.device);
    report.device = target.name();
    if (auto refused = lab::refusal(request.device, Precision::Fp32, target)) {
        report.error = refused->message();
        return report;
    }
    report.error = lab::failureOf([&] {
        const at::Device device = bench::torchDevice(target);
        runSeedLoops(report, device);
        const std::vector<int64_t> checkpoints = gridTerms(request.maxTerms);
        for (NumberFormat acc : kNumberFormats) {
            if (!runAccumulator(report, device, acc, checkpoints, cancel)) {
                report.cancelled = true;
                return;
            }
        }
        runLibTorchSums(report, device, checkpoints);
    });
    if (report.cancelled) {
        report.error = "cancelled";
    }
    return report;
}

} // namespace lmprof::engine
