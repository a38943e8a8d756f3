// The data-parallel side of a rank's run, as runner hooks (bench/step_hooks.h): the rank's
// share of the batch, the same starting parameters everywhere, the gradient all-reduce of
// the chosen strategy with its timing, a collective cancel, and the parameter hash at the
// end (docs/DISTRIBUTED.md).
#pragma once

#include "bench/step_hooks.h"
#include "data_parallel/process_group.h"
#include "lmprof/engine/config.h"
#include "platform/cuda_backend.h"

#include <ATen/ATen.h>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

namespace lmprof::engine::ddp {

class GradientSync final : public bench::StepHooks {
public:
    // `userCancel` (may be null) is this process's cancel request; the runner is handed
    // runnerCancel(), which is set only when some rank asked, at the same step on every rank.
    GradientSync(Group group, const RunConfig& config, const RankEndpoint& endpoint,
                 const std::atomic<bool>* userCancel);
    ~GradientSync() override;

    const std::atomic<bool>* runnerCancel() const { return &m_agreedCancel; }

    void attach(bench::StepContext& ctx) override;
    void beforeStep(int index) override;
    void afterBackward(int index) override;
    void stepFinished(const StepRecord& step) override;
    void runEnding(bench::StepContext& ctx) override;

    // Called by the gradient hooks as backward produces parameter i's gradient.
    void gradientReady(size_t param);

    std::vector<DdpStepRecord> takeSteps() { return std::move(m_steps); }
    const std::optional<std::string>& parameterHash() const { return m_hash; }
    int64_t gradientBytes() const { return m_gradientBytes; }
    int allReducesPerStep() const;
    // Tests: keep a copy of the final parameters (named order) when the run ends.
    void keepFinalParameters() { m_keepParameters = true; }
    const std::vector<at::Tensor>& finalParameters() const { return m_finalParameters; }

private:
    struct Bucket {
        std::vector<size_t> params;   // indices into m_params
        std::vector<int64_t> offsets; // of each parameter's gradient in the buffer
        int64_t numel = 0;            // the buffer's length: every gradient's, end to end
        at::ScalarType dtype = at::kFloat;
        at::Tensor buffer;
        int pending = 0;       // gradients still to arrive this step
        bool launched = false; // this step's all-reduce is under way
    };
    // One all-reduce of the step: when it was launched and (Gloo) when it completed.
    struct InFlight {
        c10::intrusive_ptr<c10d::Work> work;
        int64_t launchNs = 0;
        std::shared_ptr<std::atomic<int64_t>> doneNs;
    };

    void buildBuckets();
    void launch(at::Tensor tensor);
    void launchBucket(Bucket& bucket); // fills in missing gradients (zeros) first
    double commMsOfStep() const;
    void removeHooks();

    Group m_group;
    const RunConfig& m_config;
    RankEndpoint m_endpoint;
    const std::atomic<bool>* m_userCancel;
    std::atomic<bool> m_agreedCancel{false};
    bool m_cuda = false;
    at::Device m_device{at::kCPU};

    std::vector<at::Tensor> m_params; // backward order (last layer first)
    std::vector<size_t> m_bucketOf;   // parameter -> bucket (bucketed)
    std::vector<Bucket> m_buckets;
    int64_t m_gradientBytes = 0;

    std::mutex m_mutex; // the hooks may run on autograd's device threads
    std::vector<InFlight> m_inFlight;
    double m_exposedHostMs = 0.0;
    std::unique_ptr<cuda::EventTimer> m_exposedTimer; // CUDA: the wait on the compute stream
    std::vector<DdpStepRecord> m_steps;
    std::optional<std::string> m_hash;
    bool m_keepParameters = false;
    std::vector<at::Tensor> m_finalParameters;
};

// 64-bit FNV-1a of the bytes of every tensor, in order, as 16 hex digits.
std::string hashTensors(const std::vector<at::Tensor>& tensors);

} // namespace lmprof::engine::ddp
