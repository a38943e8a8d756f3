// A read-only JSON value parsed by simdjson, with the few nlohmann-like members the result
// readers use (json_access.h, fields.h), so one field list reads either parser's values.
// The fast readers of results/ (result_json.cpp: a result set, a run line) parse with
// simdjson and read through SimdNode; any error they meet is reported by reading the same
// text again with nlohmann, so the messages stay the ones docs/RESULTS.md shows.
//
// simdjson's header stays in simd_node.cpp: a node is a copy of simdjson's element (two
// words: its document and its place on the tape), kept here as bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace lmprof::engine::json_io {

// Members one object may have (docs/LIMITS.md). lmprof's have a few dozen; nlohmann's
// ordered_json looks each new member's key up among the ones before it, so 200,000 members
// took 172 s to read. Both readers refuse more (parseDocument, SimdParser::parse).
inline constexpr size_t kMaxObjectMembers = 4096;

class SimdNode {
public:
    // simdjson's types, as its element_type's characters.
    enum class Type : char {
        Array = '[',
        Object = '{',
        Int64 = 'l',
        Uint64 = 'u',
        Double = 'd',
        String = '"',
        Bool = 't',
        Null = 'n'
    };

    bool is_object() const { return m_type == Type::Object; }
    bool is_array() const { return m_type == Type::Array; }
    bool is_string() const { return m_type == Type::String; }
    bool is_boolean() const { return m_type == Type::Bool; }
    bool is_number() const {
        return m_type == Type::Int64 || m_type == Type::Uint64 || m_type == Type::Double;
    }
    // A whole number as written (nlohmann's sense), and one written without a minus sign.
    bool is_number_integer() const { return m_type == Type::Int64 || m_type == Type::Uint64; }
    bool is_number_unsigned() const {
        return m_type == Type::Uint64 || (m_type == Type::Int64 && getInt64() >= 0);
    }
    bool is_number_float() const { return m_type == Type::Double; }
    bool is_null() const { return m_type == Type::Null; }

    // The member `key` of an object (the last one, when a key repeats: as nlohmann reads).
    std::optional<SimdNode> find(std::string_view key) const;
    // An array's elements in order.
    std::vector<SimdNode> elements() const;
    // An object's members in order, a repeated key as often as it is written.
    std::vector<std::pair<std::string_view, SimdNode>> members() const;

    template <typename T>
    T get() const {
        if constexpr (std::is_same_v<T, bool>) {
            return getBool();
        } else if constexpr (std::is_integral_v<T>) {
            return m_type == Type::Double   ? static_cast<T>(getDouble())
                   : m_type == Type::Uint64 ? static_cast<T>(getUint64())
                                            : static_cast<T>(getInt64());
        } else if constexpr (std::is_floating_point_v<T>) {
            return static_cast<T>(getDouble());
        } else {
            static_assert(std::is_same_v<T, std::string>, "a JSON value lmprof reads");
            return getString();
        }
    }
    // The value as JSON text (for messages).
    std::string dump() const;

    // simdjson's element (its document and its place on the tape) as bytes.
    struct Storage {
        alignas(8) std::byte bytes[16];
    };

    // An array's elements read one after another, with no vector of them all: a column of
    // millions of samples (columns.h) costs nothing beyond its document's tape.
    class Cursor {
    public:
        explicit Cursor(const SimdNode& array);
        size_t size() const { return m_size; }
        // Element `i` (nullopt past the end). `i` is never before the one asked last:
        // std::logic_error if it is (columns.h reads rows in order).
        std::optional<SimdNode> at(size_t i);

    private:
        Storage m_at; // simdjson's iterator at element m_index, as bytes
        size_t m_index = 0;
        size_t m_size = 0;
    };
    SimdNode(const Storage& element, Type type) : m_element(element), m_type(type) {}
    const Storage& storage() const { return m_element; }

private:
    bool getBool() const;
    int64_t getInt64() const;
    uint64_t getUint64() const;
    double getDouble() const;
    std::string getString() const;
    Storage m_element;
    Type m_type;
};

// simdjson's parser for documents read one after another (a result set's runs): its buffers
// are kept and reused. parse() throws std::runtime_error with simdjson's reason when `text`
// is not a JSON document simdjson takes; the node lives until the next parse.
class SimdParser {
public:
    SimdParser();
    ~SimdParser();
    SimdParser(const SimdParser&) = delete;
    SimdParser& operator=(const SimdParser&) = delete;
    SimdNode parse(std::string_view text);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace lmprof::engine::json_io
