/* stb's image reader and writer, compiled once, for LMPROF_DEPS=pypi (PypiDeps.cmake):
   the headers come from the pinned imgui-bundle sources; Debian's libstb is this otherwise. */
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include "stb_image.h"
#include "stb_image_write.h"
