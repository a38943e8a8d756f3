// The Transformer LM of docs/MODEL.md. Shapes follow the legend in transformer.h:
// B batch, T sequence, d d_model, h heads, dh head dim, F d_ff, V vocab.

#include "model/transformer.h"

#include "lmprof/engine/op_profile.h"
#include "model/dtype_probe.h"
#include "nvtx/region.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/GradMode.h>
#include <cmath>
#include <limits>
#include <string>

namespace lmprof::engine::model {

probe::Recorder*& probe::current() {
    thread_local Recorder* recorder = nullptr;
    return recorder;
}

void truncNormal_(at::Tensor& t, double std, double lo, double hi) {
    // Sample u uniformly between the CDF values of the cut points, then invert the CDF:
    // x = sqrt(2) * erfinv(2u - 1). Exact truncation, no rejection loop.
    c10::NoGradGuard noGrad;
    const double a = lo / std;
    const double b = hi / std;
    const double cdfA = 0.5 * (1.0 + std::erf(a / std::sqrt(2.0)));
    const double cdfB = 0.5 * (1.0 + std::erf(b / std::sqrt(2.0)));
    t.uniform_(2.0 * cdfA - 1.0, 2.0 * cdfB - 1.0);
    t.erfinv_();
    t.mul_(std * std::sqrt(2.0));
    t.clamp_(lo, hi);
}

LinearImpl::LinearImpl(int64_t inFeatures, int64_t outFeatures, at::Device device) {
    weight = register_parameter("weight", at::empty({outFeatures, inFeatures}, device));
    const double std = std::sqrt(2.0 / static_cast<double>(inFeatures + outFeatures));
    truncNormal_(weight, std, -3.0 * std, 3.0 * std);
}

at::Tensor LinearImpl::forward(const at::Tensor& x) {
    return probe::seen(*this, {x}, at::linear(x, weight));
}

EmbeddingImpl::EmbeddingImpl(int64_t numEmbeddings, int64_t dim, at::Device device) {
    weight = register_parameter("weight", at::empty({numEmbeddings, dim}, device));
    truncNormal_(weight, 1.0, -3.0, 3.0);
}

at::Tensor EmbeddingImpl::forward(const at::Tensor& ids) {
    nvtx::Region range(region::kEmbedding);
    return probe::seen(*this, {ids}, at::embedding(weight, ids));
}

RMSNormImpl::RMSNormImpl(int64_t dim, double eps_, at::Device device) : eps(eps_) {
    weight = register_parameter("weight", at::ones({dim}, device));
}

at::Tensor RMSNormImpl::forward(const at::Tensor& x) {
    nvtx::Region range(region::kNorm);
    const auto inDtype = x.scalar_type();
    const at::Tensor xf = x.to(at::kFloat);
    const at::Tensor inv = at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
    return probe::seen(*this, {x}, (xf * inv * weight.to(at::kFloat)).to(inDtype));
}

RotaryTables makeRotaryTables(int64_t headDim, int64_t maxSeqLen, double theta) {
    const auto opts = at::TensorOptions().dtype(at::kDouble);
    const at::Tensor k = at::arange(0, headDim / 2, opts);
    const at::Tensor invFreq = at::pow(theta, -2.0 * k / static_cast<double>(headDim));
    const at::Tensor pos = at::arange(0, maxSeqLen, opts);
    const at::Tensor angles = at::outer(pos, invFreq); // (maxT, dh/2)
    return {angles.cos().to(at::kFloat), angles.sin().to(at::kFloat)};
}

at::Tensor rotaryPhases(const at::Tensor& cos, const at::Tensor& sin) {
    return at::complex(cos.to(at::kFloat), sin.to(at::kFloat));
}

at::Tensor applyRotary(const at::Tensor& x, const at::Tensor& phases) {
    // Each (even, odd) pair as one complex number times e^(i·angle): one multiplication
    // instead of selects, four products and a stack (docs/OP_PROFILE.md measured the
    // difference), in fp32 and cast back.
    const at::Tensor pairs =
        at::view_as_complex(x.to(at::kFloat).unflatten(-1, {x.size(-1) / 2, 2}));
    return at::view_as_real(pairs * phases).flatten(-2).to(x.scalar_type());
}

AttentionImpl::AttentionImpl(int64_t dModel, int64_t heads, at::Device device)
    : numHeads(heads), headDim(dModel / heads) {
    qProj = register_module("q_proj", Linear(dModel, dModel, device));
    kProj = register_module("k_proj", Linear(dModel, dModel, device));
    vProj = register_module("v_proj", Linear(dModel, dModel, device));
    oProj = register_module("output_proj", Linear(dModel, dModel, device));
}

at::Tensor AttentionImpl::forward(const at::Tensor& x, const at::Tensor& phases,
                                  const at::Tensor& mask) {
    const int64_t b = x.size(0);
    const int64_t t = x.size(1);
    // (B, T, d) -> (B, h, T, dh)
    auto heads = [&](const at::Tensor& y) {
        return y.view({b, t, numHeads, headDim}).transpose(1, 2);
    };
    at::Tensor q, k, v;
    {
        nvtx::Region range(region::kQkv);
        q = heads(qProj(x));
        k = heads(kProj(x));
        v = heads(vProj(x));
    }
    {
        nvtx::Region range(region::kRope);
        q = applyRotary(q, phases);
        k = applyRotary(k, phases);
    }

    at::Tensor out; // (B, h, T, dh)
    if (kind != AttentionKind::Naive) {
        // The same math fused; which kernel runs is LibTorch's choice, or the one the run
        // forces (bench/execution_scope.h).
        nvtx::Region range(region::kSdpa);
        out = at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/std::nullopt,
                                               /*dropout_p=*/0.0, /*is_causal=*/true);
    } else {
        at::Tensor scores; // (B, h, T, T)
        {
            nvtx::Region range(region::kScores);
            scores = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(headDim));
            scores = scores.masked_fill(mask, -std::numeric_limits<double>::infinity());
        }
        at::Tensor probs; // (B, h, T, T), rows sum to 1
        {
            nvtx::Region range(region::kSoftmax);
            const at::Tensor shifted = scores - scores.amax(-1, /*keepdim=*/true);
            const at::Tensor e = shifted.exp();
            probs = e / e.sum(-1, /*keepdim=*/true);
        }
        nvtx::Region range(region::kValue);
        out = at::matmul(probs.to(v.scalar_type()), v);
    }
    // (B, h, T, dh) -> (B, T, d)
    nvtx::Region range(region::kAttnOutput);
    return probe::seen(*this, {x}, oProj(out.transpose(1, 2).reshape({b, t, numHeads * headDim})));
}

SwiGLUImpl::SwiGLUImpl(int64_t dModel, int64_t dFf, at::Device device) {
    w1 = register_module("w1", Linear(dModel, dFf, device));
    w2 = register_module("w2", Linear(dFf, dModel, device));
    w3 = register_module("w3", Linear(dModel, dFf, device));
}

at::Tensor SwiGLUImpl::forward(const at::Tensor& x) {
    nvtx::Region range(region::kMlp);
    return probe::seen(*this, {x}, w2(at::silu(w1(x)) * w3(x))); // (B, T, F) inside
}

BlockImpl::BlockImpl(int64_t dModel, int64_t numHeads, int64_t dFf, at::Device device) {
    ln1 = register_module("ln1", RMSNorm(dModel, kRmsNormEps, device));
    attn = register_module("attn", Attention(dModel, numHeads, device));
    ln2 = register_module("ln2", RMSNorm(dModel, kRmsNormEps, device));
    ffn = register_module("ffn", SwiGLU(dModel, dFf, device));
}

at::Tensor BlockImpl::forward(const at::Tensor& x, const at::Tensor& phases,
                              const at::Tensor& mask) {
    const at::Tensor a = attn(ln1(x), phases, mask);
    at::Tensor h;
    {
        nvtx::Region range(region::kResidual);
        h = x + a;
    }
    const at::Tensor f = ffn(ln2(h));
    nvtx::Region range(region::kResidual);
    return probe::seen(*this, {x}, h + f);
}

TransformerLMImpl::TransformerLMImpl(const ModelConfig& cfg, int64_t maxSeqLen, at::Device device)
    : config(cfg) {
    embedding = register_module("token_embeddings", Embedding(cfg.vocabSize, cfg.dModel, device));
    layers = register_module("layers", torch::nn::ModuleList());
    for (int64_t i = 0; i < cfg.numLayers; ++i) {
        blocks.emplace_back(cfg.dModel, cfg.numHeads, cfg.dFf, device);
        layers->push_back(blocks.back());
    }
    lnFinal = register_module("ln_final", RMSNorm(cfg.dModel, kRmsNormEps, device));
    lmHead = register_module("lm_head", Linear(cfg.dModel, cfg.vocabSize, device));
    const RotaryTables tables =
        makeRotaryTables(cfg.dModel / cfg.numHeads, maxSeqLen, cfg.ropeTheta);
    rotary = {tables.cos.to(device), tables.sin.to(device)};
    causalMask =
        at::ones({maxSeqLen, maxSeqLen}, at::TensorOptions().dtype(at::kBool).device(device))
            .triu(1);
}

void TransformerLMImpl::setAttention(AttentionKind kind) {
    for (auto& block : blocks) {
        block->attn->kind = kind;
    }
}

at::Tensor TransformerLMImpl::forward(const at::Tensor& ids) {
    const int64_t t = ids.size(1);
    at::Tensor x = embedding(ids); // (B, T, d)
    at::Tensor phases, mask;
    {
        nvtx::Region range(region::kRope);
        phases = rotaryPhases(rotary.cos.slice(0, 0, t), rotary.sin.slice(0, 0, t));
    }
    {
        nvtx::Region range(region::kScores);
        mask = causalMask.slice(0, 0, t).slice(1, 0, t);
    }
    for (auto& block : blocks) {
        x = block(x, phases, mask);
    }
    x = lnFinal(x);
    nvtx::Region range(region::kLmHead);
    return probe::seen(*this, {ids}, lmHead(x)); // (B, T, V)
}

at::Tensor lmLoss(const at::Tensor& logits, const at::Tensor& targets) {
    // cross_entropy_loss is on autocast's fp32 list; the explicit cast keeps fp32 and
    // bf16-pure runs computing the log-softmax in fp32 as well.
    nvtx::Region range(region::kLoss);
    return at::cross_entropy_loss(logits.flatten(0, 1).to(at::kFloat), targets.flatten());
}

} // namespace lmprof::engine::model
