#include "sim/world_hash.h"

#include <cstring>
#include <map>
#include <xxhash.h>

#include "sim/brick_store.h"

namespace loam::sim {

namespace {

void putU32(std::uint8_t* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

void putU64(std::uint8_t* p, std::uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

/// Streams bytes into XXH3 through a buffer, so small records cost a memcpy.
class HashStream {
 public:
  HashStream() {
    XXH3_64bits_reset(&state_);
    buf_.resize(kBufBytes);
  }
  void put(const void* p, std::size_t n) {
    if (used_ + n > kBufBytes) flush();
    std::memcpy(buf_.data() + used_, p, n);
    used_ += n;
  }
  /// Space for n bytes at the end of the buffer (n <= 1024).
  std::uint8_t* reserve(std::size_t n) {
    if (used_ + n > kBufBytes) flush();
    std::uint8_t* p = buf_.data() + used_;
    used_ += n;
    return p;
  }
  /// Gives back the last n bytes of the most recent reserve().
  void unreserve(std::size_t n) { used_ -= n; }
  std::uint64_t digest() {
    flush();
    return XXH3_64bits_digest(&state_);
  }
  void reset() {
    XXH3_64bits_reset(&state_);
    used_ = 0;
  }

 private:
  static constexpr std::size_t kBufBytes = 64 * 1024;
  void flush() {
    if (used_) XXH3_64bits_update(&state_, buf_.data(), used_);
    used_ = 0;
  }
  XXH3_state_t state_;
  std::vector<std::uint8_t> buf_;
  std::size_t used_ = 0;
};

std::uint64_t chunkHashWith(const BrickStore& store, int i, HashStream& hs) {
  if (std::optional<MaterialId> m = store.chunkUniform(i)) {
    std::uint8_t rec[2] = {'U', *m};
    return XXH3_64bits(rec, sizeof rec);
  }
  hs.reset();
  for (int local = 0; local < kChunkBricks * kChunkBricks * kChunkBricks; ++local) {
    BrickView v = store.brickInChunk(i, local);
    if (v.isUniform()) {
      std::uint8_t* p = hs.reserve(2);
      p[0] = 0;
      p[1] = v.uniformMaterial();
      continue;
    }
    std::uint8_t* p = hs.reserve(BrickView::kMaxPackedBytes);
    hs.unreserve(BrickView::kMaxPackedBytes - v.packCanonical(p));
  }
  return hs.digest();
}

}  // namespace

std::uint64_t chunkHash(const BrickStore& store, int chunkIndex) {
  HashStream hs;
  return chunkHashWith(store, chunkIndex, hs);
}

WorldHashes hashWorld(const BrickStore& store) {
  HashStream hs;
  std::vector<std::uint64_t> chunkHashes(static_cast<std::size_t>(store.chunkCount()));
  for (int i = 0; i < store.chunkCount(); ++i) chunkHashes[static_cast<std::size_t>(i)] = chunkHashWith(store, i, hs);

  WorldHashes out;
  {
    HashStream world;
    std::uint8_t head[8 + 24];
    std::memcpy(head, "LOAMWH1\0", 8);
    const WorldBounds& b = store.bounds();
    std::int32_t v[6] = {b.minBrick.x, b.minBrick.y, b.minBrick.z, b.maxBrick.x, b.maxBrick.y, b.maxBrick.z};
    for (int k = 0; k < 6; ++k) putU32(head + 8 + 4 * k, static_cast<std::uint32_t>(v[k]));
    world.put(head, sizeof head);
    for (std::uint64_t h : chunkHashes) putU64(world.reserve(8), h);
    out.world = world.digest();
  }

  // Cells: group chunk hashes by cell, keeping canonical chunk order inside each.
  std::map<CellCoord, std::vector<std::uint64_t>> cells;
  for (int i = 0; i < store.chunkCount(); ++i) {
    ChunkCoord cc = store.chunkCoord(i);
    CellCoord cell = cellOf(BrickCoord{cc.x * kChunkBricks, 0, cc.z * kChunkBricks});
    cells[cell].push_back(chunkHashes[static_cast<std::size_t>(i)]);
  }
  out.cells.reserve(cells.size());
  for (const auto& [cell, hashes] : cells) {
    HashStream h;
    std::uint8_t* p = h.reserve(8);
    putU32(p, static_cast<std::uint32_t>(cell.x));
    putU32(p + 4, static_cast<std::uint32_t>(cell.z));
    for (std::uint64_t ch : hashes) putU64(h.reserve(8), ch);
    out.cells.push_back({cell, h.digest()});
  }
  return out;
}

std::uint64_t worldHash(const BrickStore& store) { return hashWorld(store).world; }

std::vector<CellHash> cellHashes(const BrickStore& store) { return std::move(hashWorld(store).cells); }

std::vector<CellCoord> differingCells(const std::vector<CellHash>& a, const std::vector<CellHash>& b) {
  std::vector<CellCoord> out;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].cell < b[j].cell)) {
      out.push_back(a[i++].cell);
    } else if (i == a.size() || b[j].cell < a[i].cell) {
      out.push_back(b[j++].cell);
    } else {
      if (a[i].hash != b[j].hash) out.push_back(a[i].cell);
      ++i;
      ++j;
    }
  }
  return out;
}

std::vector<CellCoord> differingCells(const BrickStore& a, const BrickStore& b) {
  return differingCells(cellHashes(a), cellHashes(b));
}

}  // namespace loam::sim
