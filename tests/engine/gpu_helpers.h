// The GPU tests' fixture and helpers (gpu_test.cpp, gpu_variants_test.cpp): each test skips,
// saying why, where LibTorch has no CUDA or no GPU is present.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/runner.h"
#include "platform/cuda_backend.h"

#include <ATen/ATen.h>
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <string>

namespace lmprof::engine::gpu_test {

inline constexpr int64_t kMiB = int64_t{1} << 20;

class Gpu : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cuda::built()) {
            GTEST_SKIP() << "this LibTorch build has no CUDA";
        }
        if (cuda::deviceCount() == 0) {
            GTEST_SKIP() << "no CUDA device present";
        }
        cuda::setDevice(0);
    }
    static at::TensorOptions onGpu(at::ScalarType dtype = at::kFloat) {
        return at::TensorOptions().dtype(dtype).device(at::Device(at::kCUDA, 0));
    }
};

inline RunConfig gpuConfig(const std::string& preset, Precision precision, Mode mode, int64_t ctx,
                           int64_t batch, int warmup, int steps) {
    RunConfig c;
    c.model = *presetModel(preset);
    c.contextLength = ctx;
    c.batchSize = batch;
    c.precision = precision;
    c.mode = mode;
    c.warmupSteps = warmup;
    c.measureSteps = steps;
    c.device = "cuda:0";
    return c;
}

inline RunResult runOn(const RunConfig& c) {
    return runBenchmark(c, "gpu-test", nullptr, nullptr);
}

inline double relativeGap(double a, double b) {
    return std::abs(a - b) / std::max(a, b);
}

} // namespace lmprof::engine::gpu_test
