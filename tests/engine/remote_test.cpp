// The remote engine on loopback (docs/REMOTE.md): a real Session served by a RemoteServer,
// driven by RemoteSessions; the protocol's messages. Clients that misbehave are in
// remote_hostile_test.cpp, the fixtures of both in remote_fixtures.h. Runs are the tiny
// preset on the CPU.

#include "lmprof/engine/devices.h"
#include "lmprof/engine/remote_protocol.h"
#include "lmprof/engine/remote_server.h"
#include "lmprof/engine/remote_session.h"
#include "lmprof/engine/result_io.h"
#include "lmprof/engine/session.h"
#include "remote_fixtures.h"
#include "session_helpers.h"
#include "test_configs.h"

#include <atomic>
#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

using namespace lmprof::engine;
using namespace lmprof::engine::remote;
using namespace lmprof::engine::testing;
using namespace std::chrono_literals;

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
    // Each refusal names its field's path, whatever the message.
    const std::string welcomeOf =
        R"({"type":"welcome","protocol":)" + std::to_string(kProtocolVersion) + R"(,"devices":)";
    EXPECT_NE(codeOf(welcomeOf + R"([{"name":"cpu","refusals":{"fp16":1}}]})")
                  .find("$.devices[0].refusals.fp16: expected a string"),
              std::string::npos);
    EXPECT_NE(codeOf(welcomeOf + R"([{"name":"cpu","refusals":[]}]})")
                  .find("$.devices[0].refusals: expected an object"),
              std::string::npos);
    EXPECT_NE(codeOf(welcomeOf + R"([{"cuda":true}]})").find("$.devices[0].name: missing"),
              std::string::npos);
    EXPECT_NE(codeOf(R"({"type":"ack","run":-1})").find("$.run: must be 0 or more, got -1"),
              std::string::npos);
    EXPECT_NE(codeOf(R"({"type":"fetch","runs":[1,-2]})").find("$.runs[1]: expected a run index"),
              std::string::npos);
    EXPECT_NE(codeOf(R"({"type":"run_finished","run":1})").find("$.result: missing"),
              std::string::npos);
    EXPECT_NE(codeOf(R"({"type":"submit","configs":[]})").find("$.configs: expected an array"),
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
    EXPECT_NE(refused(helloLine(kToken, 99))
                  .find("speaks protocol " + std::to_string(kProtocolVersion) + ", the client 99"),
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
