// ExecutionScope (execution_scope.h) on LibTorch's global context.

#include "bench/execution_scope.h"

#include <ATen/Context.h>

namespace lmprof::engine::bench {

namespace {

void allowSdpa(bool flash, bool efficient, bool math, bool cudnn) {
    at::Context& c = at::globalContext();
    c.setSDPUseFlash(flash);
    c.setSDPUseMemEfficient(efficient);
    c.setSDPUseMath(math);
    c.setSDPUseCuDNN(cudnn);
}

} // namespace

ExecutionScope::ExecutionScope(const RunConfig& config) {
    at::Context& c = at::globalContext();
    m_flash = c.userEnabledFlashSDP();
    m_efficient = c.userEnabledMemEfficientSDP();
    m_math = c.userEnabledMathSDP();
    m_cudnn = c.userEnabledCuDNNSDP();
    m_tf32 = c.allowTF32CuBLAS();
    switch (config.attention) {
    case AttentionKind::SdpaFlash:
        allowSdpa(true, false, false, false);
        break;
    case AttentionKind::SdpaEfficient:
        allowSdpa(false, true, false, false);
        break;
    case AttentionKind::SdpaMath:
        allowSdpa(false, false, true, false);
        break;
    case AttentionKind::SdpaCudnn:
        allowSdpa(false, false, false, true);
        break;
    case AttentionKind::Naive:
    case AttentionKind::Sdpa:
        break; // LibTorch's own choice among the backends enabled
    }
    c.setAllowTF32CuBLAS(config.tf32);
}

ExecutionScope::~ExecutionScope() {
    allowSdpa(m_flash, m_efficient, m_math, m_cudnn);
    at::globalContext().setAllowTF32CuBLAS(m_tf32);
}

} // namespace lmprof::engine::bench
