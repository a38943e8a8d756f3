// The seeds' ToyModel (docs/PRECISION_LAB.md): fc1 → ReLU → LayerNorm → fc2, built from the
// engine's modules so that the dtype inspector sees every call (model/dtype_probe.h).
#pragma once

#include "model/transformer.h"

namespace lmprof::engine::model {

// y = layer_norm(x) · weight + bias over the last dimension, as torch.nn.LayerNorm.
struct LayerNormImpl : torch::nn::Module {
    explicit LayerNormImpl(int64_t dim, double eps = 1e-5, at::Device device = at::kCPU);
    at::Tensor forward(const at::Tensor& x);
    at::Tensor weight, bias;
    double eps;
};
TORCH_MODULE(LayerNorm);

struct ReLUImpl : torch::nn::Module {
    at::Tensor forward(const at::Tensor& x);
};
TORCH_MODULE(ReLU);

struct ToyModelImpl : torch::nn::Module {
    ToyModelImpl(int64_t inFeatures, int64_t outFeatures, at::Device device = at::kCPU);
    at::Tensor forward(const at::Tensor& x); // (B, in) -> logits (B, out)
    Linear fc1{nullptr};
    LayerNorm ln{nullptr};
    Linear fc2{nullptr};
    ReLU relu{nullptr};
};
TORCH_MODULE(ToyModel);

} // namespace lmprof::engine::model
