// Early reflections: taps found in hand-built worlds (an alley slaps back,
// a field does not, a wall to the east is heard on the right), their level, and the
// EarlyReflector's rendering: delay, phase, panning, determinism, no allocation; a
// source away from the listener slaps back at its own image delays.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>
#include <span>
#include <vector>

#include "audio/dsp.h"
#include "audio/early_reflections.h"
#include "audio/room_probe.h"
#include "sim/world/brick_store.h"
#include "sim/world/coarse_grid.h"
#include "tests/support/materials.h"

#include "tests/support/alloc_counter.h"

using loam::test::gAllocs;
using loam::test::gCountAllocs;

using namespace loam;
using namespace loam::audio;
using loam::test::materialId;

namespace {

constexpr float kC = 343.0f;

sim::BrickStore emptyWorld() {
  // Bricks of 0.4 m: x and y +-12.8 m, z +-38.4 m.
  return sim::BrickStore(sim::WorldBounds{{-32, -32, -96}, {32, 32, 96}}, sim::makeCoarseLut(test::materials()));
}

/// Fills bricks [x0, x1) x [y0, y1) x [z0, z1) (brick coordinates) with m.
void fillBricks(sim::BrickStore& s, int x0, int x1, int y0, int y1, int z0, int z1, sim::MaterialId m) {
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) s.fillBrick({x, y, z}, m);
}

/// Ground: a 0.4 m layer of `top` over stone, the top face at y = 0.
sim::BrickStore field(const char* top) {
  sim::BrickStore s = emptyWorld();
  fillBricks(s, -32, 32, -3, -1, -96, 96, materialId("stone"));
  fillBricks(s, -32, 32, -1, 0, -96, 96, materialId(top));
  return s;
}

/// Two stone walls 6 m high along z (+-30 m), their faces at x = -2 and x = +2 m.
sim::BrickStore alley() {
  sim::BrickStore s = field("stone");
  fillBricks(s, -6, -5, 0, 15, -75, 75, materialId("stone"));  // x -2.4 .. -2.0 m
  fillBricks(s, 5, 6, 0, 15, -75, 75, materialId("stone"));    // x  2.0 ..  2.4 m
  return s;
}

/// One wall of `wall`, 6 m high along z (+-20 m), its face at x = xFace (a multiple of 0.4 m).
sim::BrickStore wallEast(float xFace, const char* wall) {
  sim::BrickStore s = field("stone");
  const int bx = static_cast<int>(std::lround(xFace / 0.4f));
  fillBricks(s, bx, bx + 1, 0, 15, -50, 50, materialId(wall));
  return s;
}

const AcousticTable& table() {
  static const AcousticTable t = makeAcousticTable(test::materials());
  return t;
}

constexpr Vec3f kEar{0.0f, 1.7f, 0.0f};

struct Taps {
  std::array<ReflectionTap, kMaxReflectionTaps> taps{};
  int count = 0;
  std::span<const ReflectionTap> span() const { return {taps.data(), static_cast<std::size_t>(count)}; }
};

Taps find(const sim::BrickStore& s, std::uint64_t update = 0, Vec3f ear = kEar) {
  Taps t;
  t.count = findReflections(s, table(), ear, update, ReflectionConfig{}, t.taps);
  return t;
}

float db(float g) { return 20.0f * std::log10(std::fabs(g)); }

/// Renders an impulse at frame 0 through a reflector with taps (yaw) over frames frames.
void renderImpulse(std::span<const ReflectionTap> taps, float yaw, int frames, std::vector<float>& l,
                   std::vector<float>& r) {
  EarlyReflector er;
  std::array<float, kMaxReflectionTaps> lp{};
  l.assign(static_cast<std::size_t>(frames), 0.0f);
  r.assign(static_cast<std::size_t>(frames), 0.0f);
  std::array<float, kBlockFrames> in{};
  for (int f = 0; f < frames; f += kBlockFrames) {
    in.fill(0.0f);
    if (f == 0) in[0] = 1.0f;
    er.add(in.data(), kBlockFrames, taps, yaw, lp);
    er.process(l.data() + f, r.data() + f, kBlockFrames);
  }
}

/// The taps of a source at `source` heard at `ear`, from the ear's wall points.
Taps sourceTaps(const sim::BrickStore& s, Vec3f source, Vec3f ear = kEar, std::uint64_t update = 0) {
  std::array<WallPoint, kMaxWallPoints> points;
  const int n = findWallPoints(s, table(), ear, update, ReflectionConfig{}, points);
  Taps t;
  t.count = reflectionTaps(std::span<const WallPoint>(points.data(), static_cast<std::size_t>(n)), ear, source, t.taps);
  return t;
}

}  // namespace

TEST_CASE("an alley slaps back from both walls, phase-inverted") {
  const sim::BrickStore s = alley();
  const Taps t = find(s);
  const float expected = 2.0f * 2.0f / kC;  // 11.66 ms
  int east = 0, west = 0;
  for (int i = 0; i < t.count; ++i) {
    const ReflectionTap& k = t.taps[static_cast<std::size_t>(i)];
    CHECK(k.gain < 0.0f);
    CHECK(k.delay >= 2.0f * 1.5f / kC);
    if (i > 0) CHECK(k.delay >= t.taps[static_cast<std::size_t>(i - 1)].delay);
    if (std::fabs(k.delay - expected) < 0.0015f) {
      if (k.direction.x > 0.9f) ++east;
      if (k.direction.x < -0.9f) ++west;
      CHECK(k.lowpassHz > 12000.0f);  // stone keeps its highs
    }
  }
  MESSAGE("alley: ", t.count, " taps; first at ", t.taps[0].delay * 1000.0f, " ms, ", db(t.taps[0].gain), " dB");
  CHECK(t.count >= 2);
  CHECK(east == 1);
  CHECK(west == 1);
  // The two side walls are the loudest taps.
  float strongest = 0, nearWalls = 0;
  for (int i = 0; i < t.count; ++i) {
    const ReflectionTap& k = t.taps[static_cast<std::size_t>(i)];
    strongest = std::max(strongest, std::fabs(k.gain));
    if (std::fabs(k.delay - expected) < 0.0015f) nearWalls = std::max(nearWalls, std::fabs(k.gain));
  }
  CHECK(nearWalls == strongest);
}

TEST_CASE("a field gives no taps") {
  for (const char* ground : {"stone", "grass"}) {
    CAPTURE(ground);
    const sim::BrickStore s = field(ground);
    for (std::uint64_t u = 0; u < 4; ++u) CHECK(find(s, u).count == 0);
  }
}

TEST_CASE("a wall at 3 m comes back at -10..-20 dB re the direct sound at 1 m") {
  const sim::BrickStore s = wallEast(3.2f, "stone");
  for (std::uint64_t u = 0; u < 8; ++u) {
    const Taps t = find(s, u);
    REQUIRE(t.count >= 1);
    const ReflectionTap* main = nullptr;
    for (int i = 0; i < t.count; ++i)
      if (!main || std::fabs(t.taps[static_cast<std::size_t>(i)].gain) > std::fabs(main->gain))
        main = &t.taps[static_cast<std::size_t>(i)];
    CAPTURE(u);
    CHECK(main->delay == doctest::Approx(2.0f * 3.2f / kC).epsilon(0.1));
    CHECK(db(main->gain) < -10.0f);
    CHECK(db(main->gain) > -20.0f);
    if (u == 0) MESSAGE("stone wall at 3.2 m: ", db(main->gain), " dB at ", main->delay * 1000.0f, " ms");
  }
}

TEST_CASE("walls closer than 1.5 m are left to the reverb") {
  const Taps t = find(wallEast(1.2f, "stone"));
  for (int i = 0; i < t.count; ++i) CHECK(t.taps[static_cast<std::size_t>(i)].delay >= 2.0f * 1.5f / kC - 1e-6f);
  // The wall is still there along oblique rays, just weaker than a wall met head-on at 1.6 m.
  const Taps far = find(wallEast(1.6f, "stone"));
  REQUIRE(far.count >= 1);
  float nearest = 0, head = 0;
  for (int i = 0; i < t.count; ++i) nearest = std::max(nearest, std::fabs(t.taps[static_cast<std::size_t>(i)].gain));
  for (int i = 0; i < far.count; ++i) head = std::max(head, std::fabs(far.taps[static_cast<std::size_t>(i)].gain));
  CHECK(nearest < head);
}

TEST_CASE("a grass wall is weaker and darker than a stone one") {
  const Taps stone = find(wallEast(3.2f, "stone"));
  const Taps grass = find(wallEast(3.2f, "grass"));
  REQUIRE(stone.count >= 1);
  REQUIRE(grass.count >= 1);
  CHECK(std::fabs(grass.taps[0].gain) < 0.8f * std::fabs(stone.taps[0].gain));
  CHECK(grass.taps[0].lowpassHz < 0.5f * stone.taps[0].lowpassHz);
  CHECK(grass.taps[0].lowpassHz >= 2000.0f);
}

TEST_CASE("a wall 10 m east is heard after ~58 ms, from the east, on the right facing north") {
  const sim::BrickStore s = wallEast(10.0f, "stone");
  const Taps t = find(s);
  REQUIRE(t.count >= 1);
  const ReflectionTap* main = nullptr;
  for (int i = 0; i < t.count; ++i)
    if (!main || std::fabs(t.taps[static_cast<std::size_t>(i)].gain) > std::fabs(main->gain))
      main = &t.taps[static_cast<std::size_t>(i)];
  CHECK(main->delay == doctest::Approx(2.0f * 10.0f / kC).epsilon(0.05));
  CHECK(main->direction.x > 0.95f);
  CHECK(main->gain < 0.0f);

  std::vector<float> l, r;
  const int frames = 16 * kBlockFrames;
  renderImpulse(std::span<const ReflectionTap>(main, 1), 0.0f, frames, l, r);  // facing north: east is right
  double el = 0, er = 0;
  for (int i = 0; i < frames; ++i) {
    el += static_cast<double>(l[static_cast<std::size_t>(i)]) * l[static_cast<std::size_t>(i)];
    er += static_cast<double>(r[static_cast<std::size_t>(i)]) * r[static_cast<std::size_t>(i)];
  }
  CHECK(er > 100.0 * el);
  CHECK(er > 0.0);

  renderImpulse(std::span<const ReflectionTap>(main, 1), kPi, frames, l, r);  // facing south: east is left
  el = er = 0;
  for (int i = 0; i < frames; ++i) {
    el += static_cast<double>(l[static_cast<std::size_t>(i)]) * l[static_cast<std::size_t>(i)];
    er += static_cast<double>(r[static_cast<std::size_t>(i)]) * r[static_cast<std::size_t>(i)];
  }
  CHECK(el > 100.0 * er);
}

TEST_CASE("an impulse through the alley's taps comes back at the tap delay, inverted; a field stays silent") {
  const Taps t = find(alley());
  REQUIRE(t.count >= 2);
  std::vector<float> l, r;
  const int frames = 64 * kBlockFrames;  // 0.34 s
  renderImpulse(t.span(), 0.0f, frames, l, r);
  const int tapFrame = static_cast<int>(std::lround(t.taps[0].delay * kSampleRate));
  // Nothing before the first tap.
  float before = 0;
  for (int i = 0; i < tapFrame; ++i)
    before = std::max({before, std::fabs(l[static_cast<std::size_t>(i)]), std::fabs(r[static_cast<std::size_t>(i)])});
  CHECK(before == 0.0f);
  // The first tap's sample is negative and among the loudest of the render (the
  // side walls are the strongest taps; the other one may land a sample apart).
  const float m = l[static_cast<std::size_t>(tapFrame)] + r[static_cast<std::size_t>(tapFrame)];
  CHECK(m < 0.0f);
  float peak = 0;
  for (int i = 0; i < frames; ++i)
    peak = std::max(peak, std::fabs(l[static_cast<std::size_t>(i)] + r[static_cast<std::size_t>(i)]));
  CHECK(std::fabs(m) >= 0.5f * peak);
  // The alley's side walls: about as much left as right.
  double el = 0, er = 0;
  for (int i = 0; i < frames; ++i) {
    el += static_cast<double>(l[static_cast<std::size_t>(i)]) * l[static_cast<std::size_t>(i)];
    er += static_cast<double>(r[static_cast<std::size_t>(i)]) * r[static_cast<std::size_t>(i)];
  }
  CHECK(el > 0.5 * er);
  CHECK(er > 0.5 * el);

  const Taps none = find(field("grass"));
  renderImpulse(none.span(), 0.0f, frames, l, r);
  CHECK(std::all_of(l.begin(), l.end(), [](float x) { return x == 0.0f; }));
  CHECK(std::all_of(r.begin(), r.end(), [](float x) { return x == 0.0f; }));
}

TEST_CASE("a source down the alley slaps back at its own image delays, not the listener's") {
  // Walls at x = +-2 m; ears at the origin; a source 6 m up the alley (z = -6). Its
  // mirror images in the two walls are sqrt(4^2 + 6^2) = 7.21 m away: the first slap
  // comes (7.21 - 6) / c = 3.5 ms after the direct sound, from both sides; the
  // listener's own sounds slap back after 2 x 2 / c = 11.7 ms. The walls are Lambert
  // reflectors, so the energy spreads over the following milliseconds (points farther
  // along the walls), adding up to about the two mirror images' energy.
  const sim::BrickStore s = alley();
  const Vec3f source{0.0f, kEar.y, -6.0f};
  const Taps own = find(s), far = sourceTaps(s, source);
  REQUIRE(own.count >= 2);
  REQUIRE(far.count >= 2);
  const float image = std::sqrt(4.0f * 4.0f + 6.0f * 6.0f);
  float first[2] = {1.0f, 1.0f};  // earliest clearly sided tap (|x| > 0.3) on each side
  double energy = 0;
  for (int i = 0; i < far.count; ++i) {
    const ReflectionTap& k = far.taps[static_cast<std::size_t>(i)];
    MESSAGE("alley, source 6 m away: tap ", i, " at ", k.delay * 1000.0f, " ms, ", db(k.gain), " dB re direct, dir x ",
            k.direction.x, " z ", k.direction.z);
    CHECK(k.gain < 0.0f);
    energy += static_cast<double>(k.gain) * k.gain;
    if (std::fabs(k.direction.x) > 0.3f) {
      float& f = first[k.direction.x > 0 ? 1 : 0];
      f = std::min(f, k.delay);
    }
  }
  const double imageEnergy = 2.0 * (6.0 / image) * (6.0 / image) * (1.0 - 0.03);  // stone: a_mid 0.03
  MESSAGE("energy of all taps ", 10.0 * std::log10(energy), " dB; two mirror images ", 10.0 * std::log10(imageEnergy),
          " dB; first taps ", first[0] * 1000.0f, " / ", first[1] * 1000.0f, " ms (image ", (image - 6.0f) / kC * 1000.0f,
          " ms)");
  for (float f : first) {
    CHECK(f >= (image - 6.0f) / kC - 0.0005f);
    CHECK(f <= (image - 6.0f) / kC + 0.0025f);
  }
  CHECK(std::fabs(10.0 * std::log10(energy / imageEnergy)) <= 3.0);
  CHECK(own.taps[0].delay > 2.0f * std::max(first[0], first[1]));

  // A source behind one wall (outside the alley, x = -4): no tap from that wall's face,
  // which it is behind; the other wall's face still sees it.
  const Taps behind = sourceTaps(s, {-4.0f, kEar.y, -2.0f});
  for (int i = 0; i < behind.count; ++i) CHECK(behind.taps[static_cast<std::size_t>(i)].direction.x > 0.0f);
}

TEST_CASE("the reflector adds each source at its own taps, panned by the listener's yaw") {
  // Two sources through one reflector: each comes back at its own delay.
  ReflectionTap a{0.010f, -0.5f, 16000.0f, {0, 0, -1}}, b{0.020f, -0.25f, 16000.0f, {0, 0, -1}};
  EarlyReflector er;
  std::array<float, kMaxReflectionTaps> lpA{}, lpB{};
  std::array<float, kBlockFrames> in{}, l{}, r{};
  std::vector<float> mono;
  for (int blk = 0; blk < 8; ++blk) {
    in.fill(0.0f);
    if (blk == 0) in[0] = 1.0f;
    er.add(in.data(), kBlockFrames, std::span<const ReflectionTap>(&a, 1), 0.0f, lpA);
    er.add(in.data(), kBlockFrames, std::span<const ReflectionTap>(&b, 1), 0.0f, lpB);
    er.process(l.data(), r.data(), kBlockFrames);
    for (int i = 0; i < kBlockFrames; ++i) mono.push_back(l[static_cast<std::size_t>(i)] + r[static_cast<std::size_t>(i)]);
  }
  const auto at = [](float sec) { return static_cast<std::size_t>(std::lround(sec * kSampleRate)); };
  CHECK(mono[at(0.010f)] < -0.3f);
  CHECK(mono[at(0.020f)] < -0.1f);
  CHECK(std::fabs(mono[at(0.010f)]) > 1.5f * std::fabs(mono[at(0.020f)]));
  for (std::size_t i = 0; i < at(0.010f); ++i) CHECK(mono[i] == 0.0f);
  // Bad taps (NaN, infinite) are skipped, not played.
  ReflectionTap bad{std::numeric_limits<float>::quiet_NaN(), -0.5f, 8000.0f, {1, 0, 0}};
  er.reset();
  in.fill(1.0f);
  er.add(in.data(), kBlockFrames, std::span<const ReflectionTap>(&bad, 1), 0.0f, lpA);
  er.process(l.data(), r.data(), kBlockFrames);
  CHECK(std::all_of(l.begin(), l.end(), [](float x) { return x == 0.0f; }));
}

TEST_CASE("findReflections and the reflector are deterministic") {
  const sim::BrickStore s = alley();
  for (std::uint64_t u = 0; u < 4; ++u) {
    const Taps a = find(s, u), b = find(s, u);
    REQUIRE(a.count == b.count);
    for (int i = 0; i < a.count; ++i) {
      const ReflectionTap &x = a.taps[static_cast<std::size_t>(i)], &y = b.taps[static_cast<std::size_t>(i)];
      CHECK(x.delay == y.delay);
      CHECK(x.gain == y.gain);
      CHECK(x.lowpassHz == y.lowpassHz);
      CHECK(x.direction.x == y.direction.x);
      CHECK(x.direction.y == y.direction.y);
      CHECK(x.direction.z == y.direction.z);
    }
    CHECK(a.count >= 2);  // any rotation finds both walls
  }
  // Different updates turn the rings: the taps differ in detail.
  const Taps u0 = find(s, 0), u1 = find(s, 1);
  bool differ = u0.count != u1.count;
  for (int i = 0; !differ && i < u0.count; ++i)
    differ = u0.taps[static_cast<std::size_t>(i)].gain != u1.taps[static_cast<std::size_t>(i)].gain ||
             u0.taps[static_cast<std::size_t>(i)].delay != u1.taps[static_cast<std::size_t>(i)].delay;
  CHECK(differ);

  std::vector<float> l1, r1, l2, r2;
  renderImpulse(u0.span(), 0.3f, 32 * kBlockFrames, l1, r1);
  renderImpulse(u0.span(), 0.3f, 32 * kBlockFrames, l2, r2);
  CHECK(l1 == l2);
  CHECK(r1 == r2);
}

TEST_CASE("findReflections, reflectionTaps, add and process do not allocate") {
  const sim::BrickStore s = alley();
  EarlyReflector er;
  std::array<float, kBlockFrames> in{}, l{}, r{};
  std::array<float, kMaxReflectionTaps> lp{};
  std::array<WallPoint, kMaxWallPoints> points;
  in[0] = 1.0f;
  gAllocs = 0;
  gCountAllocs = true;
  Taps t, far;
  for (std::uint64_t u = 0; u < 3; ++u) {
    t.count = findReflections(s, table(), kEar, u, ReflectionConfig{}, t.taps);
    const int n = findWallPoints(s, table(), kEar, u, ReflectionConfig{}, points);
    far.count = reflectionTaps(std::span<const WallPoint>(points.data(), static_cast<std::size_t>(n)), kEar,
                               {0.0f, kEar.y, -6.0f}, far.taps);
    for (int b = 0; b < 8; ++b) {
      er.add(in.data(), kBlockFrames, t.span(), 0.1f * static_cast<float>(u), lp);
      er.add(in.data(), kBlockFrames, far.span(), 0.1f * static_cast<float>(u), lp);
      er.process(l.data(), r.data(), kBlockFrames);
    }
  }
  er.reset();
  gCountAllocs = false;
  CHECK(gAllocs.load() == 0);
  CHECK(t.count >= 2);
}
