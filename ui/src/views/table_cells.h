// One-line table cells the tabular views share (summary, runs, precision, compare): each
// moves to the next column and writes its value.
#pragma once

#include "lmprof/engine/records.h"

#include <string_view>

namespace lmprof::ui::cell {

void text(std::string_view s);
void integer(long long v);
// Peak memory (largest phase peak) and tokens/s, or "-" where there is none yet.
void peakAndTokens(const engine::RunSummary& s);

} // namespace lmprof::ui::cell
