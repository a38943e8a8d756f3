// Parsing an enum from the name toString() gives it, for the engine's small enums.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace lmprof::engine {

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
