// Water record codec (format in net/water_codec.h).
#include "net/water_codec.h"

#include <algorithm>
#include <limits>
#include <string>

#include "net/wire.h"

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

sim::Error fail(const char* what, std::size_t at) {
  return sim::makeError(std::string("water records: ") + what + " at byte " + std::to_string(at));
}

}  // namespace

void encodeCellWater(sim::CellCoord cell, std::span<const sim::WaterChange> water, std::vector<std::uint8_t>& out) {
  out.clear();
  std::vector<Keyed>& keyed = scratch();
  keyed.clear();
  for (const sim::WaterChange& w : water) {
    const std::int64_t x = std::int64_t{w.voxel.x} - std::int64_t{cell.x} * kCellVoxels;
    const std::int64_t z = std::int64_t{w.voxel.z} - std::int64_t{cell.z} * kCellVoxels;
    const std::int64_t y = std::int64_t{w.voxel.y} + 32768;
    if (x < 0 || x >= kCellVoxels || z < 0 || z >= kCellVoxels || y < 0 || y > 65535) continue;
    keyed.push_back({static_cast<std::uint32_t>((y << 16) | (z << 8) | x), w.amount});
  }
  // Stable, so of two records for one voxel the later stays last and is kept.
  std::stable_sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) { return a.key < b.key; });
  std::uint32_t prev = 0;
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    if (i + 1 < keyed.size() && keyed[i + 1].key == keyed[i].key) continue;
    std::uint32_t step = keyed[i].key - prev;
    prev = keyed[i].key;
    while (step >= 0x80) {
      out.push_back(static_cast<std::uint8_t>(step | 0x80));
      step >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(step));
    const std::uint32_t a = keyed[i].amount;
    out.push_back(static_cast<std::uint8_t>(std::min(a, kAmountEscape)));
    if (a >= kAmountEscape) out.push_back(static_cast<std::uint8_t>(a - kAmountEscape));
  }
}

sim::Result<void> decodeCellWater(std::span<const std::uint8_t> bytes, sim::CellCoord cell,
                                  std::vector<sim::WaterChange>& out, std::size_t maxRecords) {
  out.clear();
  std::size_t pos = 0;
  std::uint64_t key = 0;
  while (pos < bytes.size()) {
    if (out.size() == maxRecords) return fail("more records than allowed", pos);
    const std::size_t start = pos;
    std::uint64_t step = 0;
    for (int shift = 0;; shift += 7) {
      if (pos == bytes.size()) return fail("truncated key step", start);
      if (shift > 28) return fail("key step over five bytes", start);
      const std::uint8_t b = bytes[pos++];
      step |= std::uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) break;
    }
    if (step == 0 && !out.empty()) return fail("key not ascending", start);
    key += step;
    if (key > kMaxKey) return fail("key past 32 bits", start);
    if (pos == bytes.size()) return fail("truncated amount", pos);
    std::uint32_t amount = bytes[pos++];
    if (amount == kAmountEscape) {
      if (pos == bytes.size()) return fail("truncated amount", pos);
      amount += bytes[pos++];
    }
    if (amount > sim::kWaterPerVoxel) return fail("amount above a full voxel", start);
    sim::WaterChange w;
    w.voxel = {clampedVoxel(std::int64_t{cell.x} * kCellVoxels + static_cast<std::int64_t>(key & 0xff)),
               static_cast<std::int32_t>(key >> 16) - 32768,
               clampedVoxel(std::int64_t{cell.z} * kCellVoxels + static_cast<std::int64_t>((key >> 8) & 0xff))};
    w.amount = static_cast<std::uint16_t>(amount);
    out.push_back(w);
  }
  return sim::ok();
}

}  // namespace loam::net
