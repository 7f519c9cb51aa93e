// Edit log codec (format in net/edit_codec.h).
//
// Grouping rule, and why it keeps the world equal: edits to different bricks commute
// (a voxel edit touches one voxel, a fill one brick), so only the relative order of
// one brick's edits matters. A fill always becomes its own group and closes the
// brick's open voxel group; a voxel edit joins its brick's open voxel group, or
// opens a new one at the end of the group list (also when the open one is full at
// 512 entries). Groups are written in order of opening and a group's entries in log
// order, so a brick's groups appear in the same order as the runs of its edits
// between fills, and within a run the order is the log's. Fire records follow the
// groups in the step's order: a follower applies them after the step's edits.
#include "net/edit_codec.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "sim/core/state_bytes.h"
#include "sim/step/mirror.h"

namespace loam::net {

namespace {

constexpr std::uint8_t kGroupVoxels = 0;
constexpr std::uint8_t kGroupFill = 1;
constexpr std::uint8_t kGroupFireSet = 2;
constexpr std::uint8_t kGroupFireOut = 3;
constexpr std::size_t kMaxGroupEntries = sim::kBrickVoxels;  // u16 count, 1..512
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

// Per-thread scratch so steady-state encoding does not allocate.
struct Scratch {
  std::vector<Group> groups;
  std::vector<std::uint32_t> groupOf;     // per edit: its group
  std::vector<std::uint32_t> order;       // edit indices sorted by group, stable
  std::vector<Slot> slots;                // open-addressing table: brick -> open voxel group
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

// Zigzag of b - a in 32-bit wrapping arithmetic (any two coordinates fit 5 bytes).
std::uint32_t zigzagDelta(std::int32_t a, std::int32_t b) {
  return sim::zigzag(static_cast<std::int32_t>(static_cast<std::uint32_t>(b) - static_cast<std::uint32_t>(a)));
}
std::int32_t unzigzagAdd(std::int32_t a, std::uint32_t z) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(sim::unzigzag(z)));
}

// sim::ByteReader with a success flag on every read (the decoder reports where it
// stopped itself).
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> b) : r_(b, "edit log") {}
  bool done() const { return r_.left() == 0; }
  std::size_t pos() const { return r_.pos(); }
  bool u8(std::uint8_t& v) { return (v = r_.u8(), r_.ok()); }
  bool u16(std::uint16_t& v) { return (v = r_.u16(), r_.ok()); }
  bool u64(std::uint64_t& v) { return (v = r_.u64(), r_.ok()); }
  bool varint(std::uint32_t& v) { return (v = r_.varint(), r_.ok()); }
  bool bytes(std::size_t n, std::span<const std::uint8_t>& v) { return (v = r_.bytes(n), r_.ok()); }

 private:
  sim::ByteReader r_;
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
    const sim::BrickCoord b = sim::editBrick(e);
    std::size_t slot = brickHash(b) & mask;
    while (s.slots[slot].used && s.slots[slot].brick != b) slot = (slot + 1) & mask;
    s.slots[slot].used = true;
    s.slots[slot].brick = b;
    std::uint32_t& open = s.slots[slot].open;
    if (e.kind != sim::EditRecord::Kind::Voxel) {
      Group g;
      g.brick = b;
      g.kind = kGroupFill;
      g.material = e.after;
      s.groups.push_back(g);
      s.groupOf[i] = kNoGroup;  // fills have no entries
      open = kNoGroup;          // later voxel edits of this brick must come after it
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

void encodeEdits(std::span<const sim::EditRecord> edits, std::span<const sim::FireChange> fire, std::uint64_t tick,
                 std::vector<std::uint8_t>& out) {
  out.clear();
  sim::ByteWriter w(out);
  Scratch& s = scratch();
  buildGroups(edits, s);
  sim::BrickCoord prev{0, 0, 0};
  for (const Group& g : s.groups) {
    w.u8(g.kind);
    w.varint(zigzagDelta(prev.x, g.brick.x));
    w.varint(zigzagDelta(prev.y, g.brick.y));
    w.varint(zigzagDelta(prev.z, g.brick.z));
    prev = g.brick;
    if (g.kind == kGroupFill) {
      w.u8(g.material);
      continue;
    }
    w.varint(g.count);
    for (std::uint32_t k = 0; k < g.count; ++k) {
      const sim::EditRecord& e = edits[s.order[g.first + k]];
      constexpr int kLocal = sim::kBrickSize - 1;
      w.u16(static_cast<std::uint16_t>(sim::voxelIndexInBrick(e.x & kLocal, e.y & kLocal, e.z & kLocal)));
      w.u8(e.after);
    }
  }
  for (const sim::FireChange& f : fire) {
    const sim::BrickCoord b = sim::brickOf(f.corner);
    w.u8(f.endTick == 0 ? kGroupFireOut : kGroupFireSet);
    w.varint(zigzagDelta(prev.x, b.x));
    w.varint(zigzagDelta(prev.y, b.y));
    w.varint(zigzagDelta(prev.z, b.z));
    prev = b;
    if (f.endTick == 0) continue;
    const bool uniform = (f.flags & sim::kFireUniform) != 0;
    w.u8(f.peak);
    w.varint(static_cast<std::uint32_t>(tick - f.start));
    w.varint(f.endTick - f.start);
    w.u8(uniform ? 1 : 0);
    if (uniform) w.u8(f.result);
  }
}

void encodeStepEdits(std::span<const CellEdits> cells, std::vector<std::uint8_t>& out) {
  out.clear();
  sim::ByteWriter w(out);
  sim::CellCoord prev{0, 0};
  for (const CellEdits& c : cells) {
    w.varint(zigzagDelta(prev.x, c.cell.x));
    w.varint(zigzagDelta(prev.z, c.cell.z));
    prev = c.cell;
    w.u64(c.hash);
    w.varint(static_cast<std::uint32_t>(c.edits.size()));
    out.insert(out.end(), c.edits.begin(), c.edits.end());
  }
}

sim::Result<void> decodeStepEdits(std::span<const std::uint8_t> bytes, std::vector<CellEdits>& cells) {
  cells.clear();
  Reader r(bytes);
  sim::CellCoord cell{0, 0};
  while (!r.done()) {
    const std::size_t at = r.pos();
    std::uint32_t dx = 0, dz = 0, length = 0;
    std::uint64_t hash = 0;
    if (!r.varint(dx) || !r.varint(dz) || !r.u64(hash) || !r.varint(length)) return fail("truncated cell header", at);
    const sim::CellCoord next{unzigzagAdd(cell.x, dx), unzigzagAdd(cell.z, dz)};
    if (!cells.empty() && !(cell < next)) return fail("cells out of order", at);
    cell = next;
    std::span<const std::uint8_t> edits;
    if (!r.bytes(length, edits)) return fail("truncated cell edits", at);
    cells.push_back(CellEdits{cell, hash, edits});
  }
  return sim::ok();
}

sim::Result<void> decodeEdits(std::span<const std::uint8_t> payload, std::uint64_t tick,
                              std::vector<sim::EditRecord>& out, std::vector<sim::FireChange>& fire,
                              std::size_t maxRecords) {
  out.clear();
  fire.clear();
  Reader r(payload);
  sim::BrickCoord b{0, 0, 0};
  std::size_t budget = maxRecords;  // voxel edits and fire records left
  while (!r.done()) {
    const std::size_t at = r.pos();
    std::uint8_t kind = 0;
    std::uint32_t dx = 0, dy = 0, dz = 0;
    if (!r.u8(kind) || !r.varint(dx) || !r.varint(dy) || !r.varint(dz)) return fail("truncated group header", at);
    b = sim::BrickCoord{unzigzagAdd(b.x, dx), unzigzagAdd(b.y, dy), unzigzagAdd(b.z, dz)};
    // Voxel coordinates are brick * 8 + local: they must fit in int32.
    if (b.x < kMinBrickCoord || b.x > kMaxBrickCoord || b.y < kMinBrickCoord || b.y > kMaxBrickCoord ||
        b.z < kMinBrickCoord || b.z > kMaxBrickCoord)
      return fail("brick coordinate out of range", at);
    sim::EditRecord e;
    e.x = b.x;
    e.y = b.y;
    e.z = b.z;
    if (kind == kGroupFill) {
      if (!r.u8(e.after)) return fail("truncated fill", at);
      if (budget == 0) return fail("too many records", at);
      --budget;
      e.kind = sim::EditRecord::Kind::BrickFill;
      out.push_back(e);
      continue;
    }
    if (kind == kGroupFireSet || kind == kGroupFireOut) {
      if (budget == 0) return fail("too many records", at);
      --budget;
      sim::FireChange f;
      f.corner = sim::VoxelCoord{b.x * sim::kBrickSize, b.y * sim::kBrickSize, b.z * sim::kBrickSize};
      if (kind == kGroupFireSet) {
        std::uint32_t age = 0, duration = 0;
        std::uint8_t uniform = 0;
        if (!r.u8(f.peak) || !r.varint(age) || !r.varint(duration) || !r.u8(uniform)) return fail("truncated fire", at);
        if (f.peak == 0 || age > tick || uniform > 1 || duration == 0 || duration > 65535 || age >= duration)
          return fail("bad fire record", at);
        if (uniform && !r.u8(f.result)) return fail("truncated fire", at);
        f.start = static_cast<std::uint32_t>(tick - age);
        f.endTick = f.start + duration;
        f.flags = uniform ? sim::kFireUniform : 0;
      }
      fire.push_back(f);
      continue;
    }
    if (kind != kGroupVoxels) return fail("bad group kind", at);
    std::uint32_t count = 0;
    if (!r.varint(count)) return fail("truncated voxel count", at);
    if (count == 0 || count > kMaxGroupEntries) return fail("bad voxel count", at);
    if (budget < count) return fail("too many records", at);
    budget -= count;
    e.kind = sim::EditRecord::Kind::Voxel;
    for (std::uint32_t k = 0; k < count; ++k) {
      std::uint16_t index = 0;
      const std::size_t entryAt = r.pos();
      if (!r.u16(index) || !r.u8(e.after)) return fail("truncated voxel entry", entryAt);
      if (index >= sim::kBrickVoxels) return fail("bad voxel index", entryAt);
      const sim::VoxelCoord v = sim::voxelOfBrick(b, index);
      e.x = v.x;
      e.y = v.y;
      e.z = v.z;
      out.push_back(e);
    }
  }
  return sim::ok();
}

std::span<const StepCells::Cell> StepCells::group(const sim::StepOutput& out) {
  const auto cellOfEdit = [](const sim::EditRecord& e) { return sim::cellOf(sim::editBrick(e)); };
  const auto cellOfFire = [](const sim::FireChange& f) { return sim::cellOf(sim::brickOf(f.corner)); };
  sim::followerEdits(out, edits_);
  std::stable_sort(edits_.begin(), edits_.end(),
                   [&](const sim::EditRecord& a, const sim::EditRecord& b) { return cellOfEdit(a) < cellOfEdit(b); });
  fire_.assign(out.fire.begin(), out.fire.end());
  std::stable_sort(fire_.begin(), fire_.end(),
                   [&](const sim::FireChange& a, const sim::FireChange& b) { return cellOfFire(a) < cellOfFire(b); });
  swept_.clear();
  for (const sim::SweepRun& run : out.sweeps) swept_.push_back(cellOfEdit(out.edits[run.firstEdit]));
  std::sort(swept_.begin(), swept_.end());
  swept_.erase(std::unique(swept_.begin(), swept_.end()), swept_.end());
  cells_.clear();
  std::size_t i = 0, j = 0, k = 0;
  while (i < edits_.size() || j < fire_.size() || k < swept_.size()) {
    std::optional<sim::CellCoord> next;
    const auto consider = [&](sim::CellCoord c) {
      if (!next || c < *next) next = c;
    };
    if (i < edits_.size()) consider(cellOfEdit(edits_[i]));
    if (j < fire_.size()) consider(cellOfFire(fire_[j]));
    if (k < swept_.size()) consider(swept_[k]);
    const sim::CellCoord cell = *next;
    std::size_t ie = i, je = j;
    while (ie < edits_.size() && cellOfEdit(edits_[ie]) == cell) ++ie;
    while (je < fire_.size() && cellOfFire(fire_[je]) == cell) ++je;
    if (k < swept_.size() && swept_[k] == cell) ++k;
    cells_.push_back({cell, std::span(edits_).subspan(i, ie - i), std::span(fire_).subspan(j, je - j)});
    i = ie;
    j = je;
  }
  return cells_;
}

}  // namespace loam::net
