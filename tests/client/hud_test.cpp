// HUD layout (buildHud is pure): the join bar follows progress, the phase and
// failure texts, the playing status lines, chat fading, the menu and F3 line.
#include <doctest/doctest.h>

#include <algorithm>

#include "client/hud.h"

using namespace loam;
using namespace loam::client;

namespace {

const render::HudText* findText(const render::HudLayer& l, const std::string& part) {
  for (const render::HudText& t : l.texts)
    if (t.text.find(part) != std::string::npos) return &t;
  return nullptr;
}

bool hasRect(const render::HudLayer& l, const render::HudRect& r) {
  return std::any_of(l.rects.begin(), l.rects.end(), [&](const render::HudRect& x) {
    return x.x == r.x && x.y == r.y && x.w == r.w && x.h == r.h;
  });
}

HudModel playing() {
  HudModel m;
  m.width = 640;
  m.height = 360;
  m.phase = net::ClientPhase::Playing;
  m.fps = 59.6;
  m.pingMs = 23;
  m.kbInPerSecond = 12.5;
  m.kbOutPerSecond = 3.31;
  m.position = {1, 2.04, -3};
  m.material = "brick";
  m.sizeCm = 40;
  return m;
}

}  // namespace

TEST_CASE("the join progress bar's fill follows progress and stays inside its frame") {
  const ProgressBarLayout empty = progressBarLayout(640, 360, 0);
  const ProgressBarLayout quarter = progressBarLayout(640, 360, 0.25);
  const ProgressBarLayout full = progressBarLayout(640, 360, 1);
  CHECK(empty.fill.w == 0);
  CHECK(full.fill.w == doctest::Approx(full.frame.w - 4));
  CHECK(quarter.fill.w == doctest::Approx(0.25 * (quarter.frame.w - 4)));
  CHECK(progressBarLayout(640, 360, 7).fill.w == full.fill.w);  // clamped
  CHECK(full.fill.x >= full.frame.x);
  CHECK(full.fill.x + full.fill.w <= full.frame.x + full.frame.w);
  CHECK(full.frame.x + full.frame.w <= 640);
  // Centred.
  CHECK(full.frame.x == doctest::Approx(640 - full.frame.x - full.frame.w));
}

TEST_CASE("while joining: the phase text and the bar at the generation progress") {
  HudModel m;
  m.width = 640;
  m.height = 360;
  m.server = "10.0.0.2:7777";
  m.phase = net::ClientPhase::Connecting;
  render::HudLayer l = buildHud(m);
  CHECK(findText(l, "Connecting to 10.0.0.2:7777"));
  m.phase = net::ClientPhase::Generating;
  m.progress = 0.42;
  l = buildHud(m);
  CHECK(findText(l, "Building world 42%"));
  CHECK(hasRect(l, progressBarLayout(640, 360, 0.42).fill));
  CHECK_FALSE(hasRect(l, progressBarLayout(640, 360, 0.9).fill));
  m.phase = net::ClientPhase::AwaitingSnapshot;
  l = buildHud(m);
  CHECK(findText(l, "Receiving snapshot"));
  CHECK_FALSE(findText(l, "fps"));  // no status lines before playing
}

TEST_CASE("a failed join shows the reason in red and no progress bar") {
  HudModel m;
  m.width = 640;
  m.height = 360;
  m.phase = net::ClientPhase::Failed;
  m.progress = 0.5;
  m.error = "world hash differs from the server's (cell 3,4)";
  const render::HudLayer l = buildHud(m);
  const render::HudText* t = findText(l, "world hash differs");
  REQUIRE(t);
  CHECK(t->text.find("Connection failed") != std::string::npos);
  CHECK(t->colour.r > 200);
  CHECK(t->colour.g < 120);
  CHECK_FALSE(hasRect(l, progressBarLayout(640, 360, 0.5).fill));
  CHECK(render::textWidth(t->text, t->scale) <= 640);
  m.phase = net::ClientPhase::Disconnected;
  m.error = "";
  CHECK(findText(buildHud(m), "Disconnected"));
}

TEST_CASE("playing: fps, ping, rates, position and the tool") {
  HudModel m = playing();
  render::HudLayer l = buildHud(m);
  CHECK(findText(l, "60 fps"));
  CHECK(findText(l, "ping 23 ms"));
  CHECK(findText(l, "in 12.5 KB/s"));
  CHECK(findText(l, "out 3.3 KB/s"));
  CHECK(findText(l, "pos 1.0 2.0 -3.0"));
  CHECK(findText(l, "brick  40 cm"));
  CHECK_FALSE(findText(l, "DESYNC"));
  CHECK_FALSE(findText(l, "mesh queue"));
  CHECK_FALSE(findText(l, "Resume"));
  for (const render::HudText& t : l.texts) {
    CHECK(t.x >= 0);
    CHECK(t.y >= 0);
    CHECK(t.y < m.height);
  }
  // A narrow window gets the small font rather than text off the edge.
  HudModel narrow = playing();
  narrow.width = 320;
  const render::HudLayer narrowLayer = buildHud(narrow);
  const render::HudText* status = findText(narrowLayer, "fps");
  REQUIRE(status);
  CHECK(status->x + render::textWidth(status->text, status->scale) <= 320);
  m.desyncs = 2;
  m.desyncWhat = "world hash 1a != server 2b";
  m.debug = true;
  m.meshQueue = 17;
  l = buildHud(m);
  const render::HudText* d = findText(l, "DESYNC x2");
  REQUIRE(d);
  CHECK(d->colour.r > d->colour.g + 100);
  CHECK(findText(l, "mesh queue 17"));
  CHECK(findText(l, "audio off"));
  CHECK(findText(l, "edits: 0 pending"));
  m.editsPending = 2;
  m.editsRolledBack = 5;
  l = buildHud(m);
  CHECK(findText(l, "edits: 2 pending"));
  CHECK(findText(l, "5 rolled back"));
  m.audioOn = true;
  m.audioVoices = 12;
  m.audioUnderruns = 3;
  l = buildHud(m);
  CHECK(findText(l, "audio 12 voices 3 underruns"));
}

TEST_CASE("chat lines fade after a while, stay while typing, and keep the newest 8") {
  ChatLog chat;
  for (int i = 0; i < 10; ++i) chat.add("line " + std::to_string(i), 100.0 + i);
  CHECK(chat.lines().size() == ChatLog::kMaxLines);
  CHECK(chat.lines().front().text == "line 2");
  HudModel m = playing();
  m.chat = &chat;
  m.nowSeconds = 110;
  render::HudLayer l = buildHud(m);
  CHECK(findText(l, "line 9"));
  const render::HudText* old = findText(l, "line 2");
  REQUIRE(old);  // added at 102: 8 s old, still fully shown
  CHECK(old->colour.a == 255);
  m.nowSeconds = 113;  // line 2 is 11 s old: fading
  l = buildHud(m);
  REQUIRE(findText(l, "line 2"));
  CHECK(findText(l, "line 2")->colour.a < 255);
  CHECK(findText(l, "line 9")->colour.a == 255);
  m.nowSeconds = 200;
  l = buildHud(m);
  CHECK_FALSE(findText(l, "line 9"));
  m.chatOpen = true;
  m.chatDraft = "hello";
  l = buildHud(m);
  CHECK(findText(l, "line 9"));
  CHECK(findText(l, "> hello"));
}

TEST_CASE("the Esc menu draws Resume, the view distance and Quit where menuButtonAt finds them") {
  HudModel m = playing();
  m.menuOpen = true;
  m.viewDistanceMetres = 4096;
  const render::HudLayer l = buildHud(m);
  CHECK(findText(l, "Resume"));
  CHECK(findText(l, "View: 4096 m"));
  CHECK(findText(l, "Quit"));
  CHECK(nextViewDistance(2048) == 4096);
  CHECK(nextViewDistance(3000) == 4096);
  CHECK(nextViewDistance(8192) == 512);
  const auto buttons = menuButtons(m.width, m.height);
  for (int i = 0; i < kMenuButtons; ++i) {
    const render::HudRect& r = buttons[static_cast<std::size_t>(i)];
    CHECK(hasRect(l, r));
    CHECK(menuButtonAt(m.width, m.height, r.x + r.w / 2, r.y + r.h / 2) == i);
  }
  CHECK(menuButtonAt(m.width, m.height, 1, 1) == -1);
}
