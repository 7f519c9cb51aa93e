#include "client/hud.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace loam::client {

namespace {

constexpr render::Rgba8 kWhite{255, 255, 255, 255};
constexpr render::Rgba8 kRed{255, 70, 60, 255};
constexpr render::Rgba8 kYellow{255, 220, 90, 255};
constexpr render::Rgba8 kPanel{0, 0, 0, 150};
constexpr float kScale = 2;      // text scale of the HUD
constexpr float kLine = 9 * kScale;  // line height at kScale (7-pixel glyphs + gap)

std::string format(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

render::Rgba8 withAlpha(render::Rgba8 c, float a) {
  c.a = static_cast<std::uint8_t>(std::clamp(a, 0.0f, 1.0f) * static_cast<float>(c.a));
  return c;
}

void text(render::HudLayer& layer, float x, float y, std::string s, render::Rgba8 colour = kWhite,
          float scale = kScale) {
  layer.texts.push_back(render::HudText{x, y, scale, colour, std::move(s)});
}

// Text with a dark panel behind it, for legibility over a bright sky.
void panelText(render::HudLayer& layer, float x, float y, const std::string& s, render::Rgba8 colour,
               float scale = kScale) {
  const float w = render::textWidth(s, scale);
  const auto lines = static_cast<float>(1 + std::count(s.begin(), s.end(), '\n'));
  layer.rects.push_back(render::HudRect{x - 4, y - 3, w + 8, lines * 9 * scale + 4, kPanel});
  text(layer, x, y, s, colour, scale);
}

// The HUD scale, or 1 when text at it would not fit in maxWidth pixels.
float fitScale(const std::string& s, float maxWidth) {
  return render::textWidth(s, kScale) <= maxWidth ? kScale : 1.0f;
}

void centredText(render::HudLayer& layer, int width, float y, const std::string& s, render::Rgba8 colour,
                 float scale = kScale) {
  const float w = render::textWidth(s, scale);
  panelText(layer, (static_cast<float>(width) - w) / 2, y, s, colour, scale);
}

}  // namespace

void ChatLog::add(std::string text, double nowSeconds, render::Rgba8 colour) {
  lines_.push_back(Line{std::move(text), nowSeconds, colour});
  while (lines_.size() > kMaxLines) lines_.pop_front();
}

float ChatLog::alpha(const Line& line, double nowSeconds, bool forceVisible) noexcept {
  if (forceVisible) return 1;
  const double age = nowSeconds - line.addedSeconds;
  if (age <= kShowSeconds) return 1;
  return static_cast<float>(std::clamp(1.0 - (age - kShowSeconds) / kFadeSeconds, 0.0, 1.0));
}

std::string phaseText(const HudModel& m) {
  switch (m.phase) {
    case net::ClientPhase::Connecting:
    case net::ClientPhase::AwaitingWelcome: return "Connecting to " + (m.server.empty() ? "server" : m.server);
    case net::ClientPhase::Generating:
      return format("Building world %d%%", static_cast<int>(std::floor(std::clamp(m.progress, 0.0, 1.0) * 100)));
    case net::ClientPhase::AwaitingSnapshot: return "Receiving snapshot";
    case net::ClientPhase::Playing: return "";
    case net::ClientPhase::Failed: return "Connection failed: " + (m.error.empty() ? "unknown error" : m.error);
    case net::ClientPhase::Disconnected: return "Disconnected: " + (m.error.empty() ? "server closed" : m.error);
  }
  return "";
}

ProgressBarLayout progressBarLayout(int width, int height, double progress) noexcept {
  const float w = std::min(480.0f, static_cast<float>(width) * 0.6f);
  const float h = 16;
  const float x = (static_cast<float>(width) - w) / 2;
  const float y = static_cast<float>(height) * 0.5f;
  ProgressBarLayout l;
  l.frame = render::HudRect{x, y, w, h, render::Rgba8{30, 30, 30, 200}};
  const float inner = w - 4;
  l.fill = render::HudRect{x + 2, y + 2, inner * static_cast<float>(std::clamp(progress, 0.0, 1.0)), h - 4,
                           render::Rgba8{90, 200, 110, 255}};
  return l;
}

std::array<render::HudRect, kMenuButtons> menuButtons(int width, int height) noexcept {
  const float w = 260, h = 44;
  const float x = (static_cast<float>(width) - w) / 2;
  const float y0 = static_cast<float>(height) * 0.4f;
  std::array<render::HudRect, kMenuButtons> out{};
  for (int i = 0; i < kMenuButtons; ++i)
    out[static_cast<std::size_t>(i)] = render::HudRect{x, y0 + static_cast<float>(i) * (h + 16), w, h, {60, 60, 70, 230}};
  return out;
}

double nextViewDistance(double metres) noexcept {
  for (double d : kViewDistances)
    if (d > metres) return d;
  return kViewDistances.front();
}

int menuButtonAt(int width, int height, float x, float y) noexcept {
  const auto buttons = menuButtons(width, height);
  for (int i = 0; i < kMenuButtons; ++i) {
    const render::HudRect& r = buttons[static_cast<std::size_t>(i)];
    if (x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h) return i;
  }
  return -1;
}

namespace {

/// The menu's buttons with their labels; the hovered one (a kMenu* value) lighter.
void addMenuButtons(render::HudLayer& layer, int W, int H, int hover, double viewMetres) {
  const auto buttons = menuButtons(W, H);
  for (int i = 0; i < kMenuButtons; ++i) {
    render::HudRect r = buttons[static_cast<std::size_t>(i)];
    if (i == hover) r.colour = render::Rgba8{90, 90, 110, 240};
    layer.rects.push_back(r);
    const std::string label = i == kMenuResume ? "Resume"
                              : i == kMenuView ? "View: " + std::to_string(static_cast<int>(viewMetres)) + " m"
                                               : "Quit";
    text(layer, r.x + (r.w - render::textWidth(label, kScale)) / 2, r.y + (r.h - 7 * kScale) / 2, label);
  }
}

}  // namespace

render::HudLayer buildHud(const HudModel& m) {
  render::HudLayer layer;
  const int W = m.width, H = m.height;
  const float margin = 8;

  if (m.phase != net::ClientPhase::Playing) {
    // Joining or failed: a dim screen, the phase and (while it means something) the bar.
    layer.rects.push_back(render::HudRect{0, 0, static_cast<float>(W), static_cast<float>(H), {10, 12, 20, 170}});
    const bool failed = m.phase == net::ClientPhase::Failed || m.phase == net::ClientPhase::Disconnected;
    const std::string t = phaseText(m);
    const float y = static_cast<float>(H) * 0.5f - 3 * kLine;
    if (failed) {
      // Long reasons (hash mismatch names cells) wrap by width.
      const float maxW = static_cast<float>(W) - 2 * margin;
      float scale = kScale;
      while (scale > 1 && render::textWidth(t, scale) > maxW) scale -= 1;
      centredText(layer, W, y, t, kRed, scale);
      centredText(layer, W, y + 3 * kLine, "Esc to quit", kWhite);
    } else {
      centredText(layer, W, y, t, kWhite);
      const ProgressBarLayout bar = progressBarLayout(W, H, m.phase == net::ClientPhase::Generating ? m.progress
                                                             : m.phase == net::ClientPhase::AwaitingSnapshot ? 1.0
                                                                                                              : 0.0);
      layer.rects.push_back(bar.frame);
      layer.rects.push_back(bar.fill);
    }
    if (m.menuOpen) {
      addMenuButtons(layer, W, H, m.menuHover, m.viewDistanceMetres);
    }
    return layer;
  }

  // Top-left status block.
  std::string status = format("%.0f fps  ping %.0f ms  in %.1f KB/s  out %.1f KB/s", m.fps, m.pingMs,
                              m.kbInPerSecond, m.kbOutPerSecond);
  const float maxW = static_cast<float>(W) - 2 * margin;
  panelText(layer, margin, margin, status, kWhite, fitScale(status, maxW));
  panelText(layer, margin, margin + kLine + 4,
            format("pos %.1f %.1f %.1f", m.position[0], m.position[1], m.position[2]), kWhite);
  // Tool, bottom-left.
  panelText(layer, margin, static_cast<float>(H) - margin - kLine,
            format("%s  %d cm", m.material.c_str(), m.sizeCm), kYellow);
  float y = margin + 2 * (kLine + 4);
  if (m.desyncs > 0) {
    const std::string d =
        format("DESYNC x%llu: %s", static_cast<unsigned long long>(m.desyncs), m.desyncWhat.c_str());
    panelText(layer, margin, y, d, kRed, fitScale(d, maxW));
    y += kLine + 4;
  }
  if (m.debug) {
    const std::string d =
        format("frame %.2f ms  chunks %zu drawn %zu culled  mesh queue %zu  corrections %llu  %s  %s", m.frameMs,
               m.chunksDrawn, m.chunksCulled, m.meshQueue, static_cast<unsigned long long>(m.corrections),
               m.deviceName.c_str(),
               m.audioOn ? format("audio %d voices %llu underruns", m.audioVoices,
                                  static_cast<unsigned long long>(m.audioUnderruns)).c_str()
                         : "audio off");
    panelText(layer, margin, y, d, kWhite, fitScale(d, maxW));
    y += kLine + 4;
    const auto u = [](std::uint64_t v) { return static_cast<unsigned long long>(v); };
    const std::string e =
        format("edits: %llu pending  %llu predicted  %llu confirmed  %llu overridden  %llu rolled back",
               u(m.editsPending), u(m.editsPredicted), u(m.editsConfirmed), u(m.editsOverridden), u(m.editsRolledBack));
    panelText(layer, margin, y, e, kWhite, fitScale(e, maxW));
    y += kLine + 4;
    if (m.streamed) {
      const std::string st = format("streamed: columns %zu present  %llu ahead  %llu on main  %llu released  mesh waits %zu",
                                    m.columnsPresent, static_cast<unsigned long long>(m.columnsAhead),
                                    static_cast<unsigned long long>(m.columnsOnMain),
                                    static_cast<unsigned long long>(m.columnsReleased), m.meshWaiting);
      panelText(layer, margin, y, st, kWhite, fitScale(st, maxW));
      y += kLine + 4;
    }
  }

  // Chat log above the tool line, newest at the bottom.
  const float chatBottom = static_cast<float>(H) - margin - 2 * kLine - 8 - (m.chatOpen ? kLine + 6 : 0);
  if (m.chat != nullptr) {
    const auto& lines = m.chat->lines();
    float ly = chatBottom - static_cast<float>(lines.size()) * kLine;
    for (const ChatLog::Line& l : lines) {
      const float a = ChatLog::alpha(l, m.nowSeconds, m.chatOpen);
      if (a > 0) {
        const float w = render::textWidth(l.text, kScale);
        layer.rects.push_back(render::HudRect{margin - 4, ly - 2, w + 8, kLine, withAlpha(kPanel, a)});
        text(layer, margin, ly, l.text, withAlpha(l.colour, a));
      }
      ly += kLine;
    }
  }
  if (m.chatOpen) {
    panelText(layer, margin, static_cast<float>(H) - margin - 2 * kLine - 8, "> " + m.chatDraft + "_", kWhite);
  }

  if (m.menuOpen) {
    layer.rects.push_back(render::HudRect{0, 0, static_cast<float>(W), static_cast<float>(H), {0, 0, 0, 140}});
    centredText(layer, W, static_cast<float>(H) * 0.45f - 2 * kLine - 10, "Menu", kWhite);
    addMenuButtons(layer, W, H, m.menuHover, m.viewDistanceMetres);
  }
  return layer;
}

}  // namespace loam::client
