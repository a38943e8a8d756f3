// The per-run columns of lmprof's reports, each declared once (engine/src/report/
// columns.cpp): a machine key and unit, a header for people, and how a run gives its value
// and its cell. The CSV writer, the grid and Markdown tables, `lmprof-cli columns` and the
// CSV test all read them; two layouts (lists of keys) give the order of the CSV and of the
// tables.
// Adding a metric: its field in RunSummary and summarize() (records.h / records.cpp), a
// column in columns.cpp (in the CSV by default), and its key in the tables' layout if
// people should see it (docs/ARCHITECTURE.md).
#pragma once

#include "lmprof/engine/records.h"

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::engine {

// How a column's values read in a CSV: text, a whole number, a real number.
enum class ColumnKind { Text, Integer, Real };
std::string_view toString(ColumnKind kind);

struct RunColumn {
    using Getter = std::function<std::string(const RunResult&, const RunSummary&)>;
    std::string key;    // "tokens_per_s": the CSV header and the name in the layouts
    std::string header; // "Tokens/s": the tables' header; empty for CSV-only columns
    std::string unit;   // "ms", "bytes", "tokens/s", "TFLOP/s"; empty for text and counts
    ColumnKind kind = ColumnKind::Text;
    Getter value;      // the machine value (CSV); "" when the run has none
    Getter cell;       // the value for people (tables); `value` when not set
    bool inCsv = true; // false: a column for people only ("Fwd ms" as mean ± std)
    std::string cellOf(const RunResult& run, const RunSummary& summary) const {
        return cell ? cell(run, summary) : value(run, summary);
    }
};

// Every column, each once.
const std::vector<RunColumn>& runColumns();
// The column of a key; throws std::out_of_range for an unknown key.
const RunColumn& runColumn(std::string_view key);

// The CSV's columns: every column with inCsv, in the table's order (stable: scripts read
// these names; `lmprof-cli columns` lists them). The grid and Markdown tables' columns.
std::span<const RunColumn* const> csvLayout();
std::span<const RunColumn* const> reportLayout();

} // namespace lmprof::engine
