// Filter, range and colour rules of the run selection (run_selection.h).

#include "lmprof/ui/run_selection.h"

#include <algorithm>
#include <cctype>

namespace lmprof::ui {

namespace {

bool containsFolded(std::string_view text, std::string_view word) {
    const auto it =
        std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
        });
    return it != text.end();
}

} // namespace

bool matchesFilter(std::string_view filter, const std::vector<std::string>& cells) {
    size_t at = 0;
    while (at < filter.size()) {
        const size_t begin = filter.find_first_not_of(" \t", at);
        if (begin == std::string_view::npos) {
            break;
        }
        const size_t end = std::min(filter.find_first_of(" \t", begin), filter.size());
        std::string_view word = filter.substr(begin, end - begin);
        at = end;
        const bool negated = word.size() > 1 && word.front() == '-';
        word.remove_prefix(negated ? 1 : 0);
        const bool found = std::any_of(cells.begin(), cells.end(), [&](const std::string& c) {
            return containsFolded(c, word);
        });
        if (found == negated) {
            return false;
        }
    }
    return true;
}

std::vector<int> rangeOfRows(const std::vector<int>& shown, int anchor, int clicked) {
    const auto a = std::find(shown.begin(), shown.end(), anchor);
    const auto c = std::find(shown.begin(), shown.end(), clicked);
    if (a == shown.end() || c == shown.end()) {
        return {clicked};
    }
    return {std::min(a, c), std::max(a, c) + 1};
}

int colorOfId(std::string_view id, int colorCount) {
    // FNV-1a: the same in every build, unlike std::hash.
    uint64_t h = 14695981039346656037ull;
    for (const char ch : id) {
        h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
    }
    return colorCount > 0 ? static_cast<int>(h % static_cast<uint64_t>(colorCount)) : 0;
}

} // namespace lmprof::ui
