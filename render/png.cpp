// writePng: the renderer's screenshots (stb_image_write; loam-tool defines its own copy).
#include <cstdio>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
#endif
#define STB_IMAGE_WRITE_STATIC  // internal linkage: no clash with another copy in the same link
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include "render/renderer.h"

namespace loam::render {

sim::Result<void> writePng(const std::string& path, const Image& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgba.size() != static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 4)
    return sim::makeError("writePng: empty or malformed image");
  if (!stbi_write_png(path.c_str(), image.width, image.height, 4, image.rgba.data(), image.width * 4))
    return sim::makeError("writePng: cannot write " + path);
  return {};
}

}  // namespace loam::render
