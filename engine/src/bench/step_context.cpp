// Building a run's model, inputs, optimizer and loss scaler; memory readings per device.

#include "bench/step_context.h"

#include "bench/precision_dtypes.h"
#include "platform/cuda_backend.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

namespace lmprof::engine::bench {

at::Device torchDevice(const DeviceTarget& target) {
    return target.cuda ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(target.index))
                       : at::Device(at::kCPU);
}

MemoryMeter::MemoryMeter(DeviceTarget target, std::shared_ptr<CpuMemoryReporter> cpu)
    : m_target(target), m_cpu(std::move(cpu)) {}

void MemoryMeter::resetPeak() {
    if (m_target.cuda) {
        cuda::resetPeakStats(m_target.index);
    } else {
        m_cpu->resetPeak();
    }
}

// The CPU allocator keeps no cache of its own, so "reserved" equals "allocated" there.
int64_t MemoryMeter::allocated() const {
    return m_target.cuda ? cuda::allocatorStats(m_target.index).allocated : m_cpu->current();
}
int64_t MemoryMeter::reserved() const {
    return m_target.cuda ? cuda::allocatorStats(m_target.index).reserved : m_cpu->current();
}
int64_t MemoryMeter::peakAllocated() const {
    return m_target.cuda ? cuda::allocatorStats(m_target.index).allocatedPeak : m_cpu->peak();
}
int64_t MemoryMeter::peakReserved() const {
    return m_target.cuda ? cuda::allocatorStats(m_target.index).reservedPeak : m_cpu->peak();
}

LossScaler::LossScaler(const at::Device& device) {
    const auto f32 = at::TensorOptions().device(device).dtype(at::kFloat);
    scale = at::full({}, kInitScale, f32);
    growthTracker = at::zeros({}, f32.dtype(at::kInt));
    foundInf = at::zeros({}, f32);
}

void LossScaler::unscale(const std::vector<at::Tensor>& grads) {
    foundInf.zero_();
    at::_amp_foreach_non_finite_check_and_unscale_(grads, foundInf, scale.reciprocal());
}

void LossScaler::update() {
    at::_amp_update_scale_(scale, growthTracker, foundInf, 2.0, 0.5, kGrowthInterval);
}

// Inputs come from a CPU generator of their own, seeded alike, so every device sees the same
// tokens whichever generator drew the weights.
Batch makeBatch(const RunConfig& config, const at::Device& device, int shard, int shards) {
    at::Generator tokenGenerator = at::make_generator<at::CPUGeneratorImpl>(config.seed);
    const at::Tensor tokens = at::randint(0, config.model.vocabSize,
                                          {shards * config.batchSize, config.contextLength + 1},
                                          tokenGenerator, at::TensorOptions().dtype(at::kLong));
    const at::Tensor mine =
        tokens.slice(0, shard * config.batchSize, (shard + 1) * config.batchSize);
    return {mine.slice(1, 0, config.contextLength).contiguous().to(device),
            mine.slice(1, 1, config.contextLength + 1).contiguous().to(device)};
}

StepContext::StepContext(const RunConfig& config, DeviceTarget target) {
    const at::Device device = torchDevice(target);
    at::manual_seed(config.seed);
    const PrecisionTraits& traits = traitsOf(config.precision);
    model = model::TransformerLM(config.model, config.contextLength, device);
    model->setAttention(config.attention);
    if (traits.weights != NumberFormat::Fp32) {
        model->to(scalarType(traits.weights));
    }
    model->train();

    Batch batch = makeBatch(config, device);
    inputs = std::move(batch.inputs);
    targets = std::move(batch.targets);

    if (config.mode == Mode::Train) {
        std::vector<at::Tensor> params;
        for (const auto& p : model->parameters()) {
            params.push_back(p);
        }
        optimizer = std::make_unique<FusedAdamW>(std::move(params));
    }
    if (traits.autocast) {
        autocastDtype = scalarType(*traits.autocast);
    }
    if (config.gradNorms) {
        const std::vector<std::string> names = gradNormNames(config.model);
        gradNormGroups.resize(names.size());
        for (const auto& item : model->named_parameters()) {
            for (size_t g = 0; g < names.size(); ++g) {
                if (item.key().rfind(names[g] + ".", 0) == 0) {
                    gradNormGroups[g].push_back(item.value());
                    break;
                }
            }
        }
    }
    if (traits.lossScaling) {
        scaler.emplace(device);
    }
}

at::Tensor gradNorms(const std::vector<std::vector<at::Tensor>>& groups) {
    std::vector<at::Tensor> norms;
    for (const auto& group : groups) {
        std::vector<at::Tensor> squares;
        for (const auto& p : group) {
            if (p.grad().defined()) {
                squares.push_back(
                    at::linalg_vector_norm(p.grad(), 2, std::nullopt, false, at::kFloat).square());
            }
        }
        norms.push_back(squares.empty() ? at::zeros({}, group.front().options().dtype(at::kFloat))
                                        : at::stack(squares).sum().sqrt());
    }
    return at::stack(norms);
}

} // namespace lmprof::engine::bench
