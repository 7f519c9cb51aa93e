#include "net/host/cell_sync.h"

#include <algorithm>
#include <cmath>

#include "net/edit_codec.h"
#include "net/host_log.h"
#include "net/protocol.h"
#include "net/stream_codec.h"
#include "net/water_codec.h"
#include "net/wire.h"
#include "sim/step/mirror.h"
#include "sim/gen/generator_version.h"
#include "sim/systems/fire.h"
#include "sim/systems/water.h"

namespace loam::net::host {
namespace {

/// Whole cells built per tick, at most, for all peers: a griefed cell costs about a
/// millisecond to capture and compress, and this runs on the step thread.
constexpr std::size_t kMaxFullCellsPerTick = 4;

constexpr std::int32_t kCellUnits = sim::kCellBricks * sim::kBrickSize * sim::kUnitsPerVoxel;

using sim::cellKey;
using sim::cellOfKey;

std::uint64_t cellKeyOfVoxel(sim::VoxelCoord v) noexcept { return cellKey(sim::cellOf(sim::brickOf(v))); }

}  // namespace

void CellSync::init(const sim::WorldHashTracker& tracker) {
  tracker_ = &tracker;
  const sim::BrickStore& world = core_.state.world;
  world.forEachModified([&](sim::BrickCoord b) { cellVersion_[cellKey(sim::cellOf(b))] = 1; });
  // A world database's columns that are not loaded hold edits too (their chunks' terms).
  if (const sim::StoredColumns* stored = world.storedColumns()) {
    for (const sim::ChunkTerm& t : stored->terms()) {
      const sim::BrickCoord corner{t.chunk.x * sim::kChunkBricks, 0, t.chunk.z * sim::kChunkBricks};
      cellVersion_[cellKey(sim::cellOf(corner))] = 1;
    }
  }
}

std::uint64_t CellSync::version(std::uint64_t cell) const noexcept {
  auto it = cellVersion_.find(cell);
  return it == cellVersion_.end() ? 0 : it->second;
}

std::uint64_t CellSync::peerCellTick(const Session& s, std::uint64_t cell) {
  auto it = s.cellTicks.find(cell);
  return it == s.cellTicks.end() ? s.cellsTick : std::max(it->second, s.cellsTick);
}

bool CellSync::inReach(const Session& s, sim::CellCoord cell) noexcept {
  return sim::cellDistanceSquared(s.pos, cell) <= squaredUnits(s.reachMetres);
}

bool CellSync::follows(Session& s, std::uint64_t cell, std::uint64_t prev, std::uint64_t T) const {
  if (s.phase != Phase::Playing || !s.hasPos || s.joinTick >= T) return false;
  if (!inReach(s, cellOfKey(cell))) return false;
  if (peerCellTick(s, cell) < prev) {
    s.catchUpDue = true;  // behind: gets the whole cell instead
    return false;
  }
  return true;
}

std::span<const std::uint32_t> CellSync::groupsOf(std::size_t index) const noexcept {
  return index < sessionGroups_.size() ? std::span<const std::uint32_t>(sessionGroups_[index])
                                       : std::span<const std::uint32_t>();
}

void CellSync::routeEdits(const sim::StepOutput& out) {
  const std::uint64_t T = core_.state.tick;
  sessionGroups_.resize(core_.sessions.size());
  for (std::vector<std::uint32_t>& g : sessionGroups_) g.clear();
  groupCount_ = 0;
  if (out.edits.empty() && out.fire.empty()) return;
  for (const StepCells::Cell& c : stepCells_.group(out)) {
    if (groups_.size() == groupCount_) groups_.emplace_back();
    EditGroup& g = groups_[groupCount_];
    g.cell = c.cell;
    g.hash = tracker_->cellHash(core_.state.world, c.cell);
    encodeEdits(c.edits, c.fire, T, g.bytes);
    const std::uint64_t key = cellKey(c.cell);
    std::uint64_t& v = cellVersion_[key];
    const std::uint64_t prev = v;
    v = T;
    for (Session& s : core_.sessions) {
      if (!follows(s, key, prev, T)) continue;
      sessionGroups_[core_.indexOf(s)].push_back(static_cast<std::uint32_t>(groupCount_));
      s.cellTicks[key] = T;
    }
    ++groupCount_;
  }
}

/// Builds a full CellState for one cell into the core's builder.
bool CellSync::buildFullCellState(sim::CellCoord cell) {
  fireRecs_.clear();
  const sim::SimState& state = core_.state;
  water_ = sim::waterInCell(state.water, cell);
  for (const sim::FireChange& f : sim::fireInCell(state.fire, cell)) {
    if (wire::FireRec r; toWire(f, cell, r)) fireRecs_.push_back(r);
  }
  std::vector<std::uint8_t> bricks;
  sim::captureCellBricks(state.world, cell, cellBricks_.bricks);
  if (!cellBricks_.bricks.empty()) {
    cellBricks_.header.identity = {state.sceneHash, state.seed, sim::kGeneratorVersion};
    cellBricks_.header.tick = state.tick;
    cellBricks_.bounds = state.world.bounds();
    auto encoded = sim::encodeSave(cellBricks_);
    if (!encoded) {
      hostLog("cell (%d, %d): could not encode its bricks: %s", cell.x, cell.z, encoded.error().message.c_str());
      return false;
    }
    bricks = std::move(*encoded);
  }
  const std::uint64_t hash = tracker_->cellHash(state.world, cell);
  flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
  fbb.Clear();
  encodeCellWater(cell, water_, waterBytes_);
  auto waterVec = waterBytes_.empty() ? 0 : fbb.CreateVector(waterBytes_);  // absent when empty
  auto fireVec = fireRecs_.empty() ? 0 : fbb.CreateVectorOfStructs(fireRecs_);
  auto bricksVec = bricks.empty() ? 0 : fbb.CreateVector(bricks);
  auto cs = wire::CreateCellState(fbb, state.tick, cell.x, cell.z, true, waterVec, fireVec, bricksVec, hash);
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::CellState, cs.Union()));
  return true;
}

/// Keeps, per voxel, only the last record: the records are absolute amounts, so
/// the last one over the window is all a client needs.
void CellSync::keepLastPerVoxel(std::vector<WaterRecord>& records) {
  std::sort(records.begin(), records.end());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const bool lastOfVoxel =
        i + 1 == records.size() || records[i + 1].cell != records[i].cell || records[i + 1].voxel != records[i].voxel;
    if (lastOfVoxel) records[kept++] = records[i];
  }
  records.resize(kept);
}

std::uint64_t CellSync::packVoxelKey(sim::VoxelCoord v) noexcept {
  const auto u = [](std::int32_t c) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(c) & 0x1fffffu); };
  return (u(v.x) << 42) | (u(v.y) << 21) | u(v.z);
}

// The water near a waterfall changes every tick; 10 Hz is plenty to draw and hear it.
// (Fire goes with the step's edits: followers burn their cells themselves.)
void CellSync::sendIncremental(const sim::StepOutput& out) {
  const std::uint64_t T = core_.state.tick;
  pendingWater_.insert(pendingWater_.end(), out.water.begin(), out.water.end());
  const auto every = static_cast<std::uint64_t>(std::max(core_.config.interest.cellStateEvery, 1));
  if (T % every != 0) return;
  waterByCell_.clear();
  for (std::uint32_t i = 0; i < pendingWater_.size(); ++i) {
    const sim::VoxelCoord v = pendingWater_[i].voxel;
    waterByCell_.push_back({cellKeyOfVoxel(v), packVoxelKey(v), i});
  }
  keepLastPerVoxel(waterByCell_);
  leaveOutUnchangedWater();
  for (std::size_t wi = 0; wi < waterByCell_.size();) {
    const std::uint64_t cell = waterByCell_[wi].cell;
    std::size_t we = wi;
    while (we < waterByCell_.size() && waterByCell_[we].cell == cell) ++we;
    std::uint64_t& v = cellVersion_[cell];
    const std::uint64_t prev = v;
    v = T;
    SharedMessage packed;  // encoded once for every client that follows the cell
    std::uint32_t rawSize = 0;
    for (Session& s : core_.sessions) {
      if (!follows(s, cell, prev, T)) continue;
      if (!packed) {
        water_.clear();
        for (std::size_t i = wi; i < we; ++i) water_.push_back(pendingWater_[waterByCell_[i].index]);
        encodeCellWater(cellOfKey(cell), water_, waterBytes_);
        auto bytes = std::make_shared<std::vector<std::uint8_t>>();
        rawSize = packWater(waterBytes_, *bytes);
        packed = std::move(bytes);
      }
      queueWater(s, cellOfKey(cell), rawSize, packed);
      s.cellTicks[cell] = T;
    }
    wi = we;
  }
  pendingWater_.clear();
}

// A fall's water rocks by a unit or two from tick to tick: a third of its voxels are
// back at the amount the last flush left them by the next one. Every client following
// the cell holds that amount (it had the last flush, or its cell was behind and comes
// whole), except one sent the cell whole since the last flush, which holds the amount
// of that tick: those cells keep every record.
void CellSync::leaveOutUnchangedWater() {
  std::sort(fullSinceFlush_.begin(), fullSinceFlush_.end());
  nextFlushAmounts_.clear();
  std::size_t kept = 0;
  for (const WaterRecord& r : waterByCell_) {
    const std::uint16_t amount = pendingWater_[r.index].amount;
    nextFlushAmounts_.emplace(r.voxel, amount);
    const auto it = flushAmounts_.find(r.voxel);
    const bool unchanged = it != flushAmounts_.end() && it->second == amount &&
                           !std::binary_search(fullSinceFlush_.begin(), fullSinceFlush_.end(), r.cell);
    if (!unchanged) waterByCell_[kept++] = r;
  }
  core_.stats.waterRecordsLeftOut += waterByCell_.size() - kept;
  waterByCell_.resize(kept);
  std::swap(flushAmounts_, nextFlushAmounts_);
  fullSinceFlush_.clear();
}

void CellSync::sendCatchUp(Session& s) {
  if (s.tokens <= 0 || cellVersion_.empty()) return;
  // Which cells are in reach changes only as the player moves (by a voxel or more).
  const bool moved = std::abs(s.pos.x - s.catchUpPos.x) >= sim::kUnitsPerVoxel ||
                     std::abs(s.pos.z - s.catchUpPos.z) >= sim::kUnitsPerVoxel;
  if (!moved && !s.catchUpDue) return;
  s.catchUpPos = s.pos;
  s.catchUpDue = false;
  const double reachU = unitsFromMetres(s.reachMetres);
  const std::int64_t reach2 = squaredUnits(s.reachMetres);
  const auto lo = [&](double u) { return static_cast<std::int32_t>(std::floor(u / kCellUnits)); };
  const std::int32_t x0 = lo(s.pos.x - reachU), x1 = lo(s.pos.x + reachU);
  const std::int32_t z0 = lo(s.pos.z - reachU), z1 = lo(s.pos.z + reachU);
  staleCells_.clear();
  for (std::int32_t z = z0; z <= z1; ++z) {
    for (std::int32_t x = x0; x <= x1; ++x) {
      const sim::CellCoord c{x, z};
      const std::uint64_t key = cellKey(c);
      const std::uint64_t v = version(key);
      if (v <= s.cellsTick) continue;
      const std::int64_t d2 = sim::cellDistanceSquared(s.pos, c);
      if (d2 > reach2 || peerCellTick(s, key) >= v) continue;
      staleCells_.emplace_back(d2, key);
    }
  }
  std::sort(staleCells_.begin(), staleCells_.end());
  s.cellsBehind = static_cast<std::uint32_t>(staleCells_.size());
  for (const auto& [d2, cell] : staleCells_) {
    if (s.tokens <= 0) {
      core_.stats.budgetDeferred += 1;
      s.catchUpDue = true;  // the rest next tick
      continue;
    }
    ENetPacket* packet = nullptr;
    for (const auto& [c, p] : fullCellPackets_) {
      if (c == cell) packet = p;
    }
    if (!packet) {
      if (fullCellPackets_.size() >= kMaxFullCellsPerTick) {
        s.catchUpDue = true;  // the step thread's share is spent: next tick
        break;
      }
      if (!buildFullCellState(cellOfKey(cell))) continue;
      packet = core_.packetFromBuilder(ENET_PACKET_FLAG_RELIABLE);
      if (!packet) return;
      fullCellPackets_.emplace_back(cell, packet);
      fullSinceFlush_.push_back(cell);
    }
    if (core_.send(s, kChannelReliable, packet, wire::ServerBody::CellState)) {
      queueFullStateMark(s);  // where the client applies it among the stream's items
      s.cellTicks[cell] = core_.state.tick;
      --s.cellsBehind;
    } else {
      s.catchUpDue = true;
    }
  }
}

void CellSync::endCatchUp() {
  for (const auto& [cell, packet] : fullCellPackets_) HostCore::releaseIfUnsent(packet);
  fullCellPackets_.clear();
}

}  // namespace loam::net::host
