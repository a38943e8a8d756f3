// Framebuffer to PNG with stb_image_write (Debian's libstb-dev).

#include "lmprof/ui/app.h"

#include <GL/gl.h>
#include <stb/stb_image_write.h>
#include <stdexcept>
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
    // OpenGL's rows start at the bottom; PNG's at the top.
    stbi_flip_vertically_on_write(1);
    if (!stbi_write_png(path.c_str(), width, height, 4, pixels.data(), width * 4)) {
        fail("writing the PNG failed");
    }
}

} // namespace lmprof::ui
