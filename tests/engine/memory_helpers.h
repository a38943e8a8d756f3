// Helpers the memory tests share: a run on the calling thread, a tiny configuration with
// steps long enough for the 100 Hz sampler, a fresh scratch directory, a file's contents.
#pragma once

#include "lmprof/engine/runner.h"
#include "test_configs.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lmprof::engine::testing {

inline RunResult run(const RunConfig& c) {
    return runBenchmark(c, "memory-test", nullptr, nullptr);
}

// Steps long enough (tens of ms) for the 100 Hz sampler to land inside them.
inline RunConfig tinyLonger(Mode mode, int warmup, int steps) {
    RunConfig c = tinyCpu(mode, warmup, steps);
    c.contextLength = 128;
    c.batchSize = 4;
    return c;
}

inline std::filesystem::path freshDir(const std::string& name) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("lmprof-memory-test-" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace lmprof::engine::testing
