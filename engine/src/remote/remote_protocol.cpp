// The remote engine's messages as JSON lines (docs/REMOTE.md), with the result set's
// encoders (results/json_access.h) for the records they carry.

#include "lmprof/engine/remote_protocol.h"

#include "enum_names.h"
#include "lmprof/engine/result_io.h"
#include "results/json_access.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <utility>

namespace lmprof::engine::remote {

using namespace json_io;

namespace {

constexpr EnumNames<Type, 16> kTypeNames{{
    {Type::Hello, "hello"},
    {Type::Submit, "submit"},
    {Type::Cancel, "cancel"},
    {Type::Fetch, "fetch"},
    {Type::Ack, "ack"},
    {Type::Welcome, "welcome"},
    {Type::Error, "error"},
    {Type::Accepted, "accepted"},
    {Type::State, "state"},
    {Type::RunStarted, "run_started"},
    {Type::Step, "step"},
    {Type::Memory, "memory"},
    {Type::Telemetry, "telemetry"},
    {Type::RunFinished, "run_finished"},
    {Type::Lab, "lab"},
    {Type::LabFinished, "lab_finished"},
}};

json deviceJson(const DeviceOffer& d) {
    json refusals = json::object();
    for (const auto& [precision, why] : d.refusals) {
        refusals[precision] = why;
    }
    return {{"name", d.name},
            {"cuda", d.cuda},
            {"memory_bytes", d.memoryBytes},
            {"refusals", std::move(refusals)}};
}

DeviceOffer deviceFrom(const json& j, const std::string& path) {
    DeviceOffer d;
    read(j, path, "name", d.name, true);
    read(j, path, "cuda", d.cuda);
    read(j, path, "memory_bytes", d.memoryBytes);
    if (const json* r = member(j, path, "refusals", false)) {
        if (!r->is_object()) {
            fail(path + ".refusals", "expected an object");
        }
        for (const auto& [precision, why] : r->items()) {
            if (!why.is_string()) {
                fail(path + ".refusals." + precision, "expected a string");
            }
            d.refusals[precision] = why.get<std::string>();
        }
    }
    return d;
}

// A welcome's fields: the server, its machine and what each of its devices can run.
void welcomeBody(const Message& m, json& j) {
    j["protocol"] = m.protocol;
    j["server_id"] = m.serverId;
    j["tool"] = toolJson(m.tool);
    j["environment"] = environmentJson(m.environment);
    json devices = json::array();
    for (const auto& d : m.devices) {
        devices.push_back(deviceJson(d));
    }
    j["devices"] = std::move(devices);
    j["busy"] = m.busy;
}

// The JSON of a message's own fields, by type.
json body(const Message& m) {
    json j = {{"type", toString(m.type)}};
    switch (m.type) {
    case Type::Hello:
        j["protocol"] = m.protocol;
        j["token"] = m.token;
        j["client"] = m.client;
        break;
    case Type::Submit: {
        json configs = json::array();
        for (const auto& c : m.configs) {
            configs.push_back(configJson(c, ""));
        }
        j["configs"] = std::move(configs);
        break;
    }
    case Type::Cancel:
        break;
    case Type::Fetch:
        j["runs"] = m.runs;
        break;
    case Type::Ack:
        j["run"] = m.run;
        break;
    case Type::Welcome:
        welcomeBody(m, j);
        break;
    case Type::Error:
        j["code"] = m.errorCode;
        j["message"] = m.text;
        j["fatal"] = m.fatal;
        break;
    case Type::Accepted:
        j["runs"] = m.runs;
        break;
    case Type::State:
        j["busy"] = m.busy;
        break;
    case Type::RunStarted:
        j["run"] = m.run;
        j["header"] = m.result ? runJson(*m.result) : json(nullptr);
        break;
    case Type::Step:
        j["run"] = m.run;
        j["step"] = m.step ? stepJson(*m.step) : json(nullptr);
        j["sent_ns"] = m.sentNs;
        break;
    case Type::Memory:
        j["run"] = m.run;
        j["sample"] = m.memory ? memorySampleJson(*m.memory) : json(nullptr);
        break;
    case Type::Telemetry:
        j["run"] = m.run;
        j["sample"] = m.telemetry ? telemetrySampleJson(*m.telemetry) : json(nullptr);
        break;
    case Type::RunFinished:
        j["run"] = m.run;
        j["result"] = m.result ? runJson(*m.result) : json(nullptr);
        j["replay"] = m.replay;
        j["busy"] = m.busy;
        break;
    case Type::Lab:
        j["run"] = m.run;
        j["request"] = m.lab ? labRequestJson(*m.lab) : json(nullptr);
        break;
    case Type::LabFinished:
        j["run"] = m.run;
        j["report"] = m.labReport ? labReportJson(*m.labReport) : json(nullptr);
        j["busy"] = m.busy;
        break;
    }
    return j;
}

const json& required(const json& j, const char* key) {
    return *member(j, "$", key, true);
}

std::vector<int> runIndices(const json& j) {
    std::vector<int> out;
    const json& runs = arrayMember(j, "$", "runs");
    for (size_t i = 0; i < runs.size(); ++i) {
        if (!runs[i].is_number_integer() || runs[i].get<int64_t>() < 0 ||
            runs[i].get<int64_t>() > std::numeric_limits<int>::max()) {
            fail(indexed("$", "runs", i), "expected a run index");
        }
        out.push_back(runs[i].get<int>());
    }
    return out;
}

void readRun(const json& j, Message& m) {
    read(j, "$", "run", m.run, true);
    if (m.run < 0) {
        fail("$.run", "must be 0 or more, got " + std::to_string(m.run));
    }
}

// A submit's configurations: one or more.
void readConfigs(const json& j, Message& m) {
    const json& configs = required(j, "configs");
    if (!configs.is_array() || configs.empty()) {
        fail("$.configs", "expected an array of one or more configurations");
    }
    for (size_t i = 0; i < configs.size(); ++i) {
        std::string resolved;
        m.configs.push_back(configFrom(configs[i], indexed("$", "configs", i), resolved));
    }
}

// A welcome's fields (welcomeBody's, read back).
void readWelcome(const json& j, Message& m) {
    read(j, "$", "protocol", m.protocol, true);
    read(j, "$", "server_id", m.serverId);
    if (const json* t = member(j, "$", "tool", false)) {
        m.tool = toolFrom(*t, "$.tool");
    }
    if (const json* e = member(j, "$", "environment", false)) {
        m.environment = environmentFrom(*e, "$.environment");
    }
    const json& devices = arrayMember(j, "$", "devices");
    for (size_t i = 0; i < devices.size(); ++i) {
        m.devices.push_back(deviceFrom(devices[i], indexed("$", "devices", i)));
    }
    read(j, "$", "busy", m.busy);
}

Message fromJson(const json& j) {
    Message m;
    std::string type;
    read(j, "$", "type", type, true);
    const auto it = std::find_if(kTypeNames.begin(), kTypeNames.end(),
                                 [&](const auto& entry) { return entry.second == type; });
    if (it == kTypeNames.end()) {
        throw ProtocolError(code::kUnknownType, "unknown message type \"" + type + "\"");
    }
    m.type = it->first;
    switch (m.type) {
    case Type::Hello:
        // The version first: a client of another version may send other fields.
        read(j, "$", "protocol", m.protocol, true);
        if (m.protocol != kProtocolVersion) {
            break; // the server refuses it as another version, whatever else it says
        }
        read(j, "$", "token", m.token);
        read(j, "$", "client", m.client);
        break;
    case Type::Submit:
        readConfigs(j, m);
        break;
    case Type::Cancel:
        break;
    case Type::Fetch:
        m.runs = runIndices(j);
        break;
    case Type::Ack:
        readRun(j, m);
        break;
    case Type::Welcome:
        readWelcome(j, m);
        break;
    case Type::Error:
        read(j, "$", "code", m.errorCode, true);
        read(j, "$", "message", m.text);
        read(j, "$", "fatal", m.fatal);
        break;
    case Type::Accepted:
        m.runs = runIndices(j);
        break;
    case Type::State:
        read(j, "$", "busy", m.busy, true);
        break;
    case Type::RunStarted:
        readRun(j, m);
        m.result = runFrom(required(j, "header"), "$.header");
        break;
    case Type::Step:
        readRun(j, m);
        m.step = stepFrom(required(j, "step"), "$.step");
        read(j, "$", "sent_ns", m.sentNs);
        break;
    case Type::Memory:
        readRun(j, m);
        m.memory = memorySampleFrom(required(j, "sample"), "$.sample");
        break;
    case Type::Telemetry:
        readRun(j, m);
        m.telemetry = telemetrySampleFrom(required(j, "sample"), "$.sample");
        break;
    case Type::RunFinished:
        readRun(j, m);
        m.result = runFrom(required(j, "result"), "$.result");
        read(j, "$", "replay", m.replay);
        read(j, "$", "busy", m.busy);
        break;
    case Type::Lab:
        readRun(j, m);
        m.lab = labRequestFrom(required(j, "request"), "$.request");
        break;
    case Type::LabFinished:
        readRun(j, m);
        m.labReport = labReportFrom(required(j, "report"), "$.report");
        read(j, "$", "busy", m.busy);
        break;
    }
    return m;
}

} // namespace

std::string Endpoint::text() const {
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
           std::to_string(port);
}

Endpoint parseEndpoint(std::string_view text, std::string_view what, bool allowZero) {
    const std::string where(what);
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
        throw std::invalid_argument(where + " \"" + std::string(text) +
                                    "\": expected HOST:PORT, e.g. 127.0.0.1:7377");
    }
    std::string host(text.substr(0, colon));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    } else if (host.find(':') != std::string::npos) {
        throw std::invalid_argument(where + " \"" + std::string(text) +
                                    "\": an IPv6 address goes in brackets with its port, "
                                    "e.g. [::1]:7377");
    }
    if (host.empty()) {
        throw std::invalid_argument(where + " \"" + std::string(text) + "\": the host is empty");
    }
    const std::string portText(text.substr(colon + 1));
    int port = -1;
    try {
        size_t used = 0;
        port = std::stoi(portText, &used);
        if (used != portText.size()) {
            port = -1;
        }
    } catch (const std::exception&) {
        port = -1;
    }
    if (port < (allowZero ? 0 : 1) || port > 65535) {
        throw std::invalid_argument(where + " \"" + std::string(text) + "\": the port must be " +
                                    (allowZero ? "0" : "1") + " to 65535, got \"" + portText +
                                    "\"");
    }
    return {host, port};
}

std::string_view toString(Type type) {
    return nameIn(kTypeNames, type);
}

std::string encode(const Message& message) {
    std::string line = body(message).dump(-1, ' ', false, json::error_handler_t::replace);
    line += '\n';
    return line;
}

bool isClientType(Type type) {
    return type == Type::Hello || type == Type::Submit || type == Type::Cancel ||
           type == Type::Fetch || type == Type::Ack || type == Type::Lab;
}

Message decode(std::string_view line, bool fromClient) {
    if (line.size() > kMaxMessageBytes) {
        throw ProtocolError(code::kTooLarge, "message of " + std::to_string(line.size()) +
                                                 " bytes is over the limit of " +
                                                 std::to_string(kMaxMessageBytes));
    }
    try {
        const json j = parseDocument(line);
        if (!j.is_object()) {
            throw ProtocolError(code::kMalformed, "a message must be a JSON object");
        }
        if (const auto t = j.find("type"); fromClient && t != j.end() && t->is_string()) {
            const auto name = t->get<std::string>();
            for (const auto& [type, known] : kTypeNames) {
                if (known == name && !isClientType(type)) {
                    throw ProtocolError(code::kUnknownType,
                                        "\"" + name + "\" is a server's message, not a client's");
                }
            }
        }
        return fromJson(j);
    } catch (const ResultFormatError& e) {
        throw ProtocolError(code::kMalformed, e.what());
    } catch (const json::exception& e) {
        throw ProtocolError(code::kMalformed, e.what());
    }
}

Message errorMessage(std::string_view errorCode, std::string text, bool fatal) {
    Message m;
    m.type = Type::Error;
    m.errorCode = errorCode;
    m.text = std::move(text);
    m.fatal = fatal;
    return m;
}

std::string readToken(const std::string& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
        throw std::runtime_error("token file " + path + ": cannot be read (" +
                                 (ec ? ec.message() : std::string("no such file")) + ")");
    }
    if (!std::filesystem::is_regular_file(status)) {
        throw std::runtime_error("token file " + path + ": not a regular file");
    }
    std::ifstream in(path);
    std::string line;
    if (!in) {
        throw std::runtime_error("token file " + path + ": cannot be read");
    }
    if (!std::getline(in, line)) {
        throw std::runtime_error("token file " + path + ": empty");
    }
    const auto first = line.find_first_not_of(" \t\r");
    const auto last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos) {
        throw std::runtime_error("token file " + path + ": empty (its first line is blank)");
    }
    std::string token = line.substr(first, last - first + 1);
    if (token.size() < kMinTokenLength) {
        throw std::runtime_error("token file " + path + ": the token has " +
                                 std::to_string(token.size()) + " characters, fewer than " +
                                 std::to_string(kMinTokenLength) +
                                 " (lmprof-cli serve makes one of 64)");
    }
    return token;
}

} // namespace lmprof::engine::remote
