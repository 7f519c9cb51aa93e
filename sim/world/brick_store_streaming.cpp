// BrickStore's streaming part (sim/world/brick_store.h, "Streaming"): which columns are
// present, faulting a missing one in from the ColumnSource, and releasing unmodified
// columns again. Apart from the voxel store it serves, so each file keeps to one job.
#include "sim/world/brick_store.h"

namespace loam::sim {

namespace {

std::uint64_t columnKey(ChunkColumn c) noexcept { return internal::chunkKey(ChunkCoord{c.x, 0, c.z}); }

}  // namespace

bool BrickStore::columnPresent(ChunkColumn column) const noexcept {
  return source_ == nullptr || present_.find(columnKey(column)) >= 0;
}

bool BrickStore::faultIfAbsent(ChunkCoord c) const {
  if (source_ == nullptr || !internal::chunkInBounds(bounds_, c)) return false;
  const ChunkColumn column{c.x, c.z};
  if (present_.find(columnKey(column)) >= 0) return false;
  // A read that faults changes what is resident, never what is read: the store is
  // logically the whole generated world (see the file comment), hence the cast.
  source_->fault(column, *const_cast<BrickStore*>(this));
  LOAM_ASSERT(present_.find(columnKey(column)) >= 0);
  return true;
}

MaterialId BrickStore::readAbsent(int x, int y, int z) const noexcept {
  constexpr unsigned kChunkVoxelShift = kBrickShift + kChunkShift;
  if (!faultIfAbsent(ChunkCoord{x >> kChunkVoxelShift, y >> kChunkVoxelShift, z >> kChunkVoxelShift})) return kAir;
  return get(x, y, z);
}

void ColumnSource::faultAll(std::span<const ChunkColumn> columns, BrickStore& store) {
  for (ChunkColumn c : columns)
    if (!store.columnPresent(c)) fault(c, store);
}

void BrickStore::ensureColumn(ChunkColumn column) {
  LOAM_ASSERT(source_ != nullptr);
  faultIfAbsent(ChunkCoord{column.x, bounds_.minBrick.y >> kChunkShift, column.z});
}

int BrickStore::adoptColumn(ChunkColumn column, BrickStore& from) {
  const std::uint64_t key = columnKey(column);
  if (present_.find(key) >= 0) return 0;
  const int moved = adoptChunks(from);
  present_.insert(key, static_cast<int>(presentList_.size()));
  presentList_.push_back(column);
  if (stored_ != nullptr && stored_->holds(column)) stored_->apply(column, *this);
  return moved;
}

bool BrickStore::columnModified(ChunkColumn column) const noexcept {
  const std::int32_t cy0 = bounds_.minBrick.y >> kChunkShift, cy1 = bounds_.maxBrick.y >> kChunkShift;
  for (std::int32_t cy = cy0; cy < cy1; ++cy) {
    const int i = map_.find(internal::chunkKey(ChunkCoord{column.x, cy, column.z}));
    if (i >= 0 && chunkModified(i)) return true;
  }
  return false;
}

int BrickStore::releaseColumns(std::span<const ChunkColumn> columns) { return release(columns, false); }

int BrickStore::dropColumns(std::span<const ChunkColumn> columns) { return release(columns, true); }

int BrickStore::release(std::span<const ChunkColumn> columns, bool modifiedToo) {
  internal::ChunkMap dropped;
  for (ChunkColumn col : columns) {
    const std::uint64_t key = columnKey(col);
    if (present_.find(key) < 0 || dropped.find(key) >= 0 || (!modifiedToo && columnModified(col))) continue;
    if (stored_ != nullptr && stored_->pinned(col)) continue;  // its changes are not stored yet
    dropped.insert(key, 0);
  }
  if (dropped.size() == 0) return 0;
  keepChunksIf([&](Chunk&, ChunkCoord cc) { return dropped.find(columnKey(ChunkColumn{cc.x, cc.z})) < 0; });
  std::vector<ChunkColumn> list;
  list.reserve(presentList_.size());
  for (ChunkColumn col : presentList_)
    if (dropped.find(columnKey(col)) < 0) list.push_back(col);
  presentList_ = std::move(list);
  present_.clear();
  for (std::size_t i = 0; i < presentList_.size(); ++i) present_.insert(columnKey(presentList_[i]), static_cast<int>(i));
  return static_cast<int>(dropped.size());
}

}  // namespace loam::sim
