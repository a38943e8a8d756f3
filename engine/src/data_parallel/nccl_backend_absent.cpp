// Built when LibTorch has no CUDA: there is no NCCL to make a process group with.

#include "data_parallel/process_group.h"

#include <stdexcept>

namespace lmprof::engine::ddp {

c10::intrusive_ptr<c10d::Backend> makeNcclBackend(const c10::intrusive_ptr<c10d::Store>&, int, int,
                                                  std::chrono::milliseconds, int) {
    throw std::runtime_error("this lmprof was built against a LibTorch without CUDA, so it has "
                             "no NCCL; use --backend gloo");
}

} // namespace lmprof::engine::ddp
