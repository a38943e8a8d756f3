// Numbers and fields as every report, log line and window shows them (format.h).

#include "lmprof/engine/format.h"

#include <cmath>
#include <cstdio>

namespace lmprof::engine {

std::string formatCount(double v) {
    // A count averaged over passes may be fractional (one call every other step): then one
    // decimal; whole counts as whole numbers.
    return std::isfinite(v) && std::fabs(v - std::round(v)) < 5e-4 ? formatFixed(v, 0)
                                                                   : formatFixed(v, 1);
}

std::string formatFixed(double v, int digits) {
    if (!std::isfinite(v)) {
        return "-";
    }
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
    return buf;
}

std::string formatBytes(int64_t bytes) {
    const double b = static_cast<double>(bytes);
    if (b >= 1024.0 * 1024.0 * 1024.0)
        return formatFixed(b / (1024.0 * 1024.0 * 1024.0), 2) + " GiB";
    if (b >= 1024.0 * 1024.0)
        return formatFixed(b / (1024.0 * 1024.0), 1) + " MiB";
    if (b >= 1024.0)
        return formatFixed(b / 1024.0, 1) + " KiB";
    return std::to_string(bytes) + " B";
}

std::string csvQuote(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) {
        return s;
    }
    std::string out = "\"";
    for (char ch : s) {
        out += ch;
        if (ch == '"') {
            out += '"';
        }
    }
    return out + "\"";
}

} // namespace lmprof::engine
