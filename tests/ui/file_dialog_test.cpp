// The file dialog's entries (ImFileDialog, mended at configure time in
// third_party/CMakeLists.txt): a folder has no size, so the dialog no longer shows a folder
// as "18014398509481984.000 KiB", the failed file_size() of a folder (issue 60).

#include <ImFileDialog/ImFileDialog.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct TempFolder {
    fs::path path = fs::temp_directory_path() / ("lmprof-dialog-" + std::to_string(getpid()));
    TempFolder() { fs::create_directories(path / "runs"); }
    ~TempFolder() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

} // namespace

TEST(FileDialog, AFolderHasNoSizeAndAFileItsOwn) {
    TempFolder temp;
    std::ofstream(temp.path / "sweep.json") << std::string(3000, 'x');

    const ifd::FileDialog::FileData folder(temp.path / "runs");
    EXPECT_TRUE(folder.IsDirectory);
    EXPECT_EQ(folder.Size, 0u);

    const ifd::FileDialog::FileData file(temp.path / "sweep.json");
    EXPECT_FALSE(file.IsDirectory);
    EXPECT_EQ(file.Size, 3000u);

    // A dangling link has no size to read either: it shows 0, never the failure's value.
    fs::create_symlink(temp.path / "gone.json", temp.path / "link.json");
    const ifd::FileDialog::FileData dangling(temp.path / "link.json");
    EXPECT_EQ(dangling.Size, 0u);
}
