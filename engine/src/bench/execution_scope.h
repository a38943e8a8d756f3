// The process-wide LibTorch settings a run's execution variants ask for (ChoiceField, config.h),
// set for the lifetime of the run and restored after it, exceptions included: which
// scaled_dot_product_attention backends may run (attention sdpa-flash, ...: that one only)
// and whether cuBLAS may compute fp32 matmuls in TF32. The engine runs one experiment at a
// time, so nothing else sees them.
#pragma once

#include "lmprof/engine/config.h"

namespace lmprof::engine::bench {

class ExecutionScope {
public:
    explicit ExecutionScope(const RunConfig& config);
    ~ExecutionScope();
    ExecutionScope(const ExecutionScope&) = delete;
    ExecutionScope& operator=(const ExecutionScope&) = delete;

private:
    bool m_flash, m_efficient, m_math, m_cudnn, m_tf32;
};

} // namespace lmprof::engine::bench
