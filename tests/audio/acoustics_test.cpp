// Acoustics from the voxel world: the room probe on hand-built rooms, the
// FDN reverb's measured reverb time against the probe's Eyring prediction,
// determinism across runs and thread counts, and the HRTF's spatial cues.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "audio/dsp.h"
#include "audio/hrtf.h"
#include "audio/reverb.h"
#include "audio/room_probe.h"
#include "audio/spectrum.h"
#include "sim/world/brick_store.h"
#include "tests/audio/box_world.h"
#include "sim/world/coarse_grid.h"
#include "sim/world/material.h"

using namespace loam;
using namespace loam::audio;

namespace {

const sim::MaterialTable& materials() {
  static std::unique_ptr<sim::MaterialTable> t = [] {
    auto r = sim::MaterialTable::load(LOAM_SOURCE_DIR "/sim/data/materials.toml");
    REQUIRE(r.has_value());
    return std::make_unique<sim::MaterialTable>(std::move(r).value());
  }();
  return *t;
}
sim::MaterialId mat(const char* name) {
  auto id = materials().find(name);
  REQUIRE(id.has_value());
  return *id;
}

/// Sets every voxel of [min, max) to m: whole bricks at once, voxels at the edges.
using loam::test::fillBox;

sim::BrickStore emptyWorld() {
  return sim::BrickStore(sim::WorldBounds{{-32, -32, -32}, {32, 32, 160}}, sim::makeCoarseLut(materials()));
}

/// An air box [0, size) (voxels) inside a shell of wall 8 voxels thick.
sim::BrickStore shellRoom(int sx, int sy, int sz, const char* wall, bool openFarEnd = false) {
  sim::BrickStore s = emptyWorld();
  fillBox(s, {-8, -8, -8}, {sx + 8, sy + 8, sz + 8}, mat(wall));
  fillBox(s, {0, 0, 0}, {sx, sy, openFarEnd ? sz + 8 : sz}, sim::kAir);
  return s;
}

struct Room {
  const char* name;
  sim::BrickStore store;
  Vec3f listener;
};

std::vector<Room> testRooms() {
  std::vector<Room> r;
  r.push_back({"stone cube 3 m", shellRoom(60, 60, 60, "stone"), {1.3f, 1.6f, 1.45f}});
  r.push_back({"wooden hall 10x6x4 m", shellRoom(200, 80, 120, "planks"), {4.3f, 1.7f, 2.6f}});
  r.push_back({"stone tunnel 3x3x40 m closed", shellRoom(60, 60, 800, "stone"), {1.4f, 1.6f, 20.3f}});
  r.push_back({"stone tunnel 3x3x40 m open at one end", shellRoom(60, 60, 800, "stone", true), {1.4f, 1.6f, 5.3f}});
  return r;
}

/// Energy decay (Schroeder backward integration) of both channels band-passed at hz
/// (octave wide: 3 cascaded band-passes, Q 1.41), fitted between -5 and -25 dB: T20
/// scaled to 60 dB, seconds.
double measureT20(const std::vector<float>& l, const std::vector<float>& r, float hz) {
  Biquad bl[3], br[3];
  for (Biquad& b : bl) b.bandpass(hz, 1.41f);
  for (Biquad& b : br) b.bandpass(hz, 1.41f);
  std::vector<double> e(l.size());
  for (std::size_t i = 0; i < l.size(); ++i) {
    float y = l[i], z = r[i];
    for (Biquad& b : bl) y = b.process(y);
    for (Biquad& b : br) z = b.process(z);
    e[i] = static_cast<double>(y) * y + static_cast<double>(z) * z;
  }
  for (std::size_t i = e.size() - 1; i-- > 0;) e[i] += e[i + 1];
  double total = e[0];
  double sx = 0, sy = 0, sxx = 0, sxy = 0, cnt = 0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    double db = 10.0 * std::log10(e[i] / total);
    if (db > -5.0) continue;
    if (db < -25.0) break;
    double x = static_cast<double>(i) / kSampleRate;
    sx += x; sy += db; sxx += x * x; sxy += x * db; cnt += 1;
  }
  REQUIRE(cnt > 10);
  double slope = (cnt * sxy - sx * sy) / (cnt * sxx - sx * sx);  // dB per second
  return -60.0 / slope;
}

struct Stereo {
  std::vector<float> l, r;
};

Stereo impulseResponse(FdnReverb& rv, double seconds) {
  const int n = static_cast<int>(seconds * kSampleRate);
  std::vector<float> in(static_cast<std::size_t>(n), 0.0f);
  Stereo out{std::vector<float>(in.size()), std::vector<float>(in.size())};
  in[0] = 1.0f;
  for (int at = 0; at < n; at += kBlockFrames) {
    int k = std::min(kBlockFrames, n - at);
    rv.process(in.data() + at, out.l.data() + at, out.r.data() + at, k);
  }
  return out;
}

bool sameHits(std::span<const RayHit> a, std::span<const RayHit> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i].distance, &b[i].distance, sizeof(float)) != 0 ||
        std::memcmp(&a[i].foliageStart, &b[i].foliageStart, sizeof(float)) != 0 ||
        std::memcmp(&a[i].foliageDepth, &b[i].foliageDepth, sizeof(float)) != 0 || a[i].material != b[i].material ||
        a[i].normalAxis != b[i].normalAxis || a[i].normalSign != b[i].normalSign ||
        std::memcmp(&a[i].sky, &b[i].sky, sizeof(float)) != 0 ||
        std::memcmp(&a[i].leftRoofAt, &b[i].leftRoofAt, sizeof(float)) != 0)
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE("room probe: closed rooms are enclosed, flat ground is open") {
  AcousticTable table = makeAcousticTable(materials());
  RoomProbe probe;
  for (Room& room : testRooms()) {
    const RoomEstimate& e = probe.update(room.store, table, room.listener, 1);
    std::printf("%-40s enclosure %.3f hits %.3f sky %.3f mfp %.2f m V %.1f S %.1f a %.3f/%.3f/%.3f RT %.2f/%.2f/%.2f s openings %d\n",
                room.name, e.enclosure, e.hitShare, e.openness, e.meanFreePath, e.volume, e.surface, e.absorption[0],
                e.absorption[1], e.absorption[2], e.rt60[0], e.rt60[1], e.rt60[2], e.openingCount);
    CHECK(e.enclosure > 0.99f);
    CHECK(e.openness == 0.0f);
    if (std::strstr(room.name, "open at one end")) {
      REQUIRE(e.openingCount >= 1);
      // The mouth is down the tunnel (+z), 34.7 m away: a small share, straight ahead.
      CHECK(e.openings[0].direction.z > 0.95f);
      CHECK(e.openings[0].share > 0.0005f);
      CHECK(e.openings[0].share < 0.02f);
    } else {
      CHECK(e.hitShare == 1.0f);
      CHECK(e.openingCount == 0);
    }
  }
  // The cube's volume and surface, which the estimator integrates exactly in the limit.
  {
    Room cube = std::move(testRooms()[0]);
    const RoomEstimate& e = probe.update(cube.store, table, cube.listener, 3);
    CHECK(e.volume == doctest::Approx(27.0).epsilon(0.05));
    CHECK(e.surface == doctest::Approx(54.0).epsilon(0.10));
    // Eyring for stone (a = 0.02 / 0.03 / 0.05): ~4.0 / 2.6 / 1.5 s.
    CHECK(e.rt60[0] > e.rt60[1]);
    CHECK(e.rt60[1] > e.rt60[2]);
  }
  // Outdoors: flat grass, nothing above.
  sim::BrickStore flat = emptyWorld();
  fillBox(flat, {-256, -40, -256}, {256, 0, 1280}, mat("grass"));
  const RoomEstimate& e = probe.update(flat, table, {0.2f, 1.7f, 0.3f}, 1);
  std::printf("%-40s enclosure %.3f hits %.3f sky %.3f mfp %.2f m RT %.2f/%.2f/%.2f s openings %d (top %.2f %.2f %.2f share %.2f)\n",
              "flat grass", e.enclosure, e.hitShare, e.openness, e.meanFreePath, e.rt60[0], e.rt60[1], e.rt60[2],
              e.openingCount, e.openings[0].direction.x, e.openings[0].direction.y, e.openings[0].direction.z,
              e.openings[0].share);
  CHECK(e.enclosure < 0.05f);
  CHECK(e.openness == 1.0f);
  CHECK(e.hitShare > 0.4f);
  CHECK(e.hitShare < 0.6f);
  CHECK(e.rt60[1] < 0.3f);
  REQUIRE(e.openingCount >= 1);
  float escaped = 0;
  for (int i = 0; i < e.openingCount; ++i) escaped += e.openings[static_cast<std::size_t>(i)].share;
  CHECK(escaped == doctest::Approx(1.0f - e.hitShare).epsilon(0.01));
  // Leaves overhead (a 3 m canopy slab) scatter part of the sky back: more enclosed,
  // less open, still not a room.
  fillBox(flat, {-120, 80, -120}, {120, 140, 120}, mat("leaves"));
  const RoomEstimate& t = probe.update(flat, table, {0.2f, 1.7f, 0.3f}, 1);
  std::printf("%-40s enclosure %.3f sky %.3f RT %.2f/%.2f/%.2f s\n", "flat grass under a leaf slab", t.enclosure, t.openness,
              t.rt60[0], t.rt60[1], t.rt60[2]);
  CHECK(t.enclosure > 0.2f);
  CHECK(t.enclosure < 0.8f);
  CHECK(t.openness < 0.8f);
}

TEST_CASE("room probe: deterministic, and identical for any split of the rays over threads") {
  AcousticTable table = makeAcousticTable(materials());
  std::vector<Room> rooms = testRooms();
  Room& room = rooms[3];  // the open tunnel: hits and escapes
  RoomProbe a, b;
  RoomEstimate e1 = a.update(room.store, table, room.listener, 7, 1);
  std::vector<RayHit> h1(a.hits().begin(), a.hits().end());
  for (int threads : {1, 2, 4, 3}) {
    RoomEstimate e = b.update(room.store, table, room.listener, 7, threads);
    CHECK(sameHits(h1, b.hits()));
    CHECK(std::memcmp(&e1, &e, sizeof(RoomEstimate)) == 0);
  }
  // The occupancy bits change nothing but speed, also after an edit and a refresh.
  BrickOccupancy occ(room.store);
  RoomEstimate eo = b.update(room.store, table, room.listener, 7, 2, &occ);
  CHECK(sameHits(h1, b.hits()));
  CHECK(std::memcmp(&e1, &eo, sizeof(RoomEstimate)) == 0);
  fillBox(room.store, {0, 0, 300}, {60, 60, 308}, mat("stone"));  // wall the tunnel off at z = 15 m
  for (int bz = 300 >> 3; bz <= 307 >> 3; ++bz)
    for (int by = 0; by <= 59 >> 3; ++by)
      for (int bx = 0; bx <= 59 >> 3; ++bx) occ.refresh(room.store, {bx, by, bz});
  RoomEstimate walled = a.update(room.store, table, room.listener, 7, 1);
  std::vector<RayHit> hw(a.hits().begin(), a.hits().end());
  RoomEstimate walledOcc = b.update(room.store, table, room.listener, 7, 4, &occ);
  CHECK(sameHits(hw, b.hits()));
  CHECK(std::memcmp(&walled, &walledOcc, sizeof(RoomEstimate)) == 0);
  CHECK(walled.openingCount == 0);   // the mouth is behind the new wall
  CHECK(walled.hitShare == 1.0f);
  CHECK(walled.rt60[1] > e1.rt60[1]);  // closed: no mouth left to lose sound through

  // Another update index rotates the ray set: different directions, same room.
  b.update(room.store, table, room.listener, 8, 1);
  CHECK(std::memcmp(a.directions().data(), b.directions().data(), a.directions().size() * sizeof(Vec3f)) != 0);
  // Every direction is a unit vector and the set covers the sphere evenly.
  double sx = 0, sy = 0, sz = 0;
  for (const Vec3f& d : b.directions()) {
    CHECK(std::fabs(d.x * d.x + d.y * d.y + d.z * d.z - 1.0f) < 1e-5f);
    sx += d.x; sy += d.y; sz += d.z;
  }
  CHECK(std::fabs(sx) + std::fabs(sy) + std::fabs(sz) < 1.0);
}

TEST_CASE("room probe: openings know the distance to their mouth") {
  AcousticTable table = makeAcousticTable(materials());
  RoomProbe probe;
  // The 3x3x40 m tunnel open at its far end: the roof ends at z = 40.4 m (the shell).
  sim::BrickStore tunnel = shellRoom(60, 60, 800, "stone", true);
  // (Past ~20 m the 9 m^2 mouth is under one ray's solid angle: some updates miss it.)
  for (float z : {18.3f, 24.7f, 30.3f, 35.1f}) {
    int found = 0;
    for (std::uint64_t u = 0; u < 6; ++u) {
      const RoomEstimate& e = probe.update(tunnel, table, {1.4f, 1.6f, z}, u);
      if (e.openingCount == 0) continue;
      ++found;
      const Opening& o = e.openings[0];
      std::printf("tunnel, listener at z %.1f m: opening (%.2f %.2f %.2f) share %.4f at %.1f m (mouth %.1f m)\n",
                  static_cast<double>(z), o.direction.x, o.direction.y, o.direction.z, o.share, o.distance,
                  static_cast<double>(40.4f - z));
      CHECK(o.direction.z > 0.95f);
      CHECK(std::fabs(o.distance - (40.4f - z)) <= 2.5f);
    }
    CHECK(found >= 3);
  }
  // A 6x3x6 m plank room with a 1 x 2 m doorway in its east wall (x = 6.0..6.4 m).
  sim::BrickStore room = shellRoom(120, 60, 120, "planks");
  fillBox(room, {120, 0, 50}, {128, 40, 70}, sim::kAir);
  const Vec3f ear{3.0f, 1.6f, 3.0f};
  const RoomEstimate& e = probe.update(room, table, ear, 4);
  REQUIRE(e.openingCount >= 1);
  const Opening& o = e.openings[0];
  Vec3f toDoor{6.2f - ear.x, 1.0f - ear.y, 3.0f - ear.z};
  float len = std::sqrt(toDoor.x * toDoor.x + toDoor.y * toDoor.y + toDoor.z * toDoor.z);
  float cosToDoor = (o.direction.x * toDoor.x + o.direction.y * toDoor.y + o.direction.z * toDoor.z) / len;
  std::printf("room with a doorway: %d openings, first (%.2f %.2f %.2f) share %.4f at %.1f m (door %.1f m)\n",
              e.openingCount, o.direction.x, o.direction.y, o.direction.z, o.share, o.distance, static_cast<double>(len));
  CHECK(cosToDoor > 0.9f);
  CHECK(o.distance == doctest::Approx(3.4).epsilon(0.3));
  // Walled up: no opening.
  fillBox(room, {120, 0, 50}, {128, 40, 70}, mat("planks"));
  CHECK(probe.update(room, table, ear, 4).openingCount == 0);
}

TEST_CASE("room probe: ground outside a cave mouth is the mouth, not part of the cave") {
  // A 3x3x20 m stone tunnel through a hill, open at z = 20.4 m onto grass under open sky.
  // Past the mouth the rays graze the grass; the cave's reverb must not depend on it.
  AcousticTable table = makeAcousticTable(materials());
  auto build = [](bool grass) {
    sim::BrickStore s = emptyWorld();
    fillBox(s, {-8, -8, -8}, {68, 68, 408}, mat("stone"));
    fillBox(s, {0, 0, 0}, {60, 60, 408}, sim::kAir);
    if (grass) fillBox(s, {-256, -40, 408}, {256, 0, 1280}, mat("grass"));
    return s;
  };
  sim::BrickStore bare = build(false), grassy = build(true);
  RoomProbe probe;
  RoomSmoother sBare(0.2f), sGrass(0.2f);
  double meanBare = 0, meanGrass = 0, sq = 0;
  const int n = 24;
  for (int u = 0; u < n; ++u) {
    float b = probe.update(bare, table, {1.4f, 1.6f, 6.0f}, static_cast<std::uint64_t>(u)).rt60[1];
    sBare.add(probe.estimate());
    const RoomEstimate& g = probe.update(grassy, table, {1.4f, 1.6f, 6.0f}, static_cast<std::uint64_t>(u));
    sGrass.add(g);
    meanBare += b / n;
    meanGrass += g.rt60[1] / n;
    sq += static_cast<double>(g.rt60[1]) * g.rt60[1] / n;
  }
  double sd = std::sqrt(std::max(0.0, sq - meanGrass * meanGrass));
  std::printf("cave mouth onto grass: RT mid %.2f s (sd %.2f, smoothed %.2f) vs onto nothing %.2f s (smoothed %.2f)\n", meanGrass,
              sd, static_cast<double>(sGrass.value().rt60[1]), meanBare, static_cast<double>(sBare.value().rt60[1]));
  CHECK(meanGrass == doctest::Approx(meanBare).epsilon(0.15));
  CHECK(sd < 0.2 * meanGrass);
  CHECK(sGrass.value().rt60[1] == doctest::Approx(sBare.value().rt60[1]).epsilon(0.15));
  // Its opening is the mouth, 14.4 m down the tunnel, whether the rays escape or graze the grass.
  const RoomEstimate& g = probe.update(grassy, table, {1.4f, 1.6f, 6.0f}, 3);
  REQUIRE(g.openingCount >= 1);
  CHECK(g.openings[0].direction.z > 0.9f);
  CHECK(std::fabs(g.openings[0].distance - 14.4f) <= 2.5f);
}

TEST_CASE("room smoother: reverb from averaged volume and surface; openings glide") {
  RoomEstimate a, b;
  a.volume = 100; a.surface = 100; a.absorption = {0.1f, 0.1f, 0.1f};
  b.volume = 300; b.surface = 100; b.absorption = {0.1f, 0.1f, 0.1f};
  a.rt60 = {1, 1, 1};
  b.rt60 = {3, 3, 3};
  a.openingCount = 1;
  a.openings[0] = {{0.0f, 0.0f, 1.0f}, 0.1f, 10.0f};
  b.openingCount = 2;
  b.openings[0] = {{std::sin(0.17f), 0.0f, std::cos(0.17f)}, 0.2f, 20.0f};  // ~10 degrees on
  b.openings[1] = {{1.0f, 0.0f, 0.0f}, 0.05f, 4.0f};                        // new: taken as is
  RoomSmoother sm(0.5f);
  sm.add(a);
  const RoomEstimate& v = sm.add(b);
  CHECK(v.volume == doctest::Approx(200.0f));
  CHECK(v.meanFreePath == doctest::Approx(8.0f));
  // Eyring of V 200, S 100, a 0.1: 0.161 * 200 / (100 * 0.105 + air).
  CHECK(v.rt60[1] == doctest::Approx(0.161 * 200 / (-100 * std::log(0.9) + 4 * 0.001 * 200)).epsilon(0.001));
  REQUIRE(v.openingCount == 2);
  CHECK(v.openings[0].distance == doctest::Approx(15.0f));
  CHECK(v.openings[0].share == doctest::Approx(0.15f));
  CHECK(v.openings[0].direction.x > 0.0f);
  CHECK(v.openings[0].direction.x < std::sin(0.17f));
  CHECK(v.openings[1].distance == 4.0f);
}

TEST_CASE("reverb: measured reverb time of the rendered impulse response is within 10% of Eyring, per band") {
  AcousticTable table = makeAcousticTable(materials());
  RoomProbe probe;
  for (Room& room : testRooms()) {
    const RoomEstimate& e = probe.update(room.store, table, room.listener, 1);
    FdnReverb rv(11);
    rv.jumpRoom(e.meanFreePath, e.rt60);
    double longest = std::max(e.rt60[0], std::max(e.rt60[1], e.rt60[2]));
    Stereo ir = impulseResponse(rv, 1.1 * longest + 0.3);
    for (int b = 0; b < 3; ++b) {
      double predicted = e.rt60[static_cast<std::size_t>(b)];
      double measured = measureT20(ir.l, ir.r, kBandHz[static_cast<std::size_t>(b)]);
      std::printf("%-40s %5.0f Hz: Eyring %.3f s, measured T20 %.3f s (%+.1f%%)\n", room.name,
                  static_cast<double>(kBandHz[static_cast<std::size_t>(b)]), predicted, measured,
                  100.0 * (measured / predicted - 1.0));
      CHECK(measured == doctest::Approx(predicted).epsilon(0.10));
    }
  }
}

TEST_CASE("reverb: repeatable, and a change of room glides without a click") {
  FdnReverb a(3), b(3);
  a.jumpRoom(3.0f, {2.0f, 1.5f, 1.0f});
  b.jumpRoom(3.0f, {2.0f, 1.5f, 1.0f});
  Stereo ia = impulseResponse(a, 0.5), ib = impulseResponse(b, 0.5);
  CHECK(std::memcmp(ia.l.data(), ib.l.data(), ia.l.size() * sizeof(float)) == 0);
  CHECK(std::memcmp(ia.r.data(), ib.r.data(), ia.r.size() * sizeof(float)) == 0);

  // Steady noise in; switch from a small stone room to a big dead one and back. The
  // output's sample-to-sample step never exceeds what the noise itself produces.
  FdnReverb rv(5);
  rv.jumpRoom(2.0f, {3.0f, 2.5f, 1.5f});
  KeyedRng rng(9);
  std::vector<float> in(kBlockFrames), l(kBlockFrames), r(kBlockFrames);
  float prev = 0, maxStep = 0, maxStepBefore = 0, peak = 0;
  for (int blk = 0; blk < 600; ++blk) {
    if (blk == 200) rv.setRoom(12.0f, {0.4f, 0.3f, 0.2f});
    if (blk == 400) rv.setRoom(2.0f, {3.0f, 2.5f, 1.5f});
    for (float& x : in) x = 0.1f * rng.bipolar();
    rv.process(in.data(), l.data(), r.data(), kBlockFrames);
    for (float y : l) {
      REQUIRE(std::isfinite(y));
      float step = std::fabs(y - prev);
      if (blk >= 100 && blk < 200) maxStepBefore = std::max(maxStepBefore, step);
      if (blk >= 100) maxStep = std::max(maxStep, step);
      peak = std::max(peak, std::fabs(y));
      prev = y;
    }
  }
  std::printf("reverb glide: max step %.4f (steady %.4f), peak %.3f\n", static_cast<double>(maxStep),
              static_cast<double>(maxStepBefore), static_cast<double>(peak));
  CHECK(maxStep < 2.0f * maxStepBefore);
}

// ---- HRTF ------------------------------------------------------------------------

namespace {

/// Renders `seconds` of keyed white noise from head direction d through a fresh source.
Stereo renderNoise(const HrtfSet& set, HeadDirection d, double seconds, bool speakers = false) {
  HrtfSource src(set.taps());
  std::vector<float> hl(static_cast<std::size_t>(set.taps())), hr(hl.size());
  if (speakers) {
    src.setPan(d);
  } else {
    set.filters(d, hl.data(), hr.data());
    src.setFilters(hl.data(), hr.data());
  }
  KeyedRng rng(42);
  const int n = static_cast<int>(seconds * kSampleRate) / kBlockFrames * kBlockFrames;
  Stereo out{std::vector<float>(static_cast<std::size_t>(n)), std::vector<float>(static_cast<std::size_t>(n))};
  std::vector<float> in(kBlockFrames);
  for (int at = 0; at < n; at += kBlockFrames) {
    for (float& x : in) x = 0.5f * rng.bipolar();
    src.process(in.data(), out.l.data() + at, out.r.data() + at, kBlockFrames);
  }
  return out;
}

double db(double ratio) { return 10.0 * std::log10(ratio); }

/// Index of the first sample above 10% of the peak: the arrival.
int onset(const std::vector<float>& h) {
  float peak = 0;
  for (float x : h) peak = std::max(peak, std::fabs(x));
  for (std::size_t i = 0; i < h.size(); ++i)
    if (std::fabs(h[i]) > 0.1f * peak) return static_cast<int>(i);
  return -1;
}

}  // namespace

TEST_CASE("hrtf: front and back differ in spectral cues; a source at the right is louder and earlier at the right ear") {
  std::string err;
  auto set = HrtfSet::open(kDefaultSofaPath, &err);
  REQUIRE_MESSAGE(set != nullptr, err);
  std::printf("hrtf: %d taps at %d Hz\n", set->taps(), kSampleRate);
  CHECK(set->taps() >= 128);
  CHECK(set->taps() <= HrtfSet::kMaxTaps);

  // Mirrored front/back (30 degrees to the right, front vs back, in the horizontal plane).
  HeadDirection front{0.866f, -0.5f, 0.0f}, back{-0.866f, -0.5f, 0.0f};
  Stereo f = renderNoise(*set, front, 2.0), b = renderNoise(*set, back, 2.0);
  auto mono = [](const Stereo& s) {
    std::vector<float> m(s.l.size());
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = 0.5f * (s.l[i] + s.r[i]);
    return m;
  };
  std::vector<float> fm = mono(f), bm = mono(b);
  double fShare = bandShare(fm, kSampleRate, 4000, 10000), bShare = bandShare(bm, kSampleRate, 4000, 10000);
  double ildF = db(rms(f.r) * rms(f.r) / (rms(f.l) * rms(f.l))), ildB = db(rms(b.r) * rms(b.r) / (rms(b.l) * rms(b.l)));
  std::printf("hrtf front/back: 4-10 kHz share %.3f vs %.3f (%+.2f dB); ILD (R/L) %+.2f dB vs %+.2f dB\n", fShare, bShare,
              db(fShare / bShare), ildF, ildB);
  CHECK(std::fabs(db(fShare / bShare)) > 1.0);   // spectral (pinna) cue differs
  CHECK(std::fabs(ildF - ildB) < 4.0);           // interaural level roughly equal
  CHECK(ildF > 1.0);                             // both on the right
  CHECK(ildB > 1.0);

  // Straight right: louder and earlier in the right ear.
  std::vector<float> hl(static_cast<std::size_t>(set->taps())), hr(hl.size());
  set->filters({0.0f, -1.0f, 0.0f}, hl.data(), hr.data());
  Stereo r = renderNoise(*set, {0.0f, -1.0f, 0.0f}, 1.0);
  double ild = db(rms(r.r) * rms(r.r) / (rms(r.l) * rms(r.l)));
  int itd = onset(hl) - onset(hr);
  std::printf("hrtf right: ILD %+.1f dB, right ear leads by %d samples (%.2f ms)\n", ild, itd, itd * 1000.0 / kSampleRate);
  CHECK(ild > 6.0);
  CHECK(itd >= 15);  // ~0.3 ms or more (a head is ~0.65 ms across)
  CHECK(itd <= 48);
  // Front/back onsets are equal-ish (no interaural time cue to tell them apart).
  std::vector<float> fl(hl.size()), fr(hl.size()), bl(hl.size()), br(hl.size());
  set->filters(front, fl.data(), fr.data());
  set->filters(back, bl.data(), br.data());
  CHECK(std::abs((onset(fl) - onset(fr)) - (onset(bl) - onset(br))) <= 4);

  // Speaker mode: constant-power pan, right louder for a right source, equal in front.
  Stereo sp = renderNoise(*set, {0.0f, -1.0f, 0.0f}, 0.5, true);
  Stereo sf = renderNoise(*set, {1.0f, 0.0f, 0.0f}, 0.5, true);
  CHECK(rms(sp.r) > 10.0 * rms(sp.l) + 1e-9);
  CHECK(rms(sf.l) == doctest::Approx(rms(sf.r)).epsilon(0.001));
}

TEST_CASE("hrtf: a moving source crossfades between filters without a click") {
  auto set = HrtfSet::open();
  REQUIRE(set != nullptr);
  HrtfSource src(set->taps());
  std::vector<float> hl(static_cast<std::size_t>(set->taps())), hr(hl.size());
  std::vector<float> in(kBlockFrames), l(kBlockFrames), r(kBlockFrames);
  float prevL = 0, maxStep = 0, steady = 0;
  int sample = 0;
  for (int blk = 0; blk < 200; ++blk) {
    // A 300 Hz tone; the source jumps 90 degrees every 20 blocks (left, front, right, back).
    if (blk % 20 == 0) {
      float a = static_cast<float>(blk / 20) * kPi * 0.5f;
      set->filters({std::cos(a), std::sin(a), 0.0f}, hl.data(), hr.data());
      src.setFilters(hl.data(), hr.data());
    }
    for (float& x : in) x = 0.3f * std::sin(2.0f * kPi * 300.0f * static_cast<float>(sample++) / kSampleRate);
    src.process(in.data(), l.data(), r.data(), kBlockFrames);
    for (float y : l) {
      float step = std::fabs(y - prevL);
      if (blk > 0) maxStep = std::max(maxStep, step);
      if (blk > 0 && blk < 20) steady = std::max(steady, step);
      prevL = y;
    }
  }
  std::printf("hrtf move: max step %.4f, steady %.4f\n", static_cast<double>(maxStep), static_cast<double>(steady));
  // The tone's own slope bounds the step (levels change with direction, up to ~3x).
  CHECK(maxStep < 4.0f * steady);
}
