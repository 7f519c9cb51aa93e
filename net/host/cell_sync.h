// CellSync: water and fire reach clients per interest cell (32 x 32 bricks in plan,
// 12.8 m; sim::cellOf). Changes are merged over InterestConfig::cellStateEvery ticks
// and sent as one incremental CellState per changed cell, encoded once and shared by
// the peers in reach that are up to date with that cell; a peer that is behind on a
// cell in reach (it just joined, or came near) gets the cell's whole water and fire
// instead, nearest cells first, within its byte budget. Internal to ServerHost
// (net/server_host.cpp and net/host/).
#pragma once

#include <enet/enet.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "net/host/host_core.h"
#include "sim/systems/streams.h"

namespace loam::net::host {

class CellSync {
 public:
  explicit CellSync(HostCore& core) noexcept : core_(core) {}

  /// Lays the interest cell grid over the world's bounds (once, at open).
  void init(const sim::WorldBounds& bounds);

  /// Takes this step's water and fire changes; on a flush tick sends the merged
  /// incremental CellStates to the peers in reach that are up to date.
  void sendIncremental(const sim::StepOutput& out);

  /// Full CellStates for the cells in reach s is behind on, nearest first, while its
  /// budget lasts. Each cell's packet is built once per tick and shared.
  void sendCatchUp(Session& s);
  /// Ends the tick's catch-up: releases the shared full-cell packets nobody took.
  void endCatchUp();

 private:
  /// (cell, key, record index) of a pending change; sorted, the last record per key wins.
  struct CellRecord {
    std::uint32_t cell;
    std::uint64_t key;
    std::uint32_t index;
    auto operator<=>(const CellRecord&) const = default;
  };

  std::int64_t cellIndexOfVoxel(sim::VoxelCoord v) const noexcept;
  /// The dense index of a cell, or -1 outside the grid.
  std::int64_t cellIndex(sim::CellCoord c) const noexcept;
  sim::CellCoord cellCoord(std::uint32_t index) const noexcept;
  /// Squared plan distance from a position to the nearest point of a cell.
  std::int64_t cellDistanceSquared(sim::Vec3i p, std::uint32_t index) const noexcept;
  /// The tick of the cell's state the peer holds.
  std::uint64_t peerCellTick(const Session& s, std::uint32_t cell) const;
  void buildCellState(std::uint32_t cell, bool full, std::span<const CellRecord> water,
                      std::span<const CellRecord> fire);
  static void keepLastPerKey(std::vector<CellRecord>& records);
  static std::uint64_t packVoxelKey(sim::VoxelCoord v) noexcept;

  HostCore& core_;
  // The grid: dense over the world's bounds.
  std::int32_t cellMinX_ = 0, cellMinZ_ = 0, cellsX_ = 0, cellsZ_ = 0;
  std::vector<std::uint64_t> cellVersion_;  ///< tick of the last water / fire change per cell
  std::uint64_t maxCellVersion_ = 0;
  // Changes since the last flush, in order.
  std::vector<sim::WaterChange> pendingWater_;
  std::vector<sim::FireCell> pendingFire_;
  // Scratch (capacity reused).
  std::vector<CellRecord> waterByCell_, fireByCell_;
  std::vector<wire::WaterRec> waterRecs_;
  std::vector<wire::FireRec> fireRecs_;
  std::vector<std::pair<std::uint32_t, ENetPacket*>> fullCellPackets_;  ///< built this tick
  std::vector<std::pair<std::int64_t, std::uint32_t>> staleCells_;
};

}  // namespace loam::net::host
