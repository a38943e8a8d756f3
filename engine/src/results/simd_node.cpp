// SimdNode and SimdParser (simd_node.h) over simdjson's DOM API.

#include "results/simd_node.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <simdjson.h>
#include <stdexcept>

namespace lmprof::engine::json_io {

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

static_assert(sizeof(element) == sizeof(SimdNode::Storage) && std::is_trivially_copyable_v<element>,
              "SimdNode keeps simdjson's element as its bytes");
static_assert(static_cast<char>(element_type::OBJECT) == '{' &&
                  static_cast<char>(element_type::ARRAY) == '[' &&
                  static_cast<char>(element_type::INT64) == 'l' &&
                  static_cast<char>(element_type::UINT64) == 'u' &&
                  static_cast<char>(element_type::DOUBLE) == 'd' &&
                  static_cast<char>(element_type::STRING) == '"' &&
                  static_cast<char>(element_type::BOOL) == 't' &&
                  static_cast<char>(element_type::NULL_VALUE) == 'n',
              "SimdNode::Type spells simdjson's element types");

element elementOf(const SimdNode::Storage& s) {
    element e;
    std::memcpy(static_cast<void*>(&e), s.bytes, sizeof(e));
    return e;
}

SimdNode nodeOf(const element& e) {
    SimdNode::Storage s;
    std::memcpy(s.bytes, static_cast<const void*>(&e), sizeof(e));
    return SimdNode(s, static_cast<SimdNode::Type>(e.type()));
}

using ArrayIterator = simdjson::dom::array::iterator;
static_assert(sizeof(ArrayIterator) == sizeof(SimdNode::Storage) &&
                  std::is_trivially_copyable_v<ArrayIterator>,
              "SimdNode::Cursor keeps simdjson's array iterator as its bytes");

// The members of the objects being read, kept while the reader asks for their fields one
// after another (a field list asks in the order the writer wrote, so the member after the
// last one found is looked at first). A parse forgets them all: a place on the tape then
// names another value.
struct MemberIndex {
    SimdNode::Storage object{};
    std::vector<std::pair<std::string_view, element>> members;
    bool repeats = false; // a key appears twice: the last one counts, as nlohmann reads
    size_t next = 0;
};
constexpr size_t kIndexedObjects = 8;
thread_local std::array<MemberIndex, kIndexedObjects> t_indexed;
thread_local size_t t_indexedUsed = 0; // how many of t_indexed hold an object now
thread_local size_t t_indexedNext = 0; // the one replaced next

bool sameStorage(const SimdNode::Storage& a, const SimdNode::Storage& b) {
    uint64_t x[2], y[2];
    std::memcpy(x, a.bytes, sizeof(x));
    std::memcpy(y, b.bytes, sizeof(y));
    return x[0] == y[0] && x[1] == y[1];
}

void forgetIndexedObjects() {
    t_indexedUsed = 0;
    t_indexedNext = 0;
}

MemberIndex& indexOf(const SimdNode& node) {
    // Most often the object asked about last, else one a little before it (a nested one).
    for (size_t k = 1; k <= t_indexedUsed; ++k) {
        MemberIndex& kept = t_indexed[(t_indexedNext + kIndexedObjects - k) % kIndexedObjects];
        if (sameStorage(kept.object, node.storage())) {
            return kept;
        }
    }
    MemberIndex& index = t_indexed[t_indexedNext];
    t_indexedNext = (t_indexedNext + 1) % kIndexedObjects;
    t_indexedUsed = std::min(t_indexedUsed + 1, kIndexedObjects);
    index.object = node.storage();
    index.members.clear();
    index.repeats = false;
    index.next = 0;
    // Repeated keys: a key whose length and first and last characters no earlier key shares
    // cannot repeat one; only where two share them are the keys compared.
    uint64_t seen = 0;
    const simdjson::dom::object object = elementOf(node.storage()).get_object().value_unsafe();
    for (const auto member : object) {
        const std::string_view key = member.key;
        const uint64_t bit =
            uint64_t{1} << ((key.size() * 31 + (key.empty() ? 0 : key.front() * 7 + key.back())) &
                            63);
        if ((seen & bit) != 0) {
            for (const auto& kept : index.members) {
                index.repeats = index.repeats || kept.first == key;
            }
        }
        seen |= bit;
        index.members.emplace_back(key, member.value);
    }
    return index;
}

} // namespace

std::optional<SimdNode> SimdNode::find(std::string_view key) const {
    MemberIndex& index = indexOf(*this);
    const auto& members = index.members;
    if (index.repeats) {
        for (size_t i = members.size(); i-- > 0;) {
            if (members[i].first == key) {
                return nodeOf(members[i].second);
            }
        }
        return std::nullopt;
    }
    // From the member after the last one found, round to it.
    const size_t n = members.size();
    size_t i = index.next < n ? index.next : 0;
    for (size_t k = 0; k < n; ++k, i = i + 1 < n ? i + 1 : 0) {
        if (members[i].first.size() == key.size() && members[i].first == key) {
            index.next = i + 1;
            return nodeOf(members[i].second);
        }
    }
    return std::nullopt;
}

std::vector<SimdNode> SimdNode::elements() const {
    std::vector<SimdNode> out;
    const simdjson::dom::array array = elementOf(m_element).get_array().value_unsafe();
    for (const element x : array) {
        out.push_back(nodeOf(x));
    }
    return out;
}

SimdNode::Cursor::Cursor(const SimdNode& node) {
    const simdjson::dom::array array = elementOf(node.storage()).get_array().value_unsafe();
    const ArrayIterator first = array.begin();
    std::memcpy(m_at.bytes, static_cast<const void*>(&first), sizeof(first));
    m_size = array.size();
    if (m_size == 0xFFFFFF) { // simdjson's count saturates there: count them
        m_size = 0;
        for (auto it = array.begin(); it != array.end(); ++it) {
            ++m_size;
        }
    }
}

std::optional<SimdNode> SimdNode::Cursor::at(size_t i) {
    if (i < m_index) { // a reader that goes back would lose fields without a word
        throw std::logic_error("a column's rows were read out of order");
    }
    if (i >= m_size) {
        return std::nullopt;
    }
    ArrayIterator it;
    std::memcpy(static_cast<void*>(&it), m_at.bytes, sizeof(it));
    for (; m_index < i; ++m_index) {
        ++it;
    }
    std::memcpy(m_at.bytes, static_cast<const void*>(&it), sizeof(it));
    return nodeOf(*it);
}

std::vector<std::pair<std::string_view, SimdNode>> SimdNode::members() const {
    std::vector<std::pair<std::string_view, SimdNode>> out;
    const simdjson::dom::object object = elementOf(m_element).get_object().value_unsafe();
    for (const auto member : object) {
        out.emplace_back(member.key, nodeOf(member.value));
    }
    return out;
}

bool SimdNode::getBool() const {
    return elementOf(m_element).get_bool().value_unsafe();
}
int64_t SimdNode::getInt64() const {
    return elementOf(m_element).get_int64().value_unsafe();
}
uint64_t SimdNode::getUint64() const {
    return elementOf(m_element).get_uint64().value_unsafe();
}
double SimdNode::getDouble() const {
    return elementOf(m_element).get_double().value_unsafe();
}
std::string SimdNode::getString() const {
    return std::string(elementOf(m_element).get_string().value_unsafe());
}

std::string SimdNode::dump() const {
    return simdjson::minify(elementOf(m_element));
}

namespace {
// Whether an object in `e` has more members than the reference reading takes
// (kMaxObjectMembers): a document it refuses is not read here either.
bool tooWide(const element& e) {
    simdjson::dom::object object;
    simdjson::dom::array array;
    if (e.get_object().get(object) == simdjson::SUCCESS) {
        if (object.size() > kMaxObjectMembers) {
            return true;
        }
        for (const auto member : object) {
            if (tooWide(member.value)) {
                return true;
            }
        }
    } else if (e.get_array().get(array) == simdjson::SUCCESS) {
        for (const element x : array) {
            if (tooWide(x)) {
                return true;
            }
        }
    }
    return false;
}
} // namespace

struct SimdParser::Impl {
    simdjson::dom::parser parser;
};

SimdParser::SimdParser() : m_impl(std::make_unique<Impl>()) {}
SimdParser::~SimdParser() = default;

SimdNode SimdParser::parse(std::string_view text) {
    forgetIndexedObjects();
    element root;
    if (const auto error = m_impl->parser.parse(text.data(), text.size(), true).get(root)) {
        throw std::runtime_error(simdjson::error_message(error));
    }
    if (tooWide(root)) {
        throw std::runtime_error("an object with more than " + std::to_string(kMaxObjectMembers) +
                                 " members");
    }
    return nodeOf(root);
}

} // namespace lmprof::engine::json_io
