// The runtime refusals of devices.h (checkRunnable): whether the device is there, and the
// precision probe, a small matmul in the precision under the runner's own autocast scope
// and dtypes, beside the bench it speaks for.

#include "bench/autocast_scope.h"
#include "bench/precision_dtypes.h"
#include "bench/step_context.h"
#include "lmprof/engine/devices.h"
#include "lmprof/engine/precision.h"
#include "platform/cuda_backend.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <algorithm>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

namespace lmprof::engine {

namespace {

// A probe's answer (a refusal reason, or none) by its key, probed once per process: the
// answer does not change within one. The probe itself (which may start CUDA) runs without
// the lock, so a window asking about a cached answer never waits on another thread's probe;
// two first probes of one key may both run, and agree. One cache per call site.
template <typename Key, typename Probe>
std::optional<std::string> cachedProbe(const Key& key, Probe&& probe) {
    static std::mutex mutex;
    static std::map<Key, std::optional<std::string>> cache;
    {
        std::lock_guard lock(mutex);
        if (auto it = cache.find(key); it != cache.end()) {
            return it->second;
        }
    }
    std::optional<std::string> reason = probe();
    std::lock_guard lock(mutex);
    cache[key] = reason;
    return reason;
}

// Runs a small matmul in the requested precision on the device; a refusal reason if the
// build or the device cannot.
std::optional<std::string> runPrecisionProbe(const DeviceTarget& target, Precision precision) {
    const std::string key = target.name();
    std::optional<std::string> reason;
    const at::Device device = bench::torchDevice(target);
    try {
        const PrecisionTraits& traits = traitsOf(precision);
        at::Tensor a = at::ones({4, 4}, at::TensorOptions().device(device));
        if (traits.autocast) {
            const auto dtype = bench::scalarType(*traits.autocast);
            if (!at::autocast::is_autocast_available(device.type())) {
                reason = "autocast is not available for " + key + " in this LibTorch build";
            } else {
                bench::AutocastScope scope(device.type(), dtype);
                if (at::matmul(a, a).scalar_type() != dtype) {
                    reason = std::string(toString(precision)) + " autocast is not supported on " +
                             key + " by this LibTorch build";
                }
            }
        }
        if (traits.weights != NumberFormat::Fp32) {
            const at::Tensor w = a.to(bench::scalarType(traits.weights));
            (void)at::matmul(w, w).sum().item<float>();
        }
    } catch (const std::exception& e) {
        reason = std::string(toString(precision)) + " is not supported on " + key + ": " + e.what();
    }
    return reason;
}

std::optional<std::string> probePrecision(const DeviceTarget& target, Precision precision) {
    return cachedProbe(std::pair(target.name(), precision),
                       [&] { return runPrecisionProbe(target, precision); });
}

// Runs the forced scaled_dot_product_attention backend on the run's head size, dtype and
// device, forward and backward, on a few tokens; the reason if it cannot. The answer depends
// on these only, not on the length.
std::optional<std::string> runSdpaProbe(const DeviceTarget& target, const RunConfig& config,
                                        int64_t headDim) {
    std::optional<std::string> reason;
    try {
        // The backend's own op, not the dispatcher with flags: the flags are process-wide
        // and a run may be using them on the engine thread (bench/execution_scope.h).
        const PrecisionTraits& traits = traitsOf(config.precision);
        const auto dtype = bench::scalarType(traits.autocast.value_or(traits.weights));
        // ATen's factories drop TensorOptions' requires_grad: set it on the tensor.
        const auto opts = at::TensorOptions().device(bench::torchDevice(target)).dtype(dtype);
        const at::Tensor q = at::randn({1, 2, 16, headDim}, opts).requires_grad_(true);
        at::Tensor out;
        switch (config.attention) {
        case AttentionKind::SdpaFlash:
            out = std::get<0>(at::_scaled_dot_product_flash_attention(q, q, q, 0.0, true));
            break;
        case AttentionKind::SdpaEfficient:
            out = std::get<0>(at::_scaled_dot_product_efficient_attention(q, q, q, std::nullopt,
                                                                          true, 0.0, true));
            break;
        case AttentionKind::SdpaCudnn:
            out = std::get<0>(
                at::_scaled_dot_product_cudnn_attention(q, q, q, std::nullopt, true, 0.0, true));
            break;
        default:
            out = std::get<0>(
                at::_scaled_dot_product_attention_math(q, q, q, std::nullopt, 0.0, true));
        }
        out.sum().backward();
        (void)q.grad().sum().item<float>();
    } catch (const std::exception& e) {
        const std::string what = e.what();
        reason = "'" + std::string(toString(config.attention)) + "' cannot run head size " +
                 std::to_string(headDim) + " in " + std::string(toString(config.precision)) +
                 " on " + target.name() + ": " + what.substr(0, what.find('\n'));
    }
    return reason;
}

std::optional<std::string> probeSdpa(const DeviceTarget& target, const RunConfig& config) {
    if (config.attention == AttentionKind::Naive || config.attention == AttentionKind::Sdpa) {
        return std::nullopt; // no backend forced: LibTorch always has one
    }
    const int64_t headDim = config.model.dModel / std::max<int64_t>(1, config.model.numHeads);
    return cachedProbe(std::tuple(target.name(), config.attention, config.precision, headDim),
                       [&] { return runSdpaProbe(target, config, headDim); });
}

} // namespace

std::optional<ConfigError> checkRunnable(const RunConfig& config) {
    return checkRunnable(config, resolveDevice(config.device));
}

int maxRunThreads() {
    return std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
}

std::optional<ConfigError> checkRunnable(const RunConfig& config, const DeviceTarget& target) {
    if (auto errors = validate(config); !errors.empty()) {
        return errors.front();
    }
    // More intra-op threads than CPUs only adds threads a process keeps for good (LibTorch's
    // pool does not shrink): a server must not be made to hold thousands.
    if (config.threads > maxRunThreads()) {
        return ConfigError{"threads",
                           std::to_string(config.threads) + " is over this machine's bound of " +
                               std::to_string(maxRunThreads()) + " (its CPU count, 2 at least)"};
    }
    if (target.cuda) {
        const int count = cuda::deviceCount();
        if (!cuda::built()) {
            return ConfigError{"device", "'" + config.device +
                                             "' requested but this build's LibTorch has no CUDA"};
        }
        if (target.index >= count) {
            return ConfigError{"device", "'" + config.device + "' requested but " +
                                             std::to_string(count) +
                                             " CUDA device(s) are available"};
        }
    }
    if (auto reason = probePrecision(target, config.precision)) {
        return ConfigError{"precision", *reason};
    }
    // validate() refused the variants a named device cannot run; "auto" is known only now.
    if (config.device == "auto") {
        if (auto refusals = choiceRefusals(config, target.cuda); !refusals.empty()) {
            return refusals.front();
        }
    }
    if (auto reason = probeSdpa(target, config)) {
        return ConfigError{"attention", *reason};
    }
    if (config.ddp && config.ddp->backend == DdpBackend::Nccl && !target.cuda) {
        return ConfigError{"ddp.backend", "nccl all-reduces CUDA tensors, but device '" +
                                              config.device +
                                              "' is the CPU here; use gloo, or a CUDA device"};
    }
    return std::nullopt;
}

} // namespace lmprof::engine
