// What the lmprof-cli end-to-end tests share: running the real binary (its path from CMake)
// and reading back what it wrote.
#pragma once

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace lmprof_cli_test {

struct Result {
    int code = -1;
    std::string output; // stdout and stderr together
};

// lmprof-cli with `args` (after the environment assignments `env`), stdout and stderr joined.
inline Result cli(const std::string& args, const std::string& env = "") {
    const std::string cmd = env + " " LMPROF_CLI_PATH " " + args + " 2>&1";
    Result r;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) {
        return r;
    }
    std::array<char, 4096> buf{};
    while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) {
        r.output.append(buf.data(), n);
    }
    const int status = pclose(pipe);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// This test process's scratch folder.
inline std::filesystem::path tempDir() {
    auto dir =
        std::filesystem::temp_directory_path() / ("lmprof_cli_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir;
}

inline std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline nlohmann::json readJson(const std::filesystem::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

// The non-empty lines of a file (runs in a .jsonl).
inline int countLines(const std::filesystem::path& file) {
    std::ifstream in(file);
    int n = 0;
    for (std::string l; std::getline(in, l);) {
        n += !l.empty();
    }
    return n;
}

inline const std::string kTiny =
    "--model tiny --ctx 16 --batch 1 --warmup 1 --steps 2 --device cpu -q";

} // namespace lmprof_cli_test
