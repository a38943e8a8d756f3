// The remote engine's messages as JSON lines (docs/REMOTE.md): each message's fields in one
// list for both directions (results/fields.h), the records it carries through the result
// set's own lists.

#include "lmprof/engine/remote_protocol.h"

#include "enum_names.h"
#include "lmprof/engine/result_io.h"
#include "results/fields.h"
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

// A run's index in its client's numbering: 0 or more.
template <typename Io>
void runIndex(Io& io, Ref<Message, Io> m) {
    io.required("run", m.run);
    if constexpr (Io::kReads) {
        if (m.run < 0) {
            io.refuse("run", "must be 0 or more, got " + std::to_string(m.run));
        }
    }
}

// A fetch's or an accepted's run indices.
template <typename Io>
void runIndices(Io& io, Ref<Message, Io> m) {
    if constexpr (Io::kReads) {
        const json& runs = arrayMember(io.in, io.path, "runs");
        for (size_t i = 0; i < runs.size(); ++i) {
            if (!runs[i].is_number_integer() || runs[i].get<int64_t>() < 0 ||
                runs[i].get<int64_t>() > std::numeric_limits<int>::max()) {
                io.refuse("runs", i, "", "expected a run index");
            }
            m.runs.push_back(runs[i].get<int>());
        }
    } else {
        io.field("runs", m.runs);
    }
}

// A submit's configurations: one or more.
template <typename Io>
void configs(Io& io, Ref<Message, Io> m) {
    if constexpr (Io::kReads) {
        const json& configs = *member(io.in, io.path, "configs", true);
        if (!configs.is_array() || configs.empty()) {
            io.refuse("configs", "expected an array of one or more configurations");
        }
        for (size_t i = 0; i < configs.size(); ++i) {
            std::string resolved;
            m.configs.push_back(configFrom(configs[i], indexed(io.path, "configs", i), resolved));
        }
    } else {
        json configs = json::array();
        for (const auto& c : m.configs) {
            configs.push_back(configJson(c, ""));
        }
        io.slot("configs") = std::move(configs);
    }
}

} // namespace

// A device of the server's, in its welcome.
template <typename Io>
void fields(Io& io, Ref<DeviceOffer, Io> d) {
    io.required("name", d.name);
    io.field("cuda", d.cuda);
    io.field("memory_bytes", d.memoryBytes);
    io.stringMap("refusals", d.refusals);
}

// A message's own fields, by its type (written after "type", which is read first to choose
// them). The records a message carries are the result set's, through their own field lists.
template <typename Io>
void fields(Io& io, Ref<Message, Io> m) {
    switch (m.type) {
    case Type::Hello:
        io.required("protocol", m.protocol);
        // A client of another version may send other fields: the server refuses it as
        // another version, whatever else it says.
        if (!Io::kReads || m.protocol == kProtocolVersion) {
            io.field("token", m.token);
            io.field("client", m.client);
        }
        break;
    case Type::Submit:
        configs(io, m);
        break;
    case Type::Cancel:
        break;
    case Type::Fetch:
    case Type::Accepted:
        runIndices(io, m);
        break;
    case Type::Ack:
        runIndex(io, m);
        break;
    case Type::Welcome: // the server, its machine and what each of its devices can run
        io.required("protocol", m.protocol);
        io.field("server_id", m.serverId);
        io.encoded("tool", m.tool, toolJson, toolFrom);
        io.encoded("environment", m.environment, environmentJson, environmentFrom);
        io.array("devices", m.devices);
        io.field("busy", m.busy);
        break;
    case Type::Error:
        io.required("code", m.errorCode);
        io.field("message", m.text);
        io.field("fatal", m.fatal);
        break;
    case Type::State:
        io.required("busy", m.busy);
        break;
    case Type::RunStarted:
        runIndex(io, m);
        io.nullableEncoded("header", m.result, runJson, runFrom);
        break;
    case Type::Step:
        runIndex(io, m);
        io.nullableEncoded("step", m.step, stepJson, stepFrom);
        io.field("sent_ns", m.sentNs);
        break;
    case Type::Memory:
        runIndex(io, m);
        io.nullableEncoded("sample", m.memory, memorySampleJson, memorySampleFrom);
        break;
    case Type::Telemetry:
        runIndex(io, m);
        io.nullableEncoded("sample", m.telemetry, telemetrySampleJson, telemetrySampleFrom);
        break;
    case Type::RunFinished:
        runIndex(io, m);
        io.nullableEncoded("result", m.result, runJson, runFrom);
        io.field("replay", m.replay);
        io.field("busy", m.busy);
        break;
    case Type::Lab:
        runIndex(io, m);
        io.nullableEncoded("request", m.lab, labRequestJson, labRequestFrom);
        break;
    case Type::LabFinished:
        runIndex(io, m);
        io.nullableEncoded("report", m.labReport, labReportJson, labReportFrom);
        io.field("busy", m.busy);
        break;
    }
}

namespace {

json body(const Message& m) {
    Writer w;
    w.field("type", toString(m.type));
    fields(w, m);
    return std::move(w.out);
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
    BasicReader<json> reader{j, "$"};
    fields(reader, m);
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
