// The fast reading of result sets and run lines (docs/RESULTS.md, "Reading large files").
//
// A night's sweep is hundreds of megabytes, nearly all of it runs' steps and samples. The
// document's top level is split by a scan that only follows strings and brackets; each run
// is parsed by simdjson and read through the same field lists (runFrom over a SimdNode), on
// a few threads, and the rest of the top level (schema, tool, environment, the lab: a few
// kilobytes) by the reference reading. Whatever this path meets that it does not expect (a
// malformed or unusual document, a refused field) sends the whole text to the reference
// reading by nlohmann (result_json.cpp), whose answer and messages are the ones given: the
// fast path only ever returns what that one would.

#include "lmprof/engine/result_io.h"
#include "lmprof/engine/verdicts.h"
#include "results/json_access.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lmprof::engine {

using namespace json_io;

namespace {

std::atomic<size_t> g_referenceReadings{0};

// Each run's text with its index and where it ends in the document; false stops the scan.
using OnRun = std::function<bool(std::string_view run, size_t index, size_t end)>;

// The next quote or bracket from `p` (or `end`): only they matter to the scan below. Sixteen
// bytes at a time where the CPU has SSE2 (every x86-64), a byte at a time elsewhere.
const char* nextStructural(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i openBrace = _mm_set1_epi8('{');
    const __m128i closeBrace = _mm_set1_epi8('}');
    const __m128i openBracket = _mm_set1_epi8('[');
    const __m128i closeBracket = _mm_set1_epi8(']');
    while (end - p >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, openBrace)),
                         _mm_or_si128(_mm_cmpeq_epi8(v, closeBrace),
                                      _mm_or_si128(_mm_cmpeq_epi8(v, openBracket),
                                                   _mm_cmpeq_epi8(v, closeBracket))));
        if (const int mask = _mm_movemask_epi8(hit)) {
            return p + __builtin_ctz(static_cast<unsigned>(mask));
        }
        p += 16;
    }
#endif
    while (p < end && !std::memchr("\"{}[]", *p, 5)) {
        ++p;
    }
    return p;
}

class TopLevelScan {
public:
    explicit TopLevelScan(std::string_view text) : m_text(text) {}

    // The top level as a document of its own, its runs left out ("runs": [], each run
    // going to onRun as it is found); nullopt where the text is not the plain shape of a
    // result set, or onRun said stop.
    std::optional<std::string> scan(const OnRun& onRun) {
        std::string head = "{";
        std::vector<std::string_view> keys;
        skipSpace();
        if (!take('{')) {
            return std::nullopt;
        }
        skipSpace();
        if (take('}')) {
            return finish(head);
        }
        for (;;) {
            skipSpace();
            const size_t keyStart = m_pos;
            if (!skipString(false)) {
                return std::nullopt;
            }
            const std::string_view key = m_text.substr(keyStart + 1, m_pos - keyStart - 2);
            if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
                return std::nullopt; // a repeated member: the reference reading decides
            }
            keys.push_back(key);
            skipSpace();
            if (!take(':')) {
                return std::nullopt;
            }
            skipSpace();
            const size_t valueStart = m_pos;
            head += (head.size() > 1 ? "," : "");
            head += m_text.substr(keyStart, valueStart - keyStart);
            if (key == "runs" && peek('[')) {
                if (!scanRuns(onRun)) {
                    return std::nullopt;
                }
                head += "[]";
            } else {
                if (!skipValue(1)) {
                    return std::nullopt;
                }
                head += m_text.substr(valueStart, m_pos - valueStart);
            }
            skipSpace();
            if (take('}')) {
                return finish(head);
            }
            if (!take(',')) {
                return std::nullopt;
            }
        }
    }

private:
    std::optional<std::string> finish(std::string& head) {
        skipSpace();
        if (m_pos != m_text.size()) {
            return std::nullopt;
        }
        head += "}";
        return std::move(head);
    }
    bool scanRuns(const OnRun& onRun) {
        take('[');
        skipSpace();
        if (take(']')) {
            return true;
        }
        for (size_t index = 0;; ++index) {
            skipSpace();
            const size_t start = m_pos;
            if (!skipValue(2) || !onRun(m_text.substr(start, m_pos - start), index, m_pos)) {
                return false;
            }
            skipSpace();
            if (take(']')) {
                return true;
            }
            if (!take(',')) {
                return false;
            }
        }
    }
    void skipSpace() {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n' ||
                                         m_text[m_pos] == '\r' || m_text[m_pos] == '\t')) {
            ++m_pos;
        }
    }
    bool peek(char c) const { return m_pos < m_text.size() && m_text[m_pos] == c; }
    bool take(char c) {
        if (!peek(c)) {
            return false;
        }
        ++m_pos;
        return true;
    }
    // A string from its opening quote; keys with escapes are left to the reference reading.
    bool skipString(bool escapes) {
        if (!take('"')) {
            return false;
        }
        const char* end = stringEnd(m_text.data() + m_pos);
        if (!end || (!escapes && std::memchr(m_text.data() + m_pos, '\\',
                                             static_cast<size_t>(end - m_text.data()) - m_pos))) {
            return false;
        }
        m_pos = static_cast<size_t>(end - m_text.data()) + 1;
        return true;
    }
    // The closing quote of the string whose text starts at `p`: a quote after an even number
    // of backslashes. Null when the document ends first.
    const char* stringEnd(const char* p) const {
        const char* end = m_text.data() + m_text.size();
        for (;;) {
            const auto* quote =
                static_cast<const char*>(std::memchr(p, '"', static_cast<size_t>(end - p)));
            if (!quote) {
                return nullptr;
            }
            size_t backslashes = 0;
            while (quote - backslashes > p &&
                   quote[-1 - static_cast<ptrdiff_t>(backslashes)] == '\\') {
                ++backslashes;
            }
            if (backslashes % 2 == 0) {
                return quote;
            }
            p = quote + 1;
        }
    }
    // A value at nesting `depth` (1: a member of the top level), its brackets counted as
    // checkJsonDepth counts them; the parsers check the rest of its syntax.
    bool skipValue(int depth) {
        if (peek('"')) {
            return skipString(true);
        }
        if (!peek('{') && !peek('[')) {
            const size_t start = m_pos;
            while (m_pos < m_text.size() && !std::strchr(",}] \t\r\n", m_text[m_pos])) {
                ++m_pos;
            }
            return m_pos > start;
        }
        int open = 0;
        const char* p = m_text.data() + m_pos;
        const char* end = m_text.data() + m_text.size();
        while (p < end) {
            p = nextStructural(p, end);
            if (p == end) {
                break;
            }
            const char c = *p;
            if (c == '"') {
                p = stringEnd(p + 1);
                if (!p) {
                    return false;
                }
            } else if (c == '{' || c == '[') {
                if (depth + ++open > kMaxJsonDepth) {
                    return false;
                }
            } else if (c == '}' || c == ']') {
                if (--open == 0) {
                    m_pos = static_cast<size_t>(p - m_text.data()) + 1;
                    return true;
                }
            }
            ++p;
        }
        return false;
    }

    std::string_view m_text;
    size_t m_pos = 0;
};

// One run by simdjson, nullopt where simdjson or the run's fields refuse it.
std::optional<RunResult> readRunFast(SimdParser& parser, std::string_view text,
                                     const std::string& path) {
    try {
        return runFrom(parser.parse(text), path);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// The runs found by the scan, read by a few threads while the scan goes on, and handed on in
// their order: the pages of a run are let go once it and every run before it are read. A
// thread starts with each run queued, up to `threads`: a set of one run starts one.
class RunReaders {
public:
    explicit RunReaders(unsigned threads) : m_most(threads) {}
    ~RunReaders() { stop(); }
    RunReaders(const RunReaders&) = delete;
    RunReaders& operator=(const RunReaders&) = delete;

    // Queues a run (waiting while too many are ahead of the oldest unread one); the runs
    // read before it, in order, go to `take`. False once a run could not be read.
    template <typename Take>
    bool add(std::string_view text, size_t end, Take&& take) {
        if (m_threads.size() < m_most) { // only this thread (the scan's) starts and stops them
            m_threads.emplace_back([this] { work(); });
        }
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [&] { return m_failed || m_slots.size() < kAhead || frontReady(); });
        handOn(lock, take);
        if (m_failed) {
            return false;
        }
        m_slots.push_back({text, end, {}, false});
        m_changed.notify_all();
        return true;
    }
    // Every run queued, read and handed on; false if one could not be read.
    template <typename Take>
    bool finish(Take&& take) {
        std::unique_lock lock(m_mutex);
        m_scanned = true;
        m_changed.notify_all();
        while (!m_failed && !m_slots.empty()) {
            m_changed.wait(lock, [&] { return m_failed || frontReady(); });
            handOn(lock, take);
        }
        return !m_failed;
    }

private:
    static constexpr size_t kAhead = 16; // runs queued at most: their pages stay mapped
    struct Slot {
        std::string_view text;
        size_t end;
        std::optional<RunResult> run;
        bool read;
    };
    bool frontReady() const { return !m_slots.empty() && m_slots.front().read; }
    // Hands the front's read runs on, without the lock (take may throw: a cancel).
    template <typename Take>
    void handOn(std::unique_lock<std::mutex>& lock, Take& take) {
        while (!m_failed && frontReady()) {
            Slot slot = std::move(m_slots.front());
            m_slots.pop_front();
            ++m_base;
            lock.unlock();
            try {
                take(std::move(*slot.run), slot.end);
            } catch (...) {
                lock.lock();
                throw;
            }
            lock.lock();
        }
    }
    void work() {
        SimdParser parser; // each thread its own (and its own member index, simd_node.cpp)
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_changed.wait(lock, [&] {
                return m_stopped || m_failed || m_next < m_base + m_slots.size() ||
                       (m_scanned && m_next >= m_base + m_slots.size());
            });
            if (m_stopped || m_failed || m_next >= m_base + m_slots.size()) {
                return;
            }
            const size_t index = m_next++;
            const std::string_view text = m_slots[index - m_base].text;
            lock.unlock();
            std::optional<RunResult> run = readRunFast(parser, text, indexed("$", "runs", index));
            lock.lock();
            if (!run) {
                m_failed = true;
            } else {
                Slot& slot = m_slots[index - m_base];
                slot.run = std::move(run);
                slot.read = true;
            }
            m_changed.notify_all();
        }
    }
    void stop() {
        {
            std::lock_guard lock(m_mutex);
            m_stopped = true;
        }
        m_changed.notify_all();
        for (auto& t : m_threads) {
            t.join();
        }
        m_threads.clear();
    }

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Slot> m_slots; // m_slots[k] is run m_base + k
    size_t m_base = 0;        // runs handed on so far
    size_t m_next = 0;        // the next run a thread takes
    bool m_scanned = false, m_failed = false, m_stopped = false;
    const unsigned m_most;
    std::vector<std::thread> m_threads;
};

// The fast reading; nullopt sends the text to the reference reading. `consumed` hears how
// far the runs read so far reach (a mapped file lets those pages go).
std::optional<ResultSet> readResultSetFast(std::string_view text,
                                           const std::function<void(size_t)>& consumed) {
    ResultSet set;
    const auto take = [&](RunResult run, size_t end) {
        set.runs.push_back(std::move(run));
        if (consumed) {
            consumed(end);
        }
    };
    // On this machine's cores, at most 4: reading a run is most of the time of a large set.
    RunReaders readers(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
    const auto head = TopLevelScan(text).scan(
        [&](std::string_view run, size_t, size_t end) { return readers.add(run, end, take); });
    if (!head || !readers.finish(take)) {
        return std::nullopt;
    }
    // The rest of the set (a few kilobytes) as the reference reads it.
    std::vector<RunResult> runs = std::move(set.runs);
    try {
        set = readResultSetReference(*head);
    } catch (const ResultFormatError&) {
        return std::nullopt;
    }
    set.runs = std::move(runs);
    return set;
}

} // namespace

ResultSet parseResultSet(std::string_view text) {
    return json_io::parseResultSetReleasing(text, {});
}

size_t json_io::referenceReadings() {
    return g_referenceReadings.load();
}

ResultSet json_io::parseResultSetReleasing(std::string_view text,
                                           const std::function<void(size_t)>& consumed) {
    std::optional<ResultSet> set = readResultSetFast(text, consumed);
    if (!set) {
        ++g_referenceReadings;
        set = readResultSetReference(text);
    }
    if (!set->verdicts) { // a set written before verdicts: judged from its runs
        set->verdicts = judgeRuns(set->runs);
    }
    return std::move(*set);
}

RunResult parseRun(std::string_view text) {
    // An autosave holds thousands of these lines: each is read fast where it can be, and by
    // the reference reading (its messages) where not.
    thread_local SimdParser parser;
    bool withinDepth = true;
    try {
        checkJsonDepth(text);
    } catch (const ResultFormatError&) {
        withinDepth = false;
    }
    if (withinDepth) {
        if (auto run = readRunFast(parser, text, "$")) {
            return std::move(*run);
        }
    }
    ++g_referenceReadings;
    return readRunReference(text);
}

} // namespace lmprof::engine
