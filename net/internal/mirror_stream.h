// MirrorStream: the columns of a ClientConnection's streamed mirror. It owns the
// sim::ColumnStreamer the mirror is made with (streamState) and works on that mirror,
// a sim::SimState its owner holds and passes to every call. The rules it keeps:
// - the ground disc: every column within kGroundRadiusMetres of the predicted player
//   is present whenever updateStream returns (what the streamer has not generated
//   ahead is generated on the caller: holdAround), and after a join;
// - the readable disc: readable() says whether every column within
//   kReadableRadiusMetres was present at the last updateStream (worldReadable());
// - every column generated is hashed as generated (on the thread that generates
//   it), for the server's check (takeColumnHashes).
// It also times a teleport until the ground disc around the new place is present
// (ClientStats::teleportPlayableMs). A mirror from worldFactory has no streamer: then
// streaming() is false, readable() true, and only the teleport timing does anything.
//
// Thread: streamState on the worker thread that makes the mirror (the owner reads the
// streamer only after the worker published its results); everything else on the
// owner's. Used by ClientConnection alone (net/internal/client_impl.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "net/client_connection.h"
#include "net/internal/client_clock.h"
#include "sim/core/result.h"
#include "sim/gen/column_streamer.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"

namespace loam::net::internal {

class MirrorStream {
 public:
  /// The streamed mirror for scene and seed: only the spawn columns now, the rest as
  /// the player nears it (updateStream); keeps the streamer it is made with. Errors:
  /// the streamer's. Runs on the worker thread; allocates.
  sim::Result<sim::SimState> streamState(const sim::Scene& scene, std::uint64_t seedValue,
                                         const ClientConfig& config);

  /// True once streamState made the mirror (false for a mirror from worldFactory).
  bool streaming() const noexcept { return streamer_ != nullptr; }
  /// True when every column within kReadableRadiusMetres of the player was present at
  /// the last updateStream; always for a mirror that is not streamed.
  bool readable() const noexcept { return !streamer_ || readable_; }

  /// Every service() while Playing (does nothing unless streaming()): see the .cpp.
  /// Adds to stats' holesMet, teleportPlayableMs and sets stats.stream.
  void updateStream(sim::SimState& mirror, const sim::PlayerState& own, ClientStats& stats);
  /// Generates on this thread the missing columns within kGroundRadiusMetres of
  /// (vx, vz) (voxels); returns how many. Only while streaming().
  std::size_t holdAround(sim::SimState& mirror, std::int32_t vx, std::int32_t vz);

  /// Moves the hashes of the columns generated since the last call into out (the
  /// server checks them: ColumnHashes). Nothing unless streaming().
  void takeColumnHashes(std::vector<sim::GeneratedColumnHash>& out) {
    if (streamer_) streamer_->takeColumnHashes(out);
  }

  /// A Snapshot moved the own player (a server teleport) at `at`: timed until the
  /// ground around the new place is present (noteTeleportPlayable).
  void teleported(Clock::time_point at) noexcept { teleportedAt_ = at; }
  /// Records the time since the last teleport in stats.teleportPlayableMs (the first
  /// 64), if one is being timed. updateStream calls it; a mirror that is not streamed
  /// calls it at once.
  void noteTeleportPlayable(ClientStats& stats);

 private:
  bool allPresent(const sim::SimState& mirror, std::int32_t vx, std::int32_t vz, double radiusMetres) const;

  // The streamed mirror's generator (null for a mirror from worldFactory). Made on
  // the worker thread with the state, used on the owner's.
  std::unique_ptr<sim::ColumnStreamer> streamer_;
  std::vector<sim::StreamCentre> centres_;       // the predicted player's column
  bool readable_ = false;                        // worldReadable()
  std::optional<Clock::time_point> teleportedAt_;
};

}  // namespace loam::net::internal
