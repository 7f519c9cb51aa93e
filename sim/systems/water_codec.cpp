// The water system's state outside the step: the state codec's "water" blob and
// catch-up per interest cell.
#include "sim/core/internal/format.h"
#include "sim/core/state_bytes.h"
#include "sim/systems/water.h"
#include "sim/world/brick_store.h"

namespace loam::sim {

namespace {
constexpr std::size_t kWaterMinBytes = 12 + 64 + 2;
}  // namespace

void encodeWater(const WaterState& water, std::vector<std::uint8_t>& out) {
  const internal::WaterGrid& g = water.grid;
  // The blob's size is known from the wet counts; reserving it saves the vector's
  // regrowth copies. Only modified bricks: the rest is implicit (water_grid.h).
  std::size_t bytes = 5;
  for (const std::uint32_t slot : g.sorted()) {
    const internal::WaterBrick& b = g.brick(slot);
    if (b.modified && b.wet != 0) bytes += 12 + 64 + 2 * std::size_t{b.wet};
  }
  out.reserve(out.size() + bytes);
  ByteWriter w(out);
  const std::size_t countAt = w.size() + 1;
  w.header(0);  // the count is known after the walk
  std::uint32_t n = 0;
  for (const std::uint32_t slot : g.sorted()) {
    const internal::WaterBrick& b = g.brick(slot);
    if (!b.modified || b.wet == 0) continue;
    ++n;
    w.vec(Vec3i{b.coord.x, b.coord.y, b.coord.z});
    std::uint64_t mask[8] = {};
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (b.amount[i] > 0) mask[i >> 6] |= std::uint64_t{1} << (i & 63u);
    }
    for (std::uint64_t word : mask) w.u64(word);
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (b.amount[i] > 0) w.u16(b.amount[i]);
    }
  }
  w.patchU32(countAt, n);
}

Result<void> decodeWater(std::span<const std::uint8_t> bytes, WaterState& water, const BrickStore& world) {
  ByteReader r(bytes, "water");
  const std::uint32_t n = r.header(kWaterMinBytes);
  std::vector<WaterChange> voxels;
  std::uint64_t lastKey = 0;
  for (std::uint32_t k = 0; k < n && r.ok(); ++k) {
    const Vec3i c = r.vec();
    const BrickCoord bc{c.x, c.y, c.z};
    if (r.ok() && !world.bounds().containsBrick(bc)) {
      r.fail(internal::format("brick (%d,%d,%d) outside the world", c.x, c.y, c.z));
    }
    if (!r.ok()) break;
    const std::uint64_t key = packCoordId(bc.x, bc.y, bc.z);
    if (k > 0 && key <= lastKey) r.fail(internal::format("brick %u: bricks not in increasing order", k));
    lastKey = key;
    std::uint64_t mask[8];
    bool any = false;
    for (std::uint64_t& word : mask) {
      word = r.u64();
      any = any || word != 0;
    }
    if (r.ok() && !any) r.fail(internal::format("brick %u: no wet voxel", k));
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels) && r.ok(); ++i) {
      if (!((mask[i >> 6] >> (i & 63u)) & 1u)) continue;
      const std::uint16_t a = r.u16();
      if (r.ok() && (a == 0 || a > kWaterPerVoxel)) r.fail(internal::format("brick %u: amount %u", k, unsigned{a}));
      voxels.push_back(WaterChange{voxelOfBrick(bc, i), a});
    }
  }
  if (Result<void> e = r.finish(); !e) return e;
  if (water.grid.bounds().maxBrick == BrickCoord{} && water.grid.brickCount() == 0) {
    water.grid.reset(world.bounds());  // a default-constructed state
  }
  restoreWaterVoxels(water, world, voxels);
  return {};
}

std::vector<WaterChange> waterInCell(const WaterState& water, CellCoord cell) {
  std::vector<WaterChange> out;
  const internal::WaterGrid& g = water.grid;
  for (const std::uint32_t slot : g.sorted()) {
    const internal::WaterBrick& b = g.brick(slot);
    if (!b.modified || b.wet == 0 || cellOf(b.coord) != cell) continue;
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (b.amount[i] != 0) out.push_back(WaterChange{voxelOfBrick(b.coord, i), b.amount[i]});
    }
  }
  return out;
}

}  // namespace loam::sim
