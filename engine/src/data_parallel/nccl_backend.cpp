// ProcessGroupNCCL, compiled when LibTorch has CUDA (engine/CMakeLists.txt defines
// USE_C10D_NCCL for this file only and finds the wheel's nccl.h).

#include "data_parallel/process_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

namespace lmprof::engine::ddp {

c10::intrusive_ptr<c10d::Backend> makeNcclBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                                  int rank, int worldSize,
                                                  std::chrono::milliseconds timeout,
                                                  int cudaIndex) {
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, worldSize, options);
    // Each collective's GPU duration is the step's communication time (GradientSync reads
    // Work::getDuration), which NCCL only records with timing on.
    group->enableCollectivesTiming();
    // Bound to its device, the group creates its communicator now (a missing peer fails the
    // rendezvous rather than the first step).
    const at::Device device(at::kCUDA, static_cast<c10::DeviceIndex>(cudaIndex));
    group->setBoundDeviceId(device);
    group->eagerConnectSingleDevice(device);
    return group;
}

} // namespace lmprof::engine::ddp
