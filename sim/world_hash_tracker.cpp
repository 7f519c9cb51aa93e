#include "sim/world_hash_tracker.h"

#include <algorithm>

#include "sim/brick_store.h"
#include "sim/internal/world_hash_combine.h"

namespace loam::sim {

void WorldHashTracker::reset(const BrickStore& store) {
  const auto n = static_cast<std::size_t>(store.chunkCount());
  chunkHashes_.assign(n, 0);
  dirty_.assign(n, 0);
  dirtyList_.clear();
  dirtyList_.reserve(n);
  for (int i = 0; i < store.chunkCount(); ++i) dirtyList_.push_back(i);
  internal::hashChunks(store, dirtyList_, chunkHashes_);
  dirtyList_.clear();
  touched_.clear();
  world_ = internal::combineWorldHash(store.bounds(), chunkHashes_);
}

void WorldHashTracker::update(const BrickStore& store, std::span<const EditRecord> edits) {
  if (chunkHashes_.size() != static_cast<std::size_t>(store.chunkCount())) {
    reset(store);  // never reset, or another world: start over
    return;
  }
  touched_.clear();
  dirtyList_.clear();
  for (const EditRecord& e : edits) {
    const BrickCoord b =
        e.kind == EditRecord::Kind::Voxel ? brickOf(VoxelCoord{e.x, e.y, e.z}) : BrickCoord{e.x, e.y, e.z};
    const int i = store.chunkIndex(chunkOf(b));
    if (i < 0 || dirty_[static_cast<std::size_t>(i)]) continue;
    dirty_[static_cast<std::size_t>(i)] = 1;
    dirtyList_.push_back(i);
  }
  if (dirtyList_.empty()) return;
  internal::hashChunks(store, dirtyList_, chunkHashes_);
  world_ = internal::combineWorldHash(store.bounds(), chunkHashes_);

  for (int i : dirtyList_) {
    dirty_[static_cast<std::size_t>(i)] = 0;
    const ChunkCoord cc = store.chunkCoord(i);
    touched_.push_back({cellOf(BrickCoord{cc.x * kChunkBricks, 0, cc.z * kChunkBricks}), 0});
  }
  std::sort(touched_.begin(), touched_.end(), [](const CellHash& a, const CellHash& b) { return a.cell < b.cell; });
  touched_.erase(std::unique(touched_.begin(), touched_.end(),
                             [](const CellHash& a, const CellHash& b) { return a.cell == b.cell; }),
                 touched_.end());
  for (CellHash& c : touched_) c.hash = internal::combineCellHash(store, c.cell, chunkHashes_);
}

std::uint64_t WorldHashTracker::cellHash(const BrickStore& store, CellCoord cell) const {
  LOAM_ASSERT(chunkHashes_.size() == static_cast<std::size_t>(store.chunkCount()));
  return internal::combineCellHash(store, cell, chunkHashes_);
}

}  // namespace loam::sim
