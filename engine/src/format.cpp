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

std::string printable(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    char hex[8];
    for (size_t i = 0; i < text.size(); ++i) {
        const auto ch = static_cast<unsigned char>(text[i]);
        const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
        if (ch < 0x20 || ch == 0x7f) {
            std::snprintf(hex, sizeof hex, "\\x%02x", ch);
            out += hex;
        } else if (ch == 0xc2 && next >= 0x80 && next <= 0x9f) { // U+0080..U+009F in UTF-8
            std::snprintf(hex, sizeof hex, "\\u%04x", next);
            out += hex;
            ++i;
        } else {
            out += static_cast<char>(ch);
        }
    }
    return out;
}

std::string clipText(const std::string& text, size_t maxBytes) {
    if (text.size() <= maxBytes) {
        return text;
    }
    size_t cut = maxBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
        --cut; // not inside a character
    }
    return text.substr(0, cut) + " ... (" + std::to_string(text.size() - cut) + " more bytes)";
}

} // namespace lmprof::engine
