// The columns of the scalars runs log with their steps (columns.h, scalarColumns): made per
// name when first asked for, and kept.

#include "column_cells.h"
#include "lmprof/engine/columns.h"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <set>
#include <string_view>

namespace lmprof::engine {

namespace {

using cells::column;
using cells::integer;
using cells::num;
using cells::significant;

// A logged scalar's name a column may carry: a result set is data, and a name becomes a
// CSV header and a table's.
bool columnableName(std::string_view name) {
    return !name.empty() && name.size() <= kMaxScalarNameBytes &&
           std::none_of(name.begin(), name.end(), [](char ch) {
               return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
           });
}

// The CSV's statistics of a scalar; "" names the tables' column.
constexpr std::array<std::string_view, 6> kScalarCsvStats{"last", "mean", "std", "min", "max", "n"};

RunColumn makeScalarColumn(const std::string& name, std::string_view stat) {
    using R = const RunResult&;
    using S = const RunSummary&;
    // The run's summary of this name, or null for a run that logged no such name.
    const auto find = [name](S s) -> const ScalarSummary* {
        const auto it = s.scalars.find(name);
        return it == s.scalars.end() ? nullptr : &it->second;
    };
    // A cell from that summary, `none` without one.
    const auto cell = [find](auto of, std::string none = {}) -> RunColumn::Getter {
        return [find, of, none](R, S s) {
            const ScalarSummary* v = find(s);
            return v ? of(*v) : none;
        };
    };
    const auto last = [](const ScalarSummary& v) { return num(v.last); };
    if (stat.empty()) {
        RunColumn c = column("scalar." + name, name, "", ColumnKind::Real, cell(last),
                             cell([](const ScalarSummary& v) { return significant(v.last); }, "-"));
        c.inCsv = false;
        c.number = [find](R, S s) -> std::optional<double> {
            const ScalarSummary* v = find(s);
            return v ? std::optional(v->last) : std::nullopt;
        };
        c.chartName = name + " (last logged)";
        c.explain = cell(
            [name](const ScalarSummary& v) {
                const PhaseStats& m = v.measured;
                std::string text = name + " as the run logged it: " + num(v.last) + " at the end";
                if (m.n == 0) {
                    return text + "; no measured step logged a finite value.";
                }
                return text + "; over the " + std::to_string(m.n) +
                       " measured steps that logged it, " + num(m.mean) + " ± " + num(m.std) +
                       " (" + num(m.min) + " to " + num(m.max) + ").";
            },
            "The run logged no " + name + ".");
        return c;
    }
    const std::string key = "scalar." + name + "." + std::string(stat);
    if (stat == "last") {
        return column(key, "", "", ColumnKind::Real, cell(last));
    }
    if (stat == "n") {
        return column(key, "", "", ColumnKind::Integer,
                      cell([](const ScalarSummary& v) { return integer(v.measured.n); }));
    }
    double PhaseStats::*field = stat == "mean"  ? &PhaseStats::mean
                                : stat == "std" ? &PhaseStats::std
                                : stat == "min" ? &PhaseStats::min
                                                : &PhaseStats::max;
    return column(key, "", "", ColumnKind::Real, cell([field](const ScalarSummary& v) {
                      return v.measured.n ? num(v.measured.*field) : std::string();
                  }));
}

// The scalars' columns made so far, kept for the life of the process (layouts hand out
// pointers). A process that reads result sets with more names than this makes no more.
constexpr size_t kMaxScalarColumnsKept = 1024 * (kScalarCsvStats.size() + 1);

const RunColumn* scalarColumn(const std::string& name, std::string_view stat) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::string>, RunColumn> kept;
    const std::lock_guard lock(mutex);
    auto key = std::pair{name, std::string(stat)};
    if (const auto it = kept.find(key); it != kept.end()) {
        return &it->second;
    }
    if (kept.size() >= kMaxScalarColumnsKept) {
        return nullptr;
    }
    return &kept.emplace(std::move(key), makeScalarColumn(name, stat)).first->second;
}

} // namespace

std::vector<const RunColumn*> scalarColumns(std::span<const RunResult* const> runs, bool forCsv) {
    // A finished run's summary names them; a running run's last step does, as it comes.
    std::set<std::string, std::less<>> names;
    const auto take = [&](std::string_view name, double = 0.0) {
        if (columnableName(name)) {
            names.emplace(name);
        }
    };
    for (const RunResult* r : runs) {
        for (const auto& [name, _] : r->summary.scalars) {
            take(name);
        }
        if (!r->steps.empty()) {
            forEachScalar(r->steps.back(), take);
        }
    }
    std::vector<const RunColumn*> out;
    size_t taken = 0;
    for (const std::string& name : names) {
        if (taken++ == kMaxScalarColumns) {
            break;
        }
        if (!forCsv) {
            if (const RunColumn* c = scalarColumn(name, "")) {
                out.push_back(c);
            }
            continue;
        }
        const auto columns = scalarCsvColumns(name);
        out.insert(out.end(), columns.begin(), columns.end());
    }
    return out;
}

std::vector<const RunColumn*> scalarCsvColumns(const std::string& name) {
    std::vector<const RunColumn*> out;
    for (std::string_view stat : kScalarCsvStats) {
        if (const RunColumn* c = scalarColumn(name, stat)) {
            out.push_back(c);
        }
    }
    return out;
}

} // namespace lmprof::engine
