// Records stored as columns: {"t_ms": [0.2, 10.1, ...], "allocated": [...], ...}, one array
// per field of the record, all of one length (docs/RESULTS.md, version 1.7). A run's memory
// and telemetry samples are thousands of small records of the same fields; as columns they
// take a third of the bytes of as many objects, and are read through the record's own field
// list (fields.h) a row at a time: a ColumnRow looks like an object to the readers, whose
// member `key` is element `row` of column `key`. A null element is a field the row lacks.
#pragma once

#include "results/json_access.h"

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace lmprof::engine::json_io {

// The columns of an object of either parser's document (J: json or SimdNode), checked to be
// arrays of one length. Keys it does not know are kept too: a reader asks only for its own.
template <typename J>
class Columns {
public:
    // A column's values: nlohmann's elements by address; simdjson's read by a cursor, since
    // a vector of millions of nodes would cost more than the document (issue 56).
    using Values =
        std::conditional_t<std::is_same_v<J, SimdNode>, SimdNode::Cursor, std::vector<const json*>>;

    Columns(const J& object, const std::string& path) : m_path(path) {
        if (!object.is_object()) {
            fail(path, "expected an object of columns");
        }
        if constexpr (std::is_same_v<J, SimdNode>) {
            for (const auto& [key, column] : object.members()) {
                add(key, column);
            }
        } else {
            for (auto it = object.begin(); it != object.end(); ++it) {
                add(it.key(), it.value());
            }
        }
        for (const Column& c : m_columns) {
            const Column& first = m_columns.front();
            if (c.values.size() != first.values.size()) {
                fail(path + "." + c.key, std::to_string(c.values.size()) + " values, but " +
                                             first.key + " has " +
                                             std::to_string(first.values.size()));
            }
        }
    }

    size_t rows() const { return m_columns.empty() ? 0 : m_columns.front().values.size(); }

    // Element `row` of column `key`: what lookup() gives for an object's member. Rows are
    // read in order (a simdjson column's cursor only goes forward).
    auto at(std::string_view key, size_t row) const {
        for (Column& c : m_columns) {
            if (c.key == key) {
                if constexpr (std::is_same_v<J, SimdNode>) {
                    return c.values.at(row);
                } else {
                    return c.values[row];
                }
            }
        }
        if constexpr (std::is_same_v<J, SimdNode>) {
            return std::optional<SimdNode>();
        } else {
            return static_cast<const json*>(nullptr);
        }
    }

    // A refusal met reading row `row` ("$.runs[0].memory_columns.rss: expected an integer")
    // with the row's place in its column ("...memory_columns.rss[7]: ...").
    std::string placed(const std::string& message, size_t row) const {
        const std::string prefix = m_path + ".";
        const size_t colon = message.find(':', prefix.size());
        if (message.compare(0, prefix.size(), prefix) != 0 || colon == std::string::npos) {
            return message + " (row " + std::to_string(row) + ")";
        }
        return message.substr(0, colon) + "[" + std::to_string(row) + "]" + message.substr(colon);
    }

private:
    struct Column {
        std::string key;
        Values values;
    };

    void add(std::string_view key, const J& column) {
        if (!column.is_array()) {
            fail(m_path + "." + std::string(key), "expected an array");
        }
        Values values = [&] {
            if constexpr (std::is_same_v<J, SimdNode>) {
                return SimdNode::Cursor(column);
            } else {
                std::vector<const json*> out;
                out.reserve(column.size());
                for (const json& v : column) {
                    out.push_back(&v);
                }
                return out;
            }
        }();
        for (Column& c : m_columns) {
            if (c.key == key) { // a repeated key: the last one counts, as for any member
                c.values = std::move(values);
                return;
            }
        }
        m_columns.push_back({std::string(key), std::move(values)});
    }

    mutable std::vector<Column> m_columns; // a cursor moves as rows are read
    std::string m_path;
};

// One row of a Columns table, read as if it were an object (fields.h, fromObject).
template <typename J>
struct ColumnRow {
    const Columns<J>& table;
    size_t row;
    bool is_object() const { return true; }
};

template <typename J>
auto lookup(const ColumnRow<J>& r, const char* key) {
    return r.table.at(key, r.row);
}

} // namespace lmprof::engine::json_io
