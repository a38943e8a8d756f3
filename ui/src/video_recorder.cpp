// VideoRecorder (see video_recorder.h): ffmpeg started with posix_spawnp, fed through a pipe.

#include "lmprof/ui/video_recorder.h"

#include <GL/gl.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace lmprof::ui {

namespace {

std::string lastLines(const std::filesystem::path& log) {
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.pop_back();
    }
    return text.size() > 600 ? "..." + text.substr(text.size() - 600) : text;
}

} // namespace

VideoRecorder::VideoRecorder(std::filesystem::path path, int width, int height, int fps)
    : m_path(std::move(path)), m_width(width), m_height(height), m_fps(fps) {
    m_log = m_path;
    m_log += ".ffmpeg.log";
    int fds[2];
    // Close-on-exec: no later child may hold ffmpeg's input open (finish() would wait).
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        throw std::runtime_error("cannot record " + m_path.string() +
                                 ": pipe: " + std::strerror(errno));
    }
    // A dead ffmpeg must show up as a failed write, not end this process.
    std::signal(SIGPIPE, SIG_IGN);
    // ffmpeg in a process group of its own: a Ctrl+C in the terminal reaches lmprof, which
    // closes the window cleanly and finishes the video, not ffmpeg in the middle of it.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, m_log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const std::string size = std::to_string(width) + "x" + std::to_string(height);
    const std::string rate = std::to_string(fps);
    // OpenGL's rows run bottom-up (vflip); H.264 in 4:2:0 needs even sides (pad).
    std::vector<std::string> args = {"ffmpeg",
                                     "-hide_banner",
                                     "-loglevel",
                                     "error",
                                     "-y",
                                     "-f",
                                     "rawvideo",
                                     "-pixel_format",
                                     "rgba",
                                     "-video_size",
                                     size,
                                     "-framerate",
                                     rate,
                                     "-i",
                                     "pipe:0",
                                     "-vf",
                                     "vflip,pad=ceil(iw/2)*2:ceil(ih/2)*2",
                                     "-c:v",
                                     "libx264",
                                     "-preset",
                                     "veryfast",
                                     "-crf",
                                     "20",
                                     "-pix_fmt",
                                     "yuv420p",
                                     "-movflags",
                                     "+faststart",
                                     m_path.string()};
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    const int rc = posix_spawnp(&m_child, "ffmpeg", &actions, &attributes, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(fds[0]);
    if (rc != 0) {
        ::close(fds[1]);
        std::error_code ec;
        std::filesystem::remove(m_log, ec); // opened for the child that never ran
        throw std::runtime_error("cannot record " + m_path.string() + ": ffmpeg: " +
                                 std::strerror(rc) + " (install Debian's ffmpeg package)");
    }
    m_pipe = fds[1];
    m_frame.assign(static_cast<size_t>(width) * height * 4, 0);
}

VideoRecorder::~VideoRecorder() {
    if (!m_finished) {
        finish();
    }
}

bool VideoRecorder::addFrame(int fbWidth, int fbHeight) {
    if (m_pipe < 0) {
        return false;
    }
    // The recording's size stays fixed: a larger framebuffer is cropped (its top-left part),
    // a smaller one padded with black. Rows are bottom-up here, as OpenGL gives them.
    const int w = std::min(fbWidth, m_width);
    const int h = std::min(fbHeight, m_height);
    m_pixels.resize(static_cast<size_t>(std::max(w, 0)) * std::max(h, 0) * 4);
    if (w > 0 && h > 0) {
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glReadBuffer(GL_BACK);
        glReadPixels(0, fbHeight - h, w, h, GL_RGBA, GL_UNSIGNED_BYTE, m_pixels.data());
    }
    std::fill(m_frame.begin(), m_frame.end(), 0);
    const int top = m_height - h; // keep the window's top edge at the frame's top
    for (int row = 0; row < h; ++row) {
        std::memcpy(&m_frame[(static_cast<size_t>(row + top) * m_width) * 4],
                    &m_pixels[static_cast<size_t>(row) * w * 4], static_cast<size_t>(w) * 4);
    }
    size_t written = 0;
    while (written < m_frame.size()) {
        const ssize_t n = ::write(m_pipe, m_frame.data() + written, m_frame.size() - written);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            m_error = "ffmpeg stopped taking frames (" + std::string(std::strerror(errno)) + ")";
            ::close(m_pipe);
            m_pipe = -1;
            return false;
        }
        written += static_cast<size_t>(n);
    }
    ++m_frames;
    return true;
}

std::string VideoRecorder::finish() {
    m_finished = true;
    if (m_pipe >= 0) {
        ::close(m_pipe);
        m_pipe = -1;
    }
    int status = 0;
    if (m_child > 0) {
        while (::waitpid(m_child, &status, 0) < 0 && errno == EINTR) {
        }
        m_child = -1;
    }
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok && m_error.empty() && m_frames > 0) {
        std::error_code ec;
        std::filesystem::remove(m_log, ec);
        return {};
    }
    std::string why = !m_error.empty() ? m_error
                      : m_frames == 0
                          ? std::string("no frame was recorded")
                          : "ffmpeg failed (exit status " +
                                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    const std::string messages = lastLines(m_log);
    return "cannot record " + m_path.string() + ": " + why +
           (messages.empty() ? std::string() : ": " + messages);
}

} // namespace lmprof::ui
