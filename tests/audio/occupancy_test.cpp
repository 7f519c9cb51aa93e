// BrickOccupancy over a streamed world (glade, generated a column at a time by a
// ColumnStreamer): as columns are released behind a walking player the store renumbers
// its chunk slots, and the occupancy's bits must follow them (followSlots) for the rays
// to stay identical to rays traced without the bits.
#include <doctest/doctest.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "audio/room_probe.h"
#include "sim/gen/column_streamer.h"
#include "sim/gen/scene.h"

using namespace loam;
using namespace loam::audio;

namespace {

bool sameHit(const RayHit& a, const RayHit& b) {
  return std::memcmp(&a.distance, &b.distance, sizeof(float)) == 0 &&
         std::memcmp(&a.foliageStart, &b.foliageStart, sizeof(float)) == 0 &&
         std::memcmp(&a.foliageDepth, &b.foliageDepth, sizeof(float)) == 0 && a.material == b.material &&
         a.normalAxis == b.normalAxis && a.normalSign == b.normalSign &&
         std::memcmp(&a.sky, &b.sky, sizeof(float)) == 0 && std::memcmp(&a.leftRoofAt, &b.leftRoofAt, sizeof(float)) == 0;
}

/// Bricks of resident chunks that hold matter although occ says they do not (the
/// tracer asks occ about every chunk that is not all air, collapsed ones included).
int wrongBits(const sim::BrickStore& world, const BrickOccupancy& occ) {
  int wrong = 0;
  for (int i = 0; i < world.chunkCount(); ++i)
    for (int local = 0; local < 4096; ++local)
      if (!occ.mayHoldMatter(i, local) && !world.brickInChunk(i, local).isAir()) ++wrong;
  return wrong;
}

/// The columns cx0..cx1, cz0..cz1 (inclusive).
std::vector<sim::ChunkColumn> columns(int cx0, int cx1, int cz0, int cz1) {
  std::vector<sim::ChunkColumn> out;
  for (int cz = cz0; cz <= cz1; ++cz)
    for (int cx = cx0; cx <= cx1; ++cx) out.push_back({cx, cz});
  return out;
}

}  // namespace

TEST_CASE("occupancy: follows a streamed store's slots as columns are released; rays stay identical") {
  auto loaded = sim::loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml");
  REQUIRE_MESSAGE(loaded.has_value(), (loaded ? "" : loaded.error().message));
  const sim::Scene glade = std::move(loaded).value();
  auto streamer = sim::ColumnStreamer::create(glade, 1, sim::StreamOptions{.threads = 1});
  REQUIRE(streamer.has_value());
  sim::BrickStore world(glade.worldBounds, sim::makeCoarseLut(*glade.materials));
  world.markGenerated();
  world.setColumnSource(streamer->get());
  const sim::ChangeSubscriber sub = world.subscribeChanges();
  const AcousticTable table = makeAcousticTable(*glade.materials);

  // The player's disc: chunk columns -5..4 on both axes (glade's chunks are 6.4 m).
  (*streamer)->faultAll(columns(-5, 4, -5, 4), world);
  BrickOccupancy occ(world);
  world.clearChanged(sub);

  ProbeConfig config;
  config.rays = 1024;
  std::vector<Vec3f> dirs(static_cast<std::size_t>(config.rays));
  std::vector<RayHit> plain(dirs.size()), fast(dirs.size());
  // Listeners 1.7 m over the first voxel that stops sound, looking down from the top.
  auto listenerAt = [&](float x, float z) {
    const int vx = static_cast<int>(x * sim::kVoxelsPerMetre), vz = static_cast<int>(z * sim::kVoxelsPerMetre);
    int vy = glade.worldBounds.maxBrick.y * sim::kBrickSize - 1;
    while (vy > glade.worldBounds.minBrick.y * sim::kBrickSize && !table.stops[world.get(vx, vy, vz)]) --vy;
    return Vec3f{x, static_cast<float>(vy + 1) / sim::kVoxelsPerMetre + 1.7f, z};
  };
  // Every ray from every listener, with and without the bits; returns rays that differ.
  auto differingRays = [&](std::span<const Vec3f> listeners) {
    int differ = 0;
    for (std::uint64_t update = 0; update < 3; ++update) {
      makeRayDirections(config, update, dirs);
      for (const Vec3f& o : listeners) {
        traceRays(world, table, o, dirs, 0, config.rays, config.maxDistance, plain);
        traceRays(world, table, o, dirs, 0, config.rays, config.maxDistance, fast, &occ);
        for (std::size_t i = 0; i < dirs.size(); ++i) differ += sameHit(plain[i], fast[i]) ? 0 : 1;
      }
    }
    return differ;
  };

  // Before anything moves the bits are right (the documented property).
  const std::vector<Vec3f> listeners{listenerAt(0, 0), listenerAt(8, -6), listenerAt(-10, 10), listenerAt(14, 12),
                                     listenerAt(-4, -12)};
  CHECK(differingRays(listeners) == 0);
  CHECK(wrongBits(world, occ) == 0);

  // 1. The player walks north: the southern rows (first in canonical order, so every
  //    other chunk moves to a lower slot) are released.
  const std::uint64_t epoch = world.slotEpoch();
  CHECK(world.releaseColumns(columns(-5, 4, -5, -4)) == 20);
  CHECK(world.slotEpoch() != epoch);
  const BrickOccupancy stale = occ;
  occ.followSlots(world);
  CHECK(occ.slotEpoch() == world.slotEpoch());
  // The release did move slots under the bits: unfollowed, they call ground air.
  CHECK(wrongBits(world, stale) > 0);
  CHECK(wrongBits(world, occ) == 0);
  CHECK(differingRays(listeners) == 0);

  // 2. Columns arrive in the north (new slots past the known ones, then refreshed from
  //    the change bits), then the western columns go (interleaved with the kept ones in
  //    canonical order).
  (*streamer)->faultAll(columns(-5, 4, 5, 6), world);
  for (const sim::BrickCoord& b : world.takeChanged(sub)) occ.refresh(world, b);
  CHECK(occ.slotEpoch() == world.slotEpoch());
  CHECK(world.releaseColumns(columns(-5, -4, -3, 6)) == 20);
  occ.followSlots(world);
  CHECK(wrongBits(world, occ) == 0);
  const std::vector<Vec3f> north{listenerAt(0, 20), listenerAt(10, 30), listenerAt(-12, 36)};
  CHECK(differingRays(listeners) == 0);
  CHECK(differingRays(north) == 0);

  // 3. The northernmost row goes and comes straight back (new slots) before the bits
  //    follow: its chunks keep their bits (it held generated content only). Then an
  //    edit in a column that came back, refreshed from the change bits.
  CHECK(world.releaseColumns(columns(-3, 4, 5, 6)) == 16);
  (*streamer)->faultAll(columns(-3, 4, 6, 6), world);
  occ.followSlots(world);
  CHECK(wrongBits(world, occ) == 0);
  CHECK(differingRays(listeners) == 0);
  (*streamer)->faultAll(columns(-5, -4, 0, 2), world);
  for (int y = 0; y < 60; ++y) world.set(sim::VoxelCoord{-500, y, 60}, 1);
  for (const sim::BrickCoord& b : world.takeChanged(sub)) occ.refresh(world, b);
  CHECK(wrongBits(world, occ) == 0);
  CHECK(differingRays(listeners) == 0);
}
