// Water record codec (format in net/water_codec.h).
#include "net/water_codec.h"

#include <algorithm>
#include <limits>

#include "net/wire.h"
#include "sim/core/state_bytes.h"

namespace loam::net {

namespace {

constexpr std::int32_t kCellVoxels = sim::kCellBricks * sim::kBrickSize;  // 256
constexpr std::uint32_t kAmountEscape = 255;
constexpr std::uint64_t kMaxKey = std::numeric_limits<std::uint32_t>::max();

struct Keyed {
  std::uint32_t key;
  std::uint16_t amount;
};

std::vector<Keyed>& scratch() {
  thread_local std::vector<Keyed> s;
  return s;
}

}  // namespace

void encodeCellWater(sim::CellCoord cell, std::span<const sim::WaterChange> water, std::vector<std::uint8_t>& out) {
  out.clear();
  sim::ByteWriter w(out);
  std::vector<Keyed>& keyed = scratch();
  keyed.clear();
  for (const sim::WaterChange& c : water) {
    const std::int64_t x = std::int64_t{c.voxel.x} - std::int64_t{cell.x} * kCellVoxels;
    const std::int64_t z = std::int64_t{c.voxel.z} - std::int64_t{cell.z} * kCellVoxels;
    const std::int64_t y = std::int64_t{c.voxel.y} + 32768;
    if (x < 0 || x >= kCellVoxels || z < 0 || z >= kCellVoxels || y < 0 || y > 65535) continue;
    keyed.push_back({static_cast<std::uint32_t>((y << 16) | (z << 8) | x), c.amount});
  }
  // Stable, so of two records for one voxel the later stays last and is kept.
  std::stable_sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) { return a.key < b.key; });
  std::uint32_t prev = 0;
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    if (i + 1 < keyed.size() && keyed[i + 1].key == keyed[i].key) continue;
    w.varint(keyed[i].key - prev);
    prev = keyed[i].key;
    const std::uint32_t a = keyed[i].amount;
    w.u8(static_cast<std::uint8_t>(std::min(a, kAmountEscape)));
    if (a >= kAmountEscape) w.u8(static_cast<std::uint8_t>(a - kAmountEscape));
  }
}

sim::Result<void> decodeCellWater(std::span<const std::uint8_t> bytes, sim::CellCoord cell,
                                  std::vector<sim::WaterChange>& out, std::size_t maxRecords) {
  out.clear();
  sim::ByteReader r(bytes, "water records");
  std::uint64_t key = 0;
  while (r.ok() && r.left() > 0) {
    if (out.size() == maxRecords) r.fail("more records than allowed");
    const std::uint64_t step = r.varint();
    if (step == 0 && !out.empty()) r.fail("keys not ascending");
    key += step;
    if (key > kMaxKey) r.fail("a key past 32 bits");
    std::uint32_t amount = r.u8();
    if (amount == kAmountEscape) amount += r.u8();
    if (amount > sim::kWaterPerVoxel) r.fail("an amount above a full voxel");
    if (!r.ok()) break;
    sim::WaterChange c;
    c.voxel = {clampedVoxel(std::int64_t{cell.x} * kCellVoxels + static_cast<std::int64_t>(key & 0xff)),
               static_cast<std::int32_t>(key >> 16) - 32768,
               clampedVoxel(std::int64_t{cell.z} * kCellVoxels + static_cast<std::int64_t>((key >> 8) & 0xff))};
    c.amount = static_cast<std::uint16_t>(amount);
    out.push_back(c);
  }
  return r.finish();
}

}  // namespace loam::net
