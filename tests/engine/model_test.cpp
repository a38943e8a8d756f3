// The Transformer LM's defining properties (docs/MODEL.md), checked on the real LibTorch modules:
// causality, RoPE, RMSNorm precision, parameter counts, gradient flow, AdamW.

#include "bench/adamw.h"
#include "bench/autocast_scope.h"
#include "model/transformer.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>

using namespace lmprof::engine;
using namespace lmprof::engine::model;

namespace {

ModelConfig tinyModel() {
    return *presetModel("tiny");
}

at::Tensor randomTokens(int64_t b, int64_t t, int64_t vocab) {
    return at::randint(0, vocab, {b, t}, at::TensorOptions().dtype(at::kLong));
}

} // namespace

TEST(Model, ChangingALaterTokenLeavesEarlierLogitsUnchanged) {
    at::manual_seed(1);
    TransformerLM lm(tinyModel(), 16);
    at::Tensor ids = randomTokens(2, 16, 10000);
    const at::Tensor before = lm->forward(ids).detach();
    const int64_t t = 9;
    at::Tensor changed = ids.clone();
    changed.index_put_({at::indexing::Slice(), t + 1}, (ids.select(1, t + 1) + 17) % 10000);
    const at::Tensor after = lm->forward(changed).detach();
    // Positions <= t see only tokens <= t: identical logits.
    EXPECT_TRUE(at::equal(before.slice(1, 0, t + 1), after.slice(1, 0, t + 1)));
    // The changed position itself must move (otherwise the test could not fail).
    EXPECT_GT((before.select(1, t + 1) - after.select(1, t + 1)).abs().max().item<double>(), 1e-4);
}

TEST(Model, RopePreservesNormsAndDependsOnlyOnRelativePosition) {
    const int64_t dh = 16;
    const RotaryTables tables = makeRotaryTables(dh, 64, 10000.0);
    at::manual_seed(2);
    const at::Tensor q = at::randn({dh});
    const at::Tensor k = at::randn({dh});
    // Place the same q at position m and k at position n: (1, 1, T, dh) with T = 64.
    auto rotateAt = [&](const at::Tensor& v, int64_t pos) {
        at::Tensor x = at::zeros({1, 1, 64, dh});
        x.index_put_({0, 0, pos}, v);
        return applyRotary(x, rotaryPhases(tables.cos, tables.sin)).index({0, 0, pos});
    };
    const double d1 = at::dot(rotateAt(q, 10), rotateAt(k, 3)).item<double>();
    const double d2 = at::dot(rotateAt(q, 40), rotateAt(k, 33)).item<double>();
    const double d3 = at::dot(rotateAt(q, 10), rotateAt(k, 4)).item<double>();
    EXPECT_NEAR(d1, d2, 1e-4);          // same offset 7
    EXPECT_GT(std::abs(d1 - d3), 1e-3); // a different offset gives a different score
    EXPECT_NEAR(rotateAt(q, 37).norm().item<double>(), q.norm().item<double>(), 1e-5);
    // Position 0 is the identity; pairs are interleaved (even, odd): at position 1 the first
    // pair rotates by angle 1 (frequency theta^0).
    EXPECT_TRUE(at::allclose(rotateAt(q, 0), q));
    at::Tensor e0 = at::zeros({dh});
    e0[0] = 1.0;
    const at::Tensor r = rotateAt(e0, 1);
    EXPECT_NEAR(r[0].item<double>(), std::cos(1.0), 1e-6);
    EXPECT_NEAR(r[1].item<double>(), std::sin(1.0), 1e-6);
    EXPECT_NEAR(r.slice(0, 2).abs().sum().item<double>(), 0.0, 1e-7);
}

TEST(Model, RmsNormComputesInFp32AndCastsBack) {
    RMSNorm norm(64);
    at::manual_seed(3);
    const at::Tensor x32 = at::randn({4, 64}) * 3.0;
    const at::Tensor x16 = x32.to(at::kBFloat16);
    const at::Tensor y = norm->forward(x16);
    EXPECT_EQ(y.scalar_type(), at::kBFloat16);
    // Reference on the same bf16 input, computed in fp64 and rounded once to bf16: an fp32
    // computation rounds to the same values; a bf16 one would not in general.
    const at::Tensor xd = x16.to(at::kDouble);
    const at::Tensor ref = (xd * at::rsqrt(xd.pow(2).mean(-1, true) + 1e-5)).to(at::kBFloat16);
    const double mismatch = (y.to(at::kDouble) - ref.to(at::kDouble)).abs().max().item<double>();
    EXPECT_LE(mismatch, 1e-2) << "bf16 rounding of an fp32 result differs by at most 1 ulp";
    // Rows come out with unit RMS.
    const at::Tensor rms = y.to(at::kFloat).pow(2).mean(-1).sqrt();
    EXPECT_TRUE(at::allclose(rms, at::ones({4}), 1e-2, 1e-2));
    EXPECT_TRUE(at::equal(norm->weight, at::ones({64})));
}

TEST(Model, ModuleParameterCountEqualsTheFormula) {
    for (const ModelConfig& m : {tinyModel(), [] {
                                     ModelConfig c;
                                     c.preset = "custom";
                                     c.dModel = 96;
                                     c.dFf = 200;
                                     c.numLayers = 3;
                                     c.numHeads = 6;
                                     c.vocabSize = 777;
                                     return c;
                                 }()}) {
        TransformerLM lm(m, 8);
        int64_t n = 0;
        for (const auto& p : lm->parameters()) {
            n += p.numel();
        }
        EXPECT_EQ(n, parameterCount(m)) << m.dModel;
        // No biases anywhere, no weight tying: every parameter is a distinct tensor.
        for (const auto& item : lm->named_parameters()) {
            EXPECT_EQ(item.key().find("bias"), std::string::npos) << item.key();
        }
        EXPECT_FALSE(lm->embedding->weight.is_same(lm->lmHead->weight));
    }
}

TEST(Model, InitialisationIsTruncatedNormalWithTheSpecStd) {
    at::manual_seed(4);
    Linear lin(512, 256);
    const double std = std::sqrt(2.0 / (512 + 256));
    const at::Tensor w = lin->weight.detach();
    EXPECT_LE(w.abs().max().item<double>(), 3.0 * std + 1e-7);
    // Truncation at 3 sigma shrinks the std by about 1.3%.
    EXPECT_NEAR(w.std().item<double>(), std * 0.9866, std * 0.02);
    Embedding emb(1000, 64);
    EXPECT_LE(emb->weight.abs().max().item<double>(), 3.0 + 1e-6);
    EXPECT_NEAR(emb->weight.std().item<double>(), 0.9866, 0.02);
}

TEST(Model, GradientsReachEveryParameter) {
    at::manual_seed(5);
    TransformerLM lm(tinyModel(), 16);
    const at::Tensor ids = randomTokens(2, 16, 10000);
    const at::Tensor loss = lmLoss(lm->forward(ids), randomTokens(2, 16, 10000));
    // Untrained model: loss near ln(V).
    EXPECT_NEAR(loss.item<double>(), std::log(10000.0), 1.5);
    loss.backward();
    for (const auto& item : lm->named_parameters()) {
        const at::Tensor& g = item.value().grad();
        ASSERT_TRUE(g.defined()) << item.key();
        EXPECT_GT(g.abs().sum().item<double>(), 0.0) << item.key();
    }
}

TEST(Model, AutocastRunsMatmulsInBf16AndKeepsLossFp32) {
    at::manual_seed(6);
    TransformerLM lm(tinyModel(), 16);
    const at::Tensor ids = randomTokens(2, 16, 10000);
    at::autocast::set_autocast_enabled(at::kCPU, true);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::increment_nesting();
    const at::Tensor logits = lm->forward(ids);
    const at::Tensor loss = lmLoss(logits, ids);
    at::autocast::decrement_nesting();
    at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(at::kCPU, false);
    EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
    EXPECT_EQ(loss.scalar_type(), at::kFloat);
    EXPECT_EQ(lm->lmHead->weight.scalar_type(), at::kFloat); // fp32 master weights
}

namespace {

// The loss and every parameter's gradient of one forward and backward, attention computed
// as `kind`, under autocast to `autocast` when given.
std::pair<at::Tensor, std::vector<at::Tensor>>
lossAndGrads(TransformerLM& lm, AttentionKind kind, const at::Tensor& ids,
             std::optional<at::ScalarType> autocast) {
    lm->setAttention(kind);
    lm->zero_grad();
    at::Tensor loss;
    {
        bench::AutocastScope scope(at::kCPU, autocast);
        loss = lmLoss(lm->forward(ids), ids);
    }
    loss.backward();
    std::vector<at::Tensor> grads;
    for (const auto& p : lm->parameters()) {
        grads.push_back(p.grad().clone());
    }
    return {loss.detach(), grads};
}

} // namespace

TEST(Model, SdpaAttentionEqualsTheNaiveMathForwardAndGradients) {
    // attention = sdpa is the same function: the loss and every gradient within rounding,
    // in fp32 and under bf16 autocast (whose tolerance is bf16's: 8 bits of mantissa).
    for (auto [autocast, tolerance] :
         {std::pair{std::optional<at::ScalarType>(), 1e-5},
          std::pair{std::optional<at::ScalarType>(at::kBFloat16), 3e-2}}) {
        SCOPED_TRACE(autocast ? "bf16 autocast" : "fp32");
        at::manual_seed(11);
        TransformerLM lm(tinyModel(), 32);
        const at::Tensor ids = randomTokens(2, 32, 10000);
        const auto [naiveLoss, naiveGrads] = lossAndGrads(lm, AttentionKind::Naive, ids, autocast);
        const auto [sdpaLoss, sdpaGrads] = lossAndGrads(lm, AttentionKind::Sdpa, ids, autocast);
        EXPECT_NEAR(sdpaLoss.item<double>(), naiveLoss.item<double>(),
                    tolerance * std::abs(naiveLoss.item<double>()));
        ASSERT_EQ(sdpaGrads.size(), naiveGrads.size());
        double worst = 0.0;
        for (size_t i = 0; i < naiveGrads.size(); ++i) {
            // Relative to the gradient's own scale, so that tiny gradients are not judged by
            // the absolute rounding of large ones.
            const double scale = naiveGrads[i].abs().max().item<double>() + 1e-12;
            worst =
                std::max(worst, (sdpaGrads[i] - naiveGrads[i]).abs().max().item<double>() / scale);
        }
        EXPECT_LT(worst, tolerance * 10) << "largest gradient difference, relative to its scale";
    }
}

TEST(Model, FusedAdamWMatchesTorchOptimAdamW) {
    at::manual_seed(7);
    TransformerLM a(tinyModel(), 16);
    at::manual_seed(7);
    TransformerLM b(tinyModel(), 16);
    const at::Tensor ids = randomTokens(2, 16, 10000);
    const at::Tensor targets = randomTokens(2, 16, 10000);

    bench::FusedAdamW fused(a->parameters());
    torch::optim::AdamW reference(
        b->parameters(),
        torch::optim::AdamWOptions(1e-3).betas({0.9, 0.999}).eps(1e-8).weight_decay(0.01));
    const std::vector<at::Tensor> before = [&] {
        std::vector<at::Tensor> v;
        for (const auto& p : a->parameters()) {
            v.push_back(p.detach().clone());
        }
        return v;
    }();
    for (int step = 0; step < 3; ++step) {
        lmLoss(a->forward(ids), targets).backward();
        fused.step();
        fused.zeroGrad();
        lmLoss(b->forward(ids), targets).backward();
        reference.step();
        reference.zero_grad();
    }
    const auto pa = a->parameters();
    const auto pb = b->parameters();
    double maxDiff = 0.0;
    double minChange = 1e9;
    for (size_t i = 0; i < pa.size(); ++i) {
        maxDiff = std::max(maxDiff, (pa[i] - pb[i]).abs().max().item<double>());
        minChange = std::min(minChange, (pa[i] - before[i]).abs().max().item<double>());
        EXPECT_FALSE(pa[i].grad().defined()); // zeroGrad sets to none
    }
    EXPECT_LT(maxDiff, 1e-5);
    // lr 1e-3 for 3 steps: every tensor moved by roughly 1e-3 per step somewhere.
    EXPECT_GT(minChange, 1e-4);
}
