// AdamW with the hyperparameters of docs/MODEL.md, one fused multi-tensor kernel per step
// (ATen's _fused_adamw_, which has CPU and CUDA kernels). Moments are created at the first
// step, as in torch.optim, so the first optimizer phase shows their allocation.
#pragma once

#include <ATen/core/Tensor.h>
#include <optional>
#include <vector>

namespace lmprof::engine::bench {

struct AdamWOptions {
    double lr = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weightDecay = 0.01;
};

class FusedAdamW {
public:
    FusedAdamW(std::vector<at::Tensor> params, AdamWOptions options = {});

    // Updates every parameter that has a gradient. With `gradScale`/`foundInf` (fp16) the
    // kernel unscales the gradients itself and skips the update when foundInf is nonzero.
    void step(const std::optional<at::Tensor>& gradScale = std::nullopt,
              const std::optional<at::Tensor>& foundInf = std::nullopt);
    // Drops the gradients (set_to_none), freeing their memory until the next backward.
    void zeroGrad();

    const std::vector<at::Tensor>& params() const { return m_params; }

private:
    std::vector<at::Tensor> m_params;
    AdamWOptions m_options;
    std::vector<at::Tensor> m_expAvg, m_expAvgSq, m_steps;
};

} // namespace lmprof::engine::bench
