#include "sim/world/world_hash.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <xxhash.h>

#include "sim/world/brick_store.h"
#include "sim/world/internal/world_hash_combine.h"

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

// Per-thread stream for hashChunks (64 KB, allocated on a thread's first use).
HashStream& threadStream() {
  thread_local HashStream hs;
  return hs;
}

// XXH3-64 of little-endian uint64 values after a prefix, fed in blocks (the same
// digest as one call over the concatenation).
class U64Hasher {
 public:
  explicit U64Hasher(std::size_t totalBytes) : oneShot_(totalBytes <= sizeof buf_) {
    if (!oneShot_) XXH3_64bits_reset(&state_);
  }
  void put(const void* p, std::size_t n) {
    if (used_ + n > sizeof buf_) flush();
    std::memcpy(buf_ + used_, p, n);
    used_ += n;
  }
  void addU64(std::uint64_t v) {
    if (used_ + 8 > sizeof buf_) flush();
    putU64(buf_ + used_, v);
    used_ += 8;
  }
  std::uint64_t digest() {
    if (oneShot_) return XXH3_64bits(buf_, used_);
    flush();
    return XXH3_64bits_digest(&state_);
  }

 private:
  void flush() {
    LOAM_ASSERT(!oneShot_);
    XXH3_64bits_update(&state_, buf_, used_);
    used_ = 0;
  }
  bool oneShot_;
  std::size_t used_ = 0;
  std::uint8_t buf_[2048];
  XXH3_state_t state_;
};

// The dense list of content hashes of every chunk in the bounds, canonical order; a
// chunk that is not resident is air.
struct ContentChunks {
  ChunkCoord lo, hi;  // inclusive
  std::vector<std::uint64_t> hashes;
  std::size_t index(ChunkCoord c) const noexcept {
    const auto nx = static_cast<std::size_t>(hi.x - lo.x + 1), ny = static_cast<std::size_t>(hi.y - lo.y + 1);
    return static_cast<std::size_t>(c.x - lo.x) +
           nx * (static_cast<std::size_t>(c.y - lo.y) + ny * static_cast<std::size_t>(c.z - lo.z));
  }
};

ContentChunks contentChunks(const BrickStore& store) {
  const WorldBounds& b = store.bounds();
  ContentChunks cc;
  cc.lo = chunkOf(b.minBrick);
  cc.hi = chunkOf(BrickCoord{b.maxBrick.x - 1, b.maxBrick.y - 1, b.maxBrick.z - 1});
  const std::uint8_t airRec[2] = {'U', kAir};
  const std::uint64_t air = XXH3_64bits(airRec, sizeof airRec);
  HashStream& hs = threadStream();
  for (int z = cc.lo.z; z <= cc.hi.z; ++z)
    for (int y = cc.lo.y; y <= cc.hi.y; ++y)
      for (int x = cc.lo.x; x <= cc.hi.x; ++x) {
        const int i = store.chunkIndex(ChunkCoord{x, y, z});
        cc.hashes.push_back(i < 0 ? air : chunkHashWith(store, i, hs));
      }
  return cc;
}

std::uint64_t contentWorldHash(const WorldBounds& b, std::span<const std::uint64_t> chunkHashes) {
  std::uint8_t head[8 + 24];
  std::memcpy(head, "LOAMWH1\0", 8);
  std::int32_t v[6] = {b.minBrick.x, b.minBrick.y, b.minBrick.z, b.maxBrick.x, b.maxBrick.y, b.maxBrick.z};
  for (int k = 0; k < 6; ++k) putU32(head + 8 + 4 * k, static_cast<std::uint32_t>(v[k]));
  U64Hasher h(sizeof head + 8 * chunkHashes.size());
  h.put(head, sizeof head);
  for (std::uint64_t c : chunkHashes) h.addU64(c);
  return h.digest();
}

std::uint64_t contentCellHash(const ContentChunks& cc, CellCoord cell) {
  // The chunks of a cell: x and z in {2 * cell, 2 * cell + 1} (32 bricks = 2 chunks), clipped.
  const int x0 = std::max(2 * cell.x, cc.lo.x), x1 = std::min(2 * cell.x + 1, cc.hi.x);
  const int z0 = std::max(2 * cell.z, cc.lo.z), z1 = std::min(2 * cell.z + 1, cc.hi.z);
  const std::size_t chunks =
      x1 < x0 || z1 < z0 ? 0 : static_cast<std::size_t>((x1 - x0 + 1) * (z1 - z0 + 1) * (cc.hi.y - cc.lo.y + 1));
  U64Hasher h(8 + 8 * chunks);
  std::uint8_t head[8];
  putU32(head, static_cast<std::uint32_t>(cell.x));
  putU32(head + 4, static_cast<std::uint32_t>(cell.z));
  h.put(head, sizeof head);
  if (chunks == 0) return h.digest();
  for (int z = z0; z <= z1; ++z) {  // canonical order: z, y, x
    for (int y = cc.lo.y; y <= cc.hi.y; ++y) {
      for (int x = x0; x <= x1; ++x) h.addU64(cc.hashes[cc.index(ChunkCoord{x, y, z})]);
    }
  }
  return h.digest();
}

}  // namespace

namespace internal {

bool chunkChanged(const BrickStore& store, int slot) {
  if (!store.markedGenerated()) return store.chunkUniform(slot) != kAir;
  if (!store.chunkModified(slot)) return false;
  for (int local = 0; local < kChunkBricks * kChunkBricks * kChunkBricks; ++local)
    if (!store.brickMatchesGenerated(slot, local)) return true;
  return false;
}

std::uint64_t chunkTerm(ChunkCoord c, std::uint64_t contentHash) noexcept {
  std::uint8_t rec[8 + 12 + 8];
  std::memcpy(rec, "LOAMWC2\0", 8);
  putU32(rec + 8, static_cast<std::uint32_t>(c.x));
  putU32(rec + 12, static_cast<std::uint32_t>(c.y));
  putU32(rec + 16, static_cast<std::uint32_t>(c.z));
  putU64(rec + 20, contentHash);
  return XXH3_64bits(rec, sizeof rec);
}

std::uint64_t combineWorldHash(const TermSum& all) noexcept {
  std::uint8_t rec[8 + 16];
  std::memcpy(rec, "LOAMWH2\0", 8);
  putU64(rec + 8, all.sum);
  putU64(rec + 16, all.count);
  return XXH3_64bits(rec, sizeof rec);
}

std::uint64_t combineCellHash(CellCoord cell, const TermSum& inCell) noexcept {
  std::uint8_t rec[8 + 16];
  putU32(rec, static_cast<std::uint32_t>(cell.x));
  putU32(rec + 4, static_cast<std::uint32_t>(cell.z));
  putU64(rec + 8, inCell.sum);
  putU64(rec + 16, inCell.count);
  return XXH3_64bits(rec, sizeof rec);
}

}  // namespace internal

std::uint64_t chunkHash(const BrickStore& store, int chunkIndex) { return chunkHashWith(store, chunkIndex, threadStream()); }

std::uint64_t residentContentHash(const BrickStore& store) {
  HashStream& hs = threadStream();
  std::vector<std::uint64_t> words;
  words.reserve(static_cast<std::size_t>(store.chunkCount()) * 2 + 1);
  words.push_back(0x4c4f414d52454731ull);  // "LOAMREG1"
  for (int i : store.canonicalChunks()) {
    const ChunkCoord c = store.chunkCoord(i);
    // 21 bits per axis (the store's +-2^20 chunks), then the chunk's hash.
    words.push_back((std::uint64_t{static_cast<std::uint32_t>(c.x) & 0x1FFFFFu} << 42) |
                    (std::uint64_t{static_cast<std::uint32_t>(c.y) & 0x1FFFFFu} << 21) |
                    (static_cast<std::uint32_t>(c.z) & 0x1FFFFFu));
    words.push_back(chunkHashWith(store, i, hs));
  }
  return XXH3_64bits(words.data(), words.size() * sizeof(std::uint64_t));
}

WorldHashes hashWorld(const BrickStore& store) {
  internal::TermSum all;
  std::vector<std::pair<CellCoord, std::uint64_t>> terms;  // (cell, term) of changed chunks
  auto add = [&](const ChunkTerm& t) {
    all.add(t.term);
    terms.emplace_back(internal::cellOfChunk(t.chunk), t.term);
  };
  for (const ChunkTerm& t : changedChunkTerms(store)) add(t);
  internal::forEachStoredTerm(store, add);
  std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  WorldHashes out;
  out.world = internal::combineWorldHash(all);
  for (std::size_t k = 0; k < terms.size();) {
    const CellCoord cell = terms[k].first;
    internal::TermSum in;
    for (; k < terms.size() && terms[k].first == cell; ++k) in.add(terms[k].second);
    out.cells.push_back({cell, internal::combineCellHash(cell, in)});
  }
  return out;
}

std::vector<ChunkTerm> changedChunkTerms(const BrickStore& store) {
  std::vector<ChunkTerm> out;
  for (int i : store.canonicalChunks()) {
    if (!internal::chunkChanged(store, i)) continue;
    const ChunkCoord c = store.chunkCoord(i);
    out.push_back({c, internal::chunkTerm(c, chunkHash(store, i))});
  }
  std::sort(out.begin(), out.end(), [](const ChunkTerm& a, const ChunkTerm& b) { return a.chunk < b.chunk; });
  return out;
}

std::uint64_t worldHash(const BrickStore& store) { return hashWorld(store).world; }

std::vector<CellHash> cellHashes(const BrickStore& store) { return std::move(hashWorld(store).cells); }

WorldHashes hashContent(const BrickStore& store) {
  const ContentChunks cc = contentChunks(store);
  WorldHashes out;
  out.world = contentWorldHash(store.bounds(), cc.hashes);
  // Cells sorted by (x, z); every cell of the covered range holds at least one chunk.
  const CellCoord lo = internal::cellOfChunk(cc.lo), hi = internal::cellOfChunk(cc.hi);
  out.cells.reserve(static_cast<std::size_t>((hi.x - lo.x + 1) * (hi.z - lo.z + 1)));
  for (int x = lo.x; x <= hi.x; ++x) {
    for (int z = lo.z; z <= hi.z; ++z) out.cells.push_back({CellCoord{x, z}, contentCellHash(cc, CellCoord{x, z})});
  }
  return out;
}

WorldHashes hashColumns(const BrickStore& store, std::span<const ChunkColumn> columns) {
  std::vector<ChunkColumn> sorted(columns.begin(), columns.end());
  std::sort(sorted.begin(), sorted.end(), [](ChunkColumn a, ChunkColumn b) { return canonicalBefore(a, b); });
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const WorldBounds& b = store.bounds();
  const int y0 = chunkOf(b.minBrick).y, y1 = chunkOf(BrickCoord{b.minBrick.x, b.maxBrick.y - 1, b.minBrick.z}).y;
  const std::uint8_t airRec[2] = {'U', kAir};
  const std::uint64_t air = XXH3_64bits(airRec, sizeof airRec);
  // Every chunk of the columns with its hash, in canonical (z, y, x) order.
  struct Entry {
    ChunkCoord c;
    std::uint64_t hash;
  };
  std::vector<Entry> chunks;
  chunks.reserve(sorted.size() * static_cast<std::size_t>(y1 - y0 + 1));
  HashStream& hs = threadStream();
  for (const ChunkColumn col : sorted) {
    LOAM_ASSERT(store.columnPresent(col));
    for (int y = y0; y <= y1; ++y) {
      const ChunkCoord c{col.x, y, col.z};
      const int i = store.chunkIndex(c);
      chunks.push_back({c, i < 0 ? air : chunkHashWith(store, i, hs)});
    }
  }
  const auto canonical = [](const Entry& p, const Entry& q) {
    if (p.c.z != q.c.z) return p.c.z < q.c.z;
    if (p.c.y != q.c.y) return p.c.y < q.c.y;
    return p.c.x < q.c.x;
  };
  std::sort(chunks.begin(), chunks.end(), canonical);
  WorldHashes out;
  {
    U64Hasher h(8 + 20 * chunks.size());
    h.put("LOAMCC1\0", 8);
    for (const Entry& e : chunks) {
      std::uint8_t rec[12];
      putU32(rec, static_cast<std::uint32_t>(e.c.x));
      putU32(rec + 4, static_cast<std::uint32_t>(e.c.y));
      putU32(rec + 8, static_cast<std::uint32_t>(e.c.z));
      h.put(rec, sizeof rec);
      h.addU64(e.hash);
    }
    out.world = h.digest();
  }
  // Cells sorted by (x, z); a stable sort keeps each cell's chunks in canonical order.
  std::stable_sort(chunks.begin(), chunks.end(), [](const Entry& p, const Entry& q) {
    return internal::cellOfChunk(p.c) < internal::cellOfChunk(q.c);
  });
  for (std::size_t k = 0; k < chunks.size();) {
    const CellCoord cell = internal::cellOfChunk(chunks[k].c);
    std::size_t end = k;
    while (end < chunks.size() && internal::cellOfChunk(chunks[end].c) == cell) ++end;
    U64Hasher h(8 + 8 * (end - k));
    std::uint8_t head[8];
    putU32(head, static_cast<std::uint32_t>(cell.x));
    putU32(head + 4, static_cast<std::uint32_t>(cell.z));
    h.put(head, sizeof head);
    for (; k < end; ++k) h.addU64(chunks[k].hash);
    out.cells.push_back({cell, h.digest()});
  }
  return out;
}

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
