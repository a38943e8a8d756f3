// The CS336 2025 "basics" Transformer LM (docs/MODEL.md) as LibTorch modules. Private to the
// engine: nothing outside engine/src (and the model tests) sees torch types.
//
// Shape legend:
//   B batch, T sequence length, d d_model, h heads, dh = d / h, F d_ff, V vocab, L layers.
#pragma once

#include "lmprof/engine/config.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

namespace lmprof::engine::model {

// Fills `t` in place from a normal(0, std) truncated to [lo, hi] by inverse-CDF sampling.
void truncNormal_(at::Tensor& t, double std, double lo, double hi);

// y = x W^T, no bias; W is (out, in) with truncated-normal init std sqrt(2 / (in + out)).
struct LinearImpl : torch::nn::Module {
    LinearImpl(int64_t inFeatures, int64_t outFeatures, at::Device device = at::kCPU);
    at::Tensor forward(const at::Tensor& x); // (..., in) -> (..., out)
    at::Tensor weight;
};
TORCH_MODULE(Linear);

// Token id -> vector lookup; weight (V, d), truncated normal std 1 cut at ±3.
struct EmbeddingImpl : torch::nn::Module {
    EmbeddingImpl(int64_t numEmbeddings, int64_t dim, at::Device device = at::kCPU);
    at::Tensor forward(const at::Tensor& ids); // (B, T) int64 -> (B, T, d)
    at::Tensor weight;
};
TORCH_MODULE(Embedding);

inline constexpr double kRmsNormEps = 1e-5;

// x * rsqrt(mean(x^2) + eps) * w, computed in fp32 and cast back to the input dtype.
struct RMSNormImpl : torch::nn::Module {
    explicit RMSNormImpl(int64_t dim, double eps = kRmsNormEps, at::Device device = at::kCPU);
    at::Tensor forward(const at::Tensor& x); // (..., d) -> (..., d), same dtype as x
    at::Tensor weight;
    double eps;
};
TORCH_MODULE(RMSNorm);

// One cos/sin table for all layers: angle[t, k] = t * theta^(-2k/dh), k < dh/2.
struct RotaryTables {
    at::Tensor cos; // (maxT, dh/2), fp32
    at::Tensor sin; // (maxT, dh/2), fp32
};
RotaryTables makeRotaryTables(int64_t headDim, int64_t maxSeqLen, double theta);

// e^(i·angle) of the tables' rows as complex64 (T, dh/2): cos + i·sin, sliced to T first.
at::Tensor rotaryPhases(const at::Tensor& cos, const at::Tensor& sin);

// Rotates interleaved (even, odd) pairs of the last dimension by the phases' angles, in fp32
// and cast back to x's dtype. x: (B, h, T, dh) with the last dimension contiguous; phases:
// (T, dh/2) complex64 from rotaryPhases.
at::Tensor applyRotary(const at::Tensor& x, const at::Tensor& phases);

// Causal multi-head self-attention with RoPE on Q and K.
struct AttentionImpl : torch::nn::Module {
    AttentionImpl(int64_t dModel, int64_t numHeads, at::Device device = at::kCPU);
    // x (B, T, d), phases (T, dh/2) complex, mask (T, T) bool, true where a key is hidden.
    // With kind sdpa*, the mask is left to scaled_dot_product_attention's is_causal.
    at::Tensor forward(const at::Tensor& x, const at::Tensor& phases, const at::Tensor& mask);
    int64_t numHeads, headDim;
    AttentionKind kind = AttentionKind::Naive; // how scores, softmax and PV are computed
    Linear qProj{nullptr}, kProj{nullptr}, vProj{nullptr}, oProj{nullptr};
};
TORCH_MODULE(Attention);

// SwiGLU: W2(silu(W1 x) * W3 x).
struct SwiGLUImpl : torch::nn::Module {
    SwiGLUImpl(int64_t dModel, int64_t dFf, at::Device device = at::kCPU);
    at::Tensor forward(const at::Tensor& x); // (B, T, d) -> (B, T, d)
    Linear w1{nullptr}, w2{nullptr}, w3{nullptr};
};
TORCH_MODULE(SwiGLU);

// Pre-norm block: h = x + Attn(RMSNorm1(x)); out = h + FFN(RMSNorm2(h)).
struct BlockImpl : torch::nn::Module {
    BlockImpl(int64_t dModel, int64_t numHeads, int64_t dFf, at::Device device = at::kCPU);
    at::Tensor forward(const at::Tensor& x, const at::Tensor& phases,
                       const at::Tensor& mask); // (B, T, d) -> (B, T, d)
    RMSNorm ln1{nullptr}, ln2{nullptr};
    Attention attn{nullptr};
    SwiGLU ffn{nullptr};
};
TORCH_MODULE(Block);

struct TransformerLMImpl : torch::nn::Module {
    // Parameters are created and initialised on `device` (drawing billions of weights on the
    // host and copying them would take longer than the benchmark): one seed gives the same
    // weights on every run on one kind of device, not across CPU and CUDA.
    TransformerLMImpl(const ModelConfig& config, int64_t maxSeqLen, at::Device device = at::kCPU);
    at::Tensor forward(const at::Tensor& ids); // (B, T) int64 -> logits (B, T, V)
    // Every block's attention computed as `kind` (RunConfig::attention); naive until set.
    void setAttention(AttentionKind kind);
    ModelConfig config;
    Embedding embedding{nullptr};
    torch::nn::ModuleList layers{nullptr}; // of Block
    std::vector<Block> blocks;             // the same blocks, typed
    RMSNorm lnFinal{nullptr};
    Linear lmHead{nullptr};
    // On the parameters' device, but not registered buffers, so that they stay out of
    // named_buffers()/state and keep their own dtypes.
    RotaryTables rotary;
    at::Tensor causalMask; // (maxT, maxT) bool, true above the diagonal
};
TORCH_MODULE(TransformerLM);

// Mean cross-entropy over all B·T positions; computed from fp32 log-probabilities.
at::Tensor lmLoss(const at::Tensor& logits, const at::Tensor& targets); // (B,T,V),(B,T) -> ()

} // namespace lmprof::engine::model
