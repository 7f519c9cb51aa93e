#include "sim/world/brick_store.h"

#include <algorithm>
#include <cstring>

namespace loam::sim {

using internal::BrickEntry;
using internal::ChunkData;
using internal::countsOffset;
using internal::kChunkBrickCount;
using internal::kMixedSlotBase;
using internal::kNoOffset;
using internal::minimalBitsLog2;
using internal::paletteCap;
using internal::paletteOffset;
using internal::readCount;
using internal::readIndex;
using internal::recordBytes;

namespace {

// Bit sets per chunk: one per change subscriber slot, then "modified". Every slot is
// marked whether handed out yet or not, so a late subscriber still sees every change
// since markGenerated().
constexpr int kModifiedSet = kMaxChangeSubscribers;
constexpr std::uint8_t kAllSets = static_cast<std::uint8_t>((1u << (kMaxChangeSubscribers + 1)) - 1u);

void writeCount(std::uint8_t* rec, unsigned k, unsigned c, std::uint16_t v) noexcept {
  std::memcpy(rec + countsOffset(k) + 2 * c, &v, 2);
}

void writeIndex(std::uint8_t* rec, unsigned k, unsigned i, unsigned idx) noexcept {
  unsigned bitPos = i << k;
  unsigned mask = (1u << (1u << k)) - 1u;
  std::uint8_t& byte = rec[bitPos >> 3];
  byte = static_cast<std::uint8_t>((byte & ~(mask << (bitPos & 7u))) | (idx << (bitPos & 7u)));
}

bool allEqual(const MaterialId* v, std::size_t n) noexcept {
  MaterialId first = v[0];
  unsigned diff = 0;
  for (std::size_t i = 0; i < n; ++i) diff |= static_cast<unsigned>(v[i] ^ first);
  return diff == 0;
}

}  // namespace

// ---- construction -----------------------------------------------------------------

bool BrickStore::validBounds(const WorldBounds& b) noexcept {
  const BrickCoord& lo = b.minBrick;
  const BrickCoord& hi = b.maxBrick;
  if (lo.x >= hi.x || lo.y >= hi.y || lo.z >= hi.z) return false;
  for (std::int32_t v : {lo.x, lo.y, lo.z, hi.x, hi.y, hi.z}) {
    if (v % kChunkBricks != 0) return false;
    // Chunk coordinates must fit the chunk map's keys (voxels then fit int32).
    if (v < -internal::kMaxChunkCoord * kChunkBricks || v > internal::kMaxChunkCoord * kChunkBricks) return false;
  }
  return true;
}

BrickStore::BrickStore(WorldBounds bounds, const CoarseLut& coarseLut) : bounds_(bounds), coarseLut_(coarseLut) {
  LOAM_ASSERT(validBounds(bounds));
  minVoxel_ = {bounds.minBrick.x * kBrickSize, bounds.minBrick.y * kBrickSize, bounds.minBrick.z * kBrickSize};
  sizeVx_ = static_cast<std::uint32_t>(bounds.maxBrick.x - bounds.minBrick.x) * kBrickSize;
  sizeVy_ = static_cast<std::uint32_t>(bounds.maxBrick.y - bounds.minBrick.y) * kBrickSize;
  sizeVz_ = static_cast<std::uint32_t>(bounds.maxBrick.z - bounds.minBrick.z) * kBrickSize;
}

BrickStore::BrickStore(const BrickStore& other)
    : bounds_(other.bounds_),
      sizeVx_(other.sizeVx_),
      sizeVy_(other.sizeVy_),
      sizeVz_(other.sizeVz_),
      minVoxel_(other.minVoxel_),
      coords_(other.coords_),
      canonical_(other.canonical_),
      map_(other.map_),
      coarseLut_(other.coarseLut_),
      source_(other.source_),
      present_(other.present_),
      presentList_(other.presentList_),
      slotEpoch_(other.slotEpoch_),
      keepBaseline_(other.keepBaseline_),
      subscribers_(other.subscribers_) {
  chunks_.resize(other.chunks_.size());
  for (std::size_t i = 0; i < chunks_.size(); ++i) {
    const Chunk& o = other.chunks_[i];
    chunks_[i].uniform = o.uniform;
    if (o.data) chunks_[i].data = std::make_unique<ChunkData>(*o.data);
    if (o.dirty) chunks_[i].dirty = std::make_unique<DirtyBits>(*o.dirty);
    if (o.baseline) chunks_[i].baseline = std::make_unique<Baseline>(*o.baseline);
  }
}

BrickStore& BrickStore::operator=(const BrickStore& other) {
  if (this != &other) {
    BrickStore copy(other);
    *this = std::move(copy);
  }
  return *this;
}

BrickStore::~BrickStore() = default;

// ---- chunk addressing -------------------------------------------------------------

int BrickStore::chunkIndex(ChunkCoord c) const noexcept {
  if (!internal::chunkInBounds(bounds_, c)) return -1;
  return map_.find(internal::chunkKey(c));
}

int BrickStore::addChunk(ChunkCoord c) {
  if (!internal::chunkInBounds(bounds_, c)) return -1;
  const std::uint64_t key = internal::chunkKey(c);
  if (int i = map_.find(key); i >= 0) return i;
  const int slot = static_cast<int>(chunks_.size());
  chunks_.emplace_back();
  coords_.push_back(c);
  map_.insert(key, slot);
  // Generation adds chunks in canonical order, so this is almost always an append.
  auto at = std::upper_bound(canonical_.begin(), canonical_.end(), c, [&](ChunkCoord v, int s) {
    return internal::canonicalBefore(v, coords_[static_cast<std::size_t>(s)]);
  });
  canonical_.insert(at, slot);
  return slot;
}

int BrickStore::adoptChunks(BrickStore& from) {
  LOAM_ASSERT(from.bounds_.minBrick == bounds_.minBrick && from.bounds_.maxBrick == bounds_.maxBrick);
  const bool sameLut = from.coarseLut_.solid == coarseLut_.solid && from.coarseLut_.opacity == coarseLut_.opacity;
  int moved = 0;
  for (int s : from.canonical_) {
    Chunk& theirs = from.chunks_[static_cast<std::size_t>(s)];
    from.compactChunkAt(theirs);
    if (!theirs.data && theirs.uniform == kAir) continue;
    const ChunkCoord cc = from.coords_[static_cast<std::size_t>(s)];
    if (chunkIndex(cc) >= 0) continue;
    const int slot = addChunk(cc);
    if (slot < 0) continue;  // unreachable with equal bounds
    Chunk& mine = chunks_[static_cast<std::size_t>(slot)];
    mine.data = std::move(theirs.data);
    mine.uniform = theirs.uniform;
    theirs.uniform = kAir;
    theirs.dirty.reset();
    theirs.baseline.reset();
    if (!sameLut && mine.data) {
      ChunkData& d = *mine.data;
      for (int local = 0; local < kChunkBrickCount; ++local) {
        const unsigned m = d.slots[local];
        if (m >= kMixedSlotBase) recomputeSums(d, d.entries[m - kMixedSlotBase]);
      }
    }
    if (subscribers_ != 0) {
      // Every brick is new to the subscribers; none is modified since generation.
      mine.dirty = std::make_unique<DirtyBits>();
      for (int set = 0; set < subscribers_; ++set) {
        for (std::uint64_t& w : mine.dirty->bits[set]) w = ~std::uint64_t{0};
        mine.dirty->any = static_cast<std::uint8_t>(mine.dirty->any | (1u << set));
      }
    }
    ++moved;
  }
  return moved;
}

bool BrickStore::chunkIsAir(ChunkCoord c) const noexcept {
  faultIfAbsent(c);
  const int i = chunkIndex(c);
  if (i < 0) return true;
  const Chunk& ch = chunks_[static_cast<std::size_t>(i)];
  return !ch.data && ch.uniform == kAir;
}

const BrickStore::Chunk* BrickStore::chunkOfBrick(BrickCoord b, int& local) const noexcept {
  local = brickIndexInChunk(b);
  int i = map_.find(internal::chunkKey(chunkOf(b)));
  if (i < 0 && faultIfAbsent(chunkOf(b))) i = map_.find(internal::chunkKey(chunkOf(b)));
  return i < 0 ? nullptr : &chunks_[static_cast<std::size_t>(i)];
}

BrickStore::Chunk& BrickStore::residentChunkOfBrick(BrickCoord b, int& local) {
  faultIfAbsent(chunkOf(b));
  local = brickIndexInChunk(b);
  const int i = addChunk(chunkOf(b));
  LOAM_ASSERT(i >= 0);
  return chunks_[static_cast<std::size_t>(i)];
}

bool BrickStore::chunkModified(int i) const noexcept {
  const Chunk& c = chunks_[static_cast<std::size_t>(i)];
  return c.dirty && (c.dirty->any & (1u << kModifiedSet));
}

bool BrickStore::brickMatchesGenerated(int i, int local) const noexcept {
  const Chunk& c = chunks_[static_cast<std::size_t>(i)];
  const BrickView v = viewOf(c, local);
  if (!keepBaseline_) return v.isAir();
  if (!c.dirty || !((c.dirty->bits[kModifiedSet][local >> 6] >> (local & 63)) & 1u)) return true;
  const Baseline* bl = c.baseline.get();
  if (!bl) return v.isAir();  // made resident after markGenerated(): generated as air
  auto at = std::lower_bound(bl->locals.begin(), bl->locals.end(), static_cast<std::uint16_t>(local));
  if (at == bl->locals.end() || *at != local) return true;
  // Forms are appended in the order bricks first changed, so the stored one's end is
  // not the next offset; but canonical forms are prefix-free, so equal leading bytes
  // mean equal forms.
  const std::size_t from = bl->offsets[static_cast<std::size_t>(at - bl->locals.begin())];
  std::uint8_t form[BrickView::kMaxPackedBytes];
  const std::size_t len = v.packCanonical(form);
  return from + len <= bl->bytes.size() && std::memcmp(form, bl->bytes.data() + from, len) == 0;
}

std::optional<MaterialId> BrickStore::chunkUniform(int i) const noexcept {
  const Chunk& c = chunks_[static_cast<std::size_t>(i)];
  if (!c.data) return c.uniform;
  const ChunkData& d = *c.data;
  if (d.mixedCount != 0) return std::nullopt;
  std::uint16_t first = d.slots[0];
  unsigned diff = 0;
  for (int s = 0; s < kChunkBrickCount; ++s) diff |= static_cast<unsigned>(d.slots[s] ^ first);
  if (diff != 0) return std::nullopt;
  return static_cast<MaterialId>(first);
}

// ---- record and entry allocation --------------------------------------------------

std::uint32_t BrickStore::allocRecord(ChunkData& d, unsigned k) {
  std::uint32_t off = d.freeHead[k];
  if (off != kNoOffset) {
    std::memcpy(&d.freeHead[k], d.bytes() + off, 4);
    return off;
  }
  off = d.poolUsed;
  d.poolUsed += recordBytes(k);
  std::size_t words = d.poolUsed / 8;
  if (words > d.pool.size()) {
    if (words > d.pool.capacity()) d.pool.reserve(std::max(words, d.pool.capacity() + d.pool.capacity() / 2 + 64));
    d.pool.resize(words);
  }
  return off;
}

void BrickStore::freeRecord(ChunkData& d, std::uint32_t off, unsigned k) noexcept {
  std::memcpy(d.bytes() + off, &d.freeHead[k], 4);
  d.freeHead[k] = off;
}

void BrickStore::freeBrickRecord(ChunkData& d, int local) noexcept {
  unsigned s = d.slots[local];
  if (s < kMixedSlotBase) return;
  std::uint16_t idx = static_cast<std::uint16_t>(s - kMixedSlotBase);
  BrickEntry& e = d.entries[idx];
  freeRecord(d, e.offset, e.bitsLog2);
  d.freeEntries.push_back(idx);
  --d.mixedCount;
}

ChunkData& BrickStore::expand(Chunk& c) {
  c.data = std::make_unique<ChunkData>();
  std::fill(std::begin(c.data->slots), std::end(c.data->slots), static_cast<std::uint16_t>(c.uniform));
  return *c.data;
}

void BrickStore::noteFirstChange(Chunk& c, int local) {
  if (!keepBaseline_) return;
  if (c.dirty && ((c.dirty->bits[kModifiedSet][local >> 6] >> (local & 63)) & 1u)) return;
  // First change since markGenerated(): keep the generated content for saves.
  if (!c.baseline) c.baseline = std::make_unique<Baseline>();
  Baseline& bl = *c.baseline;
  auto at = std::lower_bound(bl.locals.begin(), bl.locals.end(), static_cast<std::uint16_t>(local));
  if (at != bl.locals.end() && *at == local) return;
  std::size_t pos = static_cast<std::size_t>(at - bl.locals.begin());
  std::uint8_t form[BrickView::kMaxPackedBytes];
  std::size_t len = viewOf(c, local).packCanonical(form);
  bl.locals.insert(at, static_cast<std::uint16_t>(local));
  bl.offsets.insert(bl.offsets.begin() + static_cast<std::ptrdiff_t>(pos), static_cast<std::uint32_t>(bl.bytes.size()));
  bl.bytes.insert(bl.bytes.end(), form, form + len);
}

bool BrickStore::generatedBrick(BrickCoord b, MaterialId* out512) const noexcept {
  if (!bounds_.containsBrick(b)) return false;
  int local = 0;
  const Chunk* c = chunkOfBrick(b, local);
  if (!c || !c->baseline) return false;
  const Baseline& bl = *c->baseline;
  auto at = std::lower_bound(bl.locals.begin(), bl.locals.end(), static_cast<std::uint16_t>(local));
  if (at == bl.locals.end() || *at != local) return false;
  std::size_t off = bl.offsets[static_cast<std::size_t>(at - bl.locals.begin())];
  return unpackCanonical(bl.bytes.data() + off, bl.bytes.size() - off, out512) != 0;
}

void BrickStore::markChanged(Chunk& c, int local) noexcept {
  if (!c.dirty) c.dirty = std::make_unique<DirtyBits>();
  std::uint64_t bit = std::uint64_t{1} << (local & 63);
  for (int s = 0; s <= kModifiedSet; ++s) c.dirty->bits[s][local >> 6] |= bit;
  c.dirty->any = kAllSets;
}

// ---- brick encodings --------------------------------------------------------------

void BrickStore::writeUniformBrick(Chunk& c, int local, MaterialId m) noexcept {
  ChunkData& d = *c.data;
  bool wasMixed = d.slots[local] >= kMixedSlotBase;
  freeBrickRecord(d, local);
  d.slots[local] = m;
  if (wasMixed && d.mixedCount == 0) collapseIfUniform(c);
}

void BrickStore::buildMixed(ChunkData& d, int local, const MaterialId* v, const std::uint16_t* hist,
                            unsigned distinct) noexcept {
  unsigned k = minimalBitsLog2(distinct);
  unsigned s = d.slots[local];
  std::uint16_t idx;
  if (s >= kMixedSlotBase) {
    idx = static_cast<std::uint16_t>(s - kMixedSlotBase);
    BrickEntry& e = d.entries[idx];
    if (e.bitsLog2 != k) {
      freeRecord(d, e.offset, e.bitsLog2);
      std::uint32_t off = allocRecord(d, k);
      d.entries[idx].offset = off;
    }
  } else {
    if (!d.freeEntries.empty()) {
      idx = d.freeEntries.back();
      d.freeEntries.pop_back();
    } else {
      idx = static_cast<std::uint16_t>(d.entries.size());
      d.entries.emplace_back();
    }
    std::uint32_t off = allocRecord(d, k);
    d.entries[idx].offset = off;
    d.slots[local] = static_cast<std::uint16_t>(kMixedSlotBase + idx);
    ++d.mixedCount;
  }
  BrickEntry& e = d.entries[idx];
  e.bitsLog2 = static_cast<std::uint8_t>(k);
  e.used = static_cast<std::uint16_t>(distinct);
  std::uint8_t* rec = d.bytes() + e.offset;
  std::memset(rec, 0, recordBytes(k));
  std::uint32_t solid = 0, opacity = 0;
  for (unsigned m = 0; m < 256; ++m) {
    solid += hist[m] * static_cast<std::uint32_t>(coarseLut_.solid[m]);
    opacity += hist[m] * static_cast<std::uint32_t>(coarseLut_.opacity[m]);
  }
  e.solidCount = static_cast<std::uint16_t>(solid);
  e.opacitySum = opacity;
  if (k == 3) {
    e.fill = 0;
    std::memcpy(rec, v, kBrickVoxels);
    for (unsigned m = 0; m < 256; ++m) {
      rec[paletteOffset(3) + m] = static_cast<std::uint8_t>(m);
      writeCount(rec, 3, m, hist[m]);
    }
    return;
  }
  // Palette in ascending material order (any order would do: hashes and saves
  // serialise materials, never palette indices).
  std::uint8_t map[256];
  unsigned n = 0;
  for (unsigned m = 0; m < 256; ++m) {
    if (!hist[m]) continue;
    map[m] = static_cast<std::uint8_t>(n);
    rec[paletteOffset(k) + n] = static_cast<std::uint8_t>(m);
    writeCount(rec, k, n, hist[m]);
    ++n;
  }
  e.fill = static_cast<std::uint8_t>(n);
  const unsigned bits = 1u << k;
  const unsigned perByte = 8u / bits;
  for (unsigned j = 0; j < (64u << k); ++j) {
    unsigned byte = 0;
    for (unsigned t = 0; t < perByte; ++t) byte |= static_cast<unsigned>(map[v[j * perByte + t]]) << (t * bits);
    rec[j] = static_cast<std::uint8_t>(byte);
  }
}

// Counts each material in 512 voxels; distinct = how many are present.
static void histogram(const MaterialId* v, std::uint16_t* hist, unsigned& distinct) noexcept {
  std::memset(hist, 0, 256 * sizeof(std::uint16_t));
  for (int i = 0; i < kBrickVoxels; ++i) ++hist[v[i]];
  distinct = 0;
  for (int m = 0; m < 256; ++m) distinct += hist[m] != 0;
}

bool BrickStore::collapseIfUniform(Chunk& c) noexcept {
  std::optional<MaterialId> m = c.data ? chunkUniform(static_cast<int>(&c - chunks_.data())) : std::nullopt;
  if (!m) return false;
  c.data.reset();
  c.uniform = *m;
  return true;
}

void BrickStore::setMixedVoxel(ChunkData& d, int local, unsigned vi, MaterialId m) noexcept {
  std::uint16_t idx = static_cast<std::uint16_t>(d.slots[local] - kMixedSlotBase);
  BrickEntry& e = d.entries[idx];
  unsigned k = e.bitsLog2;
  std::uint8_t* rec = d.bytes() + e.offset;
  unsigned oldIdx = readIndex(rec, k, vi);
  MaterialId old = rec[paletteOffset(k) + oldIdx];
  unsigned newIdx = 0;
  if (k == 3) {
    newIdx = m;
  } else {
    // Find m in the palette; else take a fresh index; else reuse a hole (count 0).
    unsigned found = paletteCap(k), hole = paletteCap(k);
    for (unsigned p = 0; p < e.fill; ++p) {
      if (rec[paletteOffset(k) + p] == m) {
        found = p;
        break;
      }
      if (hole == paletteCap(k) && readCount(rec, k, p) == 0) hole = p;
    }
    if (found != paletteCap(k)) {
      newIdx = found;
    } else if (e.fill < paletteCap(k)) {
      newIdx = e.fill++;
      rec[paletteOffset(k) + newIdx] = m;
      writeCount(rec, k, newIdx, 0);
    } else if (hole != paletteCap(k)) {
      newIdx = hole;
      rec[paletteOffset(k) + newIdx] = m;
    } else {
      newIdx = paletteCap(k);  // full: grow below
    }
  }
  if (newIdx == paletteCap(k) && k < 3) {
    // Palette full: re-encode with more bits per voxel.
    MaterialId buf[kBrickVoxels];
    BrickView(rec, k, e.used, e.fill).decode(buf);
    buf[vi] = m;
    std::uint16_t hist[256];
    unsigned distinct = 0;
    histogram(buf, hist, distinct);
    buildMixed(d, local, buf, hist, distinct);
    return;
  }
  writeIndex(rec, k, vi, newIdx);
  std::uint16_t newCount = static_cast<std::uint16_t>(readCount(rec, k, newIdx) + 1);
  std::uint16_t oldCount = static_cast<std::uint16_t>(readCount(rec, k, oldIdx) - 1);
  writeCount(rec, k, newIdx, newCount);
  writeCount(rec, k, oldIdx, oldCount);
  if (newCount == 1) ++e.used;
  if (oldCount == 0) --e.used;
  e.solidCount = static_cast<std::uint16_t>(e.solidCount + coarseLut_.solid[m] - coarseLut_.solid[old]);
  e.opacitySum = e.opacitySum + coarseLut_.opacity[m] - coarseLut_.opacity[old];
  if (oldCount == 0 && k > 0 && e.used > 1 && e.used <= paletteCap(k - 1)) {
    // A material disappeared and the rest fits fewer bits: shrink.
    MaterialId buf[kBrickVoxels];
    BrickView(rec, k, e.used, e.fill).decode(buf);
    std::uint16_t hist[256];
    unsigned distinct = 0;
    histogram(buf, hist, distinct);
    buildMixed(d, local, buf, hist, distinct);
  }
}

// ---- writes -----------------------------------------------------------------------

bool BrickStore::set(VoxelCoord v, MaterialId m) noexcept {
  if (!bounds_.containsVoxel(v)) return false;
  BrickCoord b = brickOf(v);
  int local = 0;
  unsigned vi = static_cast<unsigned>(voxelIndexInBrick(v.x & 7, v.y & 7, v.z & 7));
  const Chunk* had = chunkOfBrick(b, local);
  if ((had ? viewOf(*had, local).at(static_cast<int>(vi)) : kAir) == m) return true;
  Chunk& c = residentChunkOfBrick(b, local);
  noteFirstChange(c, local);
  if (!c.data) expand(c);
  ChunkData& d = *c.data;
  unsigned s = d.slots[local];
  if (s < kMixedSlotBase) {
    MaterialId buf[kBrickVoxels];
    std::memset(buf, static_cast<int>(s), sizeof buf);
    buf[vi] = m;
    std::uint16_t hist[256] = {};
    hist[s] = kBrickVoxels - 1;
    hist[m] = 1;
    buildMixed(d, local, buf, hist, 2);
  } else {
    setMixedVoxel(d, local, vi, m);
    // The brick may now hold one material: collapse it to a uniform slot.
    unsigned s2 = d.slots[local];
    if (s2 >= kMixedSlotBase && d.entries[s2 - kMixedSlotBase].used == 1) writeUniformBrick(c, local, m);
  }
  markChanged(c, local);
  return true;
}

bool BrickStore::writeBrick(BrickCoord b, const MaterialId* voxels512) noexcept {
  if (!bounds_.containsBrick(b)) return false;
  if (allEqual(voxels512, kBrickVoxels)) return fillBrick(b, voxels512[0]);
  int local = 0;
  Chunk& c = residentChunkOfBrick(b, local);
  if (c.data && c.data->slots[local] >= kMixedSlotBase) {
    MaterialId cur[kBrickVoxels];
    viewOf(c, local).decode(cur);
    if (std::memcmp(cur, voxels512, kBrickVoxels) == 0) return true;
  }
  noteFirstChange(c, local);
  if (!c.data) expand(c);
  ChunkData& d = *c.data;
  MaterialId buf[kBrickVoxels];
  std::memcpy(buf, voxels512, kBrickVoxels);  // the caller's buffer might alias our pool
  std::uint16_t hist[256];
  unsigned distinct = 0;
  histogram(buf, hist, distinct);
  buildMixed(d, local, buf, hist, distinct);
  markChanged(c, local);
  return true;
}

bool BrickStore::fillBrick(BrickCoord b, MaterialId m) noexcept {
  if (!bounds_.containsBrick(b)) return false;
  int local = 0;
  if (m == kAir && !chunkOfBrick(b, local)) return true;
  Chunk& c = residentChunkOfBrick(b, local);
  if (!c.data) {
    if (c.uniform == m) return true;
  } else if (c.data->slots[local] == m) {
    return true;
  }
  noteFirstChange(c, local);
  if (!c.data) expand(c);
  writeUniformBrick(c, local, m);
  markChanged(c, local);
  return true;
}

bool BrickStore::fillChunk(ChunkCoord cc, MaterialId m) noexcept {
  if (!internal::chunkInBounds(bounds_, cc)) return false;
  faultIfAbsent(cc);
  int i = chunkIndex(cc);
  if (i < 0 && m == kAir) return true;
  if (i < 0) i = addChunk(cc);
  Chunk& c = chunks_[static_cast<std::size_t>(i)];
  if (!c.data) {
    if (c.uniform == m) return true;
    for (int local = 0; local < kChunkBrickCount; ++local) {
      noteFirstChange(c, local);
      markChanged(c, local);
    }
  } else {
    for (int local = 0; local < kChunkBrickCount; ++local) {
      if (c.data->slots[local] == m) continue;
      noteFirstChange(c, local);
      markChanged(c, local);
    }
    c.data.reset();
  }
  c.uniform = m;
  return true;
}

// ---- reads ------------------------------------------------------------------------

void BrickStore::readBrick(BrickCoord b, MaterialId* out512) const noexcept { brick(b).decode(out512); }

BrickView BrickStore::brick(BrickCoord b) const noexcept {
  if (!bounds_.containsBrick(b)) return BrickView(kAir);
  int local = 0;
  const Chunk* c = chunkOfBrick(b, local);
  return c ? viewOf(*c, local) : BrickView(kAir);
}

std::size_t BrickStore::queryBox(const VoxelBox& box, std::vector<BrickHit>& out, BrickFilter filter) const {
  std::size_t before = out.size();
  forEachBrickInBox(box, [&](BrickCoord b, BrickView v) { out.push_back({b, v}); }, filter);
  return out.size() - before;
}

// ---- compaction -------------------------------------------------------------------

void BrickStore::compactChunkAt(Chunk& c) noexcept {
  if (!c.data || collapseIfUniform(c)) return;
  ChunkData& d = *c.data;
  // Repack records in brick order into an exactly sized pool; renumber entries.
  std::size_t bytes = 0;
  for (int local = 0; local < kChunkBrickCount; ++local) {
    unsigned s = d.slots[local];
    if (s >= kMixedSlotBase) bytes += recordBytes(d.entries[s - kMixedSlotBase].bitsLog2);
  }
  std::vector<std::uint64_t> pool(bytes / 8);
  std::vector<BrickEntry> entries;
  entries.reserve(d.mixedCount);
  std::uint8_t* dst = reinterpret_cast<std::uint8_t*>(pool.data());
  std::uint32_t off = 0;
  for (int local = 0; local < kChunkBrickCount; ++local) {
    unsigned s = d.slots[local];
    if (s < kMixedSlotBase) continue;
    BrickEntry e = d.entries[s - kMixedSlotBase];
    std::memcpy(dst + off, d.bytes() + e.offset, recordBytes(e.bitsLog2));
    e.offset = off;
    off += recordBytes(e.bitsLog2);
    d.slots[local] = static_cast<std::uint16_t>(kMixedSlotBase + entries.size());
    entries.push_back(e);
  }
  d.pool = std::move(pool);
  d.entries = std::move(entries);
  d.freeEntries = {};
  d.poolUsed = off;
  std::fill(std::begin(d.freeHead), std::end(d.freeHead), kNoOffset);
}

bool BrickStore::compactChunk(ChunkCoord cc) noexcept {
  int i = chunkIndex(cc);
  if (i < 0) return false;
  Chunk& c = chunks_[static_cast<std::size_t>(i)];
  compactChunkAt(c);
  return c.data == nullptr;
}

void BrickStore::compactAll() noexcept {
  for (Chunk& c : chunks_) compactChunkAt(c);
}

// ---- change tracking --------------------------------------------------------------

ChangeSubscriber BrickStore::subscribeChanges() noexcept {
  LOAM_ASSERT(subscribers_ < kMaxChangeSubscribers);
  ++subscribers_;
  return ChangeSubscriber{subscribers_};
}

bool BrickStore::isChanged(BrickCoord b, ChangeSubscriber sub) const noexcept {
  LOAM_ASSERT(sub.value >= 1 && sub.value <= subscribers_);
  if (!bounds_.containsBrick(b)) return false;
  int local = 0;
  const Chunk* c = chunkOfBrick(b, local);
  if (!c || !c->dirty) return false;
  return (c->dirty->bits[sub.value - 1][local >> 6] >> (local & 63)) & 1u;
}

bool BrickStore::isModified(BrickCoord b) const noexcept {
  if (!bounds_.containsBrick(b)) return false;
  int local = 0;
  const Chunk* c = chunkOfBrick(b, local);
  if (!c || !c->dirty) return false;
  return (c->dirty->bits[kModifiedSet][local >> 6] >> (local & 63)) & 1u;
}

void BrickStore::clearChanged(BrickCoord b, ChangeSubscriber sub) noexcept {
  LOAM_ASSERT(sub.value >= 1 && sub.value <= subscribers_);
  if (!bounds_.containsBrick(b)) return;
  int local = 0;
  const Chunk* found = chunkOfBrick(b, local);
  if (!found || !found->dirty) return;
  Chunk* c = const_cast<Chunk*>(found);
  c->dirty->bits[sub.value - 1][local >> 6] &= ~(std::uint64_t{1} << (local & 63));
}

void BrickStore::clearChanged(ChangeSubscriber sub) noexcept {
  LOAM_ASSERT(sub.value >= 1 && sub.value <= subscribers_);
  const int set = sub.value - 1;
  for (Chunk& c : chunks_) {
    if (!c.dirty) continue;
    std::fill(std::begin(c.dirty->bits[set]), std::end(c.dirty->bits[set]), 0);
    c.dirty->any = static_cast<std::uint8_t>(c.dirty->any & ~(1u << set));
    if (c.dirty->any == 0) c.dirty.reset();
  }
}

std::vector<BrickCoord> BrickStore::takeChanged(ChangeSubscriber sub) {
  std::vector<BrickCoord> out;
  forEachChanged(sub, [&](BrickCoord b) { out.push_back(b); });
  clearChanged(sub);
  return out;
}

std::size_t BrickStore::modifiedCount() const noexcept {
  std::size_t n = 0;
  for (const Chunk& c : chunks_) {
    if (!c.dirty) continue;
    for (std::uint64_t w : c.dirty->bits[kModifiedSet]) n += static_cast<std::size_t>(std::popcount(w));
  }
  return n;
}

void BrickStore::markGenerated() noexcept {
  keepBaseline_ = true;
  // Keep the chunks that are not all air, renumbered in canonical order.
  keepChunksIf([this](Chunk& c, ChunkCoord) {
    c.dirty.reset();
    c.baseline.reset();
    compactChunkAt(c);
    return c.data || c.uniform != kAir;
  });
}

// ---- coarse copy ------------------------------------------------------------------

void BrickStore::recomputeSums(ChunkData& d, BrickEntry& e) const noexcept {
  MaterialId buf[kBrickVoxels];
  BrickView(d.bytes() + e.offset, e.bitsLog2, e.used, e.fill).decode(buf);
  std::uint32_t solid = 0, opacity = 0;
  for (int i = 0; i < kBrickVoxels; ++i) {
    solid += coarseLut_.solid[buf[i]];
    opacity += coarseLut_.opacity[buf[i]];
  }
  e.solidCount = static_cast<std::uint16_t>(solid);
  e.opacitySum = opacity;
}

void BrickStore::setCoarseLut(const CoarseLut& lut) noexcept {
  coarseLut_ = lut;
  rebuildCoarse();
}

void BrickStore::rebuildCoarse() noexcept {
  for (Chunk& c : chunks_) {
    if (!c.data) continue;
    ChunkData& d = *c.data;
    for (int local = 0; local < kChunkBrickCount; ++local) {
      unsigned s = d.slots[local];
      if (s >= kMixedSlotBase) recomputeSums(d, d.entries[s - kMixedSlotBase]);
    }
  }
}

CoarseSample BrickStore::coarse(BrickCoord b) const noexcept {
  if (!bounds_.containsBrick(b)) return coarseFromSums(kBrickVoxels * coarseLut_.solid[kAir], kBrickVoxels * coarseLut_.opacity[kAir]);
  int local = 0;
  const Chunk* c = chunkOfBrick(b, local);
  if (!c) return coarseFromSums(kBrickVoxels * coarseLut_.solid[kAir], kBrickVoxels * coarseLut_.opacity[kAir]);
  unsigned m = c->uniform;
  if (c->data) {
    unsigned s = c->data->slots[local];
    if (s >= kMixedSlotBase) {
      const BrickEntry& e = c->data->entries[s - kMixedSlotBase];
      return coarseFromSums(e.solidCount, e.opacitySum);
    }
    m = s;
  }
  return coarseFromSums(kBrickVoxels * coarseLut_.solid[m], kBrickVoxels * coarseLut_.opacity[m]);
}

std::size_t BrickStore::baselineBytes(const Baseline& bl) noexcept {
  return sizeof(Baseline) + bl.locals.capacity() * sizeof(std::uint16_t) + bl.offsets.capacity() * sizeof(std::uint32_t) +
         bl.bytes.capacity();
}

// ---- memory -----------------------------------------------------------------------

std::size_t BrickStore::memoryBytes() const noexcept {
  std::size_t n = chunks_.capacity() * sizeof(Chunk) + coords_.capacity() * sizeof(ChunkCoord) +
                  canonical_.capacity() * sizeof(int) + map_.memoryBytes() + present_.memoryBytes() +
                  presentList_.capacity() * sizeof(ChunkColumn);
  for (const Chunk& c : chunks_) {
    if (c.data) {
      n += sizeof(ChunkData) + c.data->entries.capacity() * sizeof(BrickEntry) +
           c.data->freeEntries.capacity() * sizeof(std::uint16_t) + c.data->pool.capacity() * sizeof(std::uint64_t);
    }
    if (c.dirty) n += sizeof(DirtyBits);
    if (c.baseline) n += baselineBytes(*c.baseline);
  }
  return n;
}

StoreMemoryStats BrickStore::memoryStats() const noexcept {
  StoreMemoryStats st;
  st.chunkTableBytes = chunks_.capacity() * sizeof(Chunk) + coords_.capacity() * sizeof(ChunkCoord) +
                      canonical_.capacity() * sizeof(int) + map_.memoryBytes() + present_.memoryBytes() +
                      presentList_.capacity() * sizeof(ChunkColumn);
  for (const Chunk& c : chunks_) {
    if (c.dirty) st.dirtyBytes += sizeof(DirtyBits);
    if (c.baseline) st.baselineBytes += baselineBytes(*c.baseline);
    if (!c.data) {
      ++st.uniformChunks;
      continue;
    }
    ++st.expandedChunks;
    const ChunkData& d = *c.data;
    st.chunkSlotBytes += sizeof(ChunkData) + d.entries.capacity() * sizeof(BrickEntry) +
                         d.freeEntries.capacity() * sizeof(std::uint16_t);
    st.poolBytes += d.pool.capacity() * sizeof(std::uint64_t);
    for (int local = 0; local < kChunkBrickCount; ++local) {
      unsigned s = d.slots[local];
      if (s < kMixedSlotBase)
        ++st.uniformBricks;
      else
        ++st.mixedBricks[d.entries[s - kMixedSlotBase].bitsLog2];
    }
  }
  st.totalBytes = st.chunkTableBytes + st.chunkSlotBytes + st.poolBytes + st.dirtyBytes + st.baselineBytes;
  return st;
}

}  // namespace loam::sim
