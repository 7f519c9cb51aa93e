// WaterGrid: the water system's storage (sim/systems/water.h). Water amounts per voxel cell,
// kept per 8x8x8 brick (the store's brick grid) in slots that never move, with an
// open-addressing index from brick coordinate to slot (O(1) lookups for waterAt and
// the flow loops) and a list of slots sorted by packCoordId(brick) (the canonical
// order for hashing, diffing and processing).
//
// A brick without a record holds implicit water: a full cell wherever the world holds
// a liquid voxel, none elsewhere (the generated ponds, which nothing has disturbed).
// A record is made (materialised, from the world) before anything writes water into
// the brick or a voxel of it; from then on the record's amounts are the brick's water.
//
// The amounts and `modified` are the replicated part; every other field of WaterBrick
// is the water system's server-side working data (what the world lets water into,
// pond outlets, the active set), ignored by hash and diff. Only the water system
// (sim/systems/water*.cpp) uses this header.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/assert.h"
#include "sim/core/keyed_random.h"
#include "sim/world/voxel.h"

namespace loam::sim::internal {

/// 64-bit words in a per-cell bit mask of one brick.
inline constexpr int kCellMaskWords = kBrickVoxels / 64;
/// One bit per cell of a brick, bit i = voxelIndexInBrick i.
using CellMask = std::array<std::uint64_t, kCellMaskWords>;

/// True when bit i of m is set.
inline bool testBit(const CellMask& m, unsigned i) noexcept { return ((m[i >> 6] >> (i & 63u)) & 1u) != 0; }
/// Sets bit i of m.
inline void setBit(CellMask& m, unsigned i) noexcept { m[i >> 6] |= std::uint64_t{1} << (i & 63u); }
/// Clears bit i of m.
inline void clearBit(CellMask& m, unsigned i) noexcept { m[i >> 6] &= ~(std::uint64_t{1} << (i & 63u)); }

/// Neighbour directions, in the fixed order every loop uses.
enum WaterDir : int { kWest = 0, kEast = 1, kDown = 2, kUp = 3, kNorth = 4, kSouth = 5 };
inline constexpr int kDirX[6] = {-1, 1, 0, 0, 0, 0};
inline constexpr int kDirY[6] = {0, 0, -1, 1, 0, 0};
inline constexpr int kDirZ[6] = {0, 0, 0, 0, -1, 1};

/// WaterBrick::adj value: the neighbour brick is in the world but has no record (its
/// water is implicit).
inline constexpr std::int32_t kNoBrick = -1;
/// WaterBrick::adj value: the neighbour brick is outside the world.
inline constexpr std::int32_t kOutside = -2;

/// The water of one brick plus the system's working masks for it.
struct WaterBrick {
  BrickCoord coord;                         ///< brick coordinate
  std::uint64_t key = 0;                    ///< packCoordId(coord)
  std::uint32_t wet = 0;                    ///< cells with amount > 0
  std::array<std::uint16_t, kBrickVoxels> amount{};  ///< replicated: water units per cell
  /// Replicated: the brick's water changed since generation (a WaterChange was recorded
  /// for it, or a save restored it). A record that is not modified holds exactly its
  /// implicit water, so hashes, diffs, saves and cell catch-ups skip it: a mirror that
  /// never materialised it agrees.
  bool modified = false;
  // Working data (server side).
  CellMask open{};     ///< the world voxel is air or a liquid (water may be there)
  CellMask sink{};     ///< pond outlets and stream surfaces: water reaching them leaves the world
  CellMask held{};     ///< generated stream water: stays full, feeds open cells beside or below it
  CellMask next{};     ///< cells to process next tick (the active set)
  CellMask current{};  ///< cells being processed this tick
  std::array<std::int32_t, 6> adj{kNoBrick, kNoBrick, kNoBrick, kNoBrick, kNoBrick, kNoBrick};  ///< neighbour slots
  std::int32_t tick = -1;  ///< index of this brick's per-tick scratch, -1 when untouched this tick
  bool queued = false;     ///< listed in WaterState::queue
};

/// Cell storage by brick. Copyable (deep). Grows when water reaches a new brick
/// (allocation; reserve() up front keeps steady-state steps allocation-free).
class WaterGrid {
 public:
  /// Empties the grid for a world with bounds.
  void reset(const WorldBounds& bounds) {
    bounds_ = bounds;
    bricks_.clear();
    sortedKeys_.clear();
    sortedSlots_.clear();
    table_.assign(1024, 0);
    wetCells_ = 0;
  }
  /// Reserves room for n bricks (and their index).
  void reserve(std::size_t n) {
    bricks_.reserve(n);
    sortedKeys_.reserve(n);
    sortedSlots_.reserve(n);
    if (table_.size() < 2 * n) rehash(std::bit_ceil(2 * n));
  }

  /// Wet cells (amount > 0). O(1). (tools print it as the water cell count)
  std::size_t size() const noexcept { return wetCells_; }
  /// Bricks holding a record (wet now or at some time). O(1).
  std::size_t brickCount() const noexcept { return bricks_.size(); }
  /// The world bounds given to reset().
  const WorldBounds& bounds() const noexcept { return bounds_; }

  /// The slot of brick b, or -1. O(1) expected.
  std::int32_t find(BrickCoord b) const noexcept {
    if (table_.empty()) return -1;
    const std::uint64_t k = packCoordId(b.x, b.y, b.z);
    const std::size_t mask = table_.size() - 1;
    for (std::size_t i = detail::mix64(k) & mask;; i = (i + 1) & mask) {
      const std::uint32_t e = table_[i];
      if (e == 0) return -1;
      if (bricks_[e - 1].key == k) return static_cast<std::int32_t>(e - 1);
    }
  }

  /// Adds a dry record for brick b (which must not have one) and links it with its
  /// neighbours. Returns its slot. Allocates when the grid grows past its reserve.
  std::uint32_t add(BrickCoord b) {
    const std::uint32_t slot = appendRecord(b);
    const std::uint64_t key = bricks_[slot].key;
    auto pos = std::lower_bound(sortedKeys_.begin(), sortedKeys_.end(), key);
    const auto at = pos - sortedKeys_.begin();
    sortedKeys_.insert(pos, key);
    sortedSlots_.insert(sortedSlots_.begin() + at, slot);
    link(slot);
    return slot;
  }

  /// The record in slot (valid until the next add()).
  WaterBrick& brick(std::uint32_t slot) noexcept { return bricks_[slot]; }
  const WaterBrick& brick(std::uint32_t slot) const noexcept { return bricks_[slot]; }
  /// Slots in canonical order (packCoordId of the brick ascending).
  std::span<const std::uint32_t> sorted() const noexcept { return sortedSlots_; }

  /// Water units at voxel v (0 when dry or outside). O(1) expected, no allocation.
  std::uint16_t amountAt(VoxelCoord v) const noexcept {
    const std::int32_t s = find(brickOf(v));
    if (s < 0) return 0;
    return bricks_[static_cast<std::size_t>(s)].amount[static_cast<std::size_t>(
        voxelIndexInBrick(v.x & (kBrickSize - 1), v.y & (kBrickSize - 1), v.z & (kBrickSize - 1)))];
  }

  /// Sets one amount, keeping the wet counts.
  void setAmount(std::uint32_t slot, unsigned idx, std::uint16_t a) noexcept {
    WaterBrick& b = bricks_[slot];
    noteChange(b, b.amount[idx], a);
    b.amount[idx] = a;
  }
  /// Updates the wet counts for an amount that changed from `before` to `after`
  /// (for loops that write amounts directly).
  void noteChange(WaterBrick& b, std::uint32_t before, std::uint32_t after) noexcept {
    if ((before == 0) == (after == 0)) return;
    if (after == 0) {
      --b.wet;
      --wetCells_;
    } else {
      ++b.wet;
      ++wetCells_;
    }
  }

 private:
  // A dry record for brick b (which must not have one) at the end of bricks_, in the
  // index; not yet in the canonical list nor linked (add does both).
  std::uint32_t appendRecord(BrickCoord b) {
    LOAM_ASSERT(find(b) < 0);
    const auto slot = static_cast<std::uint32_t>(bricks_.size());
    WaterBrick& nb = bricks_.emplace_back();
    nb.coord = b;
    nb.key = packCoordId(b.x, b.y, b.z);
    if ((bricks_.size() + 1) * 2 > table_.size()) rehash(table_.size() * 2);
    insertIndex(nb.key, slot);
    return slot;
  }
  // Links the record in slot (indexed) with its neighbours' records, both ways.
  void link(std::uint32_t slot) noexcept {
    const BrickCoord b = bricks_[slot].coord;
    for (int d = 0; d < 6; ++d) {
      const BrickCoord o{b.x + kDirX[d], b.y + kDirY[d], b.z + kDirZ[d]};
      if (!bounds_.containsBrick(o)) {
        bricks_[slot].adj[d] = kOutside;
        continue;
      }
      const std::int32_t os = find(o);
      bricks_[slot].adj[d] = os;  // -1 == kNoBrick
      if (os >= 0) bricks_[static_cast<std::size_t>(os)].adj[d ^ 1] = static_cast<std::int32_t>(slot);
    }
  }
  void insertIndex(std::uint64_t key, std::uint32_t slot) noexcept {
    const std::size_t mask = table_.size() - 1;
    std::size_t i = detail::mix64(key) & mask;
    while (table_[i] != 0) i = (i + 1) & mask;
    table_[i] = slot + 1;
  }
  void rehash(std::size_t size) {
    table_.assign(size, 0);
    for (std::size_t s = 0; s < bricks_.size(); ++s) insertIndex(bricks_[s].key, static_cast<std::uint32_t>(s));
  }

  WorldBounds bounds_;
  std::vector<WaterBrick> bricks_;
  std::vector<std::uint64_t> sortedKeys_;   // ascending
  std::vector<std::uint32_t> sortedSlots_;  // parallel to sortedKeys_
  std::vector<std::uint32_t> table_;        // slot + 1, 0 = empty; size a power of two
  std::size_t wetCells_ = 0;
};

/// What a source's flow does this tick, from its cached route.
enum class WaterRouteEnd : std::uint8_t {
  Blocked = 0,  ///< the source cell is solid: nothing flows
  Leaves = 1,   ///< the route reaches the world's edge or a pond outlet: the water leaves
  Collects = 2, ///< the route ends where water collects (a hole, a basin): deposited there
};

/// A scene water source and its cached route (working data).
struct WaterSourceRoute {
  VoxelCoord start;               ///< where the water appears (a waterfall's lip centre)
  std::uint32_t rate = 0;         ///< water units per tick (constant)
  bool valid = false;             ///< the route below matches the world and the water
  std::uint64_t routedTick = 0;   ///< tick it was computed
  WaterRouteEnd end = WaterRouteEnd::Blocked;
  VoxelCoord collect;             ///< Collects: the cell the water is deposited in
  VoxelCoord landing;             ///< where the first fall lands
  std::int32_t fall = 0;          ///< voxels of the first fall
  bool landsInWater = false;      ///< the first fall lands on water
  std::int32_t searched = 0;      ///< neighbour cells the last computation looked at
  std::vector<std::uint64_t> watch;  ///< packCoordId of every brick the route read, sorted
};

/// A pond outlet: the layer of cells just above the pond's generated surface, inside
/// its radius. Water reaching it leaves the world (the pond overflows), so sources
/// feeding the pond cannot flood the world.
struct PondOutlet {
  std::int32_t x = 0, z = 0;  ///< centre, voxels
  std::int64_t radius2 = 0;   ///< squared radius, voxels^2
  std::int32_t y = 0;         ///< the outlet layer: first voxel above the generated water
};

/// A pond's disc in voxels: its water is free (not held) even where a stream runs.
struct PondDisc {
  std::int64_t x = 0, z = 0;  ///< centre, voxels
  std::int64_t r2 = 0;        ///< squared radius, voxels^2
};

/// A flow from one cell to another (dst kVoidCell: out of the world).
struct WaterMove {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  std::uint32_t amount = 0;
  std::uint32_t level = 0;  ///< lateral flows: the level the source fills to
};
inline constexpr std::uint32_t kVoidCell = 0xFFFFFFFFu;

/// Falling water that landed this tick (splash candidates).
struct WaterLanding {
  VoxelCoord cell;
  std::int32_t fall = 0;  ///< voxels fallen
};

/// Per-tick scratch of one touched brick.
struct WaterTickBrick {
  std::uint32_t slot = 0;
  CellMask moved{};    ///< cells whose amount changed at some point this tick
  CellMask pending{};  ///< cells with proposed lateral inflow
  std::array<std::uint16_t, kBrickVoxels> start{};     ///< amount before the first change (where moved)
  std::array<std::uint16_t, kBrickVoxels> inflow{};    ///< proposed lateral inflow (where pending)
  std::array<std::uint16_t, kBrickVoxels> minLevel{};  ///< lowest proposing source level (where pending)
};

/// Reused working memory of the water step (never state).
struct WaterScratch {
  std::vector<std::uint32_t> cells;          ///< cells processed this tick (slot << 9 | index)
  std::vector<std::uint32_t> bricks;         ///< slots processed this tick
  std::vector<WaterMove> moves;              ///< flows of the current phase
  std::vector<WaterTickBrick> tick;          ///< touched-brick scratch, first tickUsed valid
  std::uint32_t tickUsed = 0;
  std::vector<std::uint32_t> tickOrder;      ///< touched scratch indices in canonical order
  std::vector<WaterLanding> landings;        ///< last simulated tick's landings
  std::vector<WaterLanding> falls;           ///< this tick's falls (top cell, length)
};

/// A route search in progress (one source at a time; it may span several ticks).
struct WaterRouteSearch {
  std::int32_t source = -1;        ///< index of the source being routed, -1 when idle
  bool flat = false;               ///< searching a flat (else descending)
  bool stale = false;              ///< a floor it read changed meanwhile: redo it afterwards
  VoxelCoord cur;                  ///< the surface cell reached
  std::int32_t flatY = 0;          ///< height of the flat being searched
  std::size_t head = 0;            ///< next queue entry of the flat search
  std::int32_t used = 0;           ///< neighbour evaluations so far
  std::size_t seenCount = 0;       ///< entries in `seen`
  VoxelCoord landing;              ///< where the first fall landed
  std::int32_t fall = 0;
  bool landsInWater = false;
  std::vector<VoxelCoord> queue;          ///< flat search queue
  std::vector<std::uint64_t> seen;        ///< cells queued (open addressing, key + 1, 0 = empty)
  std::vector<std::uint64_t> bricks;      ///< packCoordId of the bricks read (unique)
  std::vector<std::uint64_t> brickSeen;   ///< set over bricks (open addressing)
};

}  // namespace loam::sim::internal
