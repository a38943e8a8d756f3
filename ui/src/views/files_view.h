// The Files window: open, save and autosave result sets; the app also asks it to save
// (Ctrl+S) and to open (demo scripts).
#pragma once

#include "file_reading.h"
#include "lmprof/engine/result_io.h"
#include "view.h"

#include <functional>
#include <optional>
#include <set>
#include <string>

namespace lmprof::ui {

class FilesView final : public View {
public:
    static constexpr const char* kTitle = "Files";
    // `reading`: the app's background reader, which this view starts and shows.
    explicit FilesView(FileReading& reading) : m_reading(reading) {}
    void draw(ViewContext& ctx) override;
    // Saves, after asking in a modal when the file exists and this window did not write it.
    void requestSave(ViewContext& ctx, const std::string& path);
    void save(ViewContext& ctx, const std::string& path);
    // Opens a result set or an autosave file now (launch's --open, demo scripts).
    void open(ViewContext& ctx, const std::string& path);
    // Opens it in the background (FileReading) while the window goes on, with a progress
    // bar and Cancel (File > Open, Recent): a night's sweep takes seconds to read.
    void openInBackground(ViewContext& ctx, const std::string& path);
    // The same reading for another use (restoring the autosave): `title` heads the progress
    // bar, and `done` gets the file, or nullopt with the reason (`cancelled` by the user).
    // One file at a time: call only when opening() is false.
    using Reader = std::function<void(ViewContext&, std::optional<engine::ResultsFile> file,
                                      const std::string& error, bool cancelled)>;
    void readInBackground(const std::string& path, std::string title, Reader done);
    bool opening() const { return m_reading.busy(); }

private:
    void drawOpening(ViewContext& ctx);
    void take(ViewContext& ctx, const std::string& path, engine::ResultsFile file);
    FileReading& m_reading;
    std::string m_readingTitle; // heads the progress bar
    Reader m_taker;             // what is done with the file read, on the window's thread
    void drawReplaceQuestion(ViewContext& ctx);
    std::string m_confirmReplace;    // a file to ask about replacing; empty: none
    std::set<std::string> m_written; // files this window saved (replaced without asking)
    char m_path[1024] = "";
    bool m_pathInitialised = false;
};

} // namespace lmprof::ui
