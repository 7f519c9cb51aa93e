// The fire system's replicated record outside the step: the state codec's "fire"
// blob (FireCell by kFireCellFields, then the server's ignition data), catch-up per
// interest cell, the hash and the difference report.
#include <algorithm>

#include "sim/core/internal/format.h"
#include "sim/systems/fire.h"
#include "sim/systems/weather.h"
#include "sim/world/brick_store.h"

namespace loam::sim {

namespace {

constexpr std::size_t kFireBytes = encodedSize(kFireCellFields) + 4 + 1 + 1 + 1 + 2;
constexpr std::uint8_t kBlobUniformBit = 1;   // blob flags: the brick burns to one material
constexpr std::uint8_t kBlobNoWorkBit = 0x80;  // blob flags: no ignition data (a mirror's state)

std::uint64_t keyOf(VoxelCoord v) { return packCoordId(v.x, v.y, v.z); }

// Parses a fire blob into fire.cells and, parallel to them, the saved ignition data
// in fire.work (rebuildFireWork's hints).
Result<void> parseFire(std::span<const std::uint8_t> bytes, FireState& fire, const BrickStore& world) {
  ByteReader r(bytes, "fire");
  const std::uint32_t n = r.header(kFireBytes);
  std::vector<FireCell> cells;
  std::vector<FireWork> hints;
  cells.reserve(n);
  hints.reserve(n);
  for (std::uint32_t k = 0; k < n && r.ok(); ++k) {
    FireCell f;
    readFields(r, f, kFireCellFields);
    FireWork h;
    h.start = r.u32();
    h.peak = r.u8();
    const std::uint8_t flags = r.u8();
    h.result = r.u8();
    h.exposure = r.u16();
    if (!r.ok()) break;
    if (flags & kBlobNoWorkBit) {
      h.peak = 0;  // no ignition data: estimated on restore
    } else if ((flags & ~kBlobUniformBit) != 0 || h.start > f.endTick || h.peak == 0 || h.exposure > kExposureOpen) {
      r.fail(internal::format("cell %u: bad ignition data", k));
    }
    h.flags = (flags & kBlobUniformBit) ? kFireUniform : 0;
    hints.push_back(h);
    const VoxelCoord c = f.corner;
    // packCoordId needs each coordinate in its range: only corners inside the world
    // are packed (the world's bounds are far inside that range).
    if ((c.x | c.y | c.z) & (kBrickSize - 1)) {
      r.fail(internal::format("cell %u: (%d,%d,%d) is not a brick corner", k, c.x, c.y, c.z));
    } else if (!world.bounds().containsVoxel(c)) {
      r.fail(internal::format("cell %u: (%d,%d,%d) outside the world", k, c.x, c.y, c.z));
    } else if (f.intensity == 0) {
      r.fail(internal::format("cell %u: intensity 0", k));
    } else if (!cells.empty() && keyOf(cells.back().corner) >= keyOf(c)) {
      r.fail(internal::format("cell %u: cells not in increasing order", k));
    } else if (cells.size() >= kMaxFireCells) {
      r.fail("more than kMaxFireCells cells");
    }
    cells.push_back(f);
  }
  if (Result<void> e = r.finish(); !e) return e;
  fire.cells = std::move(cells);
  fire.work = std::move(hints);
  return {};
}

}  // namespace

void encodeFire(const FireState& fire, std::vector<std::uint8_t>& out) {
  ByteWriter w(out);
  w.header(static_cast<std::uint32_t>(fire.cells.size()));
  const bool work = fire.work.size() == fire.cells.size();
  for (std::size_t i = 0; i < fire.cells.size(); ++i) {
    writeFields(w, fire.cells[i], kFireCellFields);
    if (work) {
      const FireWork& f = fire.work[i];
      w.u32(f.start);
      w.u8(f.peak);
      w.u8((f.flags & kFireUniform) ? kBlobUniformBit : 0);
      w.u8(f.result);
      w.u16(f.exposure);
    } else {
      w.u32(0);
      w.u8(0);
      w.u8(kBlobNoWorkBit);
      w.u8(0);
      w.u16(0);
    }
  }
}

Result<void> decodeFire(std::span<const std::uint8_t> bytes, FireState& fire, const BrickStore& world) {
  if (Result<void> e = parseFire(bytes, fire, world); !e) return e;
  // Working data consistent with the cells, so the state is safe to step; a server's
  // restoreFire rebuilds it with the world's seed and tick instead.
  std::uint32_t tick = 0;
  for (const FireWork& w : fire.work) tick = std::max(tick, w.start);
  rebuildFireWork(fire, world, 0, tick);
  return {};
}

Result<void> restoreFire(std::span<const std::uint8_t> bytes, FireState& fire, const BrickStore& world,
                         std::uint64_t seed, std::uint32_t tick) {
  if (Result<void> e = parseFire(bytes, fire, world); !e) return e;
  rebuildFireWork(fire, world, seed, tick);
  return {};
}

std::vector<FireChange> fireInCell(const FireState& fire, CellCoord cell) {
  std::vector<FireChange> out;
  for (std::size_t i = 0; i < fire.cells.size() && i < fire.work.size(); ++i) {
    const FireCell& c = fire.cells[i];
    const FireWork& w = fire.work[i];
    if (!(cellOf(brickOf(c.corner)) == cell)) continue;
    out.push_back(FireChange{c.corner, w.start, c.endTick, w.peak, static_cast<std::uint8_t>(w.flags & kFireUniform),
                             w.result});
  }
  return out;
}

void hashFire(const FireState& state, StateHasher& h) {
  h.add(static_cast<std::uint64_t>(state.cells.size()));
  for (const FireCell& c : state.cells) hashFields(h, c, kFireCellFields);
}

std::optional<std::string> diffFire(const FireState& e, const FireState& a) {
  const std::size_t n = std::min(e.cells.size(), a.cells.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (auto d = firstDifferentField(e.cells[i], a.cells[i], kFireCellFields)) {
      const VoxelCoord c = e.cells[i].corner;
      return internal::format("fire.cells[%zu] (%d,%d,%d) %s: expected %lld, actual %lld", i, c.x, c.y, c.z,
                              d->name.c_str(), static_cast<long long>(d->expected), static_cast<long long>(d->actual));
    }
  }
  if (e.cells.size() != a.cells.size()) {
    return internal::format("fire.cells.size: expected %zu, actual %zu", e.cells.size(), a.cells.size());
  }
  return std::nullopt;
}

}  // namespace loam::sim
