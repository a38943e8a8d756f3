// The background reading of a result set (file_reading.h).

#include "file_reading.h"

#include <stdexcept>

namespace lmprof::ui {

using namespace lmprof::engine;

FileReading::~FileReading() {
    if (m_reading) {
        m_reading->cancel = true;
        m_reading->worker.join();
    }
}

void FileReading::start(const std::string& path) {
    if (m_reading) { // the reading in progress would be dropped with its thread running
        throw std::logic_error("FileReading::start(" + path + ") while " + m_reading->done.path +
                               " is being read");
    }
    m_reading = std::make_unique<Reading>();
    m_reading->done.path = path;
    Reading* r = m_reading.get();
    r->worker = std::thread([r] {
        Done& done = r->done;
        try {
            done.file = loadResultsFile(done.path, [r](double share) {
                r->share = share;
                return !r->cancel.load();
            });
        } catch (const ReadCancelled& e) {
            done.cancelled = true;
            done.error = e.what();
        } catch (const ResultFormatError& e) {
            done.error = std::string("cannot open ") + e.what(); // e names the file
        } catch (const std::exception& e) {
            done.error = "cannot open " + done.path + ": " + e.what();
        }
        r->finished = true;
    });
}

const std::string& FileReading::path() const {
    static const std::string none;
    return m_reading ? m_reading->done.path : none;
}

double FileReading::share() const {
    return m_reading ? m_reading->share.load() : 0.0;
}

void FileReading::cancel() {
    if (m_reading) {
        m_reading->cancel = true;
    }
}

bool FileReading::cancelling() const {
    return m_reading && m_reading->cancel.load();
}

std::optional<FileReading::Done> FileReading::take() {
    if (!m_reading || !m_reading->finished.load()) {
        return std::nullopt;
    }
    m_reading->worker.join();
    std::unique_ptr<Reading> ended = std::move(m_reading);
    return std::move(ended->done);
}

} // namespace lmprof::ui
