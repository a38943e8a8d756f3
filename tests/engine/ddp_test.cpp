// Data-parallel runs on c10d (docs/DISTRIBUTED.md): Gloo's headers (Debian) against the
// wheel's Gloo, the three strategies against each other and against one process on the
// whole batch, the rendezvous's refusals, and the records' JSON. Ranks run as threads of
// this process here; the CLI tests run them as processes.

#include "bench/step_context.h"
#include "bench/step_hooks.h"
#include "data_parallel/gradient_sync.h"
#include "data_parallel/process_group.h"
#include "lmprof/engine/data_parallel.h"
#include "lmprof/engine/result_io.h"

#include <arpa/inet.h>
#include <chrono>
#include <future>
#include <gtest/gtest.h>
#include <map>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace lmprof::engine;

namespace {

int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

RankEndpoint endpoint(int rank, int world, int port) {
    RankEndpoint e;
    e.rank = rank;
    e.worldSize = world;
    e.localRank = rank;
    e.localWorldSize = world;
    e.masterAddr = "127.0.0.1";
    e.masterPort = port;
    return e;
}

RunConfig tinyDdp(DdpStrategy strategy, int world = 2) {
    RunConfig c;
    c.model = *presetModel("tiny");
    c.model.vocabSize = 256;
    c.contextLength = 16;
    c.batchSize = 2;
    c.warmupSteps = 1;
    c.measureSteps = 2;
    c.device = "cpu";
    c.threads = 1;
    c.sampleHz = 0;
    c.telemetryHz = 0;
    c.ddp = DdpRequest{world, DdpBackend::Gloo, strategy, 0.05, 20.0};
    return c;
}

// Keeps the final parameters of a single-process run.
class KeepParameters final : public bench::StepHooks {
public:
    void runEnding(bench::StepContext& ctx) override {
        for (const auto& item : ctx.model->named_parameters()) {
            params.push_back(item.value().detach().clone());
        }
    }
    std::vector<at::Tensor> params;
};

struct RankRun {
    RunResult result;
    std::vector<at::Tensor> params;
    std::optional<std::string> hash;
};

// The sync with a signal once this rank's model is built (attach comes right after).
class SignalOnAttach final : public bench::StepHooks {
public:
    SignalOnAttach(ddp::GradientSync& sync, std::promise<void>* built)
        : m_sync(sync), m_built(built) {}
    void attach(bench::StepContext& ctx) override {
        if (m_built) {
            m_built->set_value();
        }
        m_sync.attach(ctx);
    }
    void beforeStep(int i) override { m_sync.beforeStep(i); }
    void afterBackward(int i) override { m_sync.afterBackward(i); }
    void stepFinished(const StepRecord& s) override { m_sync.stepFinished(s); }
    void runEnding(bench::StepContext& ctx) override { m_sync.runEnding(ctx); }

private:
    ddp::GradientSync& m_sync;
    std::promise<void>* m_built;
};

// Every rank of a run as a thread: join, run with the strategy's sync, keep the parameters.
// Threads share LibTorch's default generator, which draws the initial weights: rank 0
// builds its model first (the others start once it has), so its weights, which it
// broadcasts, are exactly what one process with the same seed draws.
std::vector<RankRun> runRanks(const RunConfig& config) {
    const int world = config.ddp->worldSize;
    const int port = freePort();
    std::promise<void> rankZeroBuilt;
    std::shared_future<void> built = rankZeroBuilt.get_future().share();
    std::vector<std::future<RankRun>> futures;
    for (int r = 0; r < world; ++r) {
        futures.push_back(std::async(std::launch::async, [&, r] {
            const auto e = endpoint(r, world, port);
            auto group = ddp::join(e, DdpBackend::Gloo, std::chrono::seconds(20), 0);
            ddp::GradientSync sync(std::move(group), config, e, nullptr);
            sync.keepFinalParameters();
            SignalOnAttach hooks(sync, r == 0 ? &rankZeroBuilt : nullptr);
            if (r != 0) {
                built.wait();
            }
            RankRun run;
            run.result = bench::runBenchmarkWith(config, "r" + std::to_string(r), nullptr,
                                                 sync.runnerCancel(), &hooks);
            run.params = sync.finalParameters();
            run.hash = sync.parameterHash();
            return run;
        }));
    }
    std::vector<RankRun> runs;
    for (auto& f : futures) {
        runs.push_back(f.get());
    }
    return runs;
}

} // namespace

// The wheel's Gloo runs the collectives; Debian's headers only describe its types. Sums of
// every dtype lmprof all-reduces, and a broadcast, come out exact on every rank.
TEST(Ddp, GlooHeadersAgreeWithTheWheelsGloo) {
    const int port = freePort();
    constexpr int kWorld = 3;
    std::vector<std::future<std::vector<at::Tensor>>> ranks;
    for (int r = 0; r < kWorld; ++r) {
        ranks.push_back(std::async(std::launch::async, [r, port] {
            auto g =
                ddp::join(endpoint(r, kWorld, port), DdpBackend::Gloo, std::chrono::seconds(20), 0);
            std::vector<at::Tensor> out;
            for (auto dtype : {at::kFloat, at::kDouble, at::kBFloat16, at::kLong}) {
                std::vector<at::Tensor> t{at::arange(1000, at::TensorOptions().dtype(dtype)) *
                                          (r + 1)};
                g.backend->allreduce(t)->wait();
                out.push_back(t[0]);
            }
            std::vector<at::Tensor> b{at::full({4}, static_cast<double>(r + 7))};
            g.backend->broadcast(b)->wait();
            out.push_back(b[0]);
            return out;
        }));
    }
    for (auto& f : ranks) {
        const auto out = f.get();
        // 1 + 2 + 3 = 6 times each value; bf16 holds 6·k exactly only for small k.
        EXPECT_TRUE(at::equal(out[0], at::arange(1000, at::kFloat) * 6));
        EXPECT_TRUE(at::equal(out[1], at::arange(1000, at::kDouble) * 6));
        EXPECT_TRUE(
            at::equal(out[2].narrow(0, 0, 20), (at::arange(20, at::kFloat) * 6).to(at::kBFloat16)));
        EXPECT_TRUE(at::equal(out[3], at::arange(1000, at::kLong) * 6));
        EXPECT_TRUE(at::equal(out[4], at::full({4}, 7.0)));
    }
}

// Every strategy leaves the ranks bit-identical, and equal (within float rounding) to one
// process training on the two ranks' batches together.
TEST(Ddp, StrategiesKeepRanksIdenticalAndMatchOneProcessOnTheWholeBatch) {
    RunConfig single = tinyDdp(DdpStrategy::Naive);
    single.ddp.reset();
    single.batchSize = 4; // both ranks' rows of the global batch
    KeepParameters reference;
    const RunResult one = bench::runBenchmarkWith(single, "single", nullptr, nullptr, &reference);
    ASSERT_EQ(one.status, RunStatus::Ok) << one.error.value_or("");

    for (auto strategy : kDdpStrategies) {
        SCOPED_TRACE(std::string(toString(strategy)));
        const auto ranks = runRanks(tinyDdp(strategy));
        ASSERT_EQ(ranks.size(), 2u);
        for (const auto& r : ranks) {
            ASSERT_EQ(r.result.status, RunStatus::Ok) << r.result.error.value_or("");
            ASSERT_EQ(r.result.steps.size(), 3u);
        }
        ASSERT_TRUE(ranks[0].hash && ranks[1].hash);
        EXPECT_EQ(*ranks[0].hash, *ranks[1].hash);
        ASSERT_EQ(ranks[0].params.size(), reference.params.size());
        for (size_t i = 0; i < reference.params.size(); ++i) {
            EXPECT_TRUE(at::equal(ranks[0].params[i], ranks[1].params[i])) << i;
            // AdamW divides by sqrt(v): float rounding of the summed gradients moves a weight by
            // up to ~1e-5 after three steps, a wrong gradient by about the learning rate.
            EXPECT_TRUE(at::allclose(ranks[0].params[i], reference.params[i], 1e-3, 1e-4))
                << "parameter " << i << " differs from one process by "
                << (ranks[0].params[i] - reference.params[i]).abs().max().item<double>();
        }
        // The losses are the ranks' own halves: their mean is the single process's loss.
        const double meanLoss =
            (*ranks[0].result.steps[0].loss + *ranks[1].result.steps[0].loss) / 2;
        EXPECT_NEAR(meanLoss, *one.steps[0].loss, 1e-4);
    }
}

// The public entry: rank 0 gathers both ranks' steps, with times that add up.
TEST(Ddp, RankZeroGathersEveryRanksStepsWithConsistentTimes) {
    const RunConfig config = tinyDdp(DdpStrategy::Bucketed);
    const int port = freePort();
    auto other = std::async(std::launch::async, [&] {
        return runDataParallel(config, endpoint(1, 2, port), "ddp", nullptr, nullptr);
    });
    const RunResult r0 = runDataParallel(config, endpoint(0, 2, port), "ddp", nullptr, nullptr);
    const RunResult r1 = other.get();
    ASSERT_EQ(r0.status, RunStatus::Ok) << r0.error.value_or("");
    ASSERT_EQ(r1.status, RunStatus::Ok) << r1.error.value_or("");
    ASSERT_TRUE(r0.ddp);
    EXPECT_EQ(r0.ddp->parametersIdentical, true);
    ASSERT_EQ(r0.ddp->ranks.size(), 2u);
    EXPECT_GT(r0.ddp->buckets, 1) << "0.05 MiB buckets split tiny's gradients";
    EXPECT_EQ(r0.ddp->gradientBytes, parameterCount(config.model) * 4);
    for (const auto& rank : r0.ddp->ranks) {
        EXPECT_FALSE(rank.error) << *rank.error;
        ASSERT_EQ(rank.steps.size(), 3u);
        for (const auto& s : rank.steps) {
            EXPECT_GT(s.stepMs, 0.0);
            EXPECT_GT(s.commMs, 0.0);
            EXPECT_LE(s.exposedCommMs, s.stepMs);
            EXPECT_EQ(s.bytes, r0.ddp->gradientBytes);
        }
    }
    const auto summary = summarizeDdp(*r0.ddp, 2);
    ASSERT_TRUE(summary);
    EXPECT_EQ(summary->steps, 4); // two measured steps on each of two ranks
    EXPECT_NEAR(summary->computeMs + summary->exposedCommMs, summary->stepMs, 1e-9);
    ASSERT_TRUE(summary->busbwGBps && summary->algbwGBps);
    EXPECT_NEAR(*summary->busbwGBps, *summary->algbwGBps, 1e-12) << "2(n-1)/n is 1 for n = 2";
    // Only rank 0 holds the whole report.
    ASSERT_TRUE(r1.ddp);
    EXPECT_EQ(r1.ddp->ranks.size(), 1u);
}

TEST(Ddp, APeerThatNeverComesEndsTheRendezvousWithAClearError) {
    RunConfig config = tinyDdp(DdpStrategy::Flat);
    config.ddp->timeoutS = 2.0;
    const auto t0 = std::chrono::steady_clock::now();
    const RunResult r = runDataParallel(config, endpoint(0, 2, freePort()), "x", nullptr, nullptr);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.status, RunStatus::Error);
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->find("not every rank reached the rendezvous"), std::string::npos)
        << *r.error;
    EXPECT_LT(s, 15.0);
}

TEST(Ddp, APortInUseIsReportedAsSuch) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(::listen(fd, 4), 0);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    RunConfig config = tinyDdp(DdpStrategy::Naive);
    config.ddp->timeoutS = 2.0;
    const RunResult r =
        runDataParallel(config, endpoint(0, 2, ntohs(addr.sin_port)), "x", nullptr, nullptr);
    ::close(fd);
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->find("is in use"), std::string::npos) << *r.error;
}

TEST(Ddp, WorldSizeMustMatchTheLaunchers) {
    const RunResult r =
        runDataParallel(tinyDdp(DdpStrategy::Naive, 4), endpoint(0, 2, 1), "x", nullptr, nullptr);
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->find("ddp.world_size"), std::string::npos) << *r.error;
}
