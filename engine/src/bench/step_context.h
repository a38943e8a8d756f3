// Everything one run needs between steps: the model on its device, the optimizer, the
// fixed input batch, the fp16 loss scaler, and where memory figures come from. Built once
// per run, destroyed at its end (which releases the run's memory).
#pragma once

#include "bench/adamw.h"
#include "bench/cpu_memory_reporter.h"
#include "lmprof/engine/config.h"
#include "lmprof/engine/devices.h"
#include "model/transformer.h"

#include <memory>
#include <optional>

namespace lmprof::engine::bench {

// The device a target names, as LibTorch's at::Device.
at::Device torchDevice(const DeviceTarget& target);

// Current and peak bytes of the run's device: CUDA caching-allocator statistics, or the
// exact tensor bytes of the CPU memory-reporting hook.
class MemoryMeter {
public:
    MemoryMeter(DeviceTarget target, std::shared_ptr<CpuMemoryReporter> cpu);
    void resetPeak();
    int64_t allocated() const;
    int64_t reserved() const;
    int64_t peakAllocated() const;
    int64_t peakReserved() const;

private:
    DeviceTarget m_target;
    std::shared_ptr<CpuMemoryReporter> m_cpu;
};

// Dynamic loss scaling for fp16 (the GradScaler recipe): scale the loss, check the
// gradients for inf/NaN while unscaling them, skip the update on overflow, halve the
// scale on overflow and double it after kGrowthInterval clean steps.
struct LossScaler {
    static constexpr double kInitScale = 65536.0;
    static constexpr int64_t kGrowthInterval = 2000;
    at::Tensor scale;         // () fp32
    at::Tensor growthTracker; // () int32
    at::Tensor foundInf;      // () fp32

    explicit LossScaler(const at::Device& device);
    // Unscales the gradients in place and sets foundInf.
    void unscale(const std::vector<at::Tensor>& grads);
    void update();
};

// The fixed batch of a run: `shards` ranks draw one global batch of shards × batch_size
// sequences from the run's seed and each takes its own rows, so a single process given the
// whole global batch trains on exactly the sequences of all ranks together.
struct Batch {
    at::Tensor inputs;  // (B, T) int64
    at::Tensor targets; // (B, T) int64: the inputs shifted by one position
};
Batch makeBatch(const RunConfig& config, const at::Device& device, int shard = 0, int shards = 1);

struct StepContext {
    StepContext(const RunConfig& config, DeviceTarget target);

    model::TransformerLM model{nullptr};
    std::unique_ptr<FusedAdamW> optimizer;
    std::optional<LossScaler> scaler;
    at::Tensor inputs;  // (B, T) int64
    at::Tensor targets; // (B, T) int64
    std::optional<at::ScalarType> autocastDtype;
    // RunConfig::gradNorms: the parameters of each group of gradNormNames(), in that order.
    std::vector<std::vector<at::Tensor>> gradNormGroups;
};

// The L2 norm of each group's gradients as one (groups,) fp32 tensor on the device, without
// waiting for it (a parameter without a gradient counts as zero).
at::Tensor gradNorms(const std::vector<std::vector<at::Tensor>>& groups);

} // namespace lmprof::engine::bench
