// The fast reading of result sets and run lines (simdjson, docs/RESULTS.md, "Reading large
// files") against the reference reading by nlohmann: for every document, valid or not, the
// same runs or the same refusal, word for word. The documents are the fuzz corpus's result
// sets, written in other layouts, and thousands of mutations of them.

#include "lmprof/engine/result_io.h"
#include "results/json_access.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace lmprof::engine;
namespace fs = std::filesystem;

namespace {

std::string fileText(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// What a reading answers: the set as lmprof writes it, or the refusal's words.
template <typename Read>
std::string answer(Read read, std::string_view text) {
    try {
        return "set " + toJson(read(text));
    } catch (const ResultFormatError& e) {
        return std::string("refused ") + e.what();
    }
}

std::string fast(std::string_view text) {
    return answer([](std::string_view t) { return parseResultSet(t); }, text);
}
std::string reference(std::string_view text) {
    return answer([](std::string_view t) { return json_io::readResultSetReference(t); }, text);
}

std::vector<std::string> corpus() {
    std::vector<std::string> out;
    for (const auto& entry :
         fs::directory_iterator(fs::path(LMPROF_SOURCE_DIR) / "tests/fuzz/corpus/result_set")) {
        out.push_back(fileText(entry.path()));
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The corpus's sets that read (the others are hostile on purpose).
std::vector<ResultSet> readableSets() {
    std::vector<ResultSet> out;
    for (const std::string& document : corpus()) {
        try {
            out.push_back(parseResultSet(document));
        } catch (const ResultFormatError&) {
        }
    }
    return out;
}

// The same document in the layouts other writers use: compact, the runs first, members in
// reverse order, and a key given twice (the last counts).
std::vector<std::string> layouts(const std::string& text) {
    std::vector<std::string> out{text};
    nlohmann::ordered_json j;
    try {
        checkJsonDepth(text); // a document nested thousands deep would overflow copies of it
        j = nlohmann::ordered_json::parse(text);
    } catch (const std::exception&) {
        return out;
    }
    out.push_back(j.dump());
    if (j.is_object()) {
        nlohmann::ordered_json reversed = nlohmann::ordered_json::object();
        std::vector<std::string> keys;
        for (const auto& [key, value] : j.items()) {
            keys.insert(keys.begin(), key);
        }
        for (const auto& key : keys) {
            reversed[key] = j[key];
        }
        out.push_back(reversed.dump(1));
        if (j.contains("runs") && j["runs"].is_array() && !j["runs"].empty() &&
            j["runs"][0].is_object()) {
            std::string twice = j.dump(2);
            const size_t run = twice.find("\"runs\": [\n    {");
            if (run != std::string::npos) {
                twice.insert(run + std::string("\"runs\": [\n    {").size(),
                             "\"id\": \"said first\", \"status\": \"no such status\",");
                out.push_back(twice);
            }
        }
    }
    return out;
}

} // namespace

TEST(ResultReading, EveryLayoutOfEveryCorpusSetReadsAsTheReferenceReadsIt) {
    size_t read = 0;
    for (const std::string& document : corpus()) {
        for (const std::string& text : layouts(document)) {
            const std::string expected = reference(text);
            const size_t before = json_io::referenceReadings();
            EXPECT_EQ(fast(text), expected) << text.substr(0, 200);
            if (expected.rfind("set ", 0) == 0) {
                ++read;
                EXPECT_EQ(json_io::referenceReadings(), before)
                    << "a valid set fell back to the reference reading: " << text.substr(0, 200);
            }
        }
    }
    EXPECT_GT(read, 20u) << "most of the corpus is valid: the fast path was exercised";
}

// Thousands of damaged documents: a byte changed, one deleted, a stretch repeated. Whatever
// the reference answers, the fast reading answers the same.
TEST(ResultReading, MutatedDocumentsGetTheReferencesAnswerWordForWord) {
    std::mt19937 random(43);
    const std::string bytes = "{}[]\",:-0123456789.eEtfnul \\\n";
    size_t mutations = 0, valid = 0;
    for (const std::string& document : corpus()) {
        for (int k = 0; k < 150; ++k) {
            std::string text = document;
            const size_t at = random() % text.size();
            switch (random() % 3) {
            case 0:
                text[at] = bytes[random() % bytes.size()];
                break;
            case 1:
                text.erase(at, 1);
                break;
            default:
                text.insert(at, text.substr(at, random() % 40));
                break;
            }
            const std::string expected = reference(text);
            ASSERT_EQ(fast(text), expected) << "mutation " << k << " at " << at;
            ++mutations;
            valid += expected.rfind("set ", 0) == 0;
        }
    }
    EXPECT_GT(mutations, 2000u);
    EXPECT_GT(valid, 100u) << "some mutations keep the set valid (a digit changed)";
}

// Run lines (autosave, a study's runs.jsonl) read fast as well, with the reference's answer.
TEST(ResultReading, RunLinesReadAsTheReferenceReadsThem) {
    std::mt19937 random(7);
    size_t lines = 0;
    for (const ResultSet& set : readableSets()) {
        for (const RunResult& run : set.runs) {
            std::string line = runToJsonLine(run);
            for (int k = 0; k < 20; ++k) {
                const auto read = [](auto reader, std::string_view text) {
                    try {
                        return "run " + runToJsonLine(reader(text));
                    } catch (const ResultFormatError& e) {
                        return std::string("refused ") + e.what();
                    }
                };
                const size_t before = json_io::referenceReadings();
                const std::string expected = read(json_io::readRunReference, line);
                EXPECT_EQ(read(parseRun, line), expected);
                if (expected.rfind("run ", 0) == 0) {
                    EXPECT_EQ(json_io::referenceReadings(), before) << "read fast: " << line;
                }
                ++lines;
                line[random() % line.size()] = "0:,\"]}x"[random() % 7];
            }
        }
    }
    EXPECT_GT(lines, 150u);
}

// A set is written run by run, never as one JSON value: at every indentation the bytes are
// the whole document's dump (nlohmann's, of the compact text), with and without runs.
TEST(ResultReading, ASetWrittenRunByRunIsTheWholeDocumentsDump) {
    for (const ResultSet& set : readableSets()) {
        for (ResultSet written :
             {set, ResultSet{set.created, set.tool, set.environment, {}, set.precisionLab}}) {
            const auto whole = nlohmann::ordered_json::parse(toJson(written, -1));
            EXPECT_EQ(whole.dump(), toJson(written, -1));
            EXPECT_EQ(toJson(parseResultSet(toJson(written, -1))), toJson(written));
            for (int indent : {0, 2, 4}) {
                // The same document, with each column of samples on one line.
                const std::string text = toJson(written, indent);
                EXPECT_EQ(nlohmann::ordered_json::parse(text), whole) << "indent " << indent;
                for (const auto& run : whole["runs"]) {
                    for (const char* key : {"memory_columns", "telemetry_columns"}) {
                        for (auto it = run[key].begin(); it != run[key].end(); ++it) {
                            const std::string line = "\"" + it.key() + "\": " + it->dump();
                            EXPECT_NE(text.find(line), std::string::npos) << line;
                        }
                    }
                }
            }
        }
    }
}

// A file is read through a mapping whose pages go as the runs are read: the same set as
// the text read whole, for a set of many runs.
TEST(ResultReading, AMappedFileReadsAsItsText) {
    ResultSet set = readableSets().front();
    set.runs.clear();
    for (ResultSet& read : readableSets()) {
        for (RunResult& run : read.runs) {
            set.runs.push_back(std::move(run));
        }
    }
    while (set.runs.size() < 200) {
        set.runs.push_back(set.runs[set.runs.size() % 7]);
    }
    const fs::path file =
        fs::temp_directory_path() / ("lmprof_mapped_" + std::to_string(::getpid()) + ".json");
    saveResultSetAtomic(set, file);
    const std::string text = fileText(file);
    EXPECT_EQ(toJson(loadResultSet(file)), toJson(parseResultSet(text)));
    EXPECT_EQ(loadRuns(file).runs.size(), set.runs.size());
    // A damaged run near the end: the refusal names the file and the run's path.
    std::string damaged = text;
    damaged.replace(damaged.rfind("\"batch_size\": 4,"), 16, "\"batch_size\": \"4\",");
    std::ofstream(file, std::ios::binary | std::ios::trunc) << damaged;
    try {
        loadResultSet(file);
        ADD_FAILURE() << "a damaged run was read";
    } catch (const ResultFormatError& e) {
        EXPECT_EQ(std::string(e.what()),
                  file.string() + ": " + reference(damaged).substr(std::string("refused ").size()));
        EXPECT_NE(std::string(e.what()).find(".config.batch_size: expected an integer"),
                  std::string::npos)
            << e.what();
    }
    fs::remove(file);
}

// A set on one line, as Python's json.dump and jq -c write it, is opened on the fast path
// like lmprof's own layout: before, its one line was first tried as an autosave's run line,
// which parsed the whole set a second time by the reference reading (issue 56, 2.1x).
TEST(ResultReading, AFileOnOneLineIsReadOnceOnTheFastPath) {
    ResultSet set = readableSets().front();
    const fs::path file =
        fs::temp_directory_path() / ("lmprof_compact_" + std::to_string(::getpid()) + ".json");
    std::ofstream(file, std::ios::binary) << nlohmann::ordered_json::parse(toJson(set)).dump();
    ASSERT_EQ(fileText(file).find('\n'), std::string::npos);
    const size_t before = json_io::referenceReadings();
    const ResultsFile read = loadResultsFile(file);
    EXPECT_EQ(json_io::referenceReadings(), before) << "the reference reading ran";
    EXPECT_EQ(read.runs.size(), set.runs.size());
    fs::remove(file);
}

// An object with more members than any of lmprof's is refused by both readings, in the
// same words and in linear time: ordered_json took 172 s over 200,000 members. One in the
// set's top level, one in a run's step (simdjson's part), one in a run line.
TEST(ResultReading, AnObjectOf200000MembersIsRefusedByBothReadings) {
    nlohmann::ordered_json set = nlohmann::ordered_json::parse(toJson(readableSets().front()));
    std::string members;
    for (int i = 0; i < 200'000; ++i) {
        members += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
    }
    const std::string wide = "{" + members + "}";
    set["environment"]["extra"] = "WIDE";
    set["runs"][0]["steps"][0]["scalars"] = "WIDE";
    for (const char* where : {"environment", "runs"}) {
        nlohmann::ordered_json one = set;
        (std::string(where) == "runs" ? one["environment"] : one["runs"][0]["steps"][0])
            .erase(std::string(where) == "runs" ? "extra" : "scalars");
        std::string text = one.dump();
        text.replace(text.find("\"WIDE\""), 6, wide);
        const std::string expected = reference(text);
        EXPECT_NE(expected.find("an object with more than 4096 members"), std::string::npos)
            << where << ": " << expected.substr(0, 200);
        EXPECT_EQ(fast(text), expected) << where;
    }
    std::string line = nlohmann::ordered_json(set["runs"][0]).dump();
    line.replace(line.find("\"WIDE\""), 6, wide);
    EXPECT_THROW(parseRun(line), ResultFormatError);
}

// A long read tells how far it has come and stops when told: a set run by run, an
// autosave file line by line; the lab comes in the same reading.
TEST(ResultReading, ALongReadShowsItsProgressAndCanBeCancelled) {
    ResultSet set;
    for (ResultSet& read : readableSets()) {
        for (RunResult& run : read.runs) {
            set.runs.push_back(std::move(run));
        }
        if (!read.precisionLab.empty()) {
            set.precisionLab = read.precisionLab;
        }
    }
    ASSERT_GT(set.runs.size(), 5u);
    const fs::path dir =
        fs::temp_directory_path() / ("lmprof_progress_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    saveResultSetAtomic(set, dir / "set.json");
    for (const RunResult& run : set.runs) {
        appendRunJsonl(dir / "runs.jsonl", run);
    }
    for (const char* name : {"set.json", "runs.jsonl"}) {
        std::vector<double> shares;
        const ResultsFile file = loadResultsFile(dir / name, [&](double share) {
            shares.push_back(share);
            return true;
        });
        EXPECT_EQ(file.runs.size(), set.runs.size()) << name;
        EXPECT_GE(shares.size(), set.runs.size()) << name;
        EXPECT_TRUE(std::is_sorted(shares.begin(), shares.end())) << name;
        EXPECT_GT(shares.back(), 0.95) << name;
        EXPECT_LE(shares.back(), 1.0) << name;
        size_t asked = 0;
        EXPECT_THROW(loadResultsFile(dir / name, [&](double) { return ++asked < 3; }),
                     ReadCancelled)
            << name;
        EXPECT_EQ(asked, 3u) << "it stops when told, " << name;
    }
    EXPECT_EQ(toJson(ResultSet{{}, {}, {}, {}, loadResultsFile(dir / "set.json").lab}),
              toJson(ResultSet{{}, {}, {}, {}, set.precisionLab}));
    fs::remove_all(dir);
}

namespace {

// A run with both kinds of samples, some fields on some rows only (a GPU's whole-device use,
// NVML's readings), as a set.
ResultSet sampledSet() {
    ResultSet set = readableSets().front();
    set.runs.resize(1);
    RunResult& run = set.runs[0];
    run.memoryTimeline.clear();
    run.telemetry.clear();
    for (int i = 0; i < 5; ++i) {
        run.memoryTimeline.push_back({0.5 * i, 100 + i, 200, 300 + i, i == 3 ? 7 : 0,
                                      i == 3 ? 80 : 0, i < 2 ? Phase::Forward : Phase::Backward,
                                      i / 2, i % 2 == 0});
        TelemetrySample t;
        t.tMs = 10.0 * i;
        t.cpuPercent = 99.5;
        t.rss = 1000 + i;
        if (i >= 2) {
            t.powerW = 300.0 + i;
            t.throttleReasons = 4;
        }
        run.telemetry.push_back(t);
    }
    return set;
}

// The same set in the layout of 1.6: samples as objects under their older names.
nlohmann::ordered_json asRows(nlohmann::ordered_json set) {
    set["schema"] = "lmprof.results/1.7";
    for (auto& run : set["runs"]) {
        for (const auto& [rows, columns] : {std::pair{"memory_timeline", "memory_columns"},
                                            std::pair{"telemetry", "telemetry_columns"}}) {
            auto objects = nlohmann::ordered_json::array();
            const auto& table = run[columns];
            const size_t n = table.empty() ? 0 : table.begin()->size();
            for (size_t i = 0; i < n; ++i) {
                auto object = nlohmann::ordered_json::object();
                for (auto it = table.begin(); it != table.end(); ++it) {
                    if (!(*it)[i].is_null()) {
                        object[it.key()] = (*it)[i];
                    }
                }
                objects.push_back(object);
            }
            run.erase(columns);
            run[rows] = objects;
        }
    }
    return set;
}

} // namespace

TEST(ResultReading, SamplesAreWrittenAsColumnsAndOlderRowsStillRead) {
    const ResultSet set = sampledSet();
    const std::string text = toJson(set);
    const auto document = nlohmann::ordered_json::parse(text);
    const auto& run = document["runs"][0];
    EXPECT_FALSE(run.contains("memory_timeline"));
    EXPECT_FALSE(run.contains("telemetry"));
    EXPECT_EQ(run["memory_columns"]["rss"], nlohmann::ordered_json({300, 301, 302, 303, 304}));
    EXPECT_EQ(run["memory_columns"]["device_used"],
              nlohmann::ordered_json::parse("[null, null, null, 7, null]"));
    EXPECT_EQ(run["telemetry_columns"]["power_w"],
              nlohmann::ordered_json::parse("[null, null, 302.0, 303.0, 304.0]"));
    EXPECT_FALSE(run["telemetry_columns"].contains("gpu_util_percent")); // no row has it

    const size_t before = json_io::referenceReadings();
    EXPECT_EQ(toJson(parseResultSet(text)), text);
    EXPECT_EQ(json_io::referenceReadings(), before) << "columns are read fast";
    EXPECT_EQ(reference(text), "set " + text);

    const std::string rows = asRows(document).dump(2);
    EXPECT_EQ(fast(rows), "set " + text);
    EXPECT_EQ(reference(rows), "set " + text);
    // As a run line (autosave) too.
    const std::string line = runToJsonLine(set.runs[0]);
    EXPECT_EQ(runToJsonLine(parseRun(line)), line);
    // The samples take fewer than half the bytes as columns than as objects.
    ResultSet unsampled = set;
    unsampled.runs[0].memoryTimeline.clear();
    unsampled.runs[0].telemetry.clear();
    const std::string none = toJson(unsampled);
    const std::string noRows = asRows(nlohmann::ordered_json::parse(none)).dump(2);
    EXPECT_LT(2 * (text.size() - none.size()), rows.size() - noRows.size());
}

TEST(ResultReading, ColumnsThatDisagreeAreRefusedWithTheirPath) {
    const auto document = nlohmann::ordered_json::parse(toJson(sampledSet()));
    const auto refusal = [&](const std::function<void(nlohmann::ordered_json&)>& change) {
        auto changed = document;
        change(changed["runs"][0]);
        const std::string text = changed.dump(2);
        EXPECT_EQ(fast(text), reference(text));
        return reference(text);
    };
    EXPECT_EQ(refusal([](auto& run) { run["memory_columns"]["rss"].push_back(1); }),
              "refused $.runs[0].memory_columns.rss: 6 values, but t_ms has 5");
    EXPECT_EQ(refusal([](auto& run) { run["memory_columns"]["allocated"][3] = "many"; }),
              "refused $.runs[0].memory_columns.allocated[3]: expected an integer");
    EXPECT_EQ(refusal([](auto& run) { run["memory_columns"]["phase"][1] = "sleeping"; }),
              "refused $.runs[0].memory_columns.phase[1]: unknown value 'sleeping'");
    EXPECT_EQ(refusal([](auto& run) { run["telemetry_columns"]["rss"] = 5; }),
              "refused $.runs[0].telemetry_columns.rss: expected an array");
    EXPECT_EQ(
        refusal([](auto& run) { run["telemetry_columns"] = nlohmann::ordered_json::array(); }),
        "refused $.runs[0].telemetry_columns: expected an object of columns");
    EXPECT_EQ(refusal([](auto& run) { run["memory_timeline"] = nlohmann::ordered_json::array(); }),
              "refused $.runs[0].memory_columns: a run has its samples either as "
              "memory_timeline or as memory_columns, not both");
    // A column the reader does not know is ignored, if it is as long as the others.
    EXPECT_EQ(refusal([](auto& run) {
                  run["memory_columns"]["future"] = {1, 2, 3, 4, 5};
              }),
              "set " + toJson(sampledSet()));
}
