// libFuzzer target: an autosave file (.jsonl), as the window's restore and `show`/`compare`
// read it. Damaged lines become warnings, never exceptions; the runs that read are reported
// and compared.

#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"

#include <cstdint>
#include <sstream>
#include <string_view>

using namespace lmprof::engine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const JsonlRuns loaded = parseRunsJsonl(text); // throws nothing
    std::ostringstream out;
    writeReport(out, loaded.runs, ReportFormat::Table);
    writeComparison(out, compareRuns(loaded.runs, loaded.runs), ReportFormat::Table);
    for (const auto& run : loaded.runs) {
        if (parseRun(runToJsonLine(run)).id != run.id) {
            __builtin_trap();
        }
    }
    return 0;
}
