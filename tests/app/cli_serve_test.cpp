// lmprof-cli as processes the tests start and signal: serve and run --connect end to end
// (docs/REMOTE.md), and Ctrl+C during a sweep. Served runs survive their clients,
// and the server holds within its descriptor limit.

#include "cli_test_util.h"

#include <csignal>
#include <sys/prctl.h>

using namespace lmprof_cli_test;

namespace {

// A process of lmprof-cli with these arguments (and LMPROF_CONFIG_DIR), its stderr to `log`.
// descriptorLimit > 0: the child's RLIMIT_NOFILE (ulimit -n). It dies with the test process:
// a failed ASSERT returns before the test ends it (two 100,000-step sweeps once trained on
// for two hours after such a failure).
pid_t spawnCli(const std::vector<std::string>& args, const std::filesystem::path& configDir,
               const std::filesystem::path& log, rlim_t descriptorLimit = 0) {
    const pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (descriptorLimit > 0) {
            const rlimit limit{descriptorLimit, descriptorLimit};
            setrlimit(RLIMIT_NOFILE, &limit);
        }
        setenv("LMPROF_CONFIG_DIR", configDir.c_str(), 1);
        FILE* err = std::fopen(log.c_str(), "w");
        dup2(fileno(err), 2);
        dup2(fileno(err), 1);
        std::vector<char*> argv{const_cast<char*>(LMPROF_CLI_PATH)};
        for (const auto& a : args) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        execv(LMPROF_CLI_PATH, argv.data());
        _exit(127);
    }
    return pid;
}

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Waits until `path` holds `text` (or 60 s pass).
bool waitForText(const std::filesystem::path& path, const std::string& text) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < until) {
        if (slurp(path).find(text) != std::string::npos) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

// A served engine on a free loopback port, its state under `dir` (made afresh); an empty
// address when it did not say it listens within 60 s.
struct Served {
    pid_t pid = -1;
    std::string address;
    std::filesystem::path token;
    std::filesystem::path log;
};
Served startServer(const std::filesystem::path& dir) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    Served s;
    s.log = dir / "serve.log";
    s.token = dir / "config" / "server" / "token";
    s.pid = spawnCli({"serve", "--listen", "127.0.0.1:0"}, dir / "config", s.log);
    if (waitForText(s.log, "listening on 127.0.0.1:")) {
        const std::string text = slurp(s.log);
        const size_t at = text.find("listening on 127.0.0.1:") + 23;
        s.address = "127.0.0.1:" + text.substr(at, text.find(' ', at) - at);
    }
    return s;
}

} // namespace

// lmprof-cli serve and run --connect (docs/REMOTE.md): a remote run saves the result set a
// local one does; a client killed mid-run leaves the run to finish and be autosaved there.
TEST(Cli, ServeRunsWhatClientsSubmitAndKeepsARunWhoseClientWasKilled) {
    const auto dir = tempDir() / "serve";
    const Served served = startServer(dir);
    ASSERT_FALSE(served.address.empty()) << slurp(served.log);
    const pid_t server = served.pid;
    const auto& serveLog = served.log;
    const std::string& address = served.address;
    const auto& token = served.token;
    struct stat st {};
    ASSERT_EQ(::stat(token.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);

    // The same run, remote and local: the same fields, step count and status.
    const auto remoteJson = dir / "remote.json";
    const auto localJson = dir / "local.json";
    const Result remote = cli("run " + kTiny + " --connect " + address + " --token-file " +
                              token.string() + " --json " + remoteJson.string());
    ASSERT_EQ(remote.code, 0) << remote.output;
    ASSERT_EQ(cli("run " + kTiny + " --json " + localJson.string()).code, 0);
    const auto r = readJson(remoteJson);
    const auto l = readJson(localJson);
    const auto keys = [](const nlohmann::json& j) {
        std::set<std::string> k;
        for (const auto& [key, v] : j.items()) {
            k.insert(key);
        }
        return k;
    };
    EXPECT_EQ(keys(r), keys(l));
    EXPECT_EQ(keys(r["runs"][0]), keys(l["runs"][0]));
    EXPECT_EQ(r["runs"][0]["config"], l["runs"][0]["config"]);
    EXPECT_EQ(r["runs"][0]["steps"].size(), l["runs"][0]["steps"].size());
    EXPECT_EQ(r["runs"][0]["status"], "ok");
    EXPECT_EQ(r["runs"][0]["id"], l["runs"][0]["id"]);

    // A wrong token and a bad address: said, exit 1, no hang.
    const auto wrong = dir / "wrong.token";
    std::ofstream(wrong) << "nope-not-the-servers-token\n";
    const Result refused =
        cli("run " + kTiny + " --connect " + address + " --token-file " + wrong.string());
    EXPECT_EQ(refused.code, 1);
    EXPECT_NE(refused.output.find("wrong token"), std::string::npos) << refused.output;
    EXPECT_EQ(cli("run " + kTiny + " --connect nowhere").code, 1);

    // A client killed after its first steps: the server's run finishes and is autosaved.
    const auto clientLog = dir / "client.log";
    const pid_t client = spawnCli({"run", "--model", "tiny", "--ctx", "16", "--batch", "1",
                                   "--warmup", "1", "--steps", "30", "--device", "cpu", "--connect",
                                   address, "--token-file", token.string()},
                                  dir / "config", clientLog);
    ASSERT_TRUE(waitForText(clientLog, "step 2 (3 of 31")) << slurp(clientLog);
    kill(client, SIGKILL);
    waitpid(client, nullptr, 0);
    const auto autosave = dir / "config" / "server" / "autosave.jsonl";
    ASSERT_TRUE(waitForText(serveLog, "(kept for the next client)")) << slurp(serveLog);
    EXPECT_EQ(countLines(autosave), 2) << slurp(autosave); // the first run, the killed one's
    std::ifstream in(autosave);
    std::string line;
    for (int i = 0; i < 2; ++i) {
        std::getline(in, line);
    }
    const auto killed = nlohmann::json::parse(line);
    EXPECT_EQ(killed["status"], "ok");
    EXPECT_EQ(killed["steps"].size(), 31u);

    kill(server, SIGINT);
    int status = 0;
    waitpid(server, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(serveLog);
    EXPECT_NE(slurp(serveLog).find("stopped"), std::string::npos);
}

// ddp --connect (docs/DISTRIBUTED.md): the server's engine starts the ranks on its machine;
// the client gets the runs as a local launch writes them. The rendezvous port is the
// server's to pick.
TEST(Cli, DdpConnectRunsTheRanksOnTheServer) {
    const auto dir = tempDir() / "serve-ddp";
    const Served served = startServer(dir);
    ASSERT_FALSE(served.address.empty()) << slurp(served.log);

    const std::string ddpFlags = "ddp --world-size 2 --strategy naive,bucketed --bucket-mb 0.1 "
                                 "--model tiny --ctx 16 --batch 2 --warmup 1 --steps 2 "
                                 "--device cpu --vocab 256 --sample-hz 0 --telemetry-hz 0 -q "
                                 "--connect " +
                                 served.address + " --token-file " + served.token.string();
    const auto ddpJson = dir / "ddp.json";
    const Result ddp = cli(ddpFlags + " --json " + ddpJson.string());
    ASSERT_EQ(ddp.code, 0) << ddp.output;
    EXPECT_NE(ddp.output.find("Data-parallel overhead"), std::string::npos) << ddp.output;
    const auto ddpSet = readJson(ddpJson);
    ASSERT_EQ(ddpSet["runs"].size(), 2u);
    for (const auto& run : ddpSet["runs"]) {
        EXPECT_EQ(run["status"], "ok");
        EXPECT_EQ(run["ddp"]["parameters_identical"], true);
        EXPECT_EQ(run["ddp"]["ranks"].size(), 2u);
    }
    EXPECT_EQ(ddpSet["runs"][1]["config"]["ddp"]["strategy"], "bucketed");
    const Result port = cli(ddpFlags + " --master-port 29555");
    EXPECT_EQ(port.code, 2);
    EXPECT_NE(port.output.find("--master-port: the server picks"), std::string::npos)
        << port.output;

    kill(served.pid, SIGINT);
    int status = 0;
    waitpid(served.pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(served.log);
}

// Ctrl+C during a sweep (the engine's driver, runAll): the run in flight ends cancelled and
// is kept with its steps, no later configuration starts, and the set is still written.
TEST(Cli, CtrlCDuringASweepKeepsTheCancelledRunAndStartsNoOther) {
    const auto dir = tempDir() / "sweep-interrupt";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto log = dir / "sweep.log";
    const auto json = dir / "sweep.json";
    const pid_t sweep =
        spawnCli({"sweep", "--models", "tiny", "--ctx", "16,32", "--batch", "1", "--warmup", "1",
                  "--steps", "100000", "--device", "cpu", "--sample-hz", "0", "--telemetry-hz", "0",
                  "--json", json.string()},
                 dir / "config", log);
    ASSERT_TRUE(waitForText(log, "step 2 (3 of")) << slurp(log);
    kill(sweep, SIGINT);
    int status = 0;
    waitpid(sweep, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << slurp(log);
    EXPECT_NE(slurp(log).find("interrupted, cancelling the current run"), std::string::npos);
    EXPECT_EQ(slurp(log).find("[2/2"), std::string::npos) << slurp(log);
    const auto set = readJson(json);
    ASSERT_EQ(set["runs"].size(), 1u);
    EXPECT_EQ(set["runs"][0]["status"], "cancelled");
    EXPECT_GE(set["runs"][0]["steps"].size(), 3u);
}

// Out of descriptors, the server loses nothing (ulimit -n 48 and a flood of 80 idle
// connections during a run): connections are capped below the limit, the autosave file is
// held open, and the run's memory snapshot and its client's result set are written.
TEST(Cli, ServeUnderALowDescriptorLimitLosesNoRun) {
    const auto dir = tempDir() / "serve-fds";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto serveLog = dir / "serve.log";
    const pid_t server =
        spawnCli({"serve", "--listen", "127.0.0.1:0"}, dir / "config", serveLog, 48);
    ASSERT_TRUE(waitForText(serveLog, "listening on 127.0.0.1:")) << slurp(serveLog);
    std::string log = slurp(serveLog);
    EXPECT_NE(log.find("16 connections (8 before a hello)"), std::string::npos) << log;
    const size_t at = log.find("listening on 127.0.0.1:") + 23;
    const int port = std::stoi(log.substr(at, log.find(' ', at) - at));
    const auto token = dir / "config" / "server" / "token";
    const auto json = dir / "remote.json";
    Result client;
    std::thread run([&] {
        client = cli("run --model tiny --ctx 16 --batch 1 --warmup 1 --steps 300 --device cpu "
                     "-q --memory-snapshot snap.pickle --snapshot-step 250 --connect 127.0.0.1:" +
                     std::to_string(port) + " --token-file " + token.string() + " --json " +
                     json.string());
    });
    ASSERT_TRUE(waitForText(serveLog, "submitted 1 run(s)")) << slurp(serveLog);
    std::vector<int> flood;
    for (int i = 0; i < 80; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
        flood.push_back(fd);
    }
    run.join();
    for (int fd : flood) {
        ::close(fd);
    }
    EXPECT_EQ(client.code, 0) << client.output;
    ASSERT_TRUE(waitForText(serveLog, "finished: ok")) << slurp(serveLog);
    kill(server, SIGINT);
    int status = 0;
    waitpid(server, &status, 0);
    log = slurp(serveLog);
    EXPECT_EQ(log.find("Too many open files"), std::string::npos) << log;
    EXPECT_NE(log.find("busy"), std::string::npos) << "the flood was never capped:\n" << log;
    const std::string saved = slurp(dir / "config" / "server" / "autosave.jsonl");
    ASSERT_EQ(std::count(saved.begin(), saved.end(), '\n'), 1) << saved;
    const auto run0 = nlohmann::json::parse(saved.substr(0, saved.find('\n')));
    EXPECT_EQ(run0["status"], "ok");
    ASSERT_TRUE(run0["memory_snapshot"].is_object()) << run0["memory_snapshot"];
    EXPECT_TRUE(run0["memory_snapshot"]["error"].is_null()) << run0["memory_snapshot"];
    EXPECT_TRUE(std::filesystem::exists(run0["memory_snapshot"]["path"].get<std::string>()));
    EXPECT_EQ(readJson(json)["runs"][0]["status"], "ok");
}
