// The remote engine's test fixtures (remote_test.cpp, remote_hostile_test.cpp): a served
// Session on loopback, a raw socket client for misbehaving peers, and what they read back.
#pragma once

#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/remote_server.h"
#include "lmprof/engine/session.h"

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <mutex>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <set>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace lmprof::engine::testing {

using namespace lmprof::engine::remote;
using namespace std::chrono_literals;

inline const std::string kToken = "test-token-0123456789";

// A server on a free loopback port, serving its own Session on a thread of its own.
class Served {
public:
    // helloTimeout: long enough for a 100 MB message to arrive under ASan on a loaded machine
    // before the server could refuse it as silent.
    explicit Served(std::chrono::milliseconds helloTimeout = 20000ms, ServeLimits limits = {})
        : dir(std::filesystem::temp_directory_path() /
              ("lmprof_remote_test_" + std::to_string(::getpid()) + "_" +
               std::to_string(counter()++))) {
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        ServeOptions o;
        o.listen = {"127.0.0.1", 0};
        o.token = kToken;
        o.autosave = dir / "autosave.jsonl";
        o.fileDir = dir / "files";
        o.helloTimeout = helloTimeout;
        o.limits = limits;
        o.log = [this](const std::string& line) {
            std::lock_guard lock(logMutex);
            logLines.push_back(line);
        };
        server = std::make_unique<RemoteServer>(session, o);
        thread = std::thread([this] { server->run(); });
    }
    ~Served() {
        server->stop();
        thread.join();
        std::filesystem::remove_all(dir);
    }
    ConnectOptions client(std::string token = kToken) const {
        ConnectOptions c;
        c.host = "127.0.0.1";
        c.port = server->port();
        c.token = std::move(token);
        c.retry = 200ms;
        return c;
    }
    static int& counter() {
        static int n = 0;
        return n;
    }

    std::vector<std::string> log() {
        std::lock_guard lock(logMutex);
        return logLines;
    }

    // How many of the server's log lines contain `text`.
    int logged(std::string_view text) {
        std::lock_guard lock(logMutex);
        return static_cast<int>(
            std::count_if(logLines.begin(), logLines.end(), [&](const std::string& line) {
                return line.find(text) != std::string::npos;
            }));
    }

    // Waits until `count` log lines contain `text`, up to `limit`; says whether they came.
    bool waitLogged(std::string_view text, int count, std::chrono::milliseconds limit = 30s) {
        for (const auto until = std::chrono::steady_clock::now() + limit;
             std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(10ms)) {
            if (logged(text) >= count) {
                return true;
            }
        }
        return logged(text) >= count;
    }

    std::filesystem::path dir;
    std::mutex logMutex;
    std::vector<std::string> logLines;
    Session session;
    std::unique_ptr<RemoteServer> server;
    std::thread thread;
};

// A plain TCP connection that sends what it is told, for the hostile cases.
class RawClient {
public:
    // receiveBuffer: SO_RCVBUF before connecting (0: the system's), for a client that reads
    // slowly without the kernel's buffers absorbing what the server sends.
    explicit RawClient(int port, int receiveBuffer = 0) {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        if (receiveBuffer > 0) {
            ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, sizeof(receiveBuffer));
        }
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    }
    ~RawClient() { ::close(fd); }
    // Sends everything it can (a closed connection ends the send early).
    void send(const std::string& bytes) {
        size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
            if (n <= 0) {
                return;
            }
            done += static_cast<size_t>(n);
        }
    }
    // Lines until the server closes the connection or `timeout` passes.
    std::vector<std::string> readUntilClosed(std::chrono::milliseconds timeout, bool* closed) {
        std::string buffer;
        std::vector<std::string> lines;
        const auto until = std::chrono::steady_clock::now() + timeout;
        *closed = false;
        while (std::chrono::steady_clock::now() < until) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) {
                continue;
            }
            char chunk[65536];
            const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
            if (n <= 0) {
                *closed = true;
                break;
            }
            buffer.append(chunk, static_cast<size_t>(n));
            for (size_t at; (at = buffer.find('\n')) != std::string::npos;) {
                lines.push_back(buffer.substr(0, at));
                buffer.erase(0, at + 1);
            }
        }
        return lines;
    }
    int fd = -1;
    bool connected = false;
};

inline std::string helloLine(const std::string& token, int protocol = kProtocolVersion) {
    Message m;
    m.type = Type::Hello;
    m.token = token;
    m.protocol = protocol;
    return encode(m);
}

// The error a refused connection was told, or "" if none came before it closed.
inline std::string refusal(RawClient& c, bool* closed) {
    for (const auto& line : c.readUntilClosed(10s, closed)) {
        const Message m = decode(line);
        if (m.type == Type::Error) {
            EXPECT_TRUE(m.fatal) << line;
            return m.errorCode + ": " + m.text;
        }
    }
    return {};
}

// A fresh connection sends `bytes`; the refusal it was told, after which it must be closed.
inline std::string refusalFor(int port, const std::string& bytes) {
    RawClient c(port);
    EXPECT_TRUE(c.connected);
    c.send(bytes);
    bool closed = false;
    std::string why = refusal(c, &closed);
    EXPECT_TRUE(closed) << "the connection was left open after: " << why;
    return why;
}

inline std::set<std::string> keysOf(const nlohmann::json& j) {
    std::set<std::string> keys;
    for (const auto& [k, v] : j.items()) {
        keys.insert(k);
    }
    return keys;
}

inline std::string submitLine(const RunConfig& config) {
    Message m;
    m.type = Type::Submit;
    m.configs = {config};
    return encode(m);
}

// The messages a connection receives within `wait` (it stays open).
inline std::vector<Message> received(RawClient& c, std::chrono::milliseconds wait) {
    bool closed = false;
    std::vector<Message> out;
    for (const auto& line : c.readUntilClosed(wait, &closed)) {
        out.push_back(decode(line));
    }
    return out;
}

} // namespace lmprof::engine::testing
