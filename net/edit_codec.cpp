// Edit log codec (format in net/edit_codec.h).
//
// Grouping rule, and why it keeps the world equal: edits to different bricks commute
// (a voxel edit touches one voxel, a fill one brick), so only the relative order of
// one brick's edits matters. A fill always becomes its own group and closes the
// brick's open voxel group; a voxel edit joins its brick's open voxel group, or
// opens a new one at the end of the group list (also when the open one is full at
// 512 entries). Groups are written in order of opening and a group's entries in log
// order, so a brick's groups appear in the same order as the runs of its edits
// between fills, and within a run the order is the log's.
#include "net/edit_codec.h"

#include <zstd.h>

#include <cstring>
#include <limits>
#include <string>

namespace loam::net {

namespace {

constexpr std::uint8_t kFlagZstd = 1u << 0;
constexpr std::uint8_t kGroupVoxels = 0;
constexpr std::uint8_t kGroupFill = 1;
constexpr std::size_t kMaxGroupEntries = sim::kBrickVoxels;  // u16 count, 1..512
// Level 1: the encoder runs every step on the server thread, and level 3 was no
// smaller on forest-fire logs (2.60 vs 2.58 bytes per edit; edit_codec_test prints it).
constexpr int kZstdLevel = 1;
// Below this the zstd frame header (about 10 bytes) rarely pays for itself.
constexpr std::size_t kMinCompressBytes = 64;
// Largest encoding of one record: a voxel group holding it alone (header 13 + count
// 2 + entry 3). Fills take 14. Bounds the decompressed size for maxRecords records.
constexpr std::size_t kMaxBytesPerRecord = 18;
// Brick coordinates whose voxel coordinates (brick * 8 + 7) fit in int32.
constexpr std::int32_t kMaxBrickCoord = std::numeric_limits<std::int32_t>::max() >> sim::kBrickShift;
constexpr std::int32_t kMinBrickCoord = std::numeric_limits<std::int32_t>::min() >> sim::kBrickShift;

constexpr std::uint32_t kNoGroup = std::numeric_limits<std::uint32_t>::max();

struct Slot {
  sim::BrickCoord brick;
  bool used = false;
  std::uint32_t open = kNoGroup;  // the brick's open voxel group, or kNoGroup
};

struct Group {
  sim::BrickCoord brick;
  std::uint8_t kind = kGroupVoxels;
  std::uint8_t material = 0;     // fills
  std::uint32_t count = 0;       // voxel entries
  std::uint32_t first = 0;       // offset of its entries in the sorted entry list
};

// Per-thread scratch so steady-state encoding and decoding do not allocate.
struct Scratch {
  std::vector<Group> groups;
  std::vector<std::uint32_t> groupOf;     // per edit: its group
  std::vector<std::uint32_t> order;       // edit indices sorted by group, stable
  std::vector<Slot> slots;                // open-addressing table: brick -> open voxel group
  std::vector<std::uint8_t> bytes;        // raw payload (encode) / decompressed payload (decode)
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

std::uint64_t brickHash(sim::BrickCoord b) noexcept {
  const auto u = [](std::int32_t v) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(v)); };
  std::uint64_t k = u(b.x) * 0x9e3779b97f4a7c15ull ^ u(b.y) * 0xc2b2ae3d27d4eb4full ^ u(b.z) * 0x165667b19e3779f9ull;
  k ^= k >> 32;
  return k;
}

void putU8(std::vector<std::uint8_t>& out, std::uint8_t v) { out.push_back(v); }
void putU16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}
void putI32(std::vector<std::uint8_t>& out, std::int32_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
}

// Bounds-checked little-endian reader over a byte span.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> b) : b_(b) {}
  bool done() const { return pos_ == b_.size(); }
  std::size_t pos() const { return pos_; }
  bool u8(std::uint8_t& v) {
    if (b_.size() - pos_ < 1) return false;
    v = b_[pos_++];
    return true;
  }
  bool u16(std::uint16_t& v) {
    if (b_.size() - pos_ < 2) return false;
    v = static_cast<std::uint16_t>(b_[pos_] | (b_[pos_ + 1] << 8));
    pos_ += 2;
    return true;
  }
  bool i32(std::int32_t& v) {
    if (b_.size() - pos_ < 4) return false;
    std::uint32_t u = 0;
    for (int i = 0; i < 4; ++i) u |= std::uint32_t{b_[pos_ + static_cast<std::size_t>(i)]} << (8 * i);
    v = static_cast<std::int32_t>(u);
    pos_ += 4;
    return true;
  }

 private:
  std::span<const std::uint8_t> b_;
  std::size_t pos_ = 0;
};

sim::Error fail(const char* what, std::size_t at) {
  return sim::makeError(std::string("edit log: ") + what + " at byte " + std::to_string(at));
}

void buildGroups(std::span<const sim::EditRecord> edits, Scratch& s) {
  s.groups.clear();
  s.groupOf.resize(edits.size());
  std::size_t slots = 16;
  while (slots < edits.size() * 2) slots *= 2;
  s.slots.assign(slots, Slot{});
  const std::size_t mask = slots - 1;
  for (std::size_t i = 0; i < edits.size(); ++i) {
    const sim::EditRecord& e = edits[i];
    const bool fill = e.kind == sim::EditRecord::Kind::BrickFill;
    const sim::BrickCoord b = fill ? sim::BrickCoord{e.x, e.y, e.z} : sim::brickOf(sim::VoxelCoord{e.x, e.y, e.z});
    std::size_t slot = brickHash(b) & mask;
    while (s.slots[slot].used && s.slots[slot].brick != b) slot = (slot + 1) & mask;
    s.slots[slot].used = true;
    s.slots[slot].brick = b;
    std::uint32_t& open = s.slots[slot].open;
    if (fill) {
      Group g;
      g.brick = b;
      g.kind = kGroupFill;
      g.material = e.after;
      s.groups.push_back(g);
      s.groupOf[i] = kNoGroup;  // fills have no entries
      open = kNoGroup;          // later voxel edits of this brick must come after the fill
      continue;
    }
    if (open == kNoGroup || s.groups[open].count == kMaxGroupEntries) {
      Group g;
      g.brick = b;
      open = static_cast<std::uint32_t>(s.groups.size());
      s.groups.push_back(g);
    }
    s.groupOf[i] = open;
    ++s.groups[open].count;
  }
  // Stable counting sort of voxel edits by group.
  std::uint32_t at = 0;
  for (Group& g : s.groups) {
    g.first = at;
    at += g.count;
  }
  s.order.resize(at);
  for (Group& g : s.groups) g.count = 0;
  for (std::size_t i = 0; i < edits.size(); ++i) {
    if (s.groupOf[i] == kNoGroup) continue;
    Group& g = s.groups[s.groupOf[i]];
    s.order[g.first + g.count++] = static_cast<std::uint32_t>(i);
  }
}

}  // namespace

void encodeEdits(std::span<const sim::EditRecord> edits, std::vector<std::uint8_t>& out) {
  out.clear();
  Scratch& s = scratch();
  buildGroups(edits, s);
  std::vector<std::uint8_t>& raw = s.bytes;
  raw.clear();
  for (const Group& g : s.groups) {
    putI32(raw, g.brick.x);
    putI32(raw, g.brick.y);
    putI32(raw, g.brick.z);
    putU8(raw, g.kind);
    if (g.kind == kGroupFill) {
      putU8(raw, g.material);
      continue;
    }
    putU16(raw, static_cast<std::uint16_t>(g.count));
    for (std::uint32_t k = 0; k < g.count; ++k) {
      const sim::EditRecord& e = edits[s.order[g.first + k]];
      constexpr int kLocal = sim::kBrickSize - 1;
      putU16(raw, static_cast<std::uint16_t>(sim::voxelIndexInBrick(e.x & kLocal, e.y & kLocal, e.z & kLocal)));
      putU8(raw, e.after);
    }
  }
  if (raw.size() >= kMinCompressBytes) {
    const std::size_t bound = ZSTD_compressBound(raw.size());
    out.resize(1 + bound);
    const std::size_t n = ZSTD_compress(out.data() + 1, bound, raw.data(), raw.size(), kZstdLevel);
    if (!ZSTD_isError(n) && n < raw.size()) {
      out[0] = kFlagZstd;
      out.resize(1 + n);
      return;
    }
  }
  out.resize(1 + raw.size());
  out[0] = 0;
  if (!raw.empty()) std::memcpy(out.data() + 1, raw.data(), raw.size());
}

sim::Result<void> decodeEdits(std::span<const std::uint8_t> bytes, std::vector<sim::EditRecord>& out,
                              std::size_t maxRecords) {
  out.clear();
  if (bytes.empty()) return fail("empty buffer", 0);
  const std::uint8_t flags = bytes[0];
  if ((flags & ~kFlagZstd) != 0) return fail("unknown flags", 0);
  std::span<const std::uint8_t> payload = bytes.subspan(1);
  const std::size_t maxPayload = maxRecords > std::numeric_limits<std::size_t>::max() / kMaxBytesPerRecord
                                     ? std::numeric_limits<std::size_t>::max()
                                     : maxRecords * kMaxBytesPerRecord;
  if (flags & kFlagZstd) {
    // Exactly one frame that declares its size: the size is checked before any
    // memory is reserved, and nothing trails the frame.
    const unsigned long long size = ZSTD_getFrameContentSize(payload.data(), payload.size());
    if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR) return fail("bad zstd frame", 1);
    if (size > maxPayload) return fail("decompressed size above the cap", 1);
    const std::size_t frame = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
    if (ZSTD_isError(frame) || frame != payload.size()) return fail("bad zstd frame length", 1);
    std::vector<std::uint8_t>& buf = scratch().bytes;
    buf.resize(static_cast<std::size_t>(size));
    const std::size_t n = ZSTD_decompress(buf.data(), buf.size(), payload.data(), payload.size());
    if (ZSTD_isError(n) || n != buf.size()) return fail("zstd decompression failed", 1);
    payload = std::span<const std::uint8_t>(buf.data(), buf.size());
  } else if (payload.size() > maxPayload) {
    return fail("payload size above the cap", 1);
  }

  Reader r(payload);
  while (!r.done()) {
    const std::size_t at = r.pos();
    sim::BrickCoord b;
    std::uint8_t kind = 0;
    if (!r.i32(b.x) || !r.i32(b.y) || !r.i32(b.z) || !r.u8(kind)) return fail("truncated group header", at);
    if (kind == kGroupFill) {
      std::uint8_t material = 0;
      if (!r.u8(material)) return fail("truncated fill", at);
      if (out.size() >= maxRecords) return fail("too many records", at);
      sim::EditRecord e;
      e.kind = sim::EditRecord::Kind::BrickFill;
      e.x = b.x;
      e.y = b.y;
      e.z = b.z;
      e.after = material;
      out.push_back(e);
      continue;
    }
    if (kind != kGroupVoxels) return fail("bad group kind", at);
    // Voxel coordinates are brick * 8 + local: they must fit in int32.
    if (b.x < kMinBrickCoord || b.x > kMaxBrickCoord || b.y < kMinBrickCoord || b.y > kMaxBrickCoord ||
        b.z < kMinBrickCoord || b.z > kMaxBrickCoord)
      return fail("brick coordinate out of range", at);
    std::uint16_t count = 0;
    if (!r.u16(count)) return fail("truncated voxel count", at);
    if (count == 0 || count > kMaxGroupEntries) return fail("bad voxel count", at);
    if (out.size() + count > maxRecords) return fail("too many records", at);
    for (std::uint16_t k = 0; k < count; ++k) {
      std::uint16_t index = 0;
      std::uint8_t material = 0;
      const std::size_t entryAt = r.pos();
      if (!r.u16(index) || !r.u8(material)) return fail("truncated voxel entry", entryAt);
      if (index >= sim::kBrickVoxels) return fail("bad voxel index", entryAt);
      sim::EditRecord e;
      e.kind = sim::EditRecord::Kind::Voxel;
      const sim::VoxelCoord v = sim::voxelOfBrick(b, index);
      e.x = v.x;
      e.y = v.y;
      e.z = v.z;
      e.after = material;
      out.push_back(e);
    }
  }
  return sim::ok();
}

}  // namespace loam::net
