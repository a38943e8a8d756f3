// The remote protocol's field lists and its version move together (docs/REMOTE.md,
// "Versioning"): a fingerprint of every message's keys, and of the configuration's, is kept
// beside kProtocolVersion (kProtocolStamps), and this test fails when what this build
// encodes is not the last stamp's. A peer of another version is refused at its hello, so a
// field one side sends and the other ignores (a configuration field an older server would
// drop, running something else than was asked) cannot go unnoticed.

#include "lmprof/engine/remote_protocol.h"
#include "throwaway_field.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace lmprof::engine;
using namespace lmprof::engine::remote;
using nlohmann::json;

namespace {

// Members that are the result set's own records: their fields belong to the result set's
// schema (docs/RESULTS.md), which has its own version; the protocol only carries them.
const std::set<std::string> kRecords = {"header", "result", "step",       "sample",
                                        "report", "tool",   "environment"};

// Every key path of `j` with its JSON type (python/tests/test_serve.py reads a message's shape
// by the same rules) ("submit.configs[].ddp.world_size:number"), an
// array's elements merged; a record's members stop at the record.
void shapeOf(const json& j, const std::string& path, std::set<std::string>& out) {
    if (j.is_object()) {
        out.insert(path + ":object");
        for (const auto& [key, value] : j.items()) {
            if (kRecords.count(key) != 0) {
                out.insert(path + "." + key + ":record");
            } else {
                shapeOf(value, path + "." + key, out);
            }
        }
    } else if (j.is_array()) {
        out.insert(path + ":array");
        for (const auto& element : j) {
            shapeOf(element, path + "[]", out);
        }
    } else {
        out.insert(path + ":" + (j.is_number() ? "number" : j.type_name()));
    }
}

// A configuration with every optional request present, so their keys are seen too.
RunConfig everyRequest() {
    RunConfig c;
    c.memorySnapshot = SnapshotRequest{};
    c.opProfile = OpProfileRequest{};
    c.ddp = DdpRequest{};
    return c;
}

// One message of every type with every field it uses set (a lab message of each kind).
std::vector<Message> everyMessage() {
    std::vector<Message> all;
    const auto add = [&](Type type, auto&& fill) {
        Message m;
        m.type = type;
        fill(m);
        all.push_back(std::move(m));
    };
    const auto none = [](Message&) {};
    add(Type::Hello, [](Message& m) {
        m.token = "t";
        m.client = "c";
    });
    add(Type::Submit, [](Message& m) { m.configs = {everyRequest(), RunConfig{}}; });
    add(Type::Cancel, none);
    add(Type::Fetch, [](Message& m) { m.runs = {1}; });
    add(Type::Ack, [](Message& m) { m.run = 1; });
    add(Type::Lab, [](Message& m) { m.lab = AccumulationRequest{}; });
    add(Type::Lab, [](Message& m) { m.lab = DtypeRequest{}; });
    add(Type::Welcome, [](Message& m) {
        m.serverId = "s";
        m.devices = {DeviceOffer{"cpu", false, 1, {{"bf16", "why"}}}};
    });
    add(Type::Error, [](Message& m) {
        m.errorCode = std::string(code::kInvalid);
        m.text = "why";
    });
    add(Type::Accepted, [](Message& m) { m.runs = {1}; });
    add(Type::State, none);
    add(Type::RunStarted, [](Message& m) { m.result = RunResult{}; });
    add(Type::Step, [](Message& m) { m.step = StepRecord{}; });
    add(Type::Memory, [](Message& m) { m.memory = MemorySample{}; });
    add(Type::Telemetry, [](Message& m) { m.telemetry = TelemetrySample{}; });
    add(Type::RunFinished, [](Message& m) { m.result = RunResult{}; });
    add(Type::LabFinished, [](Message& m) { m.labReport = AccumulationReport{}; });
    return all;
}

std::string protocolShape() {
    std::set<std::string> shape;
    for (const Message& m : everyMessage()) {
        const json j = json::parse(encode(m));
        shapeOf(j, j.at("type").get<std::string>(), shape);
    }
    std::ostringstream out;
    for (const auto& line : shape) {
        out << line << "\n";
    }
    return out.str();
}

uint64_t fnv1a(const std::string& text) {
    uint64_t hash = 0xcbf29ce484222325ull;
    for (const unsigned char c : text) {
        hash = (hash ^ c) * 0x100000001b3ull;
    }
    return hash;
}

std::string hex(uint64_t value) {
    std::ostringstream out;
    out << "0x" << std::hex << value;
    return out.str();
}

} // namespace

TEST(ProtocolFingerprint, FieldListsChangeOnlyWithAVersionBump) {
    const std::string shape = protocolShape();
    const uint64_t fingerprint = fnv1a(shape);
    const ProtocolStamp& last = kProtocolStamps.back();
    EXPECT_EQ(last.version, kProtocolVersion);
    EXPECT_EQ(hex(fingerprint), hex(last.fingerprint))
        << "The protocol's field lists changed. A peer of version " << kProtocolVersion
        << " would misread them: append ProtocolStamp{" << kProtocolVersion + 1 << ", "
        << hex(fingerprint) << "} to kProtocolStamps (remote_protocol.h), which raises "
        << "kProtocolVersion, and say what changed in its comment. This build encodes:\n"
        << shape;
}

TEST(ProtocolFingerprint, StampsRaiseTheVersionWithEveryChange) {
    for (size_t i = 1; i < kProtocolStamps.size(); ++i) {
        EXPECT_GT(kProtocolStamps[i].version, kProtocolStamps[i - 1].version);
        EXPECT_NE(kProtocolStamps[i].fingerprint, kProtocolStamps[i - 1].fingerprint);
    }
}

// The fingerprint sees what the protocol carries: a configuration's nested request fields
// and a message's own keys, not only the top level.
TEST(ProtocolFingerprint, ShapeReachesNestedConfigurationFields) {
    const std::string shape = protocolShape();
    for (const char* path :
         {"submit.configs[].ddp.world_size:number", "submit.configs[].op_profile.first_step:number",
          "submit.configs[].grad_norms:boolean", "welcome.devices[].refusals.bf16:string",
          "lab.request:object", "run_finished.result:record", "hello.protocol:number"}) {
        EXPECT_NE(shape.find(std::string(path) + "\n"), std::string::npos) << path << "\n" << shape;
    }
}

// A new configuration field reaches the protocol by its declaration alone, and the
// fingerprint then asks for a version bump (tests/engine/throwaway_field.h).
TEST(ProtocolFingerprint, AThrowawayConfigurationFieldChangesTheFingerprint) {
    const ExtraValueField declared(test::throwawayField());
    const std::string shape = protocolShape();
    EXPECT_NE(shape.find("submit.configs[].throwaway_steps:number\n"), std::string::npos) << shape;
    EXPECT_NE(fnv1a(shape), kProtocolStamps.back().fingerprint);
}

// The shape is also kept in tests/data/protocol_shape.txt, after a line with the version, for
// the Python package's server: python/tests/test_serve.py holds every message it sends to
// it. Writes the file instead of checking it with LMPROF_WRITE_PROTOCOL_SHAPE=1.
TEST(ProtocolFingerprint, TheShapeFileIsWhatThisBuildEncodes) {
    const std::string path = std::string(LMPROF_SOURCE_DIR) + "/tests/data/protocol_shape.txt";
    const std::string expected =
        "protocol " + std::to_string(kProtocolVersion) + "\n" + protocolShape();
    if (const char* write = std::getenv("LMPROF_WRITE_PROTOCOL_SHAPE"); write && *write == '1') {
        std::ofstream(path, std::ios::binary) << expected;
    }
    std::ifstream in(path, std::ios::binary);
    const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(kept, expected) << path << " is not what this build encodes: write it again with "
                              << "LMPROF_WRITE_PROTOCOL_SHAPE=1 and this test";
}
