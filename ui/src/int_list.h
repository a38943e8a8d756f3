// The Sweep builder's editable lists of whole numbers (contexts, batches, warmups).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::ui {

// "0, 1,2,5" -> {0, 1, 2, 5}. nullopt (with `error` set) for an empty list, a non-number
// or a value below `min`.
std::optional<std::vector<int64_t>> parseIntList(std::string_view text, int64_t min,
                                                 std::string* error);

} // namespace lmprof::ui
