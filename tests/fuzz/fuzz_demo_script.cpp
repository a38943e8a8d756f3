// libFuzzer target: a demo script (--demo, docs/DEMO.md), a file a user hands the window.
// Whatever the text, parsing returns a script within the documented limits or throws
// DemoScriptError naming the step and field; nothing else escapes.

#include "lmprof/ui/demo_script.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto script = lmprof::ui::parseDemoScript(
            std::string_view(reinterpret_cast<const char*>(data), size));
        if (script.steps.size() > 10000) {
            __builtin_trap();
        }
        for (const auto& step : script.steps) {
            if (!(step.seconds >= 0 && step.seconds <= 24 * 3600)) {
                __builtin_trap();
            }
        }
    } catch (const lmprof::ui::DemoScriptError&) {
    }
    return 0;
}
