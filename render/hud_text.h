// The 2-D layer's geometry (private to render/): rects and text (stb_easy_font's
// segment quads) as pixel-space triangles for the hud pipeline.
#pragma once
#include <vector>

#include "render/renderer.h"
#include "render/vk_pipelines.h"

namespace loam::render {

/// Appends rect as two triangles. Allocates only if out grows.
void appendRect(std::vector<vk::HudVertex>& out, const HudRect& rect);
/// Appends text's glyph quads (scale multiplies stb_easy_font's pixel units).
void appendText(std::vector<vk::HudVertex>& out, const HudText& text);

}  // namespace loam::render
