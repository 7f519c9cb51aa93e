#include "sim/step/world_hash_tracker.h"

#include <algorithm>
#include <xxhash.h>

#include "sim/world/brick_store.h"
#include "sim/world/brick_view.h"
#include "sim/world/internal/world_hash_combine.h"

namespace loam::sim {

namespace {

constexpr int kChunkBrickCount = kChunkBricks * kChunkBricks * kChunkBricks;

/// Appends brick `local` of chunk i in canonical packed form (as hashWorld does).
void appendPacked(const BrickStore& store, int i, int local, std::vector<std::uint8_t>& out) {
  const BrickView v = store.brickInChunk(i, local);
  const std::size_t at = out.size();
  if (v.isUniform()) {
    out.push_back(0);
    out.push_back(v.uniformMaterial());
    return;
  }
  out.resize(at + BrickView::kMaxPackedBytes);
  out.resize(at + v.packCanonical(out.data() + at));
}

}  // namespace

void WorldHashTracker::reset(const BrickStore& store) {
  const auto n = static_cast<std::size_t>(store.chunkCount());
  chunkHashes_.assign(n, 0);
  packed_.clear();
  dirtyList_.clear();
  dirtyList_.reserve(n);
  for (int i = 0; i < store.chunkCount(); ++i) dirtyList_.push_back(i);
  internal::hashChunks(store, dirtyList_, chunkHashes_);
  dirtyList_.clear();
  touched_.clear();
  world_ = internal::combineWorldHash(store.bounds(), chunkHashes_);
}

std::uint64_t WorldHashTracker::hashTouchedChunk(const BrickStore& store, int chunk, std::span<const int> localBricks) {
  if (std::optional<MaterialId> m = store.chunkUniform(chunk)) {
    packed_.erase(chunk);
    const std::uint8_t rec[2] = {'U', *m};
    return XXH3_64bits(rec, sizeof rec);
  }
  auto it = packed_.find(chunk);
  if (it == packed_.end()) {
    if (packed_.size() >= kCachedChunks) {  // drop the least recently used
      auto oldest = std::min_element(packed_.begin(), packed_.end(), [](const auto& a, const auto& b) {
        return a.second.lastUse < b.second.lastUse;
      });
      packed_.erase(oldest);
    }
    PackedChunk& p = packed_[chunk];
    p.offsets.resize(kChunkBrickCount + 1);
    for (int k = 0; k < kChunkBrickCount; ++k) {
      p.offsets[static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(p.bytes.size());
      appendPacked(store, chunk, k, p.bytes);
    }
    p.offsets[kChunkBrickCount] = static_cast<std::uint32_t>(p.bytes.size());
    p.lastUse = updates_;
    return XXH3_64bits(p.bytes.data(), p.bytes.size());
  }
  // Splice the repacked touched bricks (sorted, unique) between the untouched runs.
  PackedChunk& p = it->second;
  p.lastUse = updates_;
  spliceBytes_.clear();
  spliceOffsets_.resize(kChunkBrickCount + 1);
  int next = 0;  // first brick not yet copied
  auto copyRun = [&](int end) {  // bricks [next, end) unchanged
    const std::uint32_t from = p.offsets[static_cast<std::size_t>(next)];
    const std::uint32_t to = p.offsets[static_cast<std::size_t>(end)];
    const auto shift = static_cast<std::int64_t>(spliceBytes_.size()) - from;
    for (int k = next; k < end; ++k)
      spliceOffsets_[static_cast<std::size_t>(k)] =
          static_cast<std::uint32_t>(p.offsets[static_cast<std::size_t>(k)] + shift);
    spliceBytes_.insert(spliceBytes_.end(), p.bytes.begin() + from, p.bytes.begin() + to);
  };
  for (int local : localBricks) {
    copyRun(local);
    spliceOffsets_[static_cast<std::size_t>(local)] = static_cast<std::uint32_t>(spliceBytes_.size());
    appendPacked(store, chunk, local, spliceBytes_);
    next = local + 1;
  }
  copyRun(kChunkBrickCount);
  spliceOffsets_[kChunkBrickCount] = static_cast<std::uint32_t>(spliceBytes_.size());
  std::swap(p.bytes, spliceBytes_);
  std::swap(p.offsets, spliceOffsets_);
  return XXH3_64bits(p.bytes.data(), p.bytes.size());
}

void WorldHashTracker::update(const BrickStore& store, std::span<const EditRecord> edits) {
  if (chunkHashes_.size() != static_cast<std::size_t>(store.chunkCount())) {
    reset(store);  // never reset, or another world: start over
    return;
  }
  ++updates_;
  touched_.clear();
  dirtyList_.clear();
  touchedBricks_.clear();
  for (const EditRecord& e : edits) {
    const BrickCoord b =
        e.kind == EditRecord::Kind::Voxel ? brickOf(VoxelCoord{e.x, e.y, e.z}) : BrickCoord{e.x, e.y, e.z};
    const int i = store.chunkIndex(chunkOf(b));
    if (i >= 0) touchedBricks_.emplace_back(i, brickIndexInChunk(b));
  }
  if (touchedBricks_.empty()) return;
  std::sort(touchedBricks_.begin(), touchedBricks_.end());
  touchedBricks_.erase(std::unique(touchedBricks_.begin(), touchedBricks_.end()), touchedBricks_.end());
  for (std::size_t a = 0; a < touchedBricks_.size();) {
    const int chunk = touchedBricks_[a].first;
    localScratch_.clear();
    for (; a < touchedBricks_.size() && touchedBricks_[a].first == chunk; ++a)
      localScratch_.push_back(touchedBricks_[a].second);
    chunkHashes_[static_cast<std::size_t>(chunk)] = hashTouchedChunk(store, chunk, localScratch_);
    dirtyList_.push_back(chunk);
  }
  world_ = internal::combineWorldHash(store.bounds(), chunkHashes_);

  for (int i : dirtyList_) {
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
