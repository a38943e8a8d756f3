// One list of a record's JSON fields for both directions. A record's `fields(io, value)`
// names each field once, with its rule (required, a duration, omitted when absent, ...);
// called with a Writer it builds the object in that order, with a Reader it fills the
// value from an object and names the JSON path of anything it cannot use. So a field is
// added, renamed or checked in one line, and writer and reader cannot drift apart.
//
//   template <typename Io> void fields(Io& io, Ref<PeakBytes, Io> p) {
//       io.field("forward", p.forward);
//       ...
//   }
//   json j = toObject(peaks);                         // writing
//   PeakBytes p = fromObject<PeakBytes>(j, "$.peak");  // reading
//
// What a rule cannot say (a value derived from two fields, an encoding of its own) goes in
// `if constexpr (Io::kReads)` beside the others, still in the one list.
#pragma once

#include "lmprof/engine/config.h"
#include "results/columns.h"
#include "results/json_access.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <memory>
#include <type_traits>
#include <variant>

namespace lmprof::engine::json_io {

// The record as `fields` receives it: const when writing, mutable when reading.
template <typename T, typename Io>
using Ref = std::conditional_t<Io::kReads, T&, const T&>;

template <typename T, typename... Context>
json toObject(const T& value, const Context&... context);
template <typename T, typename J, typename... Context>
T fromObject(const J& j, const std::string& path, const Context&... context);

// Records as columns being written (Writer::columns): one array per field, in the order the
// fields were first met.
class ColumnTable {
public:
    // The element of column `key` for row `row` (the rows before it that lacked the field
    // get nulls).
    json& next(const char* key, size_t row) {
        // Most often the column after the last one asked for.
        for (size_t k = 0; k < m_columns.size(); ++k) {
            const size_t i = (m_hint + k) % m_columns.size();
            if (m_columns[i].first == key) {
                m_hint = i + 1;
                return append(m_columns[i].second, row);
            }
        }
        m_columns.emplace_back(key, json::array());
        m_hint = m_columns.size();
        return append(m_columns.back().second, row);
    }
    // The table as an object, every column `rows` long.
    json take(size_t rows) {
        json table = json::object();
        for (auto& [key, values] : m_columns) {
            values.get_ref<json::array_t&>().resize(rows);
            table[key] = std::move(values);
        }
        return table;
    }

private:
    static json& append(json& column, size_t row) {
        auto& values = column.get_ref<json::array_t&>();
        values.resize(row);
        return values.emplace_back();
    }
    std::vector<std::pair<std::string, json>> m_columns;
    size_t m_hint = 0;
};

// Builds an object in the order `fields` names its members (or, for Writer::columns, a row
// of a ColumnTable).
struct Writer {
    static constexpr bool kReads = false;
    json out = json::object();
    ColumnTable* table = nullptr; // writing a row of records as columns
    size_t row = 0;

    // Where a field's value goes: the object's member, or the row's element of its column.
    json& slot(const char* key) { return table ? table->next(key, row) : out[key]; }

    // Read when present, written always.
    template <typename T>
    void field(const char* key, const T& v) {
        slot(key) = v;
    }
    template <typename T>
    void required(const char* key, const T& v) {
        slot(key) = v;
    }
    // What the reader holds to a range is written within it (a self time computed as a
    // difference can come out a hair below 0; a share summed in another order a hair above 1).
    void duration(const char* key, double v, bool = false) {
        slot(key) = std::isfinite(v) ? std::clamp(v, 0.0, kMaxDurationMs) : 0.0;
    }
    template <typename T>
    void between(const char* key, T v, T lo, T hi, bool = false) {
        if constexpr (std::is_floating_point_v<T>) {
            v = std::isfinite(v) ? std::clamp(v, lo, hi) : lo;
        }
        slot(key) = v;
    }
    // Written for people and other tools, recomputed from the other fields when read.
    template <typename Fn>
    void derived(const char* key, Fn&& value) {
        slot(key) = value();
    }
    // Written only when `present` (e.g. a bool only when true); read whenever there.
    template <typename T>
    void when(bool present, const char* key, const T& v) {
        if (present) {
            slot(key) = v;
        }
    }
    // Omitted when absent.
    template <typename T>
    void optional(const char* key, const std::optional<T>& v) {
        if (v) {
            slot(key) = *v;
        }
    }
    // null when absent.
    template <typename T>
    void nullable(const char* key, const std::optional<T>& v) {
        slot(key) = v ? json(*v) : json(nullptr);
    }
    template <typename Enum, typename Parse>
    void enumeration(const char* key, Enum v, Parse, bool = false) {
        slot(key) = toString(v);
    }
    template <typename Enum, typename Parse>
    void nullableEnumeration(const char* key, const std::optional<Enum>& v, Parse) {
        slot(key) = v ? json(toString(*v)) : json(nullptr);
    }
    // A nested record with its own `fields` (and what else they need: a count, a size).
    template <typename T, typename... Context>
    void object(const char* key, const T& v, bool = false, const Context&... context) {
        slot(key) = toObject(v, context...);
    }
    // Omitted when absent.
    template <typename T, typename... Context>
    void optionalObject(const char* key, const std::optional<T>& v, const Context&... context) {
        if (v) {
            slot(key) = toObject(*v, context...);
        }
    }
    // A record shared between copies of its owner (RunResult::opProfile).
    template <typename T, typename... Context>
    void optionalObject(const char* key, const std::shared_ptr<const T>& v,
                        const Context&... context) {
        if (v) {
            slot(key) = toObject(*v, context...);
        }
    }
    template <typename T>
    void nullableObject(const char* key, const std::optional<T>& v) {
        slot(key) = v ? toObject(*v) : json(nullptr);
    }
    template <typename T, typename... Context>
    void array(const char* key, const std::vector<T>& values, const Context&... context) {
        json a = json::array();
        for (const auto& v : values) {
            a.push_back(toObject(v, context...));
        }
        slot(key) = std::move(a);
    }
    // Records as columns (columns.h): one array per field, a null where a row lacks it.
    template <typename T>
    void columns(const char* key, const std::vector<T>& rows) {
        ColumnTable columns;
        Writer w;
        w.table = &columns;
        for (size_t i = 0; i < rows.size(); ++i) {
            w.row = i;
            fields(w, rows[i]);
        }
        slot(key) = columns.take(rows.size());
    }
    void strings(const char* key, const std::vector<std::string>& values) { slot(key) = values; }
    // Names to texts ({"fp16": "why"}).
    void stringMap(const char* key, const std::map<std::string, std::string>& values) {
        slot(key) = values;
    }
    // A record whose fields are listed in another file, through its pair of functions
    // (json_access.h: runJson and runFrom, ...): read when present.
    template <typename T>
    void encoded(const char* key, const T& v, json (*encode)(const T&),
                 T (*)(const json&, const std::string&)) {
        slot(key) = encode(v);
    }
    // The same, null when absent; a reader requires it.
    template <typename T>
    void nullableEncoded(const char* key, const std::optional<T>& v, json (*encode)(const T&),
                         T (*)(const json&, const std::string&)) {
        slot(key) = v ? encode(*v) : json(nullptr);
    }
    // A nested object of fields that are not a record of their own ({"cpu": {...}}).
    template <typename Fn>
    void group(const char* key, Fn&& fn, bool = false) {
        Writer sub;
        fn(sub);
        slot(key) = std::move(sub.out);
    }
};

// The elements of an array of either parser's document, each with its index.
template <typename Fn>
void forEachElement(const json& a, Fn&& fn) {
    for (size_t i = 0; i < a.size(); ++i) {
        fn(a[i], i);
    }
}
template <typename Fn>
void forEachElement(const std::vector<SimdNode>& a, Fn&& fn) {
    for (size_t i = 0; i < a.size(); ++i) {
        fn(a[i], i);
    }
}

// The members of an object of either parser's document, each with its key.
template <typename Fn>
void forEachMember(const json& object, Fn&& fn) {
    for (auto it = object.begin(); it != object.end(); ++it) {
        fn(std::string_view(it.key()), it.value());
    }
}
template <typename Fn>
void forEachMember(const SimdNode& object, Fn&& fn) {
    for (const auto& [key, value] : object.members()) {
        fn(key, value);
    }
}

// Fills a record from an object of either parser's document (J: json, or SimdNode for the
// fast readers); a member that is missing keeps the record's default unless it is required.
template <typename J>
struct BasicReader {
    static constexpr bool kReads = true;
    const J& in;
    std::string path;

    template <typename T>
    void field(const char* key, T& v) {
        read(in, path, key, v);
    }
    template <typename T>
    void required(const char* key, T& v) {
        read(in, path, key, v, true);
    }
    void duration(const char* key, double& v, bool isRequired = false) {
        readDuration(in, path, key, v, isRequired);
    }
    template <typename T>
    void between(const char* key, T& v, T lo, T hi, bool isRequired = false) {
        readBetween(in, path, key, v, lo, hi, isRequired);
    }
    template <typename Fn>
    void derived(const char*, Fn&&) {}
    template <typename T>
    void when(bool, const char* key, T& v) {
        read(in, path, key, v);
    }
    template <typename T>
    void optional(const char* key, std::optional<T>& v) {
        readOptional(in, path, key, v);
    }
    template <typename T>
    void nullable(const char* key, std::optional<T>& v) {
        readOptional(in, path, key, v);
    }
    template <typename Enum, typename Parse>
    void enumeration(const char* key, Enum& v, Parse parse, bool isRequired = false) {
        readEnum(in, path, key, v, parse, isRequired);
    }
    template <typename Enum, typename Parse>
    void nullableEnumeration(const char* key, std::optional<Enum>& v, Parse parse) {
        if (member(in, path, key, false)) {
            Enum value{};
            readEnum(in, path, key, value, parse);
            v = value;
        }
    }
    template <typename T, typename... Context>
    void object(const char* key, T& v, bool isRequired = false, const Context&... context) {
        if (const auto m = member(in, path, key, isRequired)) {
            v = fromObject<T>(*m, path + "." + key, context...);
        }
    }
    template <typename T, typename... Context>
    void optionalObject(const char* key, std::optional<T>& v, const Context&... context) {
        if (const auto m = member(in, path, key, false)) {
            v = fromObject<T>(*m, path + "." + key, context...);
        }
    }
    template <typename T, typename... Context>
    void optionalObject(const char* key, std::shared_ptr<const T>& v, const Context&... context) {
        if (const auto m = member(in, path, key, false)) {
            v = std::make_shared<const T>(fromObject<T>(*m, path + "." + key, context...));
        }
    }
    template <typename T>
    void nullableObject(const char* key, std::optional<T>& v) {
        if (const auto m = member(in, path, key, false)) {
            v = fromObject<T>(*m, path + "." + key);
        }
    }
    template <typename T, typename... Context>
    void array(const char* key, std::vector<T>& values, const Context&... context) {
        const auto& a = arrayMember(in, path, key);
        values.reserve(values.size() + a.size());
        forEachElement(a, [&](const J& e, size_t i) {
            values.push_back(fromObject<T>(e, indexed(path, key, i), context...));
        });
    }
    // Records as columns (columns.h), read a row at a time through their field list; a
    // refusal names the element ("$.runs[0].memory_columns.rss[7]: expected an integer").
    template <typename T>
    void columns(const char* key, std::vector<T>& values) {
        const auto m = member(in, path, key, false);
        if (!m) {
            return;
        }
        const std::string at = path + "." + key;
        const Columns<J> table(*m, at);
        values.reserve(values.size() + table.rows());
        for (size_t i = 0; i < table.rows(); ++i) {
            try {
                values.push_back(fromObject<T>(ColumnRow<J>{table, i}, at));
            } catch (const ResultFormatError& e) {
                throw ResultFormatError(table.placed(e.what(), i));
            }
        }
    }
    void strings(const char* key, std::vector<std::string>& values) {
        const auto& a = arrayMember(in, path, key);
        forEachElement(a, [&](const J& e, size_t i) {
            if (!e.is_string()) {
                fail(indexed(path, key, i), "expected a string");
            }
            values.push_back(e.template get<std::string>());
        });
    }
    void stringMap(const char* key, std::map<std::string, std::string>& values) {
        const auto m = member(in, path, key, false);
        if (!m) {
            return;
        }
        if (!m->is_object()) {
            fail(path + "." + key, "expected an object");
        }
        for (const auto& [name, text] : m->items()) {
            if (!text.is_string()) {
                fail(path + "." + key + "." + name, "expected a string");
            }
            values[name] = text.template get<std::string>();
        }
    }
    template <typename T>
    void encoded(const char* key, T& v, json (*)(const T&),
                 T (*decode)(const json&, const std::string&)) {
        if (const auto m = member(in, path, key, false)) {
            v = decode(*m, path + "." + key);
        }
    }
    template <typename T>
    void nullableEncoded(const char* key, std::optional<T>& v, json (*)(const T&),
                         T (*decode)(const json&, const std::string&)) {
        v = decode(*member(in, path, key, true), path + "." + key);
    }
    // For the checks a rule cannot say: whether a member is there, and a refusal at a member
    // or at an array element.
    bool has(const char* key) const { return static_cast<bool>(member(in, path, key, false)); }
    [[noreturn]] void refuse(const std::string& key, const std::string& why) const {
        fail(key.empty() ? path : path + "." + key, why);
    }
    [[noreturn]] void refuse(const char* array, size_t i, const std::string& key,
                             const std::string& why) const {
        fail(indexed(path, array, i) + (key.empty() ? "" : "." + key), why);
    }
    template <typename Fn>
    void group(const char* key, Fn&& fn, bool isRequired = false) {
        if (const auto m = member(in, path, key, isRequired)) {
            BasicReader sub{*m, path + "." + key};
            fn(sub);
        }
    }
};

template <typename T, typename... Context>
json toObject(const T& value, const Context&... context) {
    Writer w;
    fields(w, value, context...);
    return std::move(w.out);
}

template <typename T, typename J, typename... Context>
T fromObject(const J& j, const std::string& path, const Context&... context) {
    if (!j.is_object()) {
        fail(path, "expected an object");
    }
    T value{};
    BasicReader<J> r{j, path};
    fields(r, value, context...);
    return value;
}

// A run configuration's declared fields (config.h), both ways: the plain ones of `sections`,
// in their declared order, and the choices, each checked against its names when read.
template <typename Io, typename Config>
void valueFieldsOf(Io& io, Config& c, std::initializer_list<ValueField::Section> sections) {
    for (ValueField::Section section : sections) {
        for (const ValueField& f : valueFields()) {
            if (f.section == section) {
                std::visit([&](auto member) { io.field(f.key.c_str(), c.*member); }, f.member);
            }
        }
    }
}

template <typename Io, typename Config>
void choiceFieldsOf(Io& io, Config& c) {
    for (const ChoiceField& f : choiceFields()) {
        if constexpr (Io::kReads) {
            std::string value = f.get(c);
            io.field(f.key.c_str(), value);
            if (auto why = f.unknown(value)) {
                fail(io.path + "." + f.key, *why);
            }
            f.set(c, value);
        } else {
            io.field(f.key.c_str(), f.get(c));
        }
    }
}

} // namespace lmprof::engine::json_io
