// libFuzzer target: one line of the remote engine's protocol (docs/REMOTE.md), as the server
// and the client read what the other end sends. Anything is a Message or a ProtocolError
// with a code; a message that reads encodes to a line that reads back as the same type.

#include "lmprof/engine/remote_protocol.h"

#include <cstdint>
#include <string_view>

using namespace lmprof::engine::remote;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    try {
        const Message m = decode(line);
        const std::string again = encode(m);
        if (again.empty() || again.back() != '\n' ||
            decode(std::string_view(again).substr(0, again.size() - 1)).type != m.type) {
            __builtin_trap();
        }
    } catch (const ProtocolError& e) {
        if (e.errorCode().empty()) {
            __builtin_trap();
        }
    }
    return 0;
}
