// The Files window: open, save and autosave result sets; the app also asks it to save
// (Ctrl+S) and to open (demo scripts).
#pragma once

#include "view.h"

#include <set>
#include <string>

namespace lmprof::ui {

class FilesView final : public View {
public:
    static constexpr const char* kTitle = "Files";
    void draw(ViewContext& ctx) override;
    // Saves, after asking in a modal when the file exists and this window did not write it.
    void requestSave(ViewContext& ctx, const std::string& path);
    void save(ViewContext& ctx, const std::string& path);
    void open(ViewContext& ctx, const std::string& path);

private:
    void drawReplaceQuestion(ViewContext& ctx);
    std::string m_confirmReplace;    // a file to ask about replacing; empty: none
    std::set<std::string> m_written; // files this window saved (replaced without asking)
    char m_path[1024] = "";
    bool m_pathInitialised = false;
};

} // namespace lmprof::ui
