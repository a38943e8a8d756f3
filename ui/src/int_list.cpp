// parseIntList (int_list.h).

#include "int_list.h"

#include <charconv>

namespace lmprof::ui {

std::optional<std::vector<int64_t>> parseIntList(std::string_view text, int64_t min,
                                                 std::string* error) {
    std::vector<int64_t> values;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t comma = std::min(text.find(',', pos), text.size());
        std::string_view item = text.substr(pos, comma - pos);
        while (!item.empty() && item.front() == ' ') {
            item.remove_prefix(1);
        }
        while (!item.empty() && item.back() == ' ') {
            item.remove_suffix(1);
        }
        pos = comma + 1;
        if (item.empty()) {
            continue;
        }
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (ec != std::errc() || end != item.data() + item.size()) {
            *error = "'" + std::string(item) + "' is not a whole number";
            return std::nullopt;
        }
        if (v < min) {
            *error = std::to_string(v) + " is below " + std::to_string(min);
            return std::nullopt;
        }
        values.push_back(v);
    }
    if (values.empty()) {
        *error = "the list is empty";
        return std::nullopt;
    }
    return values;
}

} // namespace lmprof::ui
