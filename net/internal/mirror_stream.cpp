#include "net/internal/mirror_stream.h"

#include <algorithm>
#include <utility>

#include "sim/gen/generator.h"

namespace loam::net::internal {

namespace {

constexpr std::size_t kMaxTeleportsKept = 64;

}  // namespace

// The streamed mirror: only the spawn columns now, the rest as the player nears it
// (updateStream). Runs on the worker thread.
sim::Result<sim::SimState> MirrorStream::streamState(const sim::Scene& scene, std::uint64_t seedValue,
                                                     const ClientConfig& config) {
  sim::StreamOptions options;
  options.threads = std::max(config.streamThreads, 1);
  options.prefetchRadiusVoxels = static_cast<std::int32_t>(config.streamRadiusMetres * sim::kVoxelsPerMetre);
  // Never fewer than twice the columns within the stream radius: a smaller budget
  // would release what the workers just generated ahead (a far view thrashing).
  const double columnMetres = static_cast<double>(sim::kChunkBricks * sim::kBrickSize) / sim::kVoxelsPerMetre;
  const double across = config.streamRadiusMetres / columnMetres;
  const auto disc = static_cast<std::size_t>(3.1416 * across * across);
  options.maxResidentColumns = std::max(config.residentColumns, 2 * disc);
  options.hashColumns = true;
  auto made = sim::ColumnStreamer::create(scene, seedValue, options);
  if (!made) return made.error();
  streamer_ = std::move(made).value();
  return sim::createMirrorState(scene, seedValue, *streamer_);
}

// Every service() while Playing on a streamed world: generate ahead around the
// predicted player, adopt what the workers finished, release beyond the budget, make
// sure the ground around the player is present and see whether the readable disc is.
void MirrorStream::updateStream(sim::SimState& mirror, const sim::PlayerState& own, ClientStats& stats) {
  if (!streamer_) return;
  const std::int32_t vx = own.position.x >> sim::kUnitShift, vz = own.position.z >> sim::kUnitShift;
  centres_.assign(1, sim::StreamCentre{vx, vz});
  // After a teleport the ground comes first, before update() re-plans the workers
  // around the new place (they would generate the same columns again), and is no
  // hole streaming left: teleportPlayableMs times it.
  if (teleportedAt_) (void)holdAround(mirror, vx, vz);
  streamer_->update(mirror.world, centres_);
  stats.holesMet += holdAround(mirror, vx, vz);
  readable_ = allPresent(mirror, vx, vz, kReadableRadiusMetres);
  noteTeleportPlayable(stats);
  stats.stream = streamer_->stats();
}

// A teleport's time to playable: the ground around the new place is present now (or,
// on a mirror from worldFactory, at once).
void MirrorStream::noteTeleportPlayable(ClientStats& stats) {
  if (!teleportedAt_) return;
  if (stats.teleportPlayableMs.size() < kMaxTeleportsKept) stats.teleportPlayableMs.push_back(msSince(*teleportedAt_));
  teleportedAt_.reset();
}

// Generates on this thread the columns within kGroundRadiusMetres of (vx, vz) that
// are not present yet (all of them at once, on the streamer's threads). Returns how
// many.
std::size_t MirrorStream::holdAround(sim::SimState& mirror, std::int32_t vx, std::int32_t vz) {
  const auto radius = static_cast<std::int32_t>(kGroundRadiusMetres * sim::kVoxelsPerMetre);
  std::vector<sim::ChunkColumn> missing;
  for (sim::ChunkColumn c : sim::columnsAround(mirror.world.bounds(), vx, vz, radius))
    if (!mirror.world.columnPresent(c)) missing.push_back(c);
  if (!missing.empty()) streamer_->faultAll(missing, mirror.world);
  return missing.size();
}

// True when every column within radiusMetres of (vx, vz) is present.
bool MirrorStream::allPresent(const sim::SimState& mirror, std::int32_t vx, std::int32_t vz,
                              double radiusMetres) const {
  const auto radius = static_cast<std::int32_t>(radiusMetres * sim::kVoxelsPerMetre);
  for (sim::ChunkColumn c : sim::columnsAround(mirror.world.bounds(), vx, vz, radius))
    if (!mirror.world.columnPresent(c)) return false;
  return true;
}

}  // namespace loam::net::internal
