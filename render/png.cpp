// writePng: the renderer's screenshots (stb_image_write, compiled once in loam_stb).
#include <cstdio>

#include <stb/stb_image_write.h>

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
