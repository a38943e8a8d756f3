// The remote engine on loopback (docs/REMOTE.md): a real Session served by a RemoteServer,
// driven by RemoteSessions and by raw sockets that misbehave. Runs are the tiny preset on
// the CPU.

#include "lmprof/engine/devices.h"
#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/remote_server.h"
#include "lmprof/engine/remote_session.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/session.h"
#include "session_helpers.h"
#include "test_configs.h"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <mutex>
#include <poll.h>
#include <set>
#include <string_view>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace lmprof::engine;
using namespace lmprof::engine::remote;
using namespace lmprof::engine::testing;
using namespace std::chrono_literals;

namespace {

const std::string kToken = "test-token-0123456789";

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
        return static_cast<int>(std::count_if(logLines.begin(), logLines.end(),
                                              [&](const std::string& line) {
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

std::string helloLine(const std::string& token, int protocol = kProtocolVersion) {
    Message m;
    m.type = Type::Hello;
    m.token = token;
    m.protocol = protocol;
    return encode(m);
}

// The error a refused connection was told, or "" if none came before it closed.
std::string refusal(RawClient& c, bool* closed) {
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
std::string refusalFor(int port, const std::string& bytes) {
    RawClient c(port);
    EXPECT_TRUE(c.connected);
    c.send(bytes);
    bool closed = false;
    std::string why = refusal(c, &closed);
    EXPECT_TRUE(closed) << "the connection was left open after: " << why;
    return why;
}

std::set<std::string> keysOf(const nlohmann::json& j) {
    std::set<std::string> keys;
    for (const auto& [k, v] : j.items()) {
        keys.insert(k);
    }
    return keys;
}

} // namespace

TEST(RemoteProtocol, EveryMessageRoundTripsAndBadOnesAreNamed) {
    Message submit;
    submit.type = Type::Submit;
    submit.configs = {tinyCpu(), tinyCpu(Mode::Forward)};
    const Message back = decode(encode(submit).substr(0, encode(submit).size() - 1));
    ASSERT_EQ(back.type, Type::Submit);
    ASSERT_EQ(back.configs.size(), 2u);
    EXPECT_EQ(back.configs[1].mode, Mode::Forward);
    EXPECT_EQ(back.configs[0].model.dModel, tinyCpu().model.dModel);

    Message step;
    step.type = Type::Step;
    step.run = 3;
    step.step = StepRecord{};
    step.step->index = 7;
    step.step->forwardMs = 1.5;
    step.sentNs = 42;
    const Message s = decode(encode(step));
    EXPECT_EQ(s.run, 3);
    EXPECT_EQ(s.step->index, 7);
    EXPECT_DOUBLE_EQ(s.step->forwardMs, 1.5);
    EXPECT_EQ(s.sentNs, 42);

    Message welcome;
    welcome.type = Type::Welcome;
    welcome.serverId = "x";
    welcome.devices = {{"cpu", false, 1 << 30, {{"fp16", "no fp16 here"}}}};
    const Message w = decode(encode(welcome));
    ASSERT_EQ(w.devices.size(), 1u);
    EXPECT_EQ(w.devices[0], welcome.devices[0]);

    const auto codeOf = [](const std::string& line) {
        try {
            decode(line);
        } catch (const ProtocolError& e) {
            return e.errorCode() + " | " + e.what();
        }
        return std::string("accepted");
    };
    EXPECT_EQ(codeOf("not json").rfind("malformed", 0), 0u);
    EXPECT_EQ(codeOf("[1,2]").rfind("malformed", 0), 0u);
    EXPECT_EQ(codeOf(R"({"type":"launch_missiles"})").rfind("unknown_type", 0), 0u);
    EXPECT_NE(codeOf(R"({"type":"hello"})").find("$.protocol: missing"), std::string::npos);
    EXPECT_NE(codeOf(R"({"type":"submit","configs":[{"model":1}]})").find("$.configs[0]"),
              std::string::npos);
    EXPECT_EQ(codeOf(std::string(kMaxMessageBytes + 1, ' ')).rfind("too_large", 0), 0u);
    EXPECT_EQ(codeOf(std::string(100000, '[')).rfind("malformed", 0), 0u);
}

TEST(RemoteProtocol, LabRequestsAndReportsRoundTrip) {
    Message lab;
    lab.type = Type::Lab;
    lab.run = 4;
    lab.lab = DtypeRequest{"small", Precision::Bf16, "cuda:1"};
    const Message l = decode(encode(lab), true);
    ASSERT_EQ(l.type, Type::Lab);
    EXPECT_EQ(l.run, 4);
    const auto& d = std::get<DtypeRequest>(*l.lab);
    EXPECT_EQ(d.model, "small");
    EXPECT_EQ(d.precision, Precision::Bf16);
    EXPECT_EQ(d.device, "cuda:1");

    Message done;
    done.type = Type::LabFinished;
    done.run = 4;
    AccumulationReport report;
    report.device = "cpu";
    report.maxTerms = 1000;
    report.error = "cancelled";
    report.cancelled = true;
    done.labReport = report;
    const Message f = decode(encode(done));
    const auto& a = std::get<AccumulationReport>(*f.labReport);
    EXPECT_EQ(a.device, "cpu");
    EXPECT_EQ(a.error.value_or(""), "cancelled");
    EXPECT_TRUE(a.cancelled);

    const auto why = [](const std::string& line) {
        try {
            decode(line, true);
        } catch (const ProtocolError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(why(R"({"type":"lab","run":0,"request":{"experiment":"fold"}})")
                  .find("$.request.experiment: expected \"accumulation\" or \"dtypes\""),
              std::string::npos);
    EXPECT_NE(why(R"({"type":"lab","run":0,"request":{"experiment":"accumulation",)"
                  R"("device":"cpu","max_terms":99999999999}})")
                  .find("$.request.max_terms"),
              std::string::npos);
    // A server's lab report is not a client's message.
    EXPECT_NE(why(encode(done)).find("a server's message, not a client's"), std::string::npos)
        << why(encode(done));
}

TEST(RemoteProtocol, EndpointsAreCheckedNamingTheFlag) {
    EXPECT_EQ(parseEndpoint("gpu-box:7377", "--connect").host, "gpu-box");
    EXPECT_EQ(parseEndpoint("[::1]:80", "--connect").host, "::1");
    EXPECT_EQ(parseEndpoint("[::1]:80", "--connect").text(), "[::1]:80");
    try {
        parseEndpoint("::", "--listen", true);
        ADD_FAILURE() << ":: was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("IPv6 address goes in brackets"), std::string::npos)
            << e.what();
    }
    for (const char* bad : {"gpu-box", ":7377", "h:0", "h:65536", "h:77x", "::"}) {
        try {
            parseEndpoint(bad, "--connect");
            ADD_FAILURE() << bad << " was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("--connect", 0), 0u) << e.what();
        }
    }
    EXPECT_EQ(parseEndpoint("127.0.0.1:0", "--listen", true).port, 0);
}

TEST(Remote, ARemoteRunHasTheStructureOfALocalOne) {
    Served served;
    RemoteSession remote(served.client());
    ASSERT_TRUE(remote.waitConnected(10s)) << remote.info().problem;
    const EngineInfo info = remote.info();
    EXPECT_TRUE(info.remote && info.connected);
    EXPECT_FALSE(info.deviceName.empty());
    EXPECT_NE(std::find(remote.devices().begin(), remote.devices().end(), "cpu"),
              remote.devices().end());
    EXPECT_GT(remote.deviceMemoryBytes("cpu"), 0);
    EXPECT_EQ(remote.checkRunnable(tinyCpu()), std::nullopt);
    RunConfig noDevice = tinyCpu();
    noDevice.device = "cuda:7";
    ASSERT_TRUE(remote.checkRunnable(noDevice));
    EXPECT_EQ(remote.checkRunnable(noDevice)->field, "device");

    const RunConfig config = tinyCpu(Mode::Train, 1, 3);
    const int index = remote.submit(config);
    EXPECT_TRUE(remote.busy());
    const auto remoteEvents = collect(remote, 1);
    Session local;
    local.submit(config);
    const auto localEvents = collect(local, 1);

    // The same events in the same order: started, samples, 4 steps, finished.
    ASSERT_FALSE(remoteEvents.empty());
    EXPECT_TRUE(std::holds_alternative<RunStarted>(remoteEvents.front()));
    const auto count = [](const std::vector<SessionEvent>& events, auto tag) {
        return std::count_if(events.begin(), events.end(), [](const SessionEvent& e) {
            return std::holds_alternative<decltype(tag)>(e);
        });
    };
    EXPECT_EQ(count(remoteEvents, StepFinished{}), count(localEvents, StepFinished{}));
    EXPECT_EQ(count(remoteEvents, StepFinished{}), 4);
    EXPECT_GT(count(remoteEvents, MemorySampled{}), 0);
    for (const auto& e : remoteEvents) {
        std::visit(
            [&](const auto& v) {
                if constexpr (requires { v.runIndex; }) {
                    EXPECT_EQ(v.runIndex, index);
                } else {
                    ADD_FAILURE() << "a lab event from a run";
                }
            },
            e);
    }
    const RunResult r = results(remoteEvents).at(0);
    const RunResult l = results(localEvents).at(0);
    EXPECT_EQ(r.status, RunStatus::Ok);
    EXPECT_EQ(r.status, l.status);
    EXPECT_EQ(r.steps.size(), l.steps.size());
    EXPECT_EQ(r.config.model.numLayers, l.config.model.numLayers);
    const auto rj = nlohmann::json::parse(runToJsonLine(r));
    const auto lj = nlohmann::json::parse(runToJsonLine(l));
    EXPECT_EQ(keysOf(rj), keysOf(lj));
    EXPECT_EQ(keysOf(rj["summary"]), keysOf(lj["summary"]));
    EXPECT_EQ(rj["config"], lj["config"]);
    EXPECT_FALSE(remote.busy());
    // From the server's session publishing a step to this client queueing it (loopback).
    auto latencies = remote.stepLatenciesMs();
    ASSERT_EQ(latencies.size(), 4u);
    std::sort(latencies.begin(), latencies.end());
    EXPECT_GE(latencies.front(), 0.0);
    RecordProperty("step_latency_median_ms", std::to_string(latencies[2]));
    std::printf("step publish-to-client latency on loopback: %.3f .. %.3f ms\n", latencies.front(),
                latencies.back());
    // The server autosaved it.
    EXPECT_EQ(loadRunsJsonl(served.dir / "autosave.jsonl").runs.size(), 1u);
}

// The precision lab through a remote engine: the server's Session runs it (its log says so)
// and the report is the one a local engine makes; the queue limit counts experiments too.
TEST(Remote, ThePrecisionLabRunsOnTheServersEngine) {
    ServeLimits limits;
    limits.maxQueuedRuns = 1;
    Served served(20000ms, limits);
    RemoteSession remote(served.client());
    ASSERT_TRUE(remote.waitConnected(10s)) << remote.info().problem;
    std::atomic<int> wakes{0};
    remote.setWaker([&wakes] { ++wakes; });
    AccumulationRequest accumulation;
    accumulation.device = "cpu";
    accumulation.maxTerms = 1000;
    const int tag = remote.submitLab(accumulation);
    const auto labs = labReports(collect(remote, 1));
    for (int i = 0; i < 500 && wakes.load() < 1; ++i) {
        std::this_thread::sleep_for(10ms); // the wake follows the event's publication
    }
    EXPECT_EQ(wakes.load(), 1); // the report woke a window that waits
    ASSERT_EQ(labs.size(), 1u);
    EXPECT_EQ(labs[0].labIndex, tag);
    const auto& got = std::get<AccumulationReport>(labs[0].report);
    ASSERT_FALSE(got.error) << *got.error;
    const AccumulationReport local = runAccumulation(accumulation);
    ASSERT_EQ(got.seedLoops.size(), local.seedLoops.size());
    for (size_t i = 0; i < got.seedLoops.size(); ++i) {
        EXPECT_EQ(got.seedLoops[i].result, local.seedLoops[i].result) << got.seedLoops[i].label;
    }
    EXPECT_EQ(got.series.size(), local.series.size());
    EXPECT_EQ(served.logged("started a precision-lab experiment on cpu"), 1);

    DtypeRequest dtypes;
    dtypes.precision = Precision::Bf16;
    dtypes.device = "cpu";
    remote.submitLab(dtypes);
    const auto d = labReports(collect(remote, 1));
    ASSERT_EQ(d.size(), 1u);
    const auto& rows = std::get<DtypeReport>(d[0].report).rows;
    EXPECT_EQ(rows, inspectDtypes(dtypes).rows);

    // One long run queued fills the limit of 1: the experiment is refused, saying why.
    const int run = remote.submit(tinyCpu(Mode::Train, 0, 10000));
    remote.submitLab(accumulation);
    const auto refused = labReports(collect(remote, 1, std::chrono::seconds(20)));
    ASSERT_EQ(refused.size(), 1u);
    const auto& r = std::get<AccumulationReport>(refused[0].report);
    EXPECT_NE(r.error.value_or("").find("at this server's limit of 1 (lmprof-cli serve "
                                         "--max-queued-runs)"),
              std::string::npos)
        << r.error.value_or("");
    remote.cancel();
    const auto events = collect(remote, 1);
    const auto cancelled = results(events);
    ASSERT_EQ(cancelled.size(), 1u);
    EXPECT_EQ(cancelled[0].status, RunStatus::Cancelled);
    EXPECT_EQ(std::get<RunFinished>(events.back()).runIndex, run);
}

TEST(Remote, HostileConnectionsAreRefusedWhileARunGoesOn) {
    Served served;
    RemoteSession remote(served.client());
    ASSERT_TRUE(remote.waitConnected(10s)) << remote.info().problem;
    const int index = remote.submit(tinyCpu(Mode::Train, 1, 12));
    const int port = served.server->port();

    const auto refused = [port](const std::string& bytes) { return refusalFor(port, bytes); };
    EXPECT_EQ(refused(helloLine("wrong")).rfind("bad_token", 0), 0u);
    EXPECT_EQ(refused(helloLine(kToken, 99)).rfind("version", 0), 0u);
    EXPECT_NE(refused(helloLine(kToken, 99)).find("speaks protocol " + std::to_string(kProtocolVersion) + ", the client 99"),
              std::string::npos);
    EXPECT_EQ(refused(std::string("\x00\xff\x13garbage\x7f\n", 13)).rfind("malformed", 0), 0u);
    EXPECT_EQ(refused(R"({"type":"cancel"})"
                      "\n")
                  .rfind("hello_first", 0),
              0u);
    EXPECT_EQ(refused(helloLine(kToken) + R"({"type":"format_disk"})"
                                          "\n")
                  .rfind("unknown_type", 0),
              0u);
    EXPECT_EQ(refused(helloLine(kToken) + R"({"type":"welcome","protocol":2})"
                                          "\n")
                  .rfind("unknown_type", 0),
              0u);
    // 100 MB without a newline: refused once the limit is read, not buffered to the end.
    const std::string huge = refused(std::string(100'000'000, 'x'));
    EXPECT_EQ(huge.rfind("too_large", 0), 0u) << huge;
    const std::string hugeAfterHello = refused(helloLine(kToken) + std::string(100'000'000, 'x'));
    EXPECT_EQ(hugeAfterHello.rfind("too_large", 0), 0u) << hugeAfterHello;
    // A connection that never says hello is closed after the hello timeout (a server with
    // a short one).
    {
        Served quick(1000ms);
        RawClient silent(quick.server->port());
        bool closed = false;
        EXPECT_EQ(refusal(silent, &closed).rfind("timeout", 0), 0u);
        EXPECT_TRUE(closed);
    }

    // The run went on untouched and the server still takes clients.
    const auto events = collect(remote, 1);
    const RunResult r = results(events).at(0);
    EXPECT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
    EXPECT_EQ(r.steps.size(), 13u);
    EXPECT_EQ(std::get<RunFinished>(events.back()).runIndex, index);
    RemoteSession later(served.client());
    EXPECT_TRUE(later.waitConnected(10s)) << later.info().problem;
}

TEST(Remote, AWrongTokenIsFinalAndSaidToTheClient) {
    Served served;
    RemoteSession remote(served.client("not-the-token"));
    EXPECT_FALSE(remote.waitConnected(10s));
    const EngineInfo info = remote.info();
    EXPECT_FALSE(info.connected);
    EXPECT_NE(info.problem.find("wrong token"), std::string::npos) << info.problem;
    // Not connected: a submit is answered at once, as a failed run saying why.
    remote.submit(tinyCpu());
    const auto events = collect(remote, 1, std::chrono::seconds(5));
    ASSERT_EQ(results(events).size(), 1u);
    EXPECT_EQ(results(events)[0].status, RunStatus::Error);
    EXPECT_NE(results(events)[0].error->find("not connected"), std::string::npos);
    ASSERT_TRUE(remote.checkRunnable(tinyCpu()));
}

TEST(Remote, NoServerIsSaidAndRetried) {
    ConnectOptions o;
    o.port = 1; // nothing listens there
    o.token = kToken;
    o.retry = 100ms;
    RemoteSession remote(o);
    EXPECT_FALSE(remote.waitConnected(500ms));
    EXPECT_NE(remote.info().problem.find("cannot connect to 127.0.0.1:1"), std::string::npos)
        << remote.info().problem;
}

TEST(Remote, AClientGoneMidRunLeavesTheRunToFinishAndTheNextClientReceivesIt) {
    Served served;
    {
        RemoteSession first(served.client());
        ASSERT_TRUE(first.waitConnected(10s));
        first.submit(tinyCpu(Mode::Train, 1, 6));
        // Gone after its first step: its connection closes mid-run.
        bool stepped = false;
        const auto until = std::chrono::steady_clock::now() + 60s;
        while (!stepped && std::chrono::steady_clock::now() < until) {
            first.waitForEvents(50ms);
            for (const auto& e : first.drain()) {
                stepped = stepped || std::holds_alternative<StepFinished>(e);
            }
        }
        ASSERT_TRUE(stepped);
    }
    // The server finishes the run with no one listening and autosaves it.
    const auto until = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < until &&
           (!std::filesystem::exists(served.dir / "autosave.jsonl") ||
            loadRunsJsonl(served.dir / "autosave.jsonl").runs.empty())) {
        std::this_thread::sleep_for(50ms);
    }
    const auto saved = loadRunsJsonl(served.dir / "autosave.jsonl").runs;
    ASSERT_EQ(saved.size(), 1u);
    EXPECT_EQ(saved[0].status, RunStatus::Ok);
    EXPECT_EQ(saved[0].steps.size(), 7u);

    // The next client is sent it once, whole, as a run of its own.
    ConnectOptions o = served.client();
    o.firstRunIndex = 10;
    RemoteSession second(o);
    ASSERT_TRUE(second.waitConnected(10s));
    const auto events = collect(second, 1, std::chrono::seconds(10));
    ASSERT_EQ(results(events).size(), 1u);
    EXPECT_TRUE(std::holds_alternative<RunStarted>(events.front()));
    EXPECT_EQ(std::get<RunStarted>(events.front()).runIndex, 10);
    EXPECT_EQ(results(events)[0].steps.size(), 7u);
    EXPECT_EQ(results(events)[0].id, saved[0].id);
    // Acknowledged: a third client is not sent it again.
    std::this_thread::sleep_for(300ms);
    RemoteSession third(served.client());
    ASSERT_TRUE(third.waitConnected(10s));
    EXPECT_TRUE(collect(third, 1, std::chrono::seconds(2)).empty());
}

TEST(Remote, TwoClientsBothSeeEveryRunAndEitherMayCancel) {
    Served served;
    RemoteSession a(served.client());
    RemoteSession b(served.client());
    ASSERT_TRUE(a.waitConnected(10s));
    ASSERT_TRUE(b.waitConnected(10s));
    a.submit(tinyCpu(Mode::Train, 1, 200));
    // B sees A's run start, then cancels it.
    bool started = false;
    const auto until = std::chrono::steady_clock::now() + 60s;
    std::vector<SessionEvent> bEvents;
    while (!started && std::chrono::steady_clock::now() < until) {
        b.waitForEvents(50ms);
        for (auto& e : b.drain()) {
            started = started || std::holds_alternative<StepFinished>(e);
            bEvents.push_back(std::move(e));
        }
    }
    ASSERT_TRUE(started);
    EXPECT_TRUE(b.busy());
    b.cancel();
    const auto aEvents = collect(a, 1, std::chrono::seconds(60));
    ASSERT_EQ(results(aEvents).size(), 1u);
    EXPECT_EQ(results(aEvents)[0].status, RunStatus::Cancelled);
    auto rest = collect(b, 1, std::chrono::seconds(10));
    ASSERT_EQ(results(rest).size(), 1u);
    EXPECT_EQ(results(rest)[0].id, results(aEvents)[0].id);
    EXPECT_FALSE(a.busy());
}

TEST(Remote, TheServerListensOnLoopbackUnlessAllowedElsewhere) {
    Session session;
    ServeOptions o;
    o.listen = {"0.0.0.0", 0};
    o.token = kToken;
    try {
        RemoteServer server(session, o);
        ADD_FAILURE() << "bound 0.0.0.0 without allowRemote";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("--allow-remote"), std::string::npos) << e.what();
    }
    o.allowRemote = true;
    EXPECT_NO_THROW(RemoteServer(session, o));
    o.listen = {"not-an-address", 0};
    EXPECT_THROW(RemoteServer(session, o), std::runtime_error);
}

// --- hardening (issue: the server under hostile clients) -----------------------------------

namespace {
std::string submitLine(const RunConfig& config) {
    Message m;
    m.type = Type::Submit;
    m.configs = {config};
    return encode(m);
}

// The messages a connection receives within `wait` (it stays open).
std::vector<Message> received(RawClient& c, std::chrono::milliseconds wait) {
    bool closed = false;
    std::vector<Message> out;
    for (const auto& line : c.readUntilClosed(wait, &closed)) {
        out.push_back(decode(line));
    }
    return out;
}
} // namespace

// What a client asks is held to the server's limits before anything starts: the field and
// the limit are named, the connection stays, and a RemoteSession's run ends as an error.
TEST(Remote, ASubmitOverTheServersLimitsIsRefusedNamingTheFieldAndTheLimit) {
    ServeLimits limits;
    limits.maxWorldSize = 2;
    limits.maxQueuedRuns = 3;
    Served served(20000ms, limits);
    RawClient c(served.server->port());
    c.send(helloLine(kToken));
    RunConfig ddp = tinyCpu();
    ddp.ddp = DdpRequest{};
    ddp.ddp->worldSize = 1000;
    c.send(submitLine(ddp));
    RunConfig huge = tinyCpu();
    huge.model.preset = "custom";
    huge.model.dModel = 65536;
    huge.model.numHeads = 64;
    huge.model.dFf = 4 * 65536;
    huge.model.numLayers = 1024;
    c.send(submitLine(huge));
    Message many;
    many.type = Type::Submit;
    many.configs = {tinyCpu(), tinyCpu(), tinyCpu(), tinyCpu()};
    c.send(encode(many));
    std::vector<std::string> errors;
    for (const Message& m : received(c, 3000ms)) {
        if (m.type == Type::Error) {
            EXPECT_FALSE(m.fatal) << m.text;
            EXPECT_EQ(m.errorCode, code::kLimit) << m.text;
            errors.push_back(m.text);
        }
        EXPECT_NE(m.type, Type::Accepted) << "a run over the limits was taken";
    }
    ASSERT_EQ(errors.size(), 3u);
    EXPECT_EQ(errors[0].rfind("ddp.world_size: 1000 ranks are over this server's limit of 2", 0),
              0u)
        << errors[0];
    EXPECT_EQ(errors[1].rfind("model: the memory model predicts", 0), 0u) << errors[1];
    EXPECT_NE(errors[1].find("over this server's limit"), std::string::npos) << errors[1];
    EXPECT_EQ(errors[2].rfind("runs: 0 queued and 4 more are over this server's limit of 3", 0),
              0u)
        << errors[2];
    EXPECT_FALSE(served.session.busy());

    RemoteSession remote(served.client());
    ASSERT_TRUE(remote.waitConnected(10s)) << remote.info().problem;
    const int index = remote.submit(ddp);
    const auto events = collect(remote, 1);
    const RunResult r = results(events).at(0);
    EXPECT_EQ(std::get<RunFinished>(events.back()).runIndex, index);
    EXPECT_EQ(r.status, RunStatus::Error);
    EXPECT_NE(r.error.value_or("").find("ddp.world_size"), std::string::npos)
        << r.error.value_or("");
}

// A configuration the engine refuses is refused at submit, with the reason a local run gets,
// and nothing of it is kept: a client that left without reading must not leave an error run
// for every later client to be replayed (and refuse).
TEST(Remote, ARunTheEngineRefusesIsNotQueuedAndCannotPoisonLaterClients) {
    Served served(20000ms);
    std::vector<RunConfig> refusable(3, tinyCpu());
    refusable[0].attention = AttentionKind::SdpaFlash;
    refusable[1].cudaGraphs = true;
    refusable[2].threads = maxRunThreads() + 1;
    const char* fields[] = {"attention", "cuda_graphs", "threads"};
    for (size_t i = 0; i < refusable.size(); ++i) {
        RawClient c(served.server->port());
        c.send(helloLine(kToken));
        c.send(submitLine(refusable[i]));
        bool refused = false;
        for (const Message& m : received(c, 3000ms)) {
            EXPECT_NE(m.type, Type::Accepted) << fields[i];
            if (m.type == Type::Error) {
                EXPECT_FALSE(m.fatal) << m.text;
                EXPECT_EQ(m.errorCode, code::kLimit) << m.text;
                EXPECT_EQ(m.text.rfind(std::string(fields[i]) + ":", 0), 0u) << m.text;
                EXPECT_EQ(m.text, checkRunnable(refusable[i])->message()); // a local run's words
                refused = true;
            }
        }
        EXPECT_TRUE(refused) << fields[i];
    } // each leaves without a word more
    EXPECT_FALSE(served.session.busy());

    RemoteSession remote(served.client());
    ASSERT_TRUE(remote.waitConnected(10s)) << remote.info().problem;
    const int index = remote.submit(tinyCpu());
    const auto events = collect(remote, 1);
    const std::vector<RunResult> finished = results(events);
    ASSERT_EQ(finished.size(), 1u) << "only the good client's own run arrives";
    EXPECT_EQ(std::get<RunFinished>(events.back()).runIndex, index);
    EXPECT_EQ(finished[0].status, RunStatus::Ok) << finished[0].error.value_or("");
    EXPECT_TRUE(remote.info().connected);
    EXPECT_EQ(remote.info().problem, "");
}

// Before its hello a peer can make the server hold a few KiB at most, and only so many such
// connections are let in; one that closes before its hello is logged.
TEST(Remote, APeerBeforeItsHelloHoldsLittle) {
    ServeLimits limits;
    limits.maxUnauthenticated = 4;
    Served served(20000ms, limits);
    const int port = served.server->port();
    const std::string big = refusalFor(port, std::string(8192, 'x'));
    EXPECT_EQ(big.rfind("too_large: a message before the hello is over the limit of 4096", 0), 0u)
        << big;
    std::vector<std::unique_ptr<RawClient>> silent;
    for (int i = 0; i < 5; ++i) {
        silent.push_back(std::make_unique<RawClient>(port));
        ASSERT_TRUE(silent.back()->connected);
        std::this_thread::sleep_for(50ms); // in this order on the server
    }
    // The fifth made the server close the oldest, which was told why.
    bool closed = false;
    const std::string why = refusal(*silent.front(), &closed);
    EXPECT_EQ(why.rfind("busy: 4 connections have not said hello, the limit", 0), 0u) << why;
    EXPECT_TRUE(closed);
    // A client that says hello at once gets in while four silent peers hold their places.
    {
        RemoteSession now(served.client());
        EXPECT_TRUE(now.waitConnected(10s)) << now.info().problem;
    }
    // `now` made room by closing the second; the other three close before a hello now, and
    // each is logged.
    silent.clear();
    RemoteSession later(served.client());
    EXPECT_TRUE(later.waitConnected(10s)) << later.info().problem;
    served.waitLogged("closed before its hello", 3, 10s);
    EXPECT_EQ(served.logged("closed before its hello"), 3);
}

// Two clients that submit at once: distinct run ids, and their files (same name on each
// client) are distinct files on the server, neither replacing the other.
TEST(Remote, EachRunsFilesAreItsOwnAndIdsDiffer) {
    Served served;
    RemoteSession a(served.client());
    RemoteSession b(served.client());
    ASSERT_TRUE(a.waitConnected(10s));
    ASSERT_TRUE(b.waitConnected(10s));
    RunConfig c = tinyCpu(Mode::Train, 1, 1);
    c.opProfile = defaultOpProfileRequest(c.warmupSteps);
    c.opProfile->tracePath = "/home/someone/out/trace.json";
    a.submit(c);
    b.submit(c);
    std::vector<RunResult> mine;
    for (auto* client : {&a, &b}) {
        // Each sees both runs; each keeps the one it submitted (its local index 0).
        for (const auto& e : collect(*client, 2, std::chrono::seconds(120))) {
            if (auto* f = std::get_if<RunFinished>(&e); f && f->runIndex == 0) {
                mine.push_back(f->result);
            }
        }
    }
    ASSERT_EQ(mine.size(), 2u);
    EXPECT_NE(mine[0].id, mine[1].id);
    ASSERT_TRUE(mine[0].opProfile && mine[1].opProfile);
    EXPECT_NE(mine[0].config.opProfile->tracePath, mine[1].config.opProfile->tracePath);
    for (const auto& r : mine) {
        const std::filesystem::path trace = r.config.opProfile->tracePath;
        EXPECT_EQ(trace.parent_path(), served.dir / "files");
        EXPECT_TRUE(std::filesystem::exists(trace)) << trace;
    }
}

// Whatever a client calls itself, the log gets one line of printable text of bounded size
// (a hello with a 1 MiB name is over the limit before the hello, and refused as such).
TEST(Remote, LogLinesCannotBeForged) {
    Served served;
    for (const std::string& name :
         {std::string("evil\nlmprof-cli serve: run x finished: ok\x1b[2K\r"),
          std::string(3000, 'n'), std::string(1 << 20, 'n')}) {
        RawClient c(served.server->port());
        Message hello;
        hello.type = Type::Hello;
        hello.token = kToken;
        hello.protocol = kProtocolVersion;
        hello.client = name;
        c.send(encode(hello));
        received(c, 500ms);
    }
    int connected = 0;
    int tooLarge = 0;
    for (const auto& line : served.log()) {
        EXPECT_EQ(line.find_first_of("\n\r\x1b"), std::string::npos) << line;
        EXPECT_LE(line.size(), 400u) << line;
        connected += line.find("connected") != std::string::npos;
        tooLarge += line.find("too_large") != std::string::npos;
    }
    EXPECT_EQ(connected, 2);
    EXPECT_EQ(tooLarge, 1);
}

// The smaller refusals: server message types from a client, the token file's checks.
TEST(Remote, ServerTypesAndBadTokenFilesAreRefusedWithTheirReason) {
    Served served;
    const int port = served.server->port();
    const auto said = [port](const std::string& bytes) { return refusalFor(port, bytes); };
    EXPECT_EQ(said(R"({"type":"welcome"})"
                   "\n")
                  .rfind("unknown_type", 0),
              0u);
    EXPECT_EQ(said(helloLine(kToken) + R"({"type":"step"})"
                                       "\n")
                  .rfind("unknown_type", 0),
              0u);

    const auto dir = served.dir / "tokens";
    std::filesystem::create_directories(dir);
    const auto refused = [](const std::filesystem::path& path) {
        try {
            readToken(path.string());
            return std::string("accepted");
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
    };
    const auto fifo = dir / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_NE(refused(fifo).find("not a regular file"), std::string::npos) << refused(fifo);
    std::ofstream(dir / "empty").close();
    EXPECT_NE(refused(dir / "empty").find(": empty"), std::string::npos) << refused(dir / "empty");
    std::ofstream(dir / "short") << "abc\n";
    EXPECT_NE(refused(dir / "short").find("fewer than 16"), std::string::npos);
    EXPECT_NE(refused(dir / "nope").find("cannot be read"), std::string::npos);
    std::ofstream(dir / "good") << "  " << kToken << "  \n";
    EXPECT_EQ(refused(dir / "good"), "accepted");
    EXPECT_EQ(readToken((dir / "good").string()), kToken);
}

// Integers in the protocol follow the result sets' rule: out of range is refused, not wrapped
// (measure_steps 4294967297 once ran 1 step with 0 warmup).
TEST(RemoteProtocol, IntegersBeyondTheirFieldsTypeAreRefusedNotWrapped) {
    Message m;
    m.type = Type::Submit;
    m.configs = {tinyCpu()};
    std::string line = encode(m);
    const std::string steps = "\"measure_steps\":2";
    ASSERT_NE(line.find(steps), std::string::npos) << line;
    line.replace(line.find(steps), steps.size(), "\"measure_steps\":4294967297");
    line.pop_back(); // the newline
    try {
        decode(line, true);
        ADD_FAILURE() << "accepted";
    } catch (const ProtocolError& e) {
        EXPECT_EQ(e.errorCode(), code::kMalformed);
        EXPECT_NE(std::string(e.what()).find("measure_steps: 4294967297 is out of range"),
                  std::string::npos)
            << e.what();
    }
}

// A message the client cannot read (here a run_finished whose run is not a run) is said in
// the engine's indicator and skipped; the link stays up and later messages are read.
TEST(Remote, AClientSkipsAnUnreadableMessageAndKeepsTheLink) {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    ASSERT_EQ(::listen(listener, 1), 0);
    socklen_t length = sizeof(a);
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &length);
    ConnectOptions options;
    options.port = ntohs(a.sin_port);
    options.token = kToken;
    options.retry = 200ms;
    RemoteSession remote(options);
    pollfd p{listener, POLLIN, 0};
    ASSERT_GT(::poll(&p, 1, 10000), 0) << "the client never connected";
    const int peer = ::accept(listener, nullptr, nullptr);
    ASSERT_GE(peer, 0);
    Message welcome;
    welcome.type = Type::Welcome;
    welcome.serverId = "a test's server";
    Message state;
    state.type = Type::State;
    state.busy = true;
    const std::string lines = encode(welcome) +
                              "{\"type\": \"run_finished\", \"run\": 0, \"result\": 7}\n" +
                              encode(state);
    ASSERT_EQ(::send(peer, lines.data(), lines.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(lines.size()));
    ASSERT_TRUE(remote.waitConnected(10s)) << remote.info().problem;
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!remote.busy() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(remote.busy()) << "the state after the bad message was read";
    EXPECT_TRUE(remote.info().connected);
    EXPECT_EQ(remote.info().problem.rfind("skipped 1 unreadable message(s) from the server", 0),
              0u)
        << remote.info().problem;
    ::close(peer);
    ::close(listener);
}

// Fetch replies are replays (sent uncounted, once), so a client that sends fetch after fetch
// and never reads once grew a server without bound (588 MB to 3.1 GB in 148k fetches). A
// fetch now waits for the replays before it, and waiting fetches merge into one.
TEST(Remote, FetchesFromAClientThatDoesNotReadMergeInsteadOfPilingUp) {
    Served served;
    {
        RemoteSession remote(served.client());
        ASSERT_TRUE(remote.waitConnected(10s)) << remote.info().problem;
        remote.submit(tinyCpu());
        collect(remote, 1); // finished; the server keeps it (acknowledged) for fetches
    }
    RawClient c(served.server->port(), 4096);
    Message fetch;
    fetch.type = Type::Fetch;
    fetch.runs = {0};
    constexpr int kFetches = 50000;
    std::string lines = helloLine(kToken);
    for (int i = 0; i < kFetches; ++i) {
        lines += encode(fetch);
    }
    const uint64_t before = served.server->commandsRead();
    c.send(lines); // without reading a byte
    // Until the server has handled every fetch, however long that takes here (within the
    // test's limit: 50,000 fetches take about 1 s, and 20 s under ASan).
    const auto until = std::chrono::steady_clock::now() + 200s;
    while (served.server->commandsRead() < before + 1 + kFetches &&
           std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_GE(served.server->commandsRead(), before + 1 + kFetches) << "the server stopped reading";
    // Then read until the server has nothing more to send (1 s of quiet), or until it has
    // plainly answered every fetch.
    int replays = 0;
    std::string buffer;
    for (;;) {
        pollfd p{c.fd, POLLIN, 0};
        if (::poll(&p, 1, 1000) <= 0 || replays >= kFetches / 4) {
            break;
        }
        char chunk[65536];
        const ssize_t n = ::recv(c.fd, chunk, sizeof(chunk), 0);
        if (n <= 0) {
            break;
        }
        buffer.append(chunk, static_cast<size_t>(n));
        for (size_t at; (at = buffer.find('\n')) != std::string::npos; buffer.erase(0, at + 1)) {
            replays += buffer.find("\"run_finished\"") < at ? 1 : 0;
        }
    }
    // The socket's buffers took a few replays before the client read; the rest merged.
    EXPECT_GE(replays, 1);
    EXPECT_LT(replays, kFetches / 4) << "every fetch was answered, none merged";
}

// Lab reports go to the client that asked, alone: when it leaves, its experiments are
// dropped from the engine (queued ones at once, the running one between its chunks), so
// the next client does not wait behind work no one will read.
TEST(Remote, AClientsLabExperimentsAreDroppedWhenItLeaves) {
    Served served;
    // A long run holds the session, so the leaver's experiments are all still queued when it
    // goes, whatever the machine's speed.
    RemoteSession holder(served.client());
    ASSERT_TRUE(holder.waitConnected(10s)) << holder.info().problem;
    const int longRun = holder.submit(tinyCpu(Mode::Train, 0, 10000));
    {
        RawClient c(served.server->port());
        c.send(helloLine(kToken));
        for (int i = 0; i < 10; ++i) {
            Message lab;
            lab.type = Type::Lab;
            lab.run = i;
            lab.lab = AccumulationRequest{"cpu", kMaxGridTerms};
            c.send(encode(lab));
        }
        ASSERT_TRUE(served.waitLogged("started a precision-lab experiment", 10))
            << "the server never queued the experiments";
    } // leaves without reading a report
    EXPECT_TRUE(served.waitLogged("dropped 10 lab experiment(s) of", 1))
        << "the server did not drop the leaver's experiments";
    holder.cancel();
    const auto cancelled = collect(holder, 1);
    ASSERT_EQ(std::get<RunFinished>(cancelled.back()).runIndex, longRun);
    // Nothing of the leaver's runs now: the next run starts at once and finishes.
    holder.submit(tinyCpu());
    const RunResult r = results(collect(holder, 1)).at(0);
    EXPECT_EQ(r.status, RunStatus::Ok) << r.error.value_or("");
}
