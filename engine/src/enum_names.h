// Parsing an enum from the name toString() gives it, for the engine's small enums.
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>

namespace lmprof::engine {

template <typename Enum>
std::optional<Enum> parseByName(std::string_view name, std::initializer_list<Enum> values) {
    for (Enum v : values) {
        if (toString(v) == name) {
            return v;
        }
    }
    return std::nullopt;
}

} // namespace lmprof::engine
