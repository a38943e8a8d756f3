// Reports: the grid table, Markdown shape, and CSV that parses back.

#include "lmprof/engine/columns.h"
#include "lmprof/engine/format.h"
#include "lmprof/engine/report.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>

using namespace lmprof::engine;

namespace {

RunResult sampleRun(const std::string& preset, RunStatus status) {
    RunResult r;
    r.id = preset + "-1";
    r.config.model = *presetModel(preset);
    r.config.contextLength = 128;
    r.config.precision = Precision::Bf16;
    r.config.mode = Mode::ForwardBackward;
    r.status = status;
    if (status == RunStatus::Ok) {
        for (int i = 0; i < 4; ++i) {
            StepRecord s;
            s.index = i;
            s.forwardMs = 22.0 + 0.1 * i;
            s.backwardMs = 24.9 + 0.1 * (i % 2);
            s.totalMs = 48.0;
            s.phasePeakBytes = {1 << 30, 3 << 29, 0};
            r.steps.push_back(s);
        }
    } else {
        r.failedPhase = Phase::Backward;
        r.error = "out of memory, \"backward\"";
    }
    r.summary = summarize(r.config, r.steps, std::nullopt);
    return r;
}

// Minimal RFC 4180 reader: quoted fields, doubled quotes, CRLF records.
std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (quoted) {
            if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (ch == '"') {
                quoted = false;
            } else {
                field += ch;
            }
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            rows.back().push_back(field);
            field.clear();
        } else if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
            rows.back().push_back(field);
            field.clear();
            rows.emplace_back();
            ++i;
        } else {
            field += ch;
        }
    }
    rows.pop_back(); // after the final CRLF
    return rows;
}

} // namespace

TEST(Report, TableRowLooksLikeTheSeeds) {
    const std::vector<RunResult> runs = {sampleRun("small", RunStatus::Ok),
                                         sampleRun("xl", RunStatus::Oom)};
    std::ostringstream out;
    writeTable(out, runs);
    const std::string text = out.str();
    EXPECT_NE(text.find("| small | 128     | 4     | bf16      | forward-backward | 22.15 ± 0.13"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("| 24.95 ± 0.06 |"), std::string::npos) << text;
    EXPECT_NE(text.find("| OOM "), std::string::npos);
    EXPECT_NE(text.find("oom (backward)"), std::string::npos);
    EXPECT_NE(text.find("+===="), std::string::npos);
    // Every table line has the same width in characters.
    std::istringstream lines(text);
    std::string line;
    size_t width = 0;
    while (std::getline(lines, line) && (line[0] == '+' || line[0] == '|')) {
        size_t chars = 0;
        for (unsigned char ch : line) {
            chars += (ch & 0xC0) != 0x80;
        }
        if (width == 0) {
            width = chars;
        }
        EXPECT_EQ(chars, width) << line;
    }
}

TEST(Report, MarkdownHasHeaderSeparatorAndOneRowPerRun) {
    const std::vector<RunResult> runs = {sampleRun("small", RunStatus::Ok),
                                         sampleRun("medium", RunStatus::Ok)};
    std::ostringstream out;
    writeMarkdown(out, runs);
    std::istringstream lines(out.str());
    std::vector<std::string> rows;
    for (std::string l; std::getline(lines, l);) {
        rows.push_back(l);
    }
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[0].rfind("| Model | Context |", 0), 0u);
    EXPECT_EQ(rows[1].rfind("| --- | --- |", 0), 0u);
    EXPECT_NE(rows[1].find("---: |"), std::string::npos);
    const auto pipes = [](const std::string& s) { return std::count(s.begin(), s.end(), '|'); };
    for (const auto& r : rows) {
        EXPECT_EQ(pipes(r), pipes(rows[0])) << r;
    }
    EXPECT_NE(rows[3].find("| medium |"), std::string::npos);
}

TEST(Report, CsvParsesBackWithStableColumns) {
    const std::vector<RunResult> runs = {sampleRun("small", RunStatus::Ok),
                                         sampleRun("xl", RunStatus::Oom)};
    std::ostringstream out;
    writeCsv(out, runs);
    const auto rows = parseCsv(out.str());
    ASSERT_EQ(rows.size(), 3u);
    const auto& header = rows[0];
    for (const auto& row : rows) {
        EXPECT_EQ(row.size(), header.size());
    }
    auto col = [&](const std::string& name) {
        const auto it = std::find(header.begin(), header.end(), name);
        EXPECT_NE(it, header.end()) << name;
        return static_cast<size_t>(it - header.begin());
    };
    EXPECT_EQ(rows[1][col("model")], "small");
    EXPECT_EQ(rows[1][col("forward_ms_mean")], "22.15");
    EXPECT_EQ(rows[1][col("total_ms_n")], "4");
    EXPECT_EQ(rows[2][col("status")], "oom");
    EXPECT_EQ(rows[2][col("failed_phase")], "backward");
    EXPECT_EQ(rows[2][col("error")], "out of memory, \"backward\""); // quoted, comma inside
    EXPECT_EQ(rows[2][col("forward_ms_mean")], "");
    EXPECT_EQ(rows[1][col("peak_forward_bytes")], std::to_string(1 << 30));
}

TEST(Report, FormatBytesAndNames) {
    EXPECT_EQ(formatBytes(512), "512 B");
    EXPECT_EQ(formatBytes(3 << 20), "3.0 MiB");
    EXPECT_EQ(formatBytes(int64_t{3} << 30), "3.00 GiB");
    EXPECT_EQ(parseReportFormat("markdown"), ReportFormat::Markdown);
    EXPECT_FALSE(parseReportFormat("html"));
}

// The column registry: each key once, every CSV column with a value, the tables' columns
// with headers, and the registry feeding both writers.
// Counts read as counts: "528", not "528.0"; an average over steps keeps its fraction.
TEST(Report, CountsAreWholeWhenWhole) {
    EXPECT_EQ(formatCount(528.0), "528");
    EXPECT_EQ(formatCount(0.5), "0.5");
    EXPECT_EQ(formatCount(12.0002), "12");
    EXPECT_EQ(formatCount(std::nan("")), "-");
}

// Text from data is shown as text in Markdown, never as markup.
TEST(Report, MarkdownTextEscapesMarkup) {
    EXPECT_EQ(markdownText("tiny-ctx64"), "tiny-ctx64");
    EXPECT_EQ(markdownText("![x](y)\n# h|*_`<>"), "\\!\\[x\\](y) \\# h\\|\\*\\_\\`\\<\\>");
}

TEST(Report, ColumnRegistryFeedsTheCsvAndTheTables) {
    std::set<std::string> keys;
    for (const auto& c : runColumns()) {
        EXPECT_TRUE(keys.insert(c.key).second) << "column key twice: " << c.key;
        EXPECT_TRUE(c.value) << c.key;
    }
    for (const RunColumn* c : csvLayout()) { // machine values with a unit are numbers
        if (c->unit == "ms" || c->unit == "bytes") {
            EXPECT_NE(c->kind, ColumnKind::Text) << c->key << " has a unit but is text";
        }
    }
    for (const RunColumn* c : reportLayout()) {
        EXPECT_FALSE(c->header.empty()) << c->key;
    }
    EXPECT_EQ(summaryHeader(reportLayout()).size(), reportLayout().size());
    EXPECT_THROW(runColumn("no_such_column"), std::out_of_range);

    RunResult r;
    r.id = "x";
    r.config.model = *presetModel("small");
    r.summary.tokensPerS = 1234.4;
    r.summary.peakBytes.backward = 3 << 20;
    std::ostringstream csv;
    writeCsv(csv, std::span(&r, 1));
    const std::string head = csv.str().substr(0, csv.str().find("\r\n"));
    size_t commas = std::count(head.begin(), head.end(), ',');
    EXPECT_EQ(commas + 1, csvLayout().size());
    EXPECT_EQ(runColumn("tokens_per_s").cellOf(r, r.summary), "1234");
    EXPECT_EQ(runColumn("tokens_per_s").value(r, r.summary), "1234.4");
    EXPECT_EQ(runColumn("peak_bytes").cellOf(r, r.summary), "3.0 MiB");
    EXPECT_EQ(runColumn("backward_ms").cellOf(r, r.summary), "-") << "train runs it, no steps";
}

// A file may hold a noisy run whose median step time is 0 (found by fuzzing the autosave
// reader): the table says so instead of dividing by the median.
TEST(Report, NoisyRunWithAZeroMedianIsDescribedWithoutARatio) {
    RunResult r;
    r.id = "odd";
    r.status = RunStatus::Ok;
    r.summary.totalMs.n = 4;
    r.summary.totalMs.noisy = true;
    r.summary.totalMs.median = 0.0;
    r.summary.totalMs.iqr = 2.5;
    std::ostringstream out;
    writeTable(out, std::span<const RunResult>(&r, 1));
    EXPECT_NE(out.str().find("odd: noisy (step-time IQR is 2.500 ms with a median of 0)"),
              std::string::npos)
        << out.str();
    r.summary.totalMs.median = 10.0;
    std::ostringstream ratio;
    writeTable(ratio, std::span<const RunResult>(&r, 1));
    EXPECT_NE(ratio.str().find("odd: noisy (step-time IQR is 25% of the median)"),
              std::string::npos)
        << ratio.str();
}

TEST(Report, LongTextIsClippedAtACharactersStart) {
    EXPECT_EQ(clipText("short", 10), "short");
    EXPECT_EQ(clipText(std::string(50, 'x'), 10), std::string(10, 'x') + " ... (40 more bytes)");
    // "±" is two bytes: a cut inside it moves back to its start.
    EXPECT_EQ(clipText("ab\xc2\xb1"
                       "cd",
                       3),
              "ab ... (4 more bytes)");
}

TEST(Report, NamesFromAFileCannotDriveTheTerminal) {
    // A run id or error holding escapes (clear the screen, set the title, a C1 CSI) is printed
    // as visible text: no control byte reaches the terminal, and the table keeps its rows.
    EXPECT_EQ(printable("a\x1b[2Jb\x07\x7f\tc"), "a\\x1b[2Jb\\x07\\x7f\\x09c");
    EXPECT_EQ(printable("x\xc2\x9by \xc2\xb1 \xe2\x80\x94"), "x\\u009by \xc2\xb1 \xe2\x80\x94");
    RunResult r = sampleRun("small", RunStatus::Error);
    r.id = "evil\x1b]0;pwned\x07\nrow";
    r.error = "boom\x1b[31m";
    std::ostringstream out;
    writeTable(out, std::span<const RunResult>(&r, 1));
    const std::string text = out.str();
    for (char control : {'\x1b', '\x07'}) {
        EXPECT_EQ(text.find(control), std::string::npos) << text;
    }
    EXPECT_NE(text.find("evil\\x1b]0;pwned\\x07\\x0arow: error: boom\\x1b[31m"), std::string::npos)
        << text;
}
