// Selecting runs as in a file manager (docs/WINDOW.md, "Runs"): a filter typed over the Runs
// table, Shift+click ranges over the rows as shown, and a colour that comes from a run's id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::ui {

// Whether a row matches a filter: every word of the filter, case aside, is in one of the
// row's cells ("bf16 train" keeps the rows with both; "" keeps every row). A word "-x"
// keeps the rows with no cell holding x.
bool matchesFilter(std::string_view filter, const std::vector<std::string>& cells);

// The rows a Shift+click on `clicked` selects: those shown (in their order) from `anchor`
// to it, both included; `clicked` alone when the anchor is not shown.
std::vector<int> rangeOfRows(const std::vector<int>& shown, int anchor, int clicked);

// A run's colour index (ui::runColor) derived from its id, the same in every session and
// file: a run keeps its colour across restore, save and reopen, whatever its position.
int colorOfId(std::string_view id, int colorCount);

} // namespace lmprof::ui
