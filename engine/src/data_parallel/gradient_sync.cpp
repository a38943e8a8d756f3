// Gradient all-reduce strategies and their timing (docs/DISTRIBUTED.md):
//   naive     every gradient all-reduced on its own after backward, one after another;
//   flat      all gradients copied into one buffer, one all-reduce after backward;
//   bucketed  gradients copied into buckets of bucket_mb as backward produces them (a
//             post-accumulate-grad hook per parameter); a full bucket is all-reduced at once,
//             asynchronously, while backward goes on; after backward the step waits for the
//             rest.
// Every all-reduce sums; the result is divided by the world size (the mean gradient), so
// every rank applies the same update.

#include "data_parallel/gradient_sync.h"

#include "bench/step_context.h"

#include <chrono>
#include <cstdio>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace lmprof::engine::ddp {

namespace {

using Clock = std::chrono::steady_clock;

int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
}

struct ReadyHook final : torch::autograd::PostAccumulateGradHook {
    ReadyHook(GradientSync* sync, size_t param) : sync(sync), param(param) {}
    void operator()(const torch::autograd::Variable&) override { sync->gradientReady(param); }
    GradientSync* sync;
    size_t param;
};

} // namespace

std::string hashTensors(const std::vector<at::Tensor>& tensors) {
    uint64_t h = 1469598103934665603ull;
    for (const auto& t : tensors) {
        const at::Tensor host = t.detach().to(at::kCPU).contiguous();
        const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
        const size_t n = host.numel() * host.element_size();
        for (size_t i = 0; i < n; ++i) {
            h = (h ^ bytes[i]) * 1099511628211ull;
        }
    }
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(h));
    return text;
}

GradientSync::GradientSync(Group group, const RunConfig& config, const RankEndpoint& endpoint,
                           const std::atomic<bool>* userCancel)
    : m_group(std::move(group)), m_config(config), m_endpoint(endpoint), m_userCancel(userCancel) {}

GradientSync::~GradientSync() {
    removeHooks();
}

int GradientSync::allReducesPerStep() const {
    return m_config.ddp->strategy == DdpStrategy::Naive ? static_cast<int>(m_params.size())
                                                        : static_cast<int>(m_buckets.size());
}

void GradientSync::attach(bench::StepContext& ctx) {
    m_device = ctx.inputs.device();
    m_cuda = m_device.is_cuda();
    if (m_cuda) {
        m_exposedTimer = std::make_unique<cuda::EventTimer>();
    }
    // This rank's rows of the global batch.
    bench::Batch batch =
        bench::makeBatch(m_config, m_device, m_endpoint.rank, m_endpoint.worldSize);
    ctx.inputs = std::move(batch.inputs);
    ctx.targets = std::move(batch.targets);

    // Backward produces gradients roughly in reverse order of the parameters.
    const auto params = ctx.model->parameters();
    m_params.assign(params.rbegin(), params.rend());
    m_gradientBytes = 0;
    for (const auto& p : m_params) {
        m_gradientBytes += p.numel() * p.element_size();
    }
    // Every rank starts from rank 0's parameters (the seed makes them equal already; this
    // is what DDP does, and it makes sure).
    {
        at::NoGradGuard noGrad;
        for (auto& p : m_params) {
            std::vector<at::Tensor> one{p.data()};
            m_group.backend->broadcast(one)->wait();
        }
    }
    buildBuckets();
}

void GradientSync::buildBuckets() {
    m_buckets.clear();
    m_bucketOf.assign(m_params.size(), 0);
    if (m_config.ddp->strategy == DdpStrategy::Naive) {
        return;
    }
    const int64_t limit = m_config.ddp->strategy == DdpStrategy::Flat
                              ? INT64_MAX
                              : static_cast<int64_t>(m_config.ddp->bucketMb * 1024 * 1024);
    const auto full = [limit](const Bucket& b) {
        return b.numel * static_cast<int64_t>(c10::elementSize(b.dtype)) >= limit;
    };
    for (size_t i = 0; i < m_params.size(); ++i) {
        const at::Tensor& p = m_params[i];
        // A new bucket when this one is full or holds another dtype (bf16-pure has one
        // dtype; the check keeps a mixed model correct).
        if (m_buckets.empty() || full(m_buckets.back()) ||
            m_buckets.back().dtype != p.scalar_type()) {
            m_buckets.emplace_back();
            m_buckets.back().dtype = p.scalar_type();
        }
        Bucket& b = m_buckets.back();
        b.offsets.push_back(b.numel);
        b.params.push_back(i);
        b.numel += p.numel();
        m_bucketOf[i] = m_buckets.size() - 1;
    }
    for (auto& b : m_buckets) {
        b.buffer = at::empty({b.numel}, at::TensorOptions().dtype(b.dtype).device(m_device));
    }
    if (m_config.ddp->strategy == DdpStrategy::Bucketed) {
        for (size_t i = 0; i < m_params.size(); ++i) {
            torch::autograd::impl::set_post_acc_grad_hooks(m_params[i],
                                                           std::make_unique<ReadyHook>(this, i));
        }
    }
}

void GradientSync::removeHooks() {
    if (m_config.ddp && m_config.ddp->strategy == DdpStrategy::Bucketed) {
        for (auto& p : m_params) {
            torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
        }
    }
}

void GradientSync::beforeStep(int) {
    // A cancel is agreed on: every rank stops before the same step, so none is left waiting
    // in an all-reduce for a peer that stopped.
    const bool mine = m_userCancel && m_userCancel->load(std::memory_order_relaxed);
    std::vector<at::Tensor> flag{
        at::full({1}, mine ? 1.0f : 0.0f, at::TensorOptions().device(m_device))};
    c10d::AllreduceOptions max;
    max.reduceOp = c10d::ReduceOp::MAX;
    m_group.backend->allreduce(flag, max)->wait();
    if (flag[0].item<float>() > 0.0f) {
        m_agreedCancel.store(true);
    }
    std::lock_guard lock(m_mutex);
    m_inFlight.clear();
    for (auto& b : m_buckets) {
        b.pending = static_cast<int>(b.params.size());
        b.launched = false;
    }
}

void GradientSync::launch(at::Tensor tensor) {
    InFlight f;
    f.doneNs = std::make_shared<std::atomic<int64_t>>(0);
    f.launchNs = nowNs();
    std::vector<at::Tensor> tensors{std::move(tensor)};
    f.work = m_group.backend->allreduce(tensors);
    if (!m_cuda) {
        // Gloo completes the future on its own thread when the all-reduce is done.
        f.work->getFuture()->addCallback(
            [done = f.doneNs](c10::ivalue::Future&) { done->store(nowNs()); });
    }
    m_inFlight.push_back(std::move(f));
}

void GradientSync::launchBucket(Bucket& b) {
    for (size_t k = 0; k < b.params.size(); ++k) {
        const at::Tensor& p = m_params[b.params[k]];
        at::Tensor slot = b.buffer.narrow(0, b.offsets[k], p.numel());
        if (p.grad().defined()) {
            slot.copy_(p.grad().reshape(-1));
        } else {
            slot.zero_(); // a parameter this step did not use
        }
    }
    b.launched = true;
    launch(b.buffer);
}

void GradientSync::gradientReady(size_t param) {
    std::lock_guard lock(m_mutex);
    Bucket& b = m_buckets[m_bucketOf[param]];
    if (b.launched || --b.pending > 0) {
        return;
    }
    launchBucket(b);
}

void GradientSync::afterBackward(int) {
    const auto t0 = Clock::now();
    if (m_exposedTimer) {
        m_exposedTimer->start();
    }
    const double world = static_cast<double>(m_endpoint.worldSize);
    at::NoGradGuard noGrad;
    std::lock_guard lock(m_mutex);
    if (m_config.ddp->strategy == DdpStrategy::Naive) {
        for (auto& p : m_params) {
            if (!p.grad().defined()) {
                p.mutable_grad() = at::zeros_like(p);
            }
            launch(p.grad());
            m_inFlight.back().work->wait();
            p.grad().div_(world);
        }
    } else {
        for (auto& b : m_buckets) {
            if (!b.launched) {
                launchBucket(b);
            }
        }
        for (auto& f : m_inFlight) {
            f.work->wait();
        }
        for (auto& b : m_buckets) {
            b.buffer.div_(world);
            for (size_t k = 0; k < b.params.size(); ++k) {
                at::Tensor& p = m_params[b.params[k]];
                const at::Tensor slot = b.buffer.narrow(0, b.offsets[k], p.numel()).view_as(p);
                if (p.grad().defined()) {
                    p.mutable_grad().copy_(slot);
                } else {
                    p.mutable_grad() = slot.clone();
                }
            }
        }
    }
    if (m_exposedTimer) {
        m_exposedTimer->stop();
    }
    m_exposedHostMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Gloo: the time any all-reduce of the step was in flight (overlapping ones counted once).
// NCCL: the collectives' own GPU durations, which run one after another on NCCL's stream.
double GradientSync::commMsOfStep() const {
    if (m_cuda) {
        double sum = 0.0;
        for (const auto& f : m_inFlight) {
            sum += std::max(0.0f, f.work->getDuration());
        }
        return sum;
    }
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const auto& f : m_inFlight) {
        spans.emplace_back(f.launchNs, std::max(f.launchNs, f.doneNs->load()));
    }
    std::sort(spans.begin(), spans.end());
    int64_t total = 0;
    int64_t end = INT64_MIN;
    for (const auto& [a, b] : spans) {
        const int64_t from = std::max(a, end);
        if (b > from) {
            total += b - from;
        }
        end = std::max(end, b);
    }
    return static_cast<double>(total) / 1e6;
}

void GradientSync::stepFinished(const StepRecord& step) {
    DdpStepRecord r;
    r.index = step.index;
    r.warmup = step.warmup;
    r.stepMs = step.totalMs;
    std::lock_guard lock(m_mutex);
    r.exposedCommMs = m_exposedTimer ? m_exposedTimer->elapsedMs() : m_exposedHostMs;
    r.exposedCommMs = std::min(r.exposedCommMs, r.stepMs);
    r.commMs = commMsOfStep();
    r.bytes = m_gradientBytes;
    m_steps.push_back(r);
}

void GradientSync::runEnding(bench::StepContext& ctx) {
    removeHooks();
    std::vector<at::Tensor> named;
    for (const auto& item : ctx.model->named_parameters()) {
        named.push_back(item.value());
    }
    m_hash = hashTensors(named);
    if (m_keepParameters) {
        for (const auto& t : named) {
            m_finalParameters.push_back(t.detach().to(at::kCPU).clone());
        }
    }
}

} // namespace lmprof::engine::ddp
