// Framebuffer to PNG with stb_image_write (Debian's libstb-dev).

#include "lmprof/ui/app.h"

#include <GL/gl.h>
#include <stb/stb_image_write.h>
#include <vector>

namespace lmprof::ui {

std::string writeFramebufferPng(const std::filesystem::path& path, int width, int height) {
    return writeFramebufferRegionPng(path, 0, 0, width, height);
}

std::string writeFramebufferRegionPng(const std::filesystem::path& path, int x, int y, int width,
                                      int height) {
    if (width <= 0 || height <= 0) {
        return "the framebuffer is empty";
    }
    std::vector<unsigned char> pixels(static_cast<size_t>(width) * height * 4);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(x, y, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
    if (glGetError() != GL_NO_ERROR) {
        return "glReadPixels failed";
    }
    // OpenGL's rows start at the bottom; PNG's at the top.
    stbi_flip_vertically_on_write(1);
    if (!stbi_write_png(path.c_str(), width, height, 4, pixels.data(), width * 4)) {
        return "cannot write " + path.string();
    }
    return {};
}

} // namespace lmprof::ui
