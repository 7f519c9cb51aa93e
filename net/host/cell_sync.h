// CellSync: the world reaches clients per interest cell (32 x 32 bricks in plan,
// 12.8 m; sim::cellOf), and only the cells within a peer's reach (Hello.reach_metres,
// capped by InterestConfig::cellReachMetres) that it is up to date with:
//   - a step's edits and fire records are grouped by cell, each group encoded once
//     with the cell's hash (routeEdits); StepBatchSender puts a peer's groups in its
//     StepBatch (the fire's own edits stay out: followers make them, the hash checks);
//   - water changes are merged over InterestConfig::cellStateEvery ticks and
//     sent as one Stream water item per changed cell, encoded once and shared;
//     a voxel back at the amount of the previous flush is left out;
//   - a peer that is behind on a cell in reach (it just joined, came near, or held
//     the cell's columns while the cell changed out of its reach) gets the cell's
//     whole state instead: its changed bricks, water and fire and its hash, nearest
//     cells first, within its byte budget.
// Per cell the server keeps the tick of its last change (sparse: changed cells only),
// per peer the tick of each cell it holds; a fire 3 km away costs a client nothing.
// Internal to ServerHost (net/server_host.cpp and net/host/).
#pragma once

#include <enet/enet.h>

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "net/edit_codec.h"
#include "net/host/host_core.h"
#include "sim/save/save.h"
#include "sim/step/world_hash_tracker.h"
#include "sim/systems/streams.h"

namespace loam::net::host {

/// One step's edits in one cell, encoded once (net/edit_codec.h), with the cell's
/// hash after the step.
struct EditGroup {
  sim::CellCoord cell;
  std::uint64_t hash = 0;
  std::vector<std::uint8_t> bytes;
};

class CellSync {
 public:
  explicit CellSync(HostCore& core) noexcept : core_(core) {}

  /// At open: the cells that hold changed bricks already (a restored world, loaded or
  /// still in its database) get version 1, so every full client (which starts at 0) is
  /// sent them whole. tracker
  /// (kept up to date by the owner) gives the cells' hashes; it must outlive this.
  void init(const sim::WorldHashTracker& tracker);

  /// The step's follower edit log (sim::followerEdits) and fire records grouped by
  /// cell (ascending; also the cells only the fire's own edits changed), each
  /// encoded once, and who gets which: the playing peers in reach that are up to
  /// date with the cell (their tick of it becomes this one). Call after the step and
  /// the tracker's update, before sendIncremental.
  void routeEdits(const sim::StepOutput& out);
  std::span<const EditGroup> editGroups() const noexcept { return std::span(groups_).first(groupCount_); }
  /// The groups (indices into editGroups(), ascending) session `index` gets this step.
  std::span<const std::uint32_t> groupsOf(std::size_t index) const noexcept;

  /// Takes this step's water changes; on a flush tick sends the merged
  /// water items to the peers in reach that are up to date.
  void sendIncremental(const sim::StepOutput& out);

  /// Full CellStates for the cells in reach s is behind on, nearest first, while its
  /// budget lasts. Each cell's packet is built once per tick and shared. Scans only
  /// when the player moved or something may have left it behind.
  void sendCatchUp(Session& s);
  /// Ends the tick's catch-up: releases the shared full-cell packets nobody took.
  void endCatchUp();

  /// Whether `cell` is within s's reach: its changes and events are s's business.
  static bool inReach(const Session& s, sim::CellCoord cell) noexcept;

 private:
  /// A pending water change: (cell, voxel, index into pendingWater_); sorted, the
  /// last record per voxel wins.
  struct WaterRecord {
    std::uint64_t cell;   ///< cellKey
    std::uint64_t voxel;  ///< packVoxelKey
    std::uint32_t index;
    auto operator<=>(const WaterRecord&) const = default;
  };

  /// Whether s gets cell's changes at tick T: in reach and up to date with the
  /// version before them (a peer in reach that is behind is due a catch-up).
  bool follows(Session& s, std::uint64_t cell, std::uint64_t prev, std::uint64_t T) const;
  std::uint64_t version(std::uint64_t cell) const noexcept;
  /// The tick of the cell's state the peer holds.
  static std::uint64_t peerCellTick(const Session& s, std::uint64_t cell);
  /// Builds a full CellState into the core's builder: the cell's whole state (bricks,
  /// water, burning cells and hash). False when the cell's bricks cannot be encoded.
  /// (The water changes between go as Stream water items: sendIncremental.)
  bool buildFullCellState(sim::CellCoord cell);
  static void keepLastPerVoxel(std::vector<WaterRecord>& records);
  /// Drops from waterByCell_ the voxels whose amount equals the last flush's.
  void leaveOutUnchangedWater();
  static std::uint64_t packVoxelKey(sim::VoxelCoord v) noexcept;

  HostCore& core_;
  const sim::WorldHashTracker* tracker_ = nullptr;
  std::unordered_map<std::uint64_t, std::uint64_t> cellVersion_;  ///< cellKey -> tick of its last change
  // This step's edit groups (groups_ keeps capacity beyond groupCount_) and who gets them.
  std::vector<EditGroup> groups_;
  std::size_t groupCount_ = 0;
  std::vector<std::vector<std::uint32_t>> sessionGroups_;  ///< by session index
  StepCells stepCells_;
  // Water changes since the last flush, in order.
  std::vector<sim::WaterChange> pendingWater_;
  // The amounts of the last flush's voxels (packVoxelKey; sent or left out), and the
  // cells sent whole since it.
  std::unordered_map<std::uint64_t, std::uint16_t> flushAmounts_, nextFlushAmounts_;
  std::vector<std::uint64_t> fullSinceFlush_;
  // Scratch (capacity reused).
  std::vector<WaterRecord> waterByCell_;
  std::vector<sim::WaterChange> water_;
  std::vector<std::uint8_t> waterBytes_;
  std::vector<wire::FireRec> fireRecs_;
  sim::SaveData cellBricks_;
  std::vector<std::pair<std::uint64_t, ENetPacket*>> fullCellPackets_;  ///< built this tick
  std::vector<std::pair<std::int64_t, std::uint64_t>> staleCells_;
};

}  // namespace loam::net::host
