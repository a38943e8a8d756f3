// One-line table cells the tabular views share (summary, runs, precision, compare): each
// moves to the next column and writes its value. Also the record of each view's main table
// that the layout reads (noteTableRows).
#pragma once

#include "chart_book.h"
#include "lmprof/engine/columns.h"
#include "lmprof/engine/compare.h"
#include "lmprof/engine/records.h"
#include "lmprof/engine/report.h"

#include <functional>
#include <imgui.h>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmprof::ui::cell {

void text(std::string_view s);
void integer(long long v);
// A report column's cell (columns.h) in the current column, as the tables show it: "-"
// dimmed; a cell the column warns of (RunColumn::warns: the step time's noise mark) in the
// warning colour, and on hover the column's explanation (the CV, the IQR / median and the
// noise rule).
void figure(const engine::RunColumn& column, const std::string& text, const engine::RunResult& run,
            const engine::RunSummary& summary);
// Peak memory (largest phase peak) and tokens/s, or "-" where there is none yet.
void peakAndTokens(const engine::RunSummary& s);
// The ratio test's p ("-" when the test cannot be made) and the verdict, coloured: slower in the
// error colour, faster in the ok colour, the rest dimmed. `text` replaces the verdict's
// own words (Compare's "SLOWER" is a regression; a precision is just "slower").
void pAndVerdict(const engine::WelchTest& welch, engine::Verdict verdict,
                 std::string_view text = {});

} // namespace lmprof::ui::cell

namespace lmprof::ui {

// Report rows (engine/report.h; rows[0] the header) as ImGui tables, shared by the views
// that show the CLI's tables (the lab, Distributed).
// The body rows (rows[1..]) of an open table; `tint` may colour a cell, and the cells of
// column `wrap` wrap.
void drawRowsBody(const engine::Rows& rows,
                  const std::function<std::optional<ImVec4>(size_t, size_t)>& tint = {},
                  size_t wrap = std::string::npos);
// A table of the rows, as tall as its rows up to maxHeight (0: no limit; it scrolls past).
void drawRowsTable(const char* id, const engine::Rows& rows, float maxHeight = 0.0f);
// Before ImGui::EndTable(): records the open table, named `name`, with `rows` body rows of
// which the view wants `wanted` in view (`wanted` is capped at `rows`). A row is
// `rowHeight` high (a list clipper's ItemsHeight); 0 takes the last row's.
void noteTableRows(const char* name, int rows, int wanted, float rowHeight = 0.0f);
// A small button that copies the rows to the clipboard as Markdown (textColumns as in
// writeMarkdownRows).
void copyMarkdownButton(const char* label, const engine::Rows& rows, size_t textColumns);

} // namespace lmprof::ui
