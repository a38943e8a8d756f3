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

#include "results/json_access.h"

#include <type_traits>

namespace lmprof::engine::json_io {

// The record as `fields` receives it: const when writing, mutable when reading.
template <typename T, typename Io>
using Ref = std::conditional_t<Io::kReads, T&, const T&>;

template <typename T>
json toObject(const T& value);
template <typename T>
T fromObject(const json& j, const std::string& path);

// Builds an object in the order `fields` names its members.
struct Writer {
    static constexpr bool kReads = false;
    json out = json::object();

    // Read when present, written always.
    template <typename T>
    void field(const char* key, const T& v) {
        out[key] = v;
    }
    template <typename T>
    void required(const char* key, const T& v) {
        out[key] = v;
    }
    void duration(const char* key, double v) { out[key] = v; }
    // Written only when `present` (e.g. a bool only when true); read whenever there.
    template <typename T>
    void when(bool present, const char* key, const T& v) {
        if (present) {
            out[key] = v;
        }
    }
    // Omitted when absent.
    template <typename T>
    void optional(const char* key, const std::optional<T>& v) {
        if (v) {
            out[key] = *v;
        }
    }
    // null when absent.
    template <typename T>
    void nullable(const char* key, const std::optional<T>& v) {
        out[key] = v ? json(*v) : json(nullptr);
    }
    template <typename Enum, typename Parse>
    void enumeration(const char* key, Enum v, Parse, bool = false) {
        out[key] = toString(v);
    }
    template <typename Enum, typename Parse>
    void nullableEnumeration(const char* key, const std::optional<Enum>& v, Parse) {
        out[key] = v ? json(toString(*v)) : json(nullptr);
    }
    // A nested record with its own `fields`.
    template <typename T>
    void object(const char* key, const T& v, bool = false) {
        out[key] = toObject(v);
    }
    template <typename T>
    void nullableObject(const char* key, const std::optional<T>& v) {
        out[key] = v ? toObject(*v) : json(nullptr);
    }
    template <typename T>
    void array(const char* key, const std::vector<T>& values) {
        json a = json::array();
        for (const auto& v : values) {
            a.push_back(toObject(v));
        }
        out[key] = std::move(a);
    }
    // A nested object of fields that are not a record of their own ({"cpu": {...}}).
    template <typename Fn>
    void group(const char* key, Fn&& fn, bool = false) {
        Writer sub;
        fn(sub);
        out[key] = std::move(sub.out);
    }
};

// Fills a record from an object; a member that is missing keeps the record's default
// unless it is required.
struct Reader {
    static constexpr bool kReads = true;
    const json& in;
    std::string path;

    template <typename T>
    void field(const char* key, T& v) {
        read(in, path, key, v);
    }
    template <typename T>
    void required(const char* key, T& v) {
        read(in, path, key, v, true);
    }
    void duration(const char* key, double& v) { readDuration(in, path, key, v); }
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
    template <typename T>
    void object(const char* key, T& v, bool isRequired = false) {
        if (const json* m = member(in, path, key, isRequired)) {
            v = fromObject<T>(*m, path + "." + key);
        }
    }
    template <typename T>
    void nullableObject(const char* key, std::optional<T>& v) {
        if (const json* m = member(in, path, key, false)) {
            v = fromObject<T>(*m, path + "." + key);
        }
    }
    template <typename T>
    void array(const char* key, std::vector<T>& values) {
        const json& a = arrayMember(in, path, key);
        for (size_t i = 0; i < a.size(); ++i) {
            values.push_back(fromObject<T>(a[i], indexed(path, key, i)));
        }
    }
    template <typename Fn>
    void group(const char* key, Fn&& fn, bool isRequired = false) {
        if (const json* m = member(in, path, key, isRequired)) {
            Reader sub{*m, path + "." + key};
            fn(sub);
        }
    }
};

template <typename T>
json toObject(const T& value) {
    Writer w;
    fields(w, value);
    return std::move(w.out);
}

template <typename T>
T fromObject(const json& j, const std::string& path) {
    if (!j.is_object()) {
        fail(path, "expected an object");
    }
    T value{};
    Reader r{j, path};
    fields(r, value);
    return value;
}

} // namespace lmprof::engine::json_io
