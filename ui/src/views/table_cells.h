// One-line table cells the tabular views share (summary, runs, precision, compare): each
// moves to the next column and writes its value.
#pragma once

#include "lmprof/engine/compare.h"
#include "lmprof/engine/records.h"

#include <string_view>

namespace lmprof::ui::cell {

void text(std::string_view s);
void integer(long long v);
// Peak memory (largest phase peak) and tokens/s, or "-" where there is none yet.
void peakAndTokens(const engine::RunSummary& s);
// The ratio test's p ("-" when the test cannot be made) and the verdict, coloured: slower in the
// error colour, faster in the ok colour, the rest dimmed. `text` replaces the verdict's
// own words (Compare's "SLOWER" is a regression; a precision is just "slower").
void pAndVerdict(const engine::WelchTest& welch, engine::Verdict verdict,
                 std::string_view text = {});

} // namespace lmprof::ui::cell
