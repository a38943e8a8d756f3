// The fast reading of result sets and run lines (simdjson, docs/RESULTS.md, "Reading large
// files") against the reference reading by nlohmann: for every document, valid or not, the
// same runs or the same refusal, word for word. The documents are the fuzz corpus's result
// sets, written in other layouts, and thousands of mutations of them.

#include "lmprof/engine/result_io.h"
#include "results/json_access.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
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
        for (ResultSet written : {set, ResultSet{set.created, set.tool, set.environment, {}, set.precisionLab}}) {
            const auto whole = nlohmann::ordered_json::parse(toJson(written, -1));
            EXPECT_EQ(whole.dump(), toJson(written, -1));
            EXPECT_EQ(toJson(parseResultSet(toJson(written, -1))), toJson(written));
            for (int indent : {0, 2, 4}) {
                EXPECT_EQ(toJson(written, indent), whole.dump(indent)) << "indent " << indent;
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
        EXPECT_EQ(std::string(e.what()), file.string() + ": " +
                                             reference(damaged).substr(std::string("refused ").size()));
        EXPECT_NE(std::string(e.what()).find(".config.batch_size: expected an integer"),
                  std::string::npos)
            << e.what();
    }
    fs::remove(file);
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
    const fs::path dir = fs::temp_directory_path() / ("lmprof_progress_" + std::to_string(::getpid()));
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
