// libFuzzer target: a result set (.json) as `show`, `compare` and File > Open read it. A
// file is either refused with a ResultFormatError or read into runs that every report and
// a round trip through the writer handle; anything else (a crash, another exception, a
// sanitizer report) is a finding.

#include "lmprof/engine/compare.h"
#include "lmprof/engine/report.h"
#include "lmprof/engine/result_io.h"

#include <cstdint>
#include <sstream>
#include <string_view>

using namespace lmprof::engine;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ResultSet set;
    try {
        set = parseResultSet(text);
    } catch (const ResultFormatError&) {
        return 0;
    }
    std::ostringstream out;
    for (ReportFormat f : {ReportFormat::Table, ReportFormat::Markdown, ReportFormat::Csv}) {
        writeReport(out, set.runs, f);
        writeComparison(out, compareRuns(set.runs, set.runs), f);
        writeOpReport(out, set.runs, {}, f);
    }
    // What lmprof writes it reads back.
    const ResultSet again = parseResultSet(toJson(set));
    if (again.runs.size() != set.runs.size()) {
        __builtin_trap();
    }
    return 0;
}
