// The cells every run column writes (columns.cpp, scalar_columns.cpp): numbers as the CSV
// and the tables print them, and a column made from its parts.
#pragma once

#include "lmprof/engine/columns.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace lmprof::engine::cells {

inline std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", v);
    return buf;
}

// Four significant digits, as a table shows a logged value.
inline std::string significant(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.4g", v);
    return buf;
}

inline std::string integer(int64_t v) {
    return std::to_string(v);
}

inline RunColumn column(std::string key, std::string header, std::string unit, ColumnKind kind,
                        RunColumn::Getter value, RunColumn::Getter cell = {}) {
    RunColumn c;
    c.key = std::move(key);
    c.header = std::move(header);
    c.unit = std::move(unit);
    c.kind = kind;
    c.value = std::move(value);
    c.cell = std::move(cell);
    return c;
}

} // namespace lmprof::engine::cells
