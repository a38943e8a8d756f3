// Joining a data-parallel run with LibTorch's own c10d: a TCPStore for the rendezvous (rank
// 0 hosts it at MASTER_ADDR:MASTER_PORT) and a Gloo or NCCL process group over it.
#pragma once

#include "lmprof/engine/ddp.h"

#include <chrono>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace lmprof::engine::ddp {

struct Group {
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<c10d::Backend> backend;
};

// Waits (up to `timeout`) for every rank to reach the store, then builds the process group.
// Throws std::runtime_error saying what failed: the port in use, a peer that never came.
Group join(const RankEndpoint& endpoint, DdpBackend backend, std::chrono::milliseconds timeout,
           int cudaIndex);

// ProcessGroupNCCL on CUDA device `cudaIndex` (nccl_backend.cpp); without CUDA in LibTorch
// it throws, naming the build.
c10::intrusive_ptr<c10d::Backend> makeNcclBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                  int rank, int worldSize,
                                                  std::chrono::milliseconds timeout, int cudaIndex);

} // namespace lmprof::engine::ddp
