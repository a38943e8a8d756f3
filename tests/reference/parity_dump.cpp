// Writes what the parity check needs from the C++ engine: the initial weights (raw fp32
// plus a manifest of names and shapes), the input and target tokens, the logits and loss,
// and the loss after one AdamW step. Usage: parity_dump OUTDIR d_model d_ff layers heads
// vocab batch ctx seed

#include "bench/adamw.h"
#include "model/transformer.h"

#include <ATen/ATen.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

using namespace lmprof::engine;

namespace {

void writeRaw(const std::filesystem::path& path, const at::Tensor& t) {
    const at::Tensor c = t.detach().contiguous().cpu();
    std::ofstream out(path, std::ios::binary);
    out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.nbytes()));
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 10) {
        std::cerr << "usage: parity_dump OUTDIR d_model d_ff layers heads vocab batch ctx seed\n";
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    ModelConfig m;
    m.preset = "custom";
    m.dModel = std::stoll(argv[2]);
    m.dFf = std::stoll(argv[3]);
    m.numLayers = std::stoll(argv[4]);
    m.numHeads = std::stoll(argv[5]);
    m.vocabSize = std::stoll(argv[6]);
    const int64_t batch = std::stoll(argv[7]);
    const int64_t ctx = std::stoll(argv[8]);
    at::manual_seed(std::stoull(argv[9]));

    model::TransformerLM lm(m, ctx);
    const at::Tensor tokens = at::randint(0, m.vocabSize, {batch, ctx + 1}, at::kLong);
    const at::Tensor inputs = tokens.slice(1, 0, ctx).contiguous();
    const at::Tensor targets = tokens.slice(1, 1, ctx + 1).contiguous();

    nlohmann::json params = nlohmann::json::array();
    std::ofstream weights(dir / "weights.f32", std::ios::binary);
    int64_t offset = 0;
    for (const auto& item : lm->named_parameters()) {
        const at::Tensor p = item.value().detach().contiguous();
        weights.write(static_cast<const char*>(p.data_ptr()),
                      static_cast<std::streamsize>(p.nbytes()));
        params.push_back({{"name", item.key()}, {"shape", p.sizes().vec()}, {"offset", offset}});
        offset += p.numel();
    }
    weights.close();

    const at::Tensor logits = lm->forward(inputs);
    const at::Tensor loss = model::lmLoss(logits, targets);
    writeRaw(dir / "inputs.i64", inputs);
    writeRaw(dir / "targets.i64", targets);
    writeRaw(dir / "logits.f32", logits);

    bench::FusedAdamW optimizer(lm->parameters());
    loss.backward();
    optimizer.step();
    optimizer.zeroGrad();
    const double lossAfterStep = model::lmLoss(lm->forward(inputs), targets).item<double>();

    const nlohmann::json manifest = {{"config",
                                      {{"d_model", m.dModel},
                                       {"d_ff", m.dFf},
                                       {"num_layers", m.numLayers},
                                       {"num_heads", m.numHeads},
                                       {"vocab_size", m.vocabSize},
                                       {"rope_theta", m.ropeTheta},
                                       {"batch", batch},
                                       {"context_length", ctx}}},
                                     {"params", params},
                                     {"loss", loss.item<double>()},
                                     {"loss_after_step", lossAfterStep}};
    std::ofstream(dir / "manifest.json") << manifest.dump(2) << "\n";
    return 0;
}
