// --record: the window's frames encoded to a video by ffmpeg (Debian's package), run as a
// child process that reads raw RGBA frames on its standard input. One frame is one tick of
// the recording clock (1 / fps seconds), whatever the machine's drawing speed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace lmprof::ui {

class VideoRecorder {
public:
    // Starts ffmpeg writing `path` (H.264 in MP4) from frames of width x height at fps.
    // Throws std::runtime_error naming the path when ffmpeg cannot be started.
    VideoRecorder(std::filesystem::path path, int width, int height, int fps);
    ~VideoRecorder(); // finishes the video if finish() was not called
    VideoRecorder(const VideoRecorder&) = delete;
    VideoRecorder& operator=(const VideoRecorder&) = delete;

    // Reads the current OpenGL framebuffer (fbWidth x fbHeight) and sends it as the next
    // frame: cropped or padded with black to the recording's size. False, with error()
    // set, when ffmpeg has stopped taking frames.
    bool addFrame(int fbWidth, int fbHeight);
    // Closes ffmpeg's input and waits for it to write the file. Returns "" on success,
    // otherwise what went wrong (with the end of ffmpeg's own messages).
    std::string finish();

    int64_t frames() const { return m_frames; }
    double seconds() const { return static_cast<double>(m_frames) / m_fps; }
    const std::string& error() const { return m_error; }

private:
    std::filesystem::path m_path;
    std::filesystem::path m_log; // ffmpeg's messages
    int m_width, m_height, m_fps;
    pid_t m_child = -1;
    int m_pipe = -1;
    int64_t m_frames = 0;
    std::string m_error;
    std::vector<unsigned char> m_pixels, m_frame;
    bool m_finished = false;
};

} // namespace lmprof::ui
