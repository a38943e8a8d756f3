// How lmprof writes a number or a field for people and for CSV, the same in the reports, the
// server's log lines, the memory model's warnings and the window. Standard library only.
#pragma once

#include <cstdint>
#include <string>

namespace lmprof::engine {

// "22.11" for (22.1111, 2); "-" for a value that is not finite.
std::string formatFixed(double value, int digits);

// A count: "528" when whole, "0.5" when not (calls per step averaged over steps).
std::string formatCount(double value);

// "12.3 MiB", "1.50 GiB".
std::string formatBytes(int64_t bytes);

// An RFC 4180 field: quoted when it holds a comma, quote or line break.
std::string csvQuote(const std::string& field);

// Text from a file or a peer (a run id, a label) made safe to print on a terminal: each C0 or
// C1 control character and DEL becomes a visible escape ("\x1b", "\u009b"), so a name cannot
// move the cursor, recolour the terminal or break a table's row. Other text is unchanged.
std::string printable(const std::string& text);

// `text` cut to at most `maxBytes` bytes at a UTF-8 character's start, with " ... (N more
// bytes)" when it was cut: an error message of 20 MB drawn as a hint or a status line made a
// frame take minutes (text layout costs its length, wrapping more).
std::string clipText(const std::string& text, size_t maxBytes);

} // namespace lmprof::engine
