// Framebuffer to PNG with stb_image_write (Debian's libstb-dev).

#include "lmprof/engine/file_io.h"
#include "lmprof/ui/app.h"

#include <GL/gl.h>
#include <stb/stb_image_write.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace lmprof::ui {

void writeFramebufferPng(const std::filesystem::path& path, int width, int height) {
    writeFramebufferRegionPng(path, 0, 0, width, height);
}

void writeFramebufferRegionPng(const std::filesystem::path& path, int x, int y, int width,
                               int height) {
    const auto fail = [&](const std::string& why) {
        throw std::runtime_error("cannot save " + path.string() + ": " + why);
    };
    if (width <= 0 || height <= 0) {
        fail("the framebuffer is empty");
    }
    std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(x, y, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    if (glGetError() != GL_NO_ERROR) {
        fail("glReadPixels failed");
    }
    writeGlPixelsPng(path, width, height, pixels);
}

void writeGlPixelsPng(const std::filesystem::path& path, int width, int height,
                      const std::vector<unsigned char>& pixels) {
    std::string png;
    const auto append = [](void* out, void* data, int size) {
        static_cast<std::string*>(out)->append(static_cast<const char*>(data),
                                               static_cast<size_t>(size));
    };
    // OpenGL's rows start at the bottom; PNG's at the top.
    stbi_flip_vertically_on_write(1);
    if (!stbi_write_png_to_func(append, &png, width, height, 4, pixels.data(), width * 4)) {
        throw std::runtime_error("cannot save " + path.string() + ": encoding the PNG failed");
    }
    try {
        engine::writeFileAtomic(path, png);
    } catch (const std::exception& e) {
        throw std::runtime_error("cannot save " + path.string() + ": " + e.what());
    }
}

} // namespace lmprof::ui
