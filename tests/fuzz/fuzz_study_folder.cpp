// libFuzzer target: a study's folder, as `lmprof-cli study --report` and the window's Study
// view read it (docs/STUDY.md). The input is the folder's three files, plan.json, runs.jsonl
// and lab.json, separated by lines "----8<----". A damaged or contradictory folder is an
// error naming the file and field, or data the report states; never a crash.

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/study.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

using namespace lmprof::engine;
namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const fs::path dir =
        fs::temp_directory_path() / ("lmprof_fuzz_study_" + std::to_string(::getpid()));
    std::string_view text(reinterpret_cast<const char*>(data), size);
    constexpr std::string_view kCut = "----8<----\n";
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const char* file : {"plan.json", "runs.jsonl", "lab.json"}) {
        const size_t cut = text.find(kCut);
        const std::string_view part = text.substr(0, cut);
        if (!part.empty()) {
            std::ofstream(dir / file, std::ios::binary).write(part.data(), part.size());
        }
        text = cut == std::string_view::npos ? std::string_view() : text.substr(cut + kCut.size());
    }
    try {
        finishedStudyRuns(dir);
        loadStudyRequest(dir);
        writeStudyFolder(dir, "fuzz", {});
    } catch (const ResultFormatError&) {
        // a file that is not what it should be, named: the answer wanted
    }
    return 0;
}
