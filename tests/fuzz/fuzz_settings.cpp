// libFuzzer target: the window's settings.json. Whatever the text, parsing keeps what reads
// and names the rest; it never throws.

#include "settings.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::vector<std::string> damaged;
    const auto s = lmprof::ui::Settings::parse(
        std::string_view(reinterpret_cast<const char*>(data), size), damaged);
    if (s.recentFiles.size() > lmprof::ui::Settings::kMaxRecent) {
        __builtin_trap();
    }
    return 0;
}
