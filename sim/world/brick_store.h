// BrickStore: the sparse voxel world. 5 cm voxels in 8^3 bricks in 16^3-brick chunks,
// inside WorldBounds that may be kilometres across (validBounds).
//
// Storage: a map from chunk coordinates to the chunks that are resident; a chunk that
// is not resident reads as air. A resident chunk that is one material stores only that
// material; otherwise it holds one 16-bit slot per brick. A brick that is one material
// is its material alone; a mixed brick is palette-compressed with 1, 2, 4 or 8 bits per
// voxel in a pool owned by its chunk. Palettes grow as materials appear and shrink
// (repacked to fewer bits) as they disappear; a brick with one material left collapses
// to a uniform slot. Chunks collapse to a single material in compactChunk() /
// markGenerated(), and markGenerated() releases the chunks that are all air.
//
// Chunk handles: a resident chunk has a slot (0..chunkCount()-1, chunkIndex); slots
// are stable until markGenerated() or releaseColumns(), which renumber them (a chunk
// made resident takes the next slot; the others keep theirs). slotEpoch() counts
// renumberings: a consumer that keeps data by slot (audio's BrickOccupancy) compares
// it and re-keys by chunkCoord() when it moved. Nothing may depend on slot order:
// canonicalChunks() lists the slots in canonical order.
//
// Canonical order: chunks by (z, y, x) with x fastest, then the bricks of a chunk by
// brickIndexInChunk (x fastest), then voxels by voxelIndexInBrick. Every iteration,
// the world hash and saves use it.
//
// Threads: reads may run concurrently with each other. Writes (set, writeBrick,
// fillBrick, fillChunk, compactChunk, clearing change bits) to bricks of different
// resident chunks may run concurrently from different threads, without locks, as long
// as no thread reads those chunks meanwhile. Making a chunk resident (addChunk, or the
// first write that is not air to a chunk that is not) and everything else is
// single-threaded.
//
// Streaming: a store given a ColumnSource (setColumnSource) reads as the whole
// generated world although only some columns are resident: the first read or write
// of a column that is not present asks the source to generate it (and waits), and
// releaseColumns drops unmodified columns again. A server's store also gets the
// columns holding edits from its world database (setStoredColumns): their rows are
// applied as each column arrives, so those columns may leave memory too (dropColumns)
// once the edits are stored. What is read never depends on which columns are present. A streamed store is single-threaded (any read may generate),
// and nothing may read or write it from inside forEachBrick / forEachChanged /
// forEachModified callbacks (a column arriving reorders the canonical list).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "sim/core/assert.h"
#include "sim/world/brick_view.h"
#include "sim/world/coarse_grid.h"
#include "sim/world/column_source.h"
#include "sim/world/internal/brick_chunk.h"
#include "sim/world/internal/chunk_map.h"
#include "sim/world/voxel.h"

namespace loam::sim {

/// How many consumers of brick changes one store serves (subscribeChanges). Each
/// costs one bit per brick of every changed chunk; four covers a client (its mesher
/// and its sound) with room for tests and tools.
inline constexpr int kMaxChangeSubscribers = 4;

/// A consumer of brick changes, from BrickStore::subscribeChanges: its own bit per
/// brick, set by every change of the brick's content and cleared only through this
/// handle. Value 1..kMaxChangeSubscribers; 0 (the default) is no subscriber.
struct ChangeSubscriber {
  std::uint8_t value = 0;
  friend bool operator==(const ChangeSubscriber&, const ChangeSubscriber&) = default;
};

/// Which bricks an iteration or box query reports.
enum class BrickFilter : std::uint8_t {
  All,     ///< every brick in range, air included
  NonAir,  ///< every brick that is not uniform air
  Mixed,   ///< palette bricks only (more than one material)
};

/// A box of voxels, [min, max) on each axis (max exclusive).
struct VoxelBox {
  VoxelCoord min;  ///< first voxel inside
  VoxelCoord max;  ///< one past the last voxel inside, per axis
};

/// One brick reported by a box query.
struct BrickHit {
  BrickCoord coord;  ///< brick position
  BrickView view;    ///< its content (valid until the next write to its chunk)
};

/// Heap use by kind, for budgets and benchmarks (bytes are capacities held).
struct StoreMemoryStats {
  std::size_t totalBytes = 0;         ///< same as BrickStore::memoryBytes()
  std::size_t chunkTableBytes = 0;    ///< the chunk map, slots and canonical list
  std::size_t chunkSlotBytes = 0;     ///< slot arrays + entries of non-uniform chunks
  std::size_t poolBytes = 0;          ///< palette records (capacity)
  std::size_t dirtyBytes = 0;         ///< dirty bit sets
  std::size_t baselineBytes = 0;      ///< generated content kept for modified bricks
  std::size_t uniformChunks = 0;      ///< chunks stored as one material
  std::size_t expandedChunks = 0;     ///< chunks holding per-brick slots
  std::size_t uniformBricks = 0;      ///< uniform bricks inside expanded chunks
  std::size_t mixedBricks[4] = {};    ///< palette bricks at 1, 2, 4, 8 bits per voxel
};

/// The sparse voxel world inside bounds. Movable and copyable (deep copy).
class BrickStore {
 public:
  /// An all-air store inside bounds, with no chunk resident. bounds must be whole
  /// chunks aligned to the chunk grid (validBounds); anything else is a programmer
  /// error (LOAM_ASSERT; scene loaders check it first). Allocates nothing.
  explicit BrickStore(WorldBounds bounds, const CoarseLut& coarseLut = defaultCoarseLut());
  /// Deep copy (content, change bits and subscriptions, generated content kept).
  /// Allocates as much as other holds.
  BrickStore(const BrickStore& other);
  /// Deep copy assignment.
  BrickStore& operator=(const BrickStore& other);
  /// Moves without allocating; the moved-from store may only be destroyed or
  /// assigned to.
  BrickStore(BrickStore&&) noexcept = default;
  /// Move assignment (same rule).
  BrickStore& operator=(BrickStore&&) noexcept = default;
  /// Frees everything.
  ~BrickStore();

  /// True when bounds are non-empty, aligned to chunk boundaries (multiples of 16
  /// bricks) and within +-2^20 chunks on every axis (+-6,700 km).
  static bool validBounds(const WorldBounds& bounds) noexcept;

  /// The bounds given at construction, in bricks.
  const WorldBounds& bounds() const noexcept { return bounds_; }

  // ---- voxel access -------------------------------------------------------------

  /// The material at voxel (x, y, z); air outside the bounds. O(1), no allocation,
  /// inlined. Thread: any, while no thread writes that chunk.
  MaterialId get(int x, int y, int z) const noexcept;
  /// The material at voxel v; air outside the bounds.
  MaterialId get(VoxelCoord v) const noexcept { return get(v.x, v.y, v.z); }

  /// Sets voxel v to m. Returns false (and changes nothing) outside the bounds; true
  /// otherwise. When the content changes, marks the brick changed for every
  /// subscriber and modified. May allocate (expanding a chunk or growing a palette). Thread: see top.
  bool set(VoxelCoord v, MaterialId m) noexcept;
  /// set() with separate coordinates.
  bool set(int x, int y, int z, MaterialId m) noexcept { return set(VoxelCoord{x, y, z}, m); }

  // ---- brick access -------------------------------------------------------------

  /// Replaces brick b with 512 materials in canonical order (voxelIndexInBrick).
  /// Returns false outside the bounds. Marks changed/modified only when the content
  /// changes. Chooses the smallest encoding (uniform, 1, 2, 4 or 8 bits; palette in
  /// ascending material order). May allocate. Thread: see top (per chunk).
  bool writeBrick(BrickCoord b, const MaterialId* voxels512) noexcept;
  /// Sets every voxel of brick b to m. Returns false outside the bounds.
  bool fillBrick(BrickCoord b, MaterialId m) noexcept;
  /// Sets every voxel of chunk c to m and frees its per-brick storage; marks changed
  /// bricks. Returns false when c is outside the bounds.
  bool fillChunk(ChunkCoord c, MaterialId m) noexcept;
  /// Copies brick b into out512 (canonical order); air outside the bounds.
  void readBrick(BrickCoord b, MaterialId* out512) const noexcept;
  /// A view of brick b (uniform air outside the bounds). O(1).
  BrickView brick(BrickCoord b) const noexcept;

  /// Calls fn(BrickCoord, BrickView) for every brick of the resident chunks passing
  /// filter, in canonical order (chunks that are not resident are air and are not
  /// visited). Uniform chunks are visited brick by brick (unless filtered out whole).
  template <class F>
  void forEachBrick(F&& fn, BrickFilter filter = BrickFilter::NonAir) const;

  /// Calls fn(BrickCoord, BrickView) for the bricks overlapping box (clipped to the
  /// bounds) that pass filter, z then y then x (x fastest). Never touches voxels.
  template <class F>
  void forEachBrickInBox(const VoxelBox& box, F&& fn, BrickFilter filter = BrickFilter::NonAir) const;
  /// Appends the bricks overlapping box that pass filter to out (order as above);
  /// returns how many were appended. Allocates only if out must grow.
  std::size_t queryBox(const VoxelBox& box, std::vector<BrickHit>& out,
                       BrickFilter filter = BrickFilter::NonAir) const;

  // ---- chunks -------------------------------------------------------------------

  /// Number of resident chunks.
  int chunkCount() const noexcept { return static_cast<int>(chunks_.size()); }
  /// The coordinates of the chunk in slot i (0..chunkCount()-1).
  ChunkCoord chunkCoord(int i) const noexcept { return coords_[static_cast<std::size_t>(i)]; }
  /// The slot of chunk c, or -1 when c is not resident (it reads as air). O(1).
  int chunkIndex(ChunkCoord c) const noexcept;
  /// The slots of every resident chunk in canonical chunk order.
  std::span<const int> canonicalChunks() const noexcept { return canonical_; }
  /// How many times slots were renumbered (markGenerated, releaseColumns; see "Chunk
  /// handles" at the top). Unchanged by writes, addChunk, adoptChunks and columns
  /// arriving, which only append slots. Copies carry it. O(1).
  std::uint64_t slotEpoch() const noexcept { return slotEpoch_; }
  /// Makes chunk c resident (all air) if it is not; returns its slot, or -1 outside
  /// the bounds. Single-threaded; lets threads write different chunks afterwards.
  int addChunk(ChunkCoord c);
  /// Moves every chunk of from that is not all air and not resident here into this
  /// store as generated content: not modified (so the world hash and saves ignore it
  /// until it is edited), and changed for every subscriber (meshes, caches and
  /// probes see it arrive). A chunk already resident here is left as it is (it may
  /// hold edits) and stays in from. from must have this store's bounds; its coarse
  /// sums are recomputed if its lookup differs. Returns the number moved. This is how
  /// chunks generated on demand (ChunkGenerator, sim/gen/generator.h) join a world.
  /// Single-threaded, like addChunk.
  int adoptChunks(BrickStore& from);
  /// The material when every voxel of slot i is one material (however it is
  /// stored), else nullopt. O(4096) for an expanded chunk, O(1) otherwise.
  std::optional<MaterialId> chunkUniform(int i) const noexcept;
  /// True when slot i is stored as one material (no per-brick storage).
  bool chunkIsCollapsed(int i) const noexcept { return chunks_[static_cast<std::size_t>(i)].data == nullptr; }
  /// True when chunk c is not resident or is stored as all air.
  bool chunkIsAir(ChunkCoord c) const noexcept;
  /// A view of brick localIndex (brickIndexInChunk) of slot i.
  BrickView brickInChunk(int i, int localIndex) const noexcept;
  /// True when slot i holds a brick modified since markGenerated(). O(1).
  bool chunkModified(int i) const noexcept;
  /// True when brick localIndex of slot i holds what it held at markGenerated() (it
  /// is unmodified, or changed back); before markGenerated(), when it is all air (a
  /// store never generated counts as changed from an empty world). O(one brick).
  bool brickMatchesGenerated(int i, int localIndex) const noexcept;

  /// Collapses chunk c to one material when all its bricks are that material, else
  /// repacks its pool tightly (dropping holes). Returns true if it collapsed. Content
  /// and change bits are unchanged. Thread: see top (per chunk; the generator calls
  /// it after finishing a chunk to keep peak memory low).
  bool compactChunk(ChunkCoord c) noexcept;
  /// compactChunk() on every resident chunk. Single-threaded.
  void compactAll() noexcept;

  // ---- streaming ----------------------------------------------------------------

  /// Makes this a streamed store whose missing columns come from source (nullptr:
  /// not streamed; every column counts as present). The source must outlive the
  /// store and its copies, which share it. Call before anything reads the store,
  /// after markGenerated().
  void setColumnSource(ColumnSource* source) noexcept { source_ = source; }
  /// The source given to setColumnSource (nullptr when not streamed).
  ColumnSource* columnSource() const noexcept { return source_; }
  /// Gives a streamed store the changed columns kept outside it (nullptr: none): each
  /// adopted column gets its stored bricks, pinned columns are never released, and the
  /// world hash counts the stored chunks that are not present. Must outlive the store
  /// and its copies. Call before anything reads the store.
  void setStoredColumns(StoredColumns* stored) noexcept { stored_ = stored; }
  StoredColumns* storedColumns() const noexcept { return stored_; }
  /// True when column is generated here (always, for a store that is not streamed).
  /// O(1).
  bool columnPresent(ChunkColumn column) const noexcept;
  /// Generates column now if it is not present (a read would). Streamed stores only.
  void ensureColumn(ChunkColumn column);
  /// Adopts from's chunks (adoptChunks), which must be column's generated content and
  /// nothing else, records column as present and applies its stored bricks
  /// (setStoredColumns). A no-op returning 0 when column is present already (work done
  /// twice is dropped). Returns the chunks moved.
  int adoptColumn(ChunkColumn column, BrickStore& from);
  /// True when a resident chunk of column holds a brick modified since generation
  /// (releaseColumns keeps such columns). O(chunks in a column).
  bool columnModified(ChunkColumn column) const noexcept;
  /// The present columns, in the order they arrived (not canonical).
  std::span<const ChunkColumn> presentColumns() const noexcept { return presentList_; }
  /// Releases each present column of columns that holds no modified brick and is not
  /// pinned (StoredColumns::pinned): its chunks
  /// leave memory (with their change bits: a consumer hears of the column again when
  /// it is generated again) and the next read or write generates it again. Modified
  /// columns stay. Renumbers chunk slots (slotEpoch) when it releases any. O(resident
  /// chunks). Returns the columns released.
  int releaseColumns(std::span<const ChunkColumn> columns);
  /// releaseColumns, modified columns included: the next read generates them as they
  /// were generated, plus what is stored of them. For a mirror that stops following
  /// those columns (a client far from them; the server sends them whole again when it
  /// comes back: their edits are lost here), and for a server paging out columns whose
  /// edits are stored. Returns the columns released.
  int dropColumns(std::span<const ChunkColumn> columns);

  // ---- change tracking ----------------------------------------------------------

  /// Registers a consumer of brick changes (a mesher, a sound cache, a test). Its
  /// first takeChanged reports every brick changed since markGenerated() (since
  /// construction without it), so a consumer may subscribe late. At most
  /// kMaxChangeSubscribers per store (beyond is a programmer error: LOAM_ASSERT). A
  /// copy of the store keeps the subscriptions and what each has not taken yet.
  /// Single-threaded.
  ChangeSubscriber subscribeChanges() noexcept;
  /// True when brick b changed since `sub` last cleared it.
  bool isChanged(BrickCoord b, ChangeSubscriber sub) const noexcept;
  /// Calls fn(BrickCoord) for each brick changed for `sub`, canonical order.
  template <class F>
  void forEachChanged(ChangeSubscriber sub, F&& fn) const;
  /// Clears brick b for `sub`.
  void clearChanged(BrickCoord b, ChangeSubscriber sub) noexcept;
  /// Clears every brick for `sub`.
  void clearChanged(ChangeSubscriber sub) noexcept;
  /// The bricks changed for `sub` (canonical order), clearing them. Allocates the result.
  std::vector<BrickCoord> takeChanged(ChangeSubscriber sub);

  /// True when brick b changed since markGenerated() (saves write these bricks).
  bool isModified(BrickCoord b) const noexcept;
  /// Calls fn(BrickCoord) for each modified brick, canonical order.
  template <class F>
  void forEachModified(F&& fn) const;
  /// Calls fn(BrickCoord) for each modified brick of the resident chunks of column,
  /// bottom to top (a cell's catch-up, sim/save/save.h); a column that may hold stored
  /// bricks is loaded first. O(chunks in a column).
  template <class F>
  void forEachModifiedInColumn(ChunkColumn column, F&& fn) const;
  /// Number of modified bricks. O(chunks).
  std::size_t modifiedCount() const noexcept;
  /// Ends generation: clears every changed and modified bit (freeing their storage),
  /// compacts every chunk, releases the chunks that are all air (renumbering slots)
  /// and from then on keeps, for each brick at its first change, the content it had
  /// (generatedBrick). Call once after generating, before edits.
  void markGenerated() noexcept;
  /// True once markGenerated() has been called.
  bool markedGenerated() const noexcept { return keepBaseline_; }
  /// Writes to out512 the content brick b had at the last markGenerated(), if b has
  /// been modified since (and returns true); false when b is unmodified (read it
  /// directly), outside the bounds, or markGenerated() was never called. Saves use
  /// it to store only the voxels that differ. O(log modified bricks in the chunk).
  bool generatedBrick(BrickCoord b, MaterialId* out512) const noexcept;

  // ---- coarse copy --------------------------------------------------------------

  /// The coarse lookup the incremental copy uses.
  const CoarseLut& coarseLut() const noexcept { return coarseLut_; }
  /// Replaces the lookup and rebuilds the coarse sums of every mixed brick. O(world).
  void setCoarseLut(const CoarseLut& lut) noexcept;
  /// Recomputes the coarse sums of every mixed brick from its voxels (the full
  /// rebuild; the incremental result must equal it).
  void rebuildCoarse() noexcept;
  /// The incremental coarse sample of brick b (air's outside the bounds). O(1).
  CoarseSample coarse(BrickCoord b) const noexcept;

  // ---- memory -------------------------------------------------------------------

  /// Heap bytes held by the store (capacities of its tables, slots, pools and change
  /// sets; allocator overhead excluded). O(chunks).
  std::size_t memoryBytes() const noexcept;
  /// memoryBytes() broken down by kind, plus brick counts. O(chunks * 4096).
  StoreMemoryStats memoryStats() const noexcept;

 private:
  using DirtyBits = internal::DirtyBitsT<kMaxChangeSubscribers>;
  /// Generated content of a chunk's modified bricks, as canonical packed forms.
  struct Baseline {
    std::vector<std::uint16_t> locals;   ///< sorted brick indices
    std::vector<std::uint32_t> offsets;  ///< form offset in bytes, per local
    std::vector<std::uint8_t> bytes;
  };
  struct Chunk {
    std::unique_ptr<internal::ChunkData> data;
    std::unique_ptr<DirtyBits> dirty;
    std::unique_ptr<Baseline> baseline;
    MaterialId uniform = kAir;
  };

  /// The resident chunk holding b (nullptr when none), and b's index in it. In a
  /// streamed store, generates b's column first when it is not present.
  const Chunk* chunkOfBrick(BrickCoord b, int& local) const noexcept;
  /// Streamed stores: generates c's column if it is inside the bounds and not present
  /// (true when it did). Const because reads fault columns in; see the file comment.
  bool faultIfAbsent(ChunkCoord c) const;
  /// get() for a chunk that is not resident: air, after faulting its column in.
  MaterialId readAbsent(int x, int y, int z) const noexcept;
  /// The chunk holding b, made resident (b must be inside the bounds).
  Chunk& residentChunkOfBrick(BrickCoord b, int& local);
  static BrickView viewOf(const Chunk& c, int local) noexcept;
  void markChanged(Chunk& c, int local) noexcept;
  void noteFirstChange(Chunk& c, int local);
  static std::size_t baselineBytes(const Baseline& bl) noexcept;
  internal::ChunkData& expand(Chunk& c);
  int release(std::span<const ChunkColumn> columns, bool modifiedToo);
  void writeUniformBrick(Chunk& c, int local, MaterialId m) noexcept;
  void freeBrickRecord(internal::ChunkData& d, int local) noexcept;
  std::uint32_t allocRecord(internal::ChunkData& d, unsigned bitsLog2);
  void freeRecord(internal::ChunkData& d, std::uint32_t offset, unsigned bitsLog2) noexcept;
  void setMixedVoxel(internal::ChunkData& d, int local, unsigned vi, MaterialId m) noexcept;
  void recomputeSums(internal::ChunkData& d, internal::BrickEntry& e) const noexcept;
  void buildMixed(internal::ChunkData& d, int local, const MaterialId* voxels512, const std::uint16_t* histogram,
                  unsigned distinct) noexcept;
  bool collapseIfUniform(Chunk& c) noexcept;
  void compactChunkAt(Chunk& c) noexcept;
  template <class F>
  void forEachSetBit(int set, F&& fn) const;
  /// Keeps the chunks for which keep(Chunk&, ChunkCoord) is true, renumbered in
  /// canonical order (markGenerated, releaseColumns). O(resident chunks).
  template <class Keep>
  void keepChunksIf(Keep&& keep);

  WorldBounds bounds_;
  std::uint32_t sizeVx_ = 0, sizeVy_ = 0, sizeVz_ = 0;  // voxels per axis
  VoxelCoord minVoxel_;
  std::vector<Chunk> chunks_;        // by slot
  std::vector<ChunkCoord> coords_;   // by slot
  std::vector<int> canonical_;       // slots in canonical order
  internal::ChunkMap map_;           // chunkKey -> slot
  CoarseLut coarseLut_;
  ColumnSource* source_ = nullptr;      // set: a streamed store (columns fault in)
  StoredColumns* stored_ = nullptr;     // set: changed columns kept outside (a server's database)
  internal::ChunkMap present_;          // chunkKey({x, 0, z}) of present columns -> index in presentList_
  std::vector<ChunkColumn> presentList_;
  std::uint64_t slotEpoch_ = 0;  // bumped by keepChunksIf (every renumbering)
  bool keepBaseline_ = false;  // set by markGenerated()
  std::uint8_t subscribers_ = 0;  // handed out by subscribeChanges()
};

// ---- inline fast paths ------------------------------------------------------------

inline MaterialId BrickStore::get(int x, int y, int z) const noexcept {
  // Unsigned offsets from the minimum corner: one compare per axis covers both ends.
  std::uint32_t ux = static_cast<std::uint32_t>(x) - static_cast<std::uint32_t>(minVoxel_.x);
  std::uint32_t uy = static_cast<std::uint32_t>(y) - static_cast<std::uint32_t>(minVoxel_.y);
  std::uint32_t uz = static_cast<std::uint32_t>(z) - static_cast<std::uint32_t>(minVoxel_.z);
  if ((ux >= sizeVx_) | (uy >= sizeVy_) | (uz >= sizeVz_)) return kAir;
  constexpr unsigned kChunkVoxelShift = kBrickShift + kChunkShift;
  const int ci = map_.find(internal::chunkKey({x >> kChunkVoxelShift, y >> kChunkVoxelShift, z >> kChunkVoxelShift}));
  if (ci < 0) return source_ ? readAbsent(x, y, z) : kAir;
  const Chunk& c = chunks_[static_cast<std::size_t>(ci)];
  const internal::ChunkData* d = c.data.get();
  if (!d) return c.uniform;
  unsigned local = ((ux >> kBrickShift) & 15u) | (((uy >> kBrickShift) & 15u) << 4) | (((uz >> kBrickShift) & 15u) << 8);
  // (ux and x agree in their low 7 bits: the bounds are whole chunks.)
  unsigned s = d->slots[local];
  if (s < internal::kMixedSlotBase) return static_cast<MaterialId>(s);
  const internal::BrickEntry& e = d->entries[s - internal::kMixedSlotBase];
  const std::uint8_t* rec = d->bytes() + e.offset;
  unsigned vi = (ux & 7u) | ((uy & 7u) << 3) | ((uz & 7u) << 6);
  unsigned k = e.bitsLog2;
  return rec[internal::paletteOffset(k) + internal::readIndex(rec, k, vi)];
}

inline BrickView BrickStore::viewOf(const Chunk& c, int local) noexcept {
  const internal::ChunkData* d = c.data.get();
  if (!d) return BrickView(c.uniform);
  unsigned s = d->slots[local];
  if (s < internal::kMixedSlotBase) return BrickView(static_cast<MaterialId>(s));
  const internal::BrickEntry& e = d->entries[s - internal::kMixedSlotBase];
  return BrickView(d->bytes() + e.offset, e.bitsLog2, e.used, e.fill);
}

inline BrickView BrickStore::brickInChunk(int i, int localIndex) const noexcept {
  return viewOf(chunks_[static_cast<std::size_t>(i)], localIndex);
}

/// True when a brick with view v is reported under filter f.
inline bool passesFilter(const BrickView& v, BrickFilter f) noexcept {
  switch (f) {
    case BrickFilter::All:
      return true;
    case BrickFilter::NonAir:
      return !v.isAir();
    case BrickFilter::Mixed:
      return !v.isUniform();
  }
  return true;
}

template <class F>
void BrickStore::forEachBrick(F&& fn, BrickFilter filter) const {
  // Chunks that are not resident are air: reported only under BrickFilter::All.
  for (int i : canonical_) {
    const Chunk& c = chunks_[static_cast<std::size_t>(i)];
    if (!c.data) {
      if (filter == BrickFilter::Mixed) continue;
      if (filter == BrickFilter::NonAir && c.uniform == kAir) continue;
    } else if (filter == BrickFilter::Mixed && c.data->mixedCount == 0) {
      continue;
    }
    ChunkCoord cc = chunkCoord(i);
    for (int local = 0; local < internal::kChunkBrickCount; ++local) {
      BrickView v = viewOf(c, local);
      if (!passesFilter(v, filter)) continue;
      BrickCoord b{cc.x * kChunkBricks + (local & 15), cc.y * kChunkBricks + ((local >> 4) & 15),
                   cc.z * kChunkBricks + (local >> 8)};
      fn(b, v);
    }
  }
}

template <class F>
void BrickStore::forEachBrickInBox(const VoxelBox& box, F&& fn, BrickFilter filter) const {
  if (box.max.x <= box.min.x || box.max.y <= box.min.y || box.max.z <= box.min.z) return;
  // Brick range covered by [min, max), clipped to the bounds.
  auto lo = [](int v) { return v >> kBrickShift; };
  auto hi = [](int v) { return (v - 1) >> kBrickShift; };  // inclusive
  int x0 = lo(box.min.x) > bounds_.minBrick.x ? lo(box.min.x) : bounds_.minBrick.x;
  int y0 = lo(box.min.y) > bounds_.minBrick.y ? lo(box.min.y) : bounds_.minBrick.y;
  int z0 = lo(box.min.z) > bounds_.minBrick.z ? lo(box.min.z) : bounds_.minBrick.z;
  int x1 = hi(box.max.x) < bounds_.maxBrick.x - 1 ? hi(box.max.x) : bounds_.maxBrick.x - 1;
  int y1 = hi(box.max.y) < bounds_.maxBrick.y - 1 ? hi(box.max.y) : bounds_.maxBrick.y - 1;
  int z1 = hi(box.max.z) < bounds_.maxBrick.z - 1 ? hi(box.max.z) : bounds_.maxBrick.z - 1;
  for (int z = z0; z <= z1; ++z) {
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        BrickCoord b{x, y, z};
        int local = 0;
        const Chunk* c = chunkOfBrick(b, local);
        BrickView v = c ? viewOf(*c, local) : BrickView(kAir);
        if (passesFilter(v, filter)) fn(b, v);
      }
    }
  }
}

template <class F>
void BrickStore::forEachSetBit(int set, F&& fn) const {
  for (int i : canonical_) {
    const Chunk& c = chunks_[static_cast<std::size_t>(i)];
    if (!c.dirty || !(c.dirty->any & (1u << set))) continue;
    ChunkCoord cc = chunkCoord(i);
    for (int w = 0; w < internal::kDirtyWords; ++w) {
      std::uint64_t bits = c.dirty->bits[set][w];
      while (bits) {
        int local = w * 64 + std::countr_zero(bits);
        bits &= bits - 1;
        fn(BrickCoord{cc.x * kChunkBricks + (local & 15), cc.y * kChunkBricks + ((local >> 4) & 15),
                      cc.z * kChunkBricks + (local >> 8)});
      }
    }
  }
}

template <class Keep>
void BrickStore::keepChunksIf(Keep&& keep) {
  std::vector<Chunk> kept;
  std::vector<ChunkCoord> keptCoords;
  kept.reserve(chunks_.size());
  keptCoords.reserve(chunks_.size());
  for (int i : canonical_) {
    Chunk& c = chunks_[static_cast<std::size_t>(i)];
    const ChunkCoord cc = coords_[static_cast<std::size_t>(i)];
    if (!keep(c, cc)) continue;
    kept.push_back(std::move(c));
    keptCoords.push_back(cc);
  }
  chunks_ = std::move(kept);
  coords_ = std::move(keptCoords);
  map_.clear();
  canonical_.resize(chunks_.size());
  for (std::size_t i = 0; i < chunks_.size(); ++i) {
    canonical_[i] = static_cast<int>(i);
    map_.insert(internal::chunkKey(coords_[i]), static_cast<int>(i));
  }
  ++slotEpoch_;
}

template <class F>
void BrickStore::forEachChanged(ChangeSubscriber sub, F&& fn) const {
  LOAM_ASSERT(sub.value >= 1 && sub.value <= subscribers_);
  forEachSetBit(sub.value - 1, fn);
}

template <class F>
void BrickStore::forEachModified(F&& fn) const {
  forEachSetBit(kMaxChangeSubscribers, fn);
}

template <class F>
void BrickStore::forEachModifiedInColumn(ChunkColumn column, F&& fn) const {
  const std::int32_t cy0 = bounds_.minBrick.y >> kChunkShift, cy1 = bounds_.maxBrick.y >> kChunkShift;
  if (stored_ != nullptr && stored_->holds(column)) faultIfAbsent(ChunkCoord{column.x, cy0, column.z});
  for (std::int32_t cy = cy0; cy < cy1; ++cy) {
    const ChunkCoord cc{column.x, cy, column.z};
    const int i = map_.find(internal::chunkKey(cc));
    if (i < 0) continue;
    const Chunk& c = chunks_[static_cast<std::size_t>(i)];
    if (!c.dirty || !(c.dirty->any & (1u << kMaxChangeSubscribers))) continue;
    for (int w = 0; w < internal::kDirtyWords; ++w) {
      std::uint64_t bits = c.dirty->bits[kMaxChangeSubscribers][w];
      while (bits) {
        const int local = w * 64 + std::countr_zero(bits);
        bits &= bits - 1;
        fn(BrickCoord{cc.x * kChunkBricks + (local & 15), cc.y * kChunkBricks + ((local >> 4) & 15),
                      cc.z * kChunkBricks + (local >> 8)});
      }
    }
  }
}

}  // namespace loam::sim
