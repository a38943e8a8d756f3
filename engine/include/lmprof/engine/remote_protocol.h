// The remote engine's protocol (docs/REMOTE.md): what `lmprof-cli serve` and its clients
// (the window's File > Connect..., `lmprof-cli run --connect`) say to each other. One
// message is one JSON object on one line; its "type" names it and its records are the
// result set's own objects (a config, a step, a run, a memory or telemetry sample, the
// environment), so nothing is described twice. Encoding and decoding only: the network is
// remote_server.h's and remote_session.h's. Torch-free and network-free (lmprof_core), so
// the fuzz target reads messages as the server does.
#pragma once

#include "lmprof/engine/config.h"
#include "lmprof/engine/formats.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/session_interface.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine::remote {

// The protocol's versions, each with a fingerprint of its field lists: every message's keys
// and the configuration's (tests/engine/protocol_fingerprint_test.cpp computes it from
// encode()). Any change to those lists appends a stamp, so a peer that would misread them is
// refused at its hello; the test fails while the last stamp is not what this build encodes.
// 2: the non-fatal `limit` error; 3: precision-lab experiments (lab, lab_finished); 4: the
// execution variants attention and tf32; 5: cuda_graphs, and the runs' busy shares; 6: the
// first fingerprinted version.
struct ProtocolStamp {
    int version = 0;
    uint64_t fingerprint = 0;
};
inline constexpr std::array kProtocolStamps{ProtocolStamp{6, 0x6e256473a8253a11}};
// Raised by a server and a client that do not share it: the hello says which it speaks.
// The Python package's server speaks it too: both read it from formats.json.
inline constexpr int kProtocolVersion = kProtocolStamps.back().version;
static_assert(kProtocolVersion == formats::kProtocol,
              "the last stamp's version is not formats.json's protocol: raise both together");
// The longest message either side reads (a whole run with its memory timeline is a few MB):
// a longer line is refused before it is buffered further.
inline constexpr std::size_t kMaxMessageBytes = std::size_t{64} << 20;
// Before its hello a connection may send a line of at most this many bytes (a hello is a
// few hundred): an unauthenticated peer cannot make the server hold more.
inline constexpr std::size_t kMaxHelloBytes = 4096;
// A token shorter than this is refused (lmprof-cli serve makes 64 hex digits).
inline constexpr std::size_t kMinTokenLength = 16;
inline constexpr int kDefaultPort = 7377;

// Error codes of an "error" message (docs/REMOTE.md lists what each means).
namespace code {
inline constexpr std::string_view kMalformed = "malformed";      // not a JSON object we read
inline constexpr std::string_view kTooLarge = "too_large";       // over kMaxMessageBytes
inline constexpr std::string_view kUnknownType = "unknown_type"; // a "type" we do not know
inline constexpr std::string_view kVersion = "version";          // another protocol version
inline constexpr std::string_view kBadToken = "bad_token";       // the hello's token is wrong
inline constexpr std::string_view kHelloFirst = "hello_first";   // a command before the hello
inline constexpr std::string_view kTimeout = "timeout";          // no hello in time
inline constexpr std::string_view kInvalid = "invalid";          // a command we cannot take
// A submit the server will not queue: over its limits, or a run its engine refuses (the
// reason a local run would get, e.g. "attention: sdpa-flash needs a CUDA device").
inline constexpr std::string_view kLimit = "limit";
inline constexpr std::string_view kBusy = "busy"; // no room for another connection
} // namespace code

// A device of the engine's machine and what it can run: the refusal of each precision it
// cannot (checkRunnable's reason), by precision name.
struct DeviceOffer {
    std::string name; // "auto", "cpu", "cuda:0"
    bool cuda = false;
    int64_t memoryBytes = 0;
    std::map<std::string, std::string> refusals;
    bool operator==(const DeviceOffer&) const = default;
};

// "host:port" split and checked: the port from 1 to 65535 (0 too when allowZero: the
// system picks one), the host not empty ("[::1]:7377" for IPv6). Throws
// std::invalid_argument naming `what` and the reason.
struct Endpoint {
    std::string host;
    int port = 0;
    std::string text() const; // "host:port", IPv6 hosts in brackets
};
Endpoint parseEndpoint(std::string_view text, std::string_view what, bool allowZero = false);

// Every message type, with the fields it uses (the others keep their defaults).
enum class Type {
    Hello,       // client: protocol, token, client
    Submit,      // client: configs (one run each, in order; a sweep is several)
    Cancel,      // client: stop the current run after its step, drop the queued ones
    Fetch,       // client: runs, finished runs to send again (replay); none: every one
    Ack,         // client: run, stored; the server stops keeping it for the next client
    Lab,         // client: lab (a precision-lab request), run (the client's tag for it)
    Welcome,     // server: protocol, serverId, tool, environment, devices, busy
    Error,       // server: errorCode, text, fatal (the connection closes after a fatal one)
    Accepted,    // server: runs, the server's indices of a submit's configs, in order
    State,       // server: busy
    RunStarted,  // server: run, result (the header: no steps yet)
    Step,        // server: run, step, sentNs
    Memory,      // server: run, memory
    Telemetry,   // server: run, telemetry
    RunFinished, // server: run, result, replay (sent again: finished while no one listened,
                 // or asked for by a fetch), busy (the engine's state as it is sent)
    LabFinished, // server: run (the lab's tag), labReport; to the client that asked only
};
std::string_view toString(Type type);

struct Message {
    Type type = Type::Hello;
    int protocol = kProtocolVersion;
    std::string token;
    std::string client;   // "lmprof 0.1.0 (window)"
    std::string serverId; // one per server process: a reconnect knows it is the same server
    std::string errorCode;
    std::string text;
    bool fatal = false;
    std::vector<RunConfig> configs;
    std::vector<int> runs;
    int run = -1;
    std::optional<RunResult> result;
    std::optional<StepRecord> step;
    std::optional<MemorySample> memory;
    std::optional<TelemetrySample> telemetry;
    std::optional<LabRequest> lab;
    std::optional<LabReport> labReport;
    int64_t sentNs = 0; // a step's StepFinished::publishedNs on the server (its steady clock)
    ToolInfo tool;
    Environment environment;
    std::vector<DeviceOffer> devices;
    bool busy = false;
    bool replay = false;
};

// A message that cannot be read: its code (code::...) and what is wrong, naming the field.
class ProtocolError : public std::runtime_error {
public:
    ProtocolError(std::string_view errorCode, const std::string& what)
        : std::runtime_error(what), m_code(errorCode) {}
    const std::string& errorCode() const { return m_code; }

private:
    std::string m_code;
};

// One line, ending in '\n'.
std::string encode(const Message& message);
// A line without its '\n'. Throws ProtocolError (kMalformed, kUnknownType, kTooLarge).
// fromClient (the server reading): a server's message type is kUnknownType before any
// other field is read.
Message decode(std::string_view line, bool fromClient = false);
// Hello, submit, cancel, fetch, ack and lab.
bool isClientType(Type type);

Message errorMessage(std::string_view errorCode, std::string text, bool fatal);

// The token file's token: its first line, whitespace trimmed. Throws std::runtime_error
// naming the path when it is not a regular file (a FIFO would block), cannot be read, is
// empty, or holds a token shorter than kMinTokenLength.
std::string readToken(const std::string& path);

} // namespace lmprof::engine::remote
