// Checks a screenshot: the expected size and not blank (many distinct colours and real
// contrast). Usage: png_check FILE WIDTH HEIGHT, where a size written "<N" means "more
// than 100 and less than N" (a single chart cut from a window). Exit 0 when it passes.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stb/stb_image.h>
#include <unordered_set>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: png_check FILE WIDTH HEIGHT\n");
        return 2;
    }
    int w = 0, h = 0, channels = 0;
    unsigned char* px = stbi_load(argv[1], &w, &h, &channels, 3);
    if (!px) {
        std::fprintf(stderr, "png_check: cannot read %s: %s\n", argv[1], stbi_failure_reason());
        return 1;
    }
    // "<N": a range rather than an exact size.
    auto sizeOk = [](int got, const char* want) {
        return want[0] == '<' ? got > 100 && got < std::atoi(want + 1) : got == std::atoi(want);
    };
    std::unordered_set<unsigned> colours;
    double sum = 0.0, sumSq = 0.0;
    const long n = static_cast<long>(w) * h;
    for (long i = 0; i < n; ++i) {
        const unsigned char* p = px + 3 * i;
        colours.insert((p[0] << 16) | (p[1] << 8) | p[2]);
        const double y = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
        sum += y;
        sumSq += y * y;
    }
    stbi_image_free(px);
    const double mean = sum / n;
    const double stddev = std::sqrt(std::max(0.0, sumSq / n - mean * mean));
    std::printf("png_check: %dx%d, %zu colours, luminance mean %.1f std %.1f\n", w, h,
                colours.size(), mean, stddev);
    bool ok = true;
    if (!sizeOk(w, argv[2]) || !sizeOk(h, argv[3])) {
        std::fprintf(stderr, "png_check: size %dx%d, expected %s x %s\n", w, h, argv[2], argv[3]);
        ok = false;
    }
    // A blank or single-colour frame has a handful of colours and no contrast; the lmprof
    // window has text, plots with antialiased lines and filled bands (hundreds of colours even
    // in one small chart of a few bars).
    if (colours.size() < 200 || stddev < 10.0) {
        std::fprintf(stderr, "png_check: the image looks blank\n");
        ok = false;
    }
    return ok ? 0 : 1;
}
