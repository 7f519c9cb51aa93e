// Acoustics on rendered audio, through the real path (server step -> streams -> mirror
// -> AudioScene with ListenerAcoustics -> AudioEngine):
//  - sealing a pit with a 5 cm stone lid makes the outdoors >= 30 dB quieter, and
//    digging the lid away (a live dig command) brings it back;
//  - in a tunnel, outdoor sound arrives from the mouth's direction (left/right energy
//    with the listener facing either way) and the apparent direction of an outdoor
//    source shifts towards the source as the listener walks out;
//  - walling the mouth up leaves only what passes through the rock (no openings,
//    >= 30 dB quieter);
//  - leaves rustling heard from inside the tunnel are muffled (highs cut), not only quieter;
//  - round a bend, where no ray sees the mouth, outdoor sound still comes round the
//    corner (from the corner, duller), and walling the mouth silences it again;
//  - renders are bit-exact across runs and worker thread counts.
//
// The world (hand-built, no generator): stone ground below y = 0; a stone hill
// x 0..25.6, y 0..9.6, z -12.8..12.8 m with a tunnel 3.2 m wide and 2.8 m high along x
// from its mouth at x = 0 to x = 24 (in one variant with a side tunnel 2.4 m wide
// branching south at x 20..22.4 to z = 10, out of sight of the mouth); a pit 0.8 x 0.8 m and 2.4 m deep at x -16.8..-16,
// z -0.8..0 west of the hill; a canopy of leaves (y 4..4.8) over x -12..-4, z 4..12.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "audio/listener_acoustics.h"
#include "audio/offline_render.h"
#include "audio/spectrum.h"
#include "sim/step/commands.h"
#include "tests/audio/audio_world.h"
#include "tests/support/alloc_counter.h"

using namespace loam;

namespace {

constexpr audio::Vec3f kPitEar{-16.4f, -1.0f, -0.4f};   // 1 m below the pit's mouth
constexpr float kPitX0 = -16.8f, kPitZ0 = -0.8f;        // pit corner (2 x 2 bricks)

sim::SimState acousticWorld(bool lid, bool walled, bool branch = false) {
  sim::Scene s = loam::test::audioScene();
  sim::BrickStore w(s.worldBounds, sim::makeCoarseLut(*s.materials));
  const sim::MaterialId stone = loam::test::mat("stone"), leaves = loam::test::mat("leaves");
  for (int cz = -10; cz < 10; ++cz)
    for (int cx = -10; cx < 10; ++cx) {
      w.fillChunk(sim::ChunkCoord{cx, -1, cz}, stone);
      w.fillChunk(sim::ChunkCoord{cx, -2, cz}, stone);
    }
  for (int cz = -4; cz < 4; ++cz)
    for (int cy = 0; cy < 3; ++cy)
      for (int cx = 0; cx < 8; ++cx) w.fillChunk(sim::ChunkCoord{cx, cy, cz}, stone);
  // The tunnel: bricks x 0..59 (0..24 m), y 0..6 (0..2.8 m), z -4..3 (-1.6..1.6 m).
  for (int bx = 0; bx < 60; ++bx)
    for (int by = 0; by < 7; ++by)
      for (int bz = -4; bz < 4; ++bz) w.fillBrick({bx, by, bz}, sim::kAir);
  if (branch)  // a side tunnel south off the main one: bricks x 50..55 (20..22.4 m), z 4..24 (1.6..10 m)
    for (int bx = 50; bx < 56; ++bx)
      for (int by = 0; by < 7; ++by)
        for (int bz = 4; bz < 25; ++bz) w.fillBrick({bx, by, bz}, sim::kAir);
  if (walled)  // a 40 cm stone wall in the mouth
    for (int by = 0; by < 7; ++by)
      for (int bz = -4; bz < 4; ++bz) w.fillBrick({0, by, bz}, stone);
  // The pit: bricks x -42..-41, z -2..-1, y -6..-1.
  for (int bx = -42; bx < -40; ++bx)
    for (int bz = -2; bz < 0; ++bz)
      for (int by = -6; by < 0; ++by) w.fillBrick({bx, by, bz}, sim::kAir);
  if (lid) {  // one voxel layer (5 cm) of stone, flush with the ground
    const int x0 = static_cast<int>(std::lround(kPitX0 * 20)), z0 = static_cast<int>(std::lround(kPitZ0 * 20));
    for (int x = x0; x < x0 + 16; ++x)
      for (int z = z0; z < z0 + 16; ++z) w.set(x, -1, z, stone);
  }
  for (int bz = 10; bz < 30; ++bz)
    for (int bx = -30; bx < -10; ++bx) {
      w.fillBrick({bx, 10, bz}, leaves);
      w.fillBrick({bx, 11, bz}, leaves);
    }
  w.markGenerated();
  return sim::createSimStateFromWorld(s, 11, std::move(w));
}

audio::OfflineRenderConfig renderConfig(audio::Vec3f ear, float yaw, double seconds) {
  audio::OfflineRenderConfig cfg;
  audio::Listener l;
  l.position = ear;
  l.yaw = yaw;
  cfg.listener = l;
  cfg.seconds = seconds;
  cfg.engine.spatial = audio::Spatialisation::Speakers;
  return cfg;
}

/// RMS (dB) of one channel (0 left, 1 right, -1 both) over [from, to) seconds.
double levelDb(const std::vector<float>& stereo, double from, double to, int channel = -1) {
  auto a = static_cast<std::size_t>(from * audio::kSampleRate), b = static_cast<std::size_t>(to * audio::kSampleRate);
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = a; i < b && 2 * i + 1 < stereo.size(); ++i) {
    for (int c = 0; c < 2; ++c) {
      if (channel >= 0 && c != channel) continue;
      double x = stereo[2 * i + static_cast<std::size_t>(c)];
      sum += x * x;
      ++n;
    }
  }
  return 10.0 * std::log10(sum / static_cast<double>(std::max<std::size_t>(n, 1)) + 1e-30);
}

std::vector<float> monoTail(const std::vector<float>& stereo, double from) {
  std::vector<float> mono = audio::toMono(stereo, 2);
  auto skip = static_cast<std::size_t>(from * audio::kSampleRate);
  return {mono.begin() + static_cast<std::ptrdiff_t>(std::min(skip, mono.size())), mono.end()};
}

float angleDeg(audio::Vec3f a, audio::Vec3f b) {
  float la = std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z), lb = std::sqrt(b.x * b.x + b.y * b.y + b.z * b.z);
  float c = (a.x * b.x + a.y * b.y + a.z * b.z) / std::max(1e-9f, la * lb);
  return std::acos(std::clamp(c, -1.0f, 1.0f)) * 180.0f / audio::kPi;
}

/// The apparent direction of a source at `source` heard at `ear` (a few room updates
/// so the smoother settles).
audio::EmitterState heard(const sim::SimState& world, audio::Vec3f ear, audio::Vec3f source,
                          audio::AcousticsConfig config = {}) {
  audio::ListenerAcoustics acoustics(*world.materials, config);
  for (std::uint64_t u = 0; u < 16; ++u) acoustics.updateRoom(world.world, ear, u);
  audio::EmitterState s;
  s.position = source;
  audio::EmitterState* p = &s;
  acoustics.propagate(world.world, std::span<audio::EmitterState* const>(&p, 1));
  return s;
}

}  // namespace

TEST_CASE("sealing a pit with a 5 cm lid silences the outdoors; digging it open restores it") {
  audio::Render open = audio::renderOffline(acousticWorld(false, false), renderConfig(kPitEar, 0, 2.5));
  audio::Render sealed = audio::renderOffline(acousticWorld(true, false), renderConfig(kPitEar, 0, 2.5));
  double openDb = levelDb(open.samples, 1.0, 2.5), sealedDb = levelDb(sealed.samples, 1.0, 2.5);
  MESSAGE("pit open " << openDb << " dB, sealed " << sealedDb << " dB");
  CHECK(openDb > -60.0);  // there is something outdoors to hear
  CHECK(openDb - sealedDb >= 30.0);

  // Live: the lid is dug away (a 40 cm dig at its centre) 1.5 s in.
  auto cfg = renderConfig(kPitEar, 0, 4.5);
  cfg.commands = [](const sim::SimState& s, std::vector<sim::Command>& out) {
    if (s.tick != 90) return;
    sim::DigCommand dig;
    dig.target = {static_cast<int>(std::lround((kPitX0 + 0.4f) * 20)), -1,
                  static_cast<int>(std::lround((kPitZ0 + 0.4f) * 20))};
    dig.radius = sim::ToolSize::Cm40;
    out.push_back(loam::test::serverCommand(1, dig));
  };
  audio::Render dug = audio::renderOffline(acousticWorld(true, false), cfg);
  double before = levelDb(dug.samples, 0.5, 1.5), after = levelDb(dug.samples, 3.0, 4.5);
  MESSAGE("lid dug away: before " << before << " dB, after " << after << " dB");
  CHECK(after - before >= 25.0);
  CHECK(std::fabs(after - openDb) <= 4.0);
}

TEST_CASE("in the tunnel, outdoor sound comes from the mouth and shifts as the listener walks out") {
  sim::SimState world = acousticWorld(false, false);
  // Facing north (yaw 0) the mouth (west, -x) is on the left; facing south, on the right.
  const audio::Vec3f deep{16.0f, 1.6f, 0.0f};
  audio::Render north = audio::renderOffline(acousticWorld(false, false), renderConfig(deep, 0.0f, 2.5));
  audio::Render south = audio::renderOffline(acousticWorld(false, false), renderConfig(deep, audio::kPi, 2.5));
  double ildNorth = levelDb(north.samples, 1.0, 2.5, 0) - levelDb(north.samples, 1.0, 2.5, 1);
  double ildSouth = levelDb(south.samples, 1.0, 2.5, 0) - levelDb(south.samples, 1.0, 2.5, 1);
  MESSAGE("deep in the tunnel: left - right facing north " << ildNorth << " dB, facing south " << ildSouth << " dB");
  CHECK(ildNorth >= 3.0);
  CHECK(ildSouth <= -3.0);

  // One source outdoors, north-west of the mouth: inside, it comes from the mouth;
  // walking out, its apparent direction swings round to where it really is.
  const audio::Vec3f source{-8.0f, 1.5f, -10.0f};
  std::vector<audio::Vec3f> seen;
  for (float x : {20.0f, 12.0f, 5.0f, 1.0f, -3.0f}) {
    audio::Vec3f ear{x, 1.6f, 0.0f};
    audio::EmitterState s = heard(world, ear, source);
    audio::Vec3f truth{source.x - ear.x, source.y - ear.y, source.z - ear.z};
    audio::Vec3f mouth{0.0f - ear.x, 1.4f - ear.y, 0.0f - ear.z};
    MESSAGE("x " << x << ": " << angleDeg(s.direction, mouth) << " deg from the mouth, " << angleDeg(s.direction, truth)
                 << " deg from the source, mid gain " << s.bands[1]);
    if (x >= 5.0f) {
      CHECK(angleDeg(s.direction, mouth) <= 15.0f);
      CHECK(angleDeg(s.direction, truth) >= 15.0f);  // not from the source itself
    }
    if (x < 0.0f) CHECK(angleDeg(s.direction, truth) <= 10.0f);
    seen.push_back(s.direction);
  }
  CHECK(angleDeg(seen.front(), seen.back()) >= 30.0f);  // it shifted
}

TEST_CASE("walling the mouth up leaves only what passes through the rock") {
  const audio::Vec3f deep{16.0f, 1.6f, 0.0f};
  sim::SimState walledWorld = acousticWorld(false, true);
  audio::ListenerAcoustics acoustics(*walledWorld.materials, {});
  for (std::uint64_t u = 0; u < 8; ++u) acoustics.updateRoom(walledWorld.world, deep, u);
  CHECK(acoustics.estimate().openingCount == 0);
  audio::EmitterState s = heard(walledWorld, deep, {-8.0f, 1.5f, -10.0f});
  CHECK(s.bands[1] < 1e-3f);  // > 60 dB through rock
  // What gets through the rock loses more at high frequencies.
  audio::TransmissionTable table = audio::makeTransmissionTable(*walledWorld.materials);
  std::array<float, 3> loss = audio::straightLossDb(walledWorld.world, table, {-8.0f, 1.5f, -10.0f}, deep);
  CHECK(loss[2] > loss[0] + 10.0f);

  audio::Render open = audio::renderOffline(acousticWorld(false, false), renderConfig(deep, 0, 2.5));
  audio::Render walled = audio::renderOffline(acousticWorld(false, true), renderConfig(deep, 0, 2.5));
  double openDb = levelDb(open.samples, 1.0, 2.5), walledDb = levelDb(walled.samples, 1.0, 2.5);
  MESSAGE("tunnel open " << openDb << " dB, walled " << walledDb << " dB");
  CHECK(openDb - walledDb >= 30.0);
}

TEST_CASE("round a bend, outdoor sound comes round the corner, duller, from the corner") {
  const sim::SimState world = acousticWorld(false, false, true);
  const audio::Vec3f ear{21.2f, 1.6f, 8.0f}, source{-8.0f, 1.5f, -10.0f};
  audio::ListenerAcoustics acoustics(*world.materials, {});
  for (std::uint64_t u = 0; u < 8; ++u) acoustics.updateRoom(world.world, ear, u);
  const audio::RoomEstimate& room = acoustics.estimate();
  REQUIRE(room.openingCount >= 1);
  const audio::Opening& o = room.openings[0];
  CHECK(o.aroundCorners());
  // The first corner is where the side tunnel meets the main one; the last waypoint
  // is the mouth (x < 0.4 m, in the main tunnel's cross-section).
  const int last = o.waypointCount() - 1;
  const audio::Vec3f c = o.waypoint(0), m = o.waypoint(last);
  const audio::Vec3f corner{ear.x + c.x, ear.y + c.y, ear.z + c.z}, mouth{ear.x + m.x, ear.y + m.y, ear.z + m.z};
  MESSAGE("round the bend: " << o.waypointCount() << " waypoints, first corner (" << corner.x << ", " << corner.y << ", "
                             << corner.z << "), mouth (" << mouth.x << ", " << mouth.y << ", " << mouth.z << "), path "
                             << o.along(last) << " m");
  CHECK(corner.z < 2.4f);
  CHECK(corner.x >= 18.0f);
  CHECK(corner.x <= 23.0f);
  CHECK(mouth.x <= 0.4f);
  CHECK(std::fabs(mouth.z) <= 1.6f);

  audio::AcousticsConfig straightOnly;
  straightOnly.probe.cornerSearch = false;
  const audio::EmitterState round = heard(world, ear, source), rock = heard(world, ear, source, straightOnly);
  const auto dB = [](float g) { return 20.0 * std::log10(std::max(g, 1e-30f)); };
  MESSAGE("outdoor source heard round the bend: " << dB(round.bands[0]) << " / " << dB(round.bands[1]) << " / "
                                                  << dB(round.bands[2]) << " dB; through the rock only "
                                                  << dB(rock.bands[1]) << " dB mid; "
                                                  << angleDeg(round.direction, o.direction) << " deg from the corner");
  CHECK(dB(round.bands[1]) - dB(rock.bands[1]) >= 30.0);
  CHECK(dB(round.bands[1]) >= -50.0);
  CHECK(dB(round.bands[2]) <= dB(round.bands[0]) - 6.0);  // duller, not only quieter
  CHECK(angleDeg(round.direction, o.direction) <= 5.0f);
  CHECK(angleDeg(round.direction, {source.x - ear.x, source.y - ear.y, source.z - ear.z}) >= 30.0f);

  // A source in the main tunnel joins the path at the corner, not at the mouth (by
  // the mouth: a 37 m path for 13.8 m, about -43 dB mid; by the corner: 17 m, -28 dB).
  const audio::EmitterState inTunnel = heard(world, ear, {10.0f, 1.5f, 0.0f});
  MESSAGE("source in the main tunnel heard round the bend: " << dB(inTunnel.bands[1]) << " dB mid");
  CHECK(dB(inTunnel.bands[1]) >= -33.0);
  CHECK(angleDeg(inTunnel.direction, o.direction) <= 5.0f);

  // Walled mouth: no way out, round the bend or straight.
  const sim::SimState walled = acousticWorld(false, true, true);
  audio::ListenerAcoustics sealedIn(*walled.materials, {});
  for (std::uint64_t u = 0; u < 8; ++u) sealedIn.updateRoom(walled.world, ear, u);
  CHECK(sealedIn.estimate().openingCount == 0);

  // Rendered: the outdoors is heard in the side tunnel, and far less without corners.
  auto cfg = renderConfig(ear, 0, 2.5);
  const double withCorners = levelDb(audio::renderOffline(acousticWorld(false, false, true), cfg).samples, 1.0, 2.5);
  cfg.scene.acoustics.probe.cornerSearch = false;
  const double without = levelDb(audio::renderOffline(acousticWorld(false, false, true), cfg).samples, 1.0, 2.5);
  MESSAGE("side tunnel rendered: " << withCorners << " dB round corners, " << without << " dB straight only");
  CHECK(withCorners - without >= 15.0);
}

TEST_CASE("the rays' occupancy cache follows the world through worldChanged()") {
  // Tracking on: the cache is built at the first room update; then the mouth is walled
  // up. Reported, the room loses its opening; unreported, the stale cache still lets
  // the rays out (so the test would catch a missing report).
  sim::SimState world = acousticWorld(false, false);
  const sim::ChangeSubscriber worldChanges = world.world.subscribeChanges();
  const audio::Vec3f deep{16.0f, 1.6f, 0.0f};
  audio::ListenerAcoustics told(*world.materials, {}), untold(*world.materials, {});
  told.worldChanged(world.world, {});
  untold.worldChanged(world.world, {});
  std::uint64_t u = 0;
  for (; u < 8; ++u) {
    told.updateRoom(world.world, deep, u);
    untold.updateRoom(world.world, deep, u);
  }
  REQUIRE(told.estimate().openingCount >= 1);
  const sim::MaterialId stone = loam::test::mat("stone");
  for (int by = 0; by < 7; ++by)
    for (int bz = -4; bz < 4; ++bz) world.world.fillBrick({-1, by, bz}, stone);  // just outside the mouth
  const std::vector<sim::BrickCoord> changed = world.world.takeChanged(worldChanges);
  CHECK(changed.size() >= 56);
  told.worldChanged(world.world, changed);
  for (; u < 24; ++u) {
    told.updateRoom(world.world, deep, u);
    untold.updateRoom(world.world, deep, u);
  }
  CHECK(told.estimate().openingCount == 0);
  CHECK(untold.estimate().openingCount >= 1);
}

TEST_CASE("impulsive emitters get their own reflections off the tunnel's walls") {
  // Ears in the tunnel (walls at z = +-1.6 m); a footstep 4 m further in on the floor:
  // its first slaps come ~3 ms after it (its mirror images in the side walls: 5.3 m
  // against 4.2 m), sooner than the listener's own at its feet (3.5 m against 1.4 m:
  // 6 ms); a steady (not impulsive) emitter gets none.
  const sim::SimState world = acousticWorld(false, false);
  const audio::Vec3f ear{12.0f, 1.6f, 0.0f};
  audio::ListenerAcoustics acoustics(*world.materials, {});
  for (std::uint64_t u = 0; u < 4; ++u) acoustics.updateRoom(world.world, ear, u);
  audio::EmitterState step, hum, own;
  step.position = {16.0f, 0.2f, 0.0f};
  step.impulsive = true;
  hum.position = step.position;
  own.position = {ear.x, 0.2f, ear.z};
  own.impulsive = true;
  audio::EmitterState* states[3] = {&step, &hum, &own};
  acoustics.propagate(world.world, states);
  REQUIRE(step.tapCount >= 2);
  REQUIRE(own.tapCount >= 2);
  CHECK(hum.tapCount == 0);
  float firstStep = 1, firstOwn = 1;
  for (int i = 0; i < step.tapCount; ++i) firstStep = std::min(firstStep, step.taps[static_cast<std::size_t>(i)].delay);
  for (int i = 0; i < own.tapCount; ++i) firstOwn = std::min(firstOwn, own.taps[static_cast<std::size_t>(i)].delay);
  MESSAGE("tunnel: a footstep 4 m in slaps first after " << firstStep * 1000 << " ms, one's own after "
                                                         << firstOwn * 1000 << " ms");
  CHECK(firstStep < 0.005f);
  CHECK(firstOwn > firstStep + 0.002f);
}

TEST_CASE("after the first, room updates and propagation do not allocate (workers on, round a bend)") {
  // The side tunnel: rays, corner search, wall points, propagation of an outdoor and
  // an impulsive emitter, with one worker thread and the occupancy cache.
  sim::SimState world = acousticWorld(false, false, true);
  const audio::Vec3f ear{21.2f, 1.6f, 8.0f};
  audio::ListenerAcoustics acoustics(*world.materials, {});
  acoustics.worldChanged(world.world, {});
  audio::EmitterState outdoor, step;
  outdoor.position = {-8.0f, 1.5f, -10.0f};
  step.position = {21.2f, 0.2f, 6.0f};
  step.impulsive = true;
  audio::EmitterState* states[2] = {&outdoor, &step};
  acoustics.updateRoom(world.world, ear, 0);
  acoustics.propagate(world.world, states);
  loam::test::gAllocs = 0;
  loam::test::gCountAllocs = true;
  for (std::uint64_t u = 1; u < 12; ++u) {
    acoustics.updateRoom(world.world, ear, u);
    acoustics.propagate(world.world, states);
  }
  loam::test::gCountAllocs = false;
  CHECK(loam::test::gAllocs.load() == 0);
  CHECK(acoustics.estimate().openingCount >= 1);
  CHECK(step.tapCount >= 1);
}

TEST_CASE("leaves heard from inside the tunnel are muffled, not only quieter") {
  // The canopy is north-west of the mouth; the same distance to it inside and outside.
  const audio::Vec3f outside{-3.0f, 1.6f, 2.0f}, inside{4.0f, 1.6f, 0.0f};
  audio::Render out = audio::renderOffline(acousticWorld(false, false), renderConfig(outside, 0, 3.0));
  audio::Render in = audio::renderOffline(acousticWorld(false, false), renderConfig(inside, 0, 3.0));
  std::vector<float> o = monoTail(out.samples, 1.0), i = monoTail(in.samples, 1.0);
  double tiltOut = audio::bandShare(o, audio::kSampleRate, 3000, 12000) / audio::bandShare(o, audio::kSampleRate, 100, 600);
  double tiltIn = audio::bandShare(i, audio::kSampleRate, 3000, 12000) / audio::bandShare(i, audio::kSampleRate, 100, 600);
  MESSAGE("high/low energy outside " << 10 * std::log10(tiltOut) << " dB, inside " << 10 * std::log10(tiltIn) << " dB");
  CHECK(10.0 * std::log10(tiltOut / tiltIn) >= 6.0);
}

TEST_CASE("renders are bit-exact across runs and worker thread counts") {
  auto cfg = renderConfig({10.0f, 1.6f, 0.0f}, 0.3f, 1.0);
  cfg.engine.spatial = audio::Spatialisation::Binaural;
  cfg.scene.acoustics.workerThreads = 0;
  std::uint64_t one = audio::hashSamples(audio::renderOffline(acousticWorld(false, false), cfg).samples);
  std::uint64_t again = audio::hashSamples(audio::renderOffline(acousticWorld(false, false), cfg).samples);
  cfg.scene.acoustics.workerThreads = 3;
  std::uint64_t threaded = audio::hashSamples(audio::renderOffline(acousticWorld(false, false), cfg).samples);
  CHECK(one == again);
  CHECK(one == threaded);
}
