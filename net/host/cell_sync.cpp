#include "net/host/cell_sync.h"

#include <algorithm>
#include <cmath>

#include "net/protocol.h"
#include "net/wire.h"
#include "sim/systems/fire.h"
#include "sim/systems/water.h"

namespace loam::net::host {
namespace {

constexpr std::int32_t kCellUnits = sim::kCellBricks * sim::kBrickSize * sim::kUnitsPerVoxel;

}  // namespace

void CellSync::init(const sim::WorldBounds& b) {
  cellMinX_ = b.minBrick.x >> sim::kCellShift;
  cellMinZ_ = b.minBrick.z >> sim::kCellShift;
  cellsX_ = ((b.maxBrick.x - 1) >> sim::kCellShift) - cellMinX_ + 1;
  cellsZ_ = ((b.maxBrick.z - 1) >> sim::kCellShift) - cellMinZ_ + 1;
  cellVersion_.assign(static_cast<std::size_t>(cellsX_) * static_cast<std::size_t>(cellsZ_), 0);
}

std::int64_t CellSync::cellIndexOfVoxel(sim::VoxelCoord v) const noexcept {
  return cellIndex(sim::cellOf(sim::brickOf(v)));
}

std::int64_t CellSync::cellIndex(sim::CellCoord c) const noexcept {
  const std::int32_t x = c.x - cellMinX_, z = c.z - cellMinZ_;
  if (x < 0 || z < 0 || x >= cellsX_ || z >= cellsZ_) return -1;
  return std::int64_t{z} * cellsX_ + x;
}

sim::CellCoord CellSync::cellCoord(std::uint32_t index) const noexcept {
  return {cellMinX_ + static_cast<std::int32_t>(index % static_cast<std::uint32_t>(cellsX_)),
          cellMinZ_ + static_cast<std::int32_t>(index / static_cast<std::uint32_t>(cellsX_))};
}

std::int64_t CellSync::cellDistanceSquared(sim::Vec3i p, std::uint32_t index) const noexcept {
  const sim::CellCoord c = cellCoord(index);
  const std::int64_t x0 = std::int64_t{c.x} * kCellUnits, z0 = std::int64_t{c.z} * kCellUnits;
  const std::int64_t dx = p.x < x0 ? x0 - p.x : (p.x >= x0 + kCellUnits ? p.x - (x0 + kCellUnits - 1) : 0);
  const std::int64_t dz = p.z < z0 ? z0 - p.z : (p.z >= z0 + kCellUnits ? p.z - (z0 + kCellUnits - 1) : 0);
  return dx * dx + dz * dz;
}

std::uint64_t CellSync::peerCellTick(const Session& s, std::uint32_t cell) const {
  auto it = s.cellTicks.find(cell);
  return it == s.cellTicks.end() ? s.cellsTick : std::max(it->second, s.cellsTick);
}

/// Builds CellState for one cell into the core's builder: the merged pending records
/// (full = false; `water` / `fire` index pendingWater_ / pendingFire_) or the cell's
/// whole water and fire (full = true).
void CellSync::buildCellState(std::uint32_t cell, bool full, std::span<const CellRecord> water,
                              std::span<const CellRecord> fire) {
  waterRecs_.clear();
  fireRecs_.clear();
  const sim::CellCoord cc = cellCoord(cell);
  auto addWater = [&](const sim::WaterChange& w) {
    if (wire::WaterRec r; toWire(w, cc, r)) waterRecs_.push_back(r);
  };
  auto addFire = [&](const sim::FireCell& f) {
    if (wire::FireRec r; toWire(f, cc, r)) fireRecs_.push_back(r);
  };
  const sim::SimState& state = core_.state;
  if (full) {
    for (const sim::WaterChange& w : sim::waterInCell(state.water, cc)) addWater(w);
    for (const sim::FireCell& f : sim::fireInCell(state.fire, cc)) addFire(f);
  } else {
    for (const CellRecord& r : water) addWater(pendingWater_[r.index]);
    for (const CellRecord& r : fire) addFire(pendingFire_[r.index]);
  }
  flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
  fbb.Clear();
  auto cs = wire::CreateCellState(fbb, state.tick, cc.x, cc.z, full, fbb.CreateVectorOfStructs(waterRecs_),
                                  fbb.CreateVectorOfStructs(fireRecs_));
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::CellState, cs.Union()));
}

/// Keeps, per (cell, key), only the last record: the records are absolute values,
/// so the last one over the window is all a client needs.
void CellSync::keepLastPerKey(std::vector<CellRecord>& records) {
  std::sort(records.begin(), records.end());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const bool lastOfKey =
        i + 1 == records.size() || records[i + 1].cell != records[i].cell || records[i + 1].key != records[i].key;
    if (lastOfKey) records[kept++] = records[i];
  }
  records.resize(kept);
}

std::uint64_t CellSync::packVoxelKey(sim::VoxelCoord v) noexcept {
  const auto u = [](std::int32_t c) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(c) & 0x1fffffu); };
  return (u(v.x) << 42) | (u(v.y) << 21) | u(v.z);
}

// The water near a waterfall changes every tick; 10 Hz is plenty to draw and hear it.
void CellSync::sendIncremental(const sim::StepOutput& out) {
  const std::uint64_t T = core_.state.tick;
  const InterestConfig& interest = core_.config.interest;
  pendingWater_.insert(pendingWater_.end(), out.water.begin(), out.water.end());
  pendingFire_.insert(pendingFire_.end(), out.fire.begin(), out.fire.end());
  const auto every = static_cast<std::uint64_t>(std::max(interest.cellStateEvery, 1));
  if (T % every != 0) return;
  waterByCell_.clear();
  fireByCell_.clear();
  for (std::uint32_t i = 0; i < pendingWater_.size(); ++i) {
    const std::int64_t c = cellIndexOfVoxel(pendingWater_[i].voxel);
    if (c >= 0) waterByCell_.push_back({static_cast<std::uint32_t>(c), packVoxelKey(pendingWater_[i].voxel), i});
  }
  for (std::uint32_t i = 0; i < pendingFire_.size(); ++i) {
    const std::int64_t c = cellIndexOfVoxel(pendingFire_[i].corner);
    if (c >= 0) fireByCell_.push_back({static_cast<std::uint32_t>(c), packVoxelKey(pendingFire_[i].corner), i});
  }
  keepLastPerKey(waterByCell_);
  keepLastPerKey(fireByCell_);
  const std::int64_t reach2 = squaredUnits(interest.cellReachMetres);
  std::size_t wi = 0, fi = 0;
  while (wi < waterByCell_.size() || fi < fireByCell_.size()) {
    const std::uint32_t cell = std::min(wi < waterByCell_.size() ? waterByCell_[wi].cell : UINT32_MAX,
                                        fi < fireByCell_.size() ? fireByCell_[fi].cell : UINT32_MAX);
    std::size_t we = wi, fe = fi;
    while (we < waterByCell_.size() && waterByCell_[we].cell == cell) ++we;
    while (fe < fireByCell_.size() && fireByCell_[fe].cell == cell) ++fe;
    const std::uint64_t prev = cellVersion_[cell];
    cellVersion_[cell] = T;
    maxCellVersion_ = T;
    ENetPacket* packet = nullptr;
    for (Session& s : core_.sessions) {
      if (s.phase != Phase::Playing || !s.hasPos || s.joinTick >= T) continue;
      if (cellDistanceSquared(s.pos, cell) > reach2) continue;
      if (peerCellTick(s, cell) < prev) continue;  // behind: gets a full CellState instead
      if (!packet) {
        buildCellState(cell, false, std::span(waterByCell_).subspan(wi, we - wi),
                       std::span(fireByCell_).subspan(fi, fe - fi));
        packet = core_.packetFromBuilder(ENET_PACKET_FLAG_RELIABLE);
        if (!packet) break;
      }
      if (core_.send(s, kChannelReliable, packet, wire::ServerBody::CellState)) s.cellTicks[cell] = T;
    }
    HostCore::releaseIfUnsent(packet);
    wi = we;
    fi = fe;
  }
  pendingWater_.clear();
  pendingFire_.clear();
}

void CellSync::sendCatchUp(Session& s) {
  if (maxCellVersion_ <= s.cellsTick || s.tokens <= 0) return;
  const double reachMetres = core_.config.interest.cellReachMetres;
  const double reachU = unitsFromMetres(reachMetres);
  const std::int64_t reach2 = squaredUnits(reachMetres);
  const auto lo = [&](double u) { return static_cast<std::int32_t>(std::floor(u / kCellUnits)); };
  const std::int32_t x0 = std::max(lo(s.pos.x - reachU) - cellMinX_, 0);
  const std::int32_t x1 = std::min(lo(s.pos.x + reachU) - cellMinX_, cellsX_ - 1);
  const std::int32_t z0 = std::max(lo(s.pos.z - reachU) - cellMinZ_, 0);
  const std::int32_t z1 = std::min(lo(s.pos.z + reachU) - cellMinZ_, cellsZ_ - 1);
  staleCells_.clear();
  for (std::int32_t z = z0; z <= z1; ++z) {
    for (std::int32_t x = x0; x <= x1; ++x) {
      const auto cell = static_cast<std::uint32_t>(z * cellsX_ + x);
      const std::uint64_t v = cellVersion_[cell];
      if (v <= s.cellsTick) continue;
      const std::int64_t d2 = cellDistanceSquared(s.pos, cell);
      if (d2 > reach2 || peerCellTick(s, cell) >= v) continue;
      staleCells_.emplace_back(d2, cell);
    }
  }
  std::sort(staleCells_.begin(), staleCells_.end());
  for (const auto& [d2, cell] : staleCells_) {
    if (s.tokens <= 0) {
      core_.stats.budgetDeferred += 1;
      continue;
    }
    ENetPacket* packet = nullptr;
    for (const auto& [c, p] : fullCellPackets_) {
      if (c == cell) packet = p;
    }
    if (!packet) {
      buildCellState(cell, true, {}, {});
      packet = core_.packetFromBuilder(ENET_PACKET_FLAG_RELIABLE);
      if (!packet) return;
      fullCellPackets_.emplace_back(cell, packet);
    }
    if (core_.send(s, kChannelReliable, packet, wire::ServerBody::CellState)) s.cellTicks[cell] = core_.state.tick;
  }
}

void CellSync::endCatchUp() {
  for (const auto& [cell, packet] : fullCellPackets_) HostCore::releaseIfUnsent(packet);
  fullCellPackets_.clear();
}

}  // namespace loam::net::host
