// FusedAdamW: state layout and the call into ATen's fused kernel.

#include "bench/adamw.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

namespace lmprof::engine::bench {

FusedAdamW::FusedAdamW(std::vector<at::Tensor> params, AdamWOptions options)
    : m_params(std::move(params)), m_options(options) {}

void FusedAdamW::step(const std::optional<at::Tensor>& gradScale,
                      const std::optional<at::Tensor>& foundInf) {
    c10::NoGradGuard noGrad;
    if (m_expAvg.empty()) {
        for (const auto& p : m_params) {
            m_expAvg.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
            m_expAvgSq.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
            m_steps.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
        }
    }
    std::vector<at::Tensor> params, grads, expAvg, expAvgSq, steps;
    for (size_t i = 0; i < m_params.size(); ++i) {
        const at::Tensor& g = m_params[i].grad();
        if (!g.defined()) {
            continue;
        }
        params.push_back(m_params[i]);
        grads.push_back(g);
        expAvg.push_back(m_expAvg[i]);
        expAvgSq.push_back(m_expAvgSq[i]);
        steps.push_back(m_steps[i]);
    }
    if (params.empty()) {
        return;
    }
    // The kernel reads the step count after it has been advanced (torch.optim does the same).
    at::_foreach_add_(steps, 1.0);
    at::_fused_adamw_(params, grads, expAvg, expAvgSq, /*max_exp_avg_sqs=*/{}, steps, m_options.lr,
                      m_options.beta1, m_options.beta2, m_options.weightDecay, m_options.eps,
                      /*amsgrad=*/false, /*maximize=*/false, gradScale, foundInf);
    if (foundInf) {
        // A skipped update must not count as a step.
        at::_foreach_sub_(steps, std::vector<at::Tensor>(steps.size(), *foundInf));
    }
}

void FusedAdamW::zeroGrad() {
    for (auto& p : m_params) {
        p.mutable_grad() = at::Tensor();
    }
}

} // namespace lmprof::engine::bench
