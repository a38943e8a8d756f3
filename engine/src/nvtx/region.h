// A named range of a step (docs/NVTX.md) that both nsys and lmprof's op profiler see: an
// NVTX range in the "lmprof" domain and a RecordFunction user scope, which Kineto records
// as a user annotation. With neither a tool attached nor the profiler on, it costs a null
// function-pointer branch and a check of RecordFunction's (empty) callback list.
#pragma once

#include "nvtx/nvtx_ranges.h"

#include <ATen/record_function.h>

namespace lmprof::engine::nvtx {

class Region {
public:
    // `name` must outlive the range: a literal or one of lmprof/engine/op_profile.h's names.
    explicit Region(const char* name) : m_record(at::RecordScope::USER_SCOPE) {
        pushRange(name);
        if (m_record.isActive()) {
            m_record.before(name);
        }
    }
    ~Region() { popRange(); } // m_record ends its scope as it is destroyed, right after
    Region(const Region&) = delete;
    Region& operator=(const Region&) = delete;

private:
    at::RecordFunction m_record;
};

} // namespace lmprof::engine::nvtx
