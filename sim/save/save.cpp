#include "sim/save/save.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <memory>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "sim/world/brick_store.h"

namespace loam::sim {

namespace {

constexpr char kMagic[8] = {'L', 'O', 'A', 'M', 'S', 'A', 'V', 'E'};
constexpr std::size_t kChecksumOffset = 56;

// ---- little-endian writing ----------------------------------------------------------

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void i32(std::int32_t v) { put(static_cast<std::uint32_t>(v), 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>& out_;
};

std::uint64_t getLE(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

void putLE(std::uint8_t* p, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// ---- bounds-checked reading ---------------------------------------------------------

class Reader {
 public:
  Reader(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  std::size_t remaining() const { return n_ - pos_; }
  /// Next n bytes, or nullptr (and nothing consumed) if fewer remain.
  const std::uint8_t* take(std::size_t n) {
    if (n > remaining()) return nullptr;
    const std::uint8_t* r = p_ + pos_;
    pos_ += n;
    return r;
  }
  bool u8(std::uint8_t& v) { return num(v, 1); }
  bool u16(std::uint16_t& v) { return num(v, 2); }
  bool u32(std::uint32_t& v) { return num(v, 4); }
  bool u64(std::uint64_t& v) { return num(v, 8); }
  bool i32(std::int32_t& v) {
    std::uint32_t u = 0;
    if (!u32(u)) return false;
    v = static_cast<std::int32_t>(u);
    return true;
  }

 private:
  template <class T>
  bool num(T& v, int n) {
    const std::uint8_t* b = take(static_cast<std::size_t>(n));
    if (!b) return false;
    v = static_cast<T>(getLE(b, n));
    return true;
  }
  const std::uint8_t* p_;
  std::size_t n_;
  std::size_t pos_ = 0;
};

Error corrupt(const std::string& what) { return makeError("corrupt save: " + what); }

// The least payload bytes one brick takes: coordinates, kind, a uniform brick's
// 2-byte canonical form.
constexpr std::size_t kMinPackedBrickBytes = 2;
constexpr std::size_t kMinSavedBrickBytes = 12 + 1 + kMinPackedBrickBytes;

/// Bricks inside valid bounds (at most 2^20 chunks of 4096).
std::uint64_t boundsBricks(const WorldBounds& b) {
  return static_cast<std::uint64_t>(b.maxBrick.x - b.minBrick.x) * static_cast<std::uint64_t>(b.maxBrick.y - b.minBrick.y) *
         static_cast<std::uint64_t>(b.maxBrick.z - b.minBrick.z);
}

/// Position of brick b in canonical store order for bounds (chunk index, then brick
/// index in chunk).
std::uint64_t canonicalKey(const WorldBounds& bounds, BrickCoord b) {
  ChunkCoord lo = chunkOf(bounds.minBrick);
  std::uint64_t nx = static_cast<std::uint64_t>((bounds.maxBrick.x - bounds.minBrick.x) / kChunkBricks);
  std::uint64_t ny = static_cast<std::uint64_t>((bounds.maxBrick.y - bounds.minBrick.y) / kChunkBricks);
  ChunkCoord c = chunkOf(b);
  std::uint64_t ci = static_cast<std::uint64_t>(c.x - lo.x) +
                     nx * (static_cast<std::uint64_t>(c.y - lo.y) + ny * static_cast<std::uint64_t>(c.z - lo.z));
  return ci * 4096u + static_cast<std::uint64_t>(brickIndexInChunk(b));
}

std::string hex(std::uint64_t v) {
  std::ostringstream os;
  os << std::hex << v;
  return os.str();
}

Result<void> checkBlobNames(const std::vector<SaveBlob>& blobs) {
  for (std::size_t i = 0; i < blobs.size(); ++i) {
    const std::string& n = blobs[i].name;
    if (n.empty() || n.size() > 255) return makeError("save blob name must be 1..255 bytes: '" + n + "'");
    for (std::size_t j = 0; j < i; ++j)
      if (blobs[j].name == n) return makeError("duplicate save blob name '" + n + "'");
  }
  return ok();
}

std::string sysError(const std::string& what, const std::string& path) {
  return path + ": " + what + ": " + std::strerror(errno);
}

// ---- one brick's pieces, shared by the file payload and brickContent ----------------

bool voxelChanged(const SavedBrick& b, int i) {
  return ((b.changed[static_cast<std::size_t>(i >> 6)] >> (i & 63)) & 1u) != 0;
}

void writeWholeForm(Writer& w, const SavedBrick& b) {
  std::uint8_t form[BrickView::kMaxPackedBytes];
  w.bytes(form, packCanonical(b.voxels.data(), form));
}

/// False when the form is malformed or truncated.
bool readWholeForm(Reader& r, SavedBrick& b) {
  std::size_t used = unpackCanonical(r.take(0), r.remaining(), b.voxels.data());
  if (used == 0) return false;
  r.take(used);
  return true;
}

void writeChangeMask(Writer& w, const SavedBrick& b) {
  for (std::uint64_t word : b.changed) w.u64(word);
}

/// The changed voxels of the mask (popcount); 0 with nothing changed is corrupt.
std::uint64_t readChangeMask(Reader& r, SavedBrick& b, bool& truncated) {
  std::uint64_t n = 0;
  truncated = false;
  for (std::uint64_t& word : b.changed) {
    if (!r.u64(word)) {
      truncated = true;
      return 0;
    }
    n += static_cast<std::uint64_t>(std::popcount(word));
  }
  return n;
}

std::size_t writeChangedVoxels(Writer& w, const SavedBrick& b) {
  std::size_t n = 0;
  for (int i = 0; i < kBrickVoxels; ++i) {
    if (voxelChanged(b, i)) {
      w.u8(b.voxels[static_cast<std::size_t>(i)]);
      ++n;
    }
  }
  return n;
}

/// The caller checked that the mask's voxels are in r.
void readChangedVoxels(Reader& r, SavedBrick& b) {
  for (int i = 0; i < kBrickVoxels; ++i)
    if (voxelChanged(b, i)) r.u8(b.voxels[static_cast<std::size_t>(i)]);
}

}  // namespace

// ---- zstd ---------------------------------------------------------------------------

Result<void> decompressZstdFrame(const std::uint8_t* src, std::size_t size, std::uint64_t rawSize,
                                 std::vector<std::uint8_t>& out) {
  std::unique_ptr<ZSTD_DStream, std::size_t (*)(ZSTD_DStream*)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!stream) return makeError("zstd: cannot create a decompression stream");
  constexpr std::uint64_t kFirstBytes = std::uint64_t{1} << 20;
  ZSTD_inBuffer in{src, size, 0};
  std::size_t produced = 0;
  out.clear();
  for (;;) {
    if (produced == out.size() && produced < rawSize)
      out.resize(static_cast<std::size_t>(std::min(rawSize, std::max(kFirstBytes, std::uint64_t{produced} * 2))));
    ZSTD_outBuffer o{out.data() + produced, out.size() - produced, 0};
    const std::size_t consumed = in.pos;
    const std::size_t rc = ZSTD_decompressStream(stream.get(), &o, &in);
    if (ZSTD_isError(rc)) return corrupt(std::string("zstd: ") + ZSTD_getErrorName(rc));
    produced += o.pos;
    if (rc == 0) break;  // frame complete (zstd checks its declared content size)
    if (o.pos == 0 && in.pos == consumed)
      return corrupt(produced == rawSize ? "zstd frame is longer than the header says" : "zstd frame is truncated");
  }
  if (produced != rawSize || in.pos != in.size) return corrupt("decompressed size differs from the header");
  out.resize(produced);
  return ok();
}

// ---- capture and encode -------------------------------------------------------------

bool captureBrick(const BrickStore& store, BrickCoord b, SavedBrick& out) {
  if (!store.isModified(b)) return false;
  out = SavedBrick{};
  out.coord = b;
  store.readBrick(b, out.voxels.data());
  MaterialId base[kBrickVoxels];
  if (store.generatedBrick(b, base)) {
    out.delta = true;
    bool any = false;
    for (int i = 0; i < kBrickVoxels; ++i) {
      bool diff = out.voxels[static_cast<std::size_t>(i)] != base[i];
      out.changed[static_cast<std::size_t>(i >> 6)] |= std::uint64_t{diff} << (i & 63);
      any |= diff;
    }
    if (!any) return false;  // changed back to its generated content: nothing to save
  }
  return true;
}

namespace {

/// Whether any brick of cell lies inside bounds (64-bit: a hostile cell may be anything).
bool cellInBounds(const WorldBounds& bounds, CellCoord cell) {
  const std::int64_t x0 = std::int64_t{cell.x} * kCellBricks, z0 = std::int64_t{cell.z} * kCellBricks;
  return x0 < bounds.maxBrick.x && x0 + kCellBricks > bounds.minBrick.x && z0 < bounds.maxBrick.z &&
         z0 + kCellBricks > bounds.minBrick.z;
}

}  // namespace

void writeSavedBrick(BrickStore& store, const SavedBrick& sb) {
  if (!sb.delta) {
    store.writeBrick(sb.coord, sb.voxels.data());
    return;
  }
  MaterialId buf[kBrickVoxels];
  if (!store.generatedBrick(sb.coord, buf)) store.readBrick(sb.coord, buf);
  for (int i = 0; i < kBrickVoxels; ++i)
    if (voxelChanged(sb, i)) buf[i] = sb.voxels[static_cast<std::size_t>(i)];
  store.writeBrick(sb.coord, buf);
}

namespace {

/// The (at most four) chunk columns of an interest cell inside the bounds (cellInBounds).
template <class F>
void forEachColumnOfCell(CellCoord cell, F&& fn) {
  constexpr std::int32_t kColumnsPerCell = kCellBricks / kChunkBricks;
  for (std::int32_t dz = 0; dz < kColumnsPerCell; ++dz)
    for (std::int32_t dx = 0; dx < kColumnsPerCell; ++dx)
      fn(ChunkColumn{cell.x * kColumnsPerCell + dx, cell.z * kColumnsPerCell + dz});
}

}  // namespace

void captureCellBricks(const BrickStore& store, CellCoord cell, std::vector<SavedBrick>& out) {
  out.clear();
  if (!cellInBounds(store.bounds(), cell)) return;
  SavedBrick sb;
  forEachColumnOfCell(cell, [&](ChunkColumn column) {
    store.forEachModifiedInColumn(column, [&](BrickCoord b) {
      if (captureBrick(store, b, sb)) out.push_back(sb);
    });
  });
  const WorldBounds& bounds = store.bounds();
  std::sort(out.begin(), out.end(), [&](const SavedBrick& a, const SavedBrick& b) {
    return canonicalKey(bounds, a.coord) < canonicalKey(bounds, b.coord);
  });
}

Result<void> applyCellBricks(BrickStore& store, CellCoord cell, std::span<const SavedBrick> bricks,
                             std::vector<BrickCoord>& written) {
  if (!cellInBounds(store.bounds(), cell))
    return makeError("cell (" + std::to_string(cell.x) + ", " + std::to_string(cell.z) + ") is outside the world");
  std::vector<BrickCoord> listed;
  listed.reserve(bricks.size());
  for (const SavedBrick& sb : bricks) {
    if (!(cellOf(sb.coord) == cell) || !store.bounds().containsBrick(sb.coord))
      return makeError("brick (" + std::to_string(sb.coord.x) + ", " + std::to_string(sb.coord.y) + ", " +
                       std::to_string(sb.coord.z) + ") is not in cell (" + std::to_string(cell.x) + ", " +
                       std::to_string(cell.z) + ")");
    listed.push_back(sb.coord);
  }
  std::sort(listed.begin(), listed.end());
  if (std::adjacent_find(listed.begin(), listed.end()) != listed.end()) return makeError("a brick is listed twice");
  // Bricks this store changed that the cell no longer holds changed: generated again.
  std::vector<BrickCoord> stale;
  forEachColumnOfCell(cell, [&](ChunkColumn column) {
    store.forEachModifiedInColumn(column, [&](BrickCoord b) {
      if (!std::binary_search(listed.begin(), listed.end(), b)) stale.push_back(b);
    });
  });
  MaterialId buf[kBrickVoxels];
  for (const BrickCoord b : stale) {
    if (!store.generatedBrick(b, buf)) continue;
    store.writeBrick(b, buf);
    written.push_back(b);
  }
  for (const SavedBrick& sb : bricks) {
    writeSavedBrick(store, sb);
    written.push_back(sb.coord);
  }
  return ok();
}

std::uint64_t canonicalBrickOrder(const WorldBounds& bounds, BrickCoord b) { return canonicalKey(bounds, b); }

Result<SaveData> captureSave(const SaveHeader& header, const BrickStore& store, std::vector<SaveBlob> blobs) {
  if (auto r = checkBlobNames(blobs); !r) return r.error();
  SaveData data;
  data.header = header;
  data.bounds = store.bounds();
  data.bricks.reserve(store.modifiedCount());
  SavedBrick sb;
  store.forEachModified([&](BrickCoord b) {
    if (captureBrick(store, b, sb)) data.bricks.push_back(sb);
  });
  data.blobs = std::move(blobs);
  return data;
}

Result<std::vector<std::uint8_t>> sealSavePayload(const SaveHeader& header, std::span<const std::uint8_t> raw,
                                                  int level) {
  if (raw.size() > kMaxSavePayloadBytes) return makeError("save payload too large: " + std::to_string(raw.size()) + " bytes");

  std::vector<std::uint8_t> out(kSaveHeaderBytes + ZSTD_compressBound(raw.size()));
  std::size_t packed = ZSTD_compress(out.data() + kSaveHeaderBytes, out.size() - kSaveHeaderBytes, raw.data(),
                                     raw.size(), level);
  if (ZSTD_isError(packed)) return makeError(std::string("zstd compression failed: ") + ZSTD_getErrorName(packed));
  out.resize(kSaveHeaderBytes + packed);
  std::uint8_t* h = out.data();
  std::memcpy(h, kMagic, 8);
  putLE(h + 8, header.formatVersion, 4);
  putLE(h + 12, header.identity.generatorVersion, 4);
  putLE(h + 16, header.identity.sceneHash, 8);
  putLE(h + 24, header.identity.seed, 8);
  putLE(h + 32, header.tick, 8);
  putLE(h + 40, raw.size(), 8);
  putLE(h + 48, packed, 8);
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, h, kChecksumOffset);
  XXH3_64bits_update(&st, h + kSaveHeaderBytes, packed);
  putLE(h + kChecksumOffset, XXH3_64bits_digest(&st), 8);
  return out;
}

Result<std::vector<std::uint8_t>> encodeSave(SaveData& data, int level) {
  if (auto r = checkBlobNames(data.blobs); !r) return r.error();
  // Raw payload: coordinates together, then each brick's canonical packed form
  // (uniform bricks cost 2 bytes, 1-bit bricks 68), so like bytes sit together.
  std::vector<std::uint8_t> raw;
  std::size_t blobBytes = 0;
  for (const SaveBlob& b : data.blobs) blobBytes += 2 + b.name.size() + 8 + b.bytes.size();
  raw.reserve(24 + 4 + data.bricks.size() * (12 + 80) + 4 + blobBytes);
  Writer w(raw);
  const WorldBounds& bd = data.bounds;
  for (std::int32_t v : {bd.minBrick.x, bd.minBrick.y, bd.minBrick.z, bd.maxBrick.x, bd.maxBrick.y, bd.maxBrick.z})
    w.i32(v);
  w.u32(static_cast<std::uint32_t>(data.bricks.size()));
  for (const SavedBrick& b : data.bricks) {
    w.i32(b.coord.x);
    w.i32(b.coord.y);
    w.i32(b.coord.z);
  }
  std::size_t deltas = 0, changedVoxels = 0;
  for (const SavedBrick& b : data.bricks) {
    w.u8(b.delta ? 1 : 0);
    deltas += b.delta;
  }
  for (const SavedBrick& b : data.bricks) {
    if (!b.delta) writeWholeForm(w, b);
  }
  for (const SavedBrick& b : data.bricks) {
    if (b.delta) writeChangeMask(w, b);
  }
  for (const SavedBrick& b : data.bricks) {
    if (b.delta) changedVoxels += writeChangedVoxels(w, b);
  }
  w.u32(static_cast<std::uint32_t>(data.blobs.size()));
  for (const SaveBlob& b : data.blobs) {
    w.u16(static_cast<std::uint16_t>(b.name.size()));
    w.bytes(b.name.data(), b.name.size());
    w.u64(b.bytes.size());
    w.bytes(b.bytes.data(), b.bytes.size());
  }
  auto sealed = sealSavePayload(data.header, raw, level);
  if (!sealed) return sealed;
  const std::size_t packed = sealed->size() - kSaveHeaderBytes;
  std::vector<std::uint8_t> out = std::move(sealed).value();

  data.sizes.rawBytes = raw.size();
  data.sizes.compressedBytes = packed;
  data.sizes.fileBytes = out.size();
  data.sizes.deltaBricks = deltas;
  data.sizes.wholeBricks = data.bricks.size() - deltas;
  data.sizes.changedVoxels = changedVoxels;
  return out;
}

// ---- decode -------------------------------------------------------------------------

Result<SaveData> decodeSave(std::span<const std::uint8_t> bytes, std::uint64_t maxPayloadBytes) {
  maxPayloadBytes = std::min(maxPayloadBytes, kMaxSavePayloadBytes);
  if (bytes.size() < kSaveHeaderBytes)
    return corrupt("file is " + std::to_string(bytes.size()) + " bytes, shorter than the 64-byte header");
  const std::uint8_t* h = bytes.data();
  if (std::memcmp(h, kMagic, 8) != 0) return makeError("not a Loam save (bad magic)");
  SaveData data;
  data.header.formatVersion = static_cast<std::uint32_t>(getLE(h + 8, 4));
  if (data.header.formatVersion != kSaveFormatVersion)
    return makeError("save format version " + std::to_string(data.header.formatVersion) +
                     " is not supported (this build reads version " + std::to_string(kSaveFormatVersion) + ")");
  data.header.identity.generatorVersion = static_cast<std::uint32_t>(getLE(h + 12, 4));
  data.header.identity.sceneHash = getLE(h + 16, 8);
  data.header.identity.seed = getLE(h + 24, 8);
  data.header.tick = getLE(h + 32, 8);
  std::uint64_t rawSize = getLE(h + 40, 8);
  std::uint64_t packed = getLE(h + 48, 8);
  std::uint64_t checksum = getLE(h + kChecksumOffset, 8);
  if (packed != bytes.size() - kSaveHeaderBytes)
    return corrupt("header says " + std::to_string(packed) + " compressed bytes, file holds " +
                   std::to_string(bytes.size() - kSaveHeaderBytes) + " (truncated or extended)");
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, h, kChecksumOffset);
  XXH3_64bits_update(&st, h + kSaveHeaderBytes, packed);
  std::uint64_t actual = XXH3_64bits_digest(&st);
  if (actual != checksum) return corrupt("checksum mismatch (stored " + hex(checksum) + ", computed " + hex(actual) + ")");
  if (rawSize > maxPayloadBytes)
    return corrupt("payload size " + std::to_string(rawSize) + " exceeds the limit of " + std::to_string(maxPayloadBytes));
  unsigned long long frameSize = ZSTD_getFrameContentSize(h + kSaveHeaderBytes, packed);
  if (frameSize != rawSize) return corrupt("compressed frame size does not match the header");

  std::vector<std::uint8_t> raw;
  if (auto d = decompressZstdFrame(h + kSaveHeaderBytes, static_cast<std::size_t>(packed), rawSize, raw); !d)
    return d.error();
  data.sizes.rawBytes = rawSize;
  data.sizes.compressedBytes = packed;
  data.sizes.fileBytes = bytes.size();

  Reader r(raw.data(), raw.size());
  std::int32_t bv[6];
  for (std::int32_t& v : bv)
    if (!r.i32(v)) return corrupt("payload truncated in the bounds");
  data.bounds = {{bv[0], bv[1], bv[2]}, {bv[3], bv[4], bv[5]}};
  if (!BrickStore::validBounds(data.bounds)) return corrupt("invalid world bounds");
  std::uint32_t n = 0;
  if (!r.u32(n)) return corrupt("payload truncated at the brick count");
  // A SavedBrick takes ~600 bytes in memory and as little as 15 in the payload, so
  // every count, coordinate and kind is checked against the bytes that carry them
  // before the list is allocated: at most one brick per brick of the bounds, and per
  // brick its coordinates (12 bytes), kind (1) and the least its kind needs.
  if (std::uint64_t{n} > boundsBricks(data.bounds))
    return corrupt("brick count " + std::to_string(n) + " exceeds the bricks of the bounds");
  if (std::uint64_t{n} * kMinSavedBrickBytes > r.remaining())
    return corrupt("brick count " + std::to_string(n) + " exceeds the payload");
  const std::uint8_t* coords = r.take(std::size_t{n} * 12);
  const std::uint8_t* kinds = r.take(n);
  if (!coords || !kinds) return corrupt("payload truncated in brick coordinates or kinds");
  std::uint64_t prevKey = 0, deltaCount = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint8_t* p = coords + std::size_t{i} * 12;
    const BrickCoord c{static_cast<std::int32_t>(getLE(p, 4)), static_cast<std::int32_t>(getLE(p + 4, 4)),
                       static_cast<std::int32_t>(getLE(p + 8, 4))};
    if (!data.bounds.containsBrick(c)) return corrupt("brick " + std::to_string(i) + " lies outside the bounds");
    std::uint64_t key = canonicalKey(data.bounds, c);
    if (i > 0 && key <= prevKey) return corrupt("brick " + std::to_string(i) + " is out of order or repeated");
    prevKey = key;
    if (kinds[i] > 1) return corrupt("brick " + std::to_string(i) + " has unknown kind " + std::to_string(kinds[i]));
    deltaCount += kinds[i];
  }
  // Whole bricks: at least a 2-byte canonical form; delta bricks: a 64-byte mask and
  // at least one changed voxel.
  if ((std::uint64_t{n} - deltaCount) * kMinPackedBrickBytes + deltaCount * (64 + 1) > r.remaining())
    return corrupt("payload truncated in brick contents");
  data.bricks.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint8_t* p = coords + std::size_t{i} * 12;
    data.bricks[i].coord = {static_cast<std::int32_t>(getLE(p, 4)), static_cast<std::int32_t>(getLE(p + 4, 4)),
                            static_cast<std::int32_t>(getLE(p + 8, 4))};
    data.bricks[i].delta = kinds[i] == 1;
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    if (data.bricks[i].delta) continue;
    if (!readWholeForm(r, data.bricks[i]))
      return corrupt("brick " + std::to_string(i) + " has a malformed or truncated encoding");
    ++data.sizes.wholeBricks;
  }
  std::uint64_t changedVoxels = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!data.bricks[i].delta) continue;
    bool truncated = false;
    const std::uint64_t changed = readChangeMask(r, data.bricks[i], truncated);
    if (truncated) return corrupt("payload truncated in change masks");
    if (changed == 0) return corrupt("delta brick " + std::to_string(i) + " changes nothing");
    changedVoxels += changed;
    ++data.sizes.deltaBricks;
  }
  if (changedVoxels > r.remaining()) return corrupt("payload truncated in changed voxels");
  for (std::uint32_t i = 0; i < n; ++i) {
    if (data.bricks[i].delta) readChangedVoxels(r, data.bricks[i]);
  }
  data.sizes.changedVoxels = changedVoxels;
  std::uint32_t blobs = 0;
  if (!r.u32(blobs)) return corrupt("payload truncated at the blob count");
  if (std::uint64_t{blobs} * 11 > r.remaining()) return corrupt("blob count exceeds the payload");
  for (std::uint32_t i = 0; i < blobs; ++i) {
    std::uint16_t len = 0;
    if (!r.u16(len)) return corrupt("payload truncated in blob " + std::to_string(i));
    const std::uint8_t* name = r.take(len);
    if (!name) return corrupt("payload truncated in blob " + std::to_string(i) + "'s name");
    std::uint64_t size = 0;
    if (!r.u64(size)) return corrupt("payload truncated in blob " + std::to_string(i));
    if (size > r.remaining()) return corrupt("blob " + std::to_string(i) + " is larger than the payload");
    const std::uint8_t* body = r.take(static_cast<std::size_t>(size));
    SaveBlob& b = data.blobs.emplace_back();
    b.name.assign(reinterpret_cast<const char*>(name), len);
    b.bytes.assign(body, body + size);
  }
  if (auto ok = checkBlobNames(data.blobs); !ok) return corrupt(ok.error().message);
  if (r.remaining() != 0) return corrupt(std::to_string(r.remaining()) + " unexpected bytes after the blobs");
  return data;
}

Result<void> checkSaveIdentity(const SaveHeader& saved, const SaveIdentity& world) {
  std::string diff;
  auto add = [&](const std::string& s) { diff += (diff.empty() ? "" : "; ") + s; };
  if (saved.identity.sceneHash != world.sceneHash)
    add("save is for scene hash " + hex(saved.identity.sceneHash) + ", this world's scene hash is " + hex(world.sceneHash));
  if (saved.identity.seed != world.seed)
    add("save is for seed " + std::to_string(saved.identity.seed) + ", this world has seed " + std::to_string(world.seed));
  if (saved.identity.generatorVersion != world.generatorVersion)
    add("save is for generator version " + std::to_string(saved.identity.generatorVersion) +
        ", this build's generator is version " + std::to_string(world.generatorVersion));
  if (!diff.empty()) return makeError("save does not match this world: " + diff);
  return ok();
}

// ---- one brick's content --------------------------------------------------------------

void encodeBrickContent(const SavedBrick& brick, std::vector<std::uint8_t>& out) {
  Writer w(out);
  w.u8(brick.delta ? 1 : 0);
  if (!brick.delta) {
    writeWholeForm(w, brick);
    return;
  }
  writeChangeMask(w, brick);
  writeChangedVoxels(w, brick);
}

Result<void> decodeBrickContent(std::span<const std::uint8_t> bytes, SavedBrick& out) {
  if (bytes.size() > kMaxBrickContentBytes)
    return makeError("brick content is " + std::to_string(bytes.size()) + " bytes, more than a brick takes");
  Reader r(bytes.data(), bytes.size());
  std::uint8_t kind = 0;
  if (!r.u8(kind)) return makeError("brick content is empty");
  if (kind > 1) return makeError("brick content has unknown kind " + std::to_string(kind));
  out.delta = kind == 1;
  out.changed = {};
  if (!out.delta) {
    if (!readWholeForm(r, out)) return makeError("brick content has a malformed or truncated encoding");
  } else {
    bool truncated = false;
    const std::uint64_t changed = readChangeMask(r, out, truncated);
    if (truncated) return makeError("brick content is truncated in its change mask");
    if (changed == 0) return makeError("delta brick content changes nothing");
    if (changed > r.remaining()) return makeError("brick content is truncated in its changed voxels");
    out.voxels = {};
    readChangedVoxels(r, out);
  }
  if (r.remaining() != 0) return makeError(std::to_string(r.remaining()) + " unexpected bytes after the brick content");
  return ok();
}

// ---- files --------------------------------------------------------------------------

Result<void> writeSaveFile(const std::string& path, std::span<const std::uint8_t> bytes) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return makeError(sysError("cannot create", tmp));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      std::string e = sysError("write failed", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return makeError(e);
    }
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0) {
    std::string e = sysError("fsync failed", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return makeError(e);
  }
  if (::close(fd) != 0) {
    std::string e = sysError("close failed", tmp);
    ::unlink(tmp.c_str());
    return makeError(e);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string e = sysError("cannot rename " + tmp + " to", path);
    ::unlink(tmp.c_str());
    return makeError(e);
  }
  // Make the rename itself durable.
  std::string dir = ".";
  if (auto slash = path.find_last_of('/'); slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return makeError(sysError("cannot open folder to fsync", dir));
  int rc = ::fsync(dfd);
  std::string e = rc != 0 ? sysError("fsync failed", dir) : std::string();
  ::close(dfd);
  if (rc != 0) return makeError(e);
  return ok();
}

Result<std::vector<std::uint8_t>> readFileBytes(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return makeError(sysError("cannot open", path));
  std::vector<std::uint8_t> out;
  struct stat sb {};
  if (::fstat(fd, &sb) == 0 && sb.st_size > 0) out.reserve(static_cast<std::size_t>(sb.st_size));
  std::uint8_t buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string e = sysError("read failed", path);
      ::close(fd);
      return makeError(e);
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  ::close(fd);
  return out;
}

Result<SaveSizes> saveWorld(const std::string& path, const SaveHeader& header, const BrickStore& store,
                            std::vector<SaveBlob> blobs, int level) {
  auto data = captureSave(header, store, std::move(blobs));
  if (!data) return std::move(data).error();
  auto bytes = encodeSave(*data, level);
  if (!bytes) return std::move(bytes).error();
  if (auto w = writeSaveFile(path, *bytes); !w) return w.error();
  return data->sizes;
}

Result<SaveData> loadSave(const std::string& path, const SaveIdentity& world) {
  auto bytes = readFileBytes(path);
  if (!bytes) return std::move(bytes).error();
  auto data = decodeSave(*bytes);
  if (!data) return makeError(path + ": " + data.error().message);
  if (auto id = checkSaveIdentity(data->header, world); !id) return makeError(path + ": " + id.error().message);
  return data;
}

Result<void> applySave(const SaveData& data, BrickStore& store) {
  const WorldBounds& a = data.bounds;
  const WorldBounds& b = store.bounds();
  if (a.minBrick != b.minBrick || a.maxBrick != b.maxBrick) return makeError("save bounds differ from this world's bounds");
  for (const SavedBrick& sb : data.bricks) writeSavedBrick(store, sb);
  return ok();
}

}  // namespace loam::sim
