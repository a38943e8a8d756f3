// The names of the engine's small enums, one table per enum: toString() reads a name from
// it and parseByName() finds a value by the name toString() gives, so a name is written once.
//   constexpr EnumNames<Mode, 3> kModeNames{{{Mode::Forward, "forward"}, ...}};
//   std::string_view toString(Mode m) { return nameIn(kModeNames, m); }
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace lmprof::engine {

template <typename Enum, size_t N>
using EnumNames = std::array<std::pair<Enum, std::string_view>, N>;

// The value's name in its table; "?" for a value the table lacks (a cast from a bad int).
template <typename Enum, size_t N>
constexpr std::string_view nameIn(const EnumNames<Enum, N>& names, Enum value) {
    for (const auto& [v, name] : names) {
        if (v == value) {
            return name;
        }
    }
    return "?";
}

template <typename Enum, size_t N>
std::optional<Enum> parseByName(std::string_view name, const std::array<Enum, N>& values) {
    for (Enum v : values) {
        if (toString(v) == name) {
            return v;
        }
    }
    return std::nullopt;
}

} // namespace lmprof::engine
