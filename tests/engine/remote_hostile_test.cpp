// The remote engine under hostile clients (docs/REMOTE.md): what any peer asks is held to
// the server's limits, refused with its reason, and cannot poison the clients after it.
// Runs are the tiny preset on the CPU.

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
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <thread>

using namespace lmprof::engine;
using namespace lmprof::engine::remote;
using namespace lmprof::engine::testing;
using namespace std::chrono_literals;

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
    EXPECT_EQ(errors[2].rfind("runs: 0 queued and 4 more are over this server's limit of 3", 0), 0u)
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
    EXPECT_EQ(remote.info().problem.rfind("skipped 1 unreadable message(s) from the server", 0), 0u)
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
