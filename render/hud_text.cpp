#include "render/hud_text.h"

#include <array>
#include <cmath>  // stb_easy_font uses ceil
#include <string>

#include <stb/stb_easy_font.h>

namespace loam::render {

namespace {

// stb_easy_font's vertex: x, y, z floats and an rgba colour.
struct EasyFontVertex {
  float x, y, z;
  unsigned char c[4];
};
static_assert(sizeof(EasyFontVertex) == 16);

vk::HudVertex vertex(float x, float y, Rgba8 c) { return {x, y, c.r, c.g, c.b, c.a}; }

// stb_easy_font indexes a table by (c - 32): anything outside printable ASCII
// (and '\n', handled by the callers) becomes '?'.
std::string printable(const std::string& s) {
  std::string r = s;
  for (char& c : r)
    if (c != '\n' && (c < 32 || c > 126)) c = '?';
  return r;
}

}  // namespace

float textWidth(const std::string& text, float scale) {
  std::string copy = printable(text);  // stb_easy_font takes a mutable char*
  return static_cast<float>(stb_easy_font_width(copy.data())) * scale;
}

void appendRect(std::vector<vk::HudVertex>& out, const HudRect& r) {
  vk::HudVertex a = vertex(r.x, r.y, r.colour), b = vertex(r.x + r.w, r.y, r.colour);
  vk::HudVertex c = vertex(r.x + r.w, r.y + r.h, r.colour), d = vertex(r.x, r.y + r.h, r.colour);
  out.insert(out.end(), {a, b, c, a, c, d});
}

void appendText(std::vector<vk::HudVertex>& out, const HudText& t) {
  if (t.text.empty()) return;
  // Print line by line into a fixed buffer (270 bytes per character at worst), so
  // long text never overflows stb's buffer.
  static thread_local std::array<EasyFontVertex, 4096> buffer;
  std::size_t start = 0;
  float lineY = 0;
  while (start <= t.text.size()) {
    std::size_t end = t.text.find('\n', start);
    if (end == std::string::npos) end = t.text.size();
    std::string line = printable(t.text.substr(start, end - start));
    std::size_t pos = 0;
    float x = 0;
    while (pos < line.size()) {
      // At most 12 characters per call (worst case about 16 quads each).
      std::string piece = line.substr(pos, 12);
      int quads = stb_easy_font_print(x, lineY, piece.data(), nullptr, buffer.data(),
                                      static_cast<int>(sizeof(buffer)));
      for (int q = 0; q < quads; ++q) {
        const EasyFontVertex* v = &buffer[static_cast<std::size_t>(q) * 4];
        vk::HudVertex p[4];
        for (int i = 0; i < 4; ++i) p[i] = vertex(t.x + v[i].x * t.scale, t.y + v[i].y * t.scale, t.colour);
        out.insert(out.end(), {p[0], p[1], p[2], p[0], p[2], p[3]});
      }
      x += static_cast<float>(stb_easy_font_width(piece.data()));
      pos += piece.size();
    }
    lineY += 12;  // stb_easy_font's line height
    start = end + 1;
  }
}

}  // namespace loam::render
