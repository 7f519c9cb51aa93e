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

std::optional<std::uint64_t> WorldHashTracker::term(ChunkCoord c) const {
  auto it = terms_.find(internal::chunkKey(c));
  if (it == terms_.end()) return std::nullopt;
  return it->second;
}

void WorldHashTracker::setTerm(ChunkCoord c, bool changed, std::uint64_t term) {
  const std::uint64_t key = internal::chunkKey(c);
  auto it = terms_.find(key);
  if (it == terms_.end() && !changed) return;
  internal::TermSum& cell = cells_[cellKey(internal::cellOfChunk(c))];
  if (it != terms_.end()) {
    all_.remove(it->second);
    cell.remove(it->second);
    if (!changed) terms_.erase(it);
  }
  if (changed) {
    terms_[key] = term;
    all_.add(term);
    cell.add(term);
  }
  if (cell.count == 0) cells_.erase(cellKey(internal::cellOfChunk(c)));
}

void WorldHashTracker::reset(const BrickStore& store) {
  packed_.clear();
  terms_.clear();
  cells_.clear();
  all_ = {};
  touched_.clear();
  for (const ChunkTerm& t : changedChunkTerms(store)) setTerm(t.chunk, true, t.term);
  internal::forEachStoredTerm(store, [&](const ChunkTerm& t) { setTerm(t.chunk, true, t.term); });
  world_ = internal::combineWorldHash(all_);
  reset_ = true;
}

std::uint64_t WorldHashTracker::hashTouchedChunk(const BrickStore& store, int chunk, std::span<const int> localBricks) {
  const std::uint64_t key = internal::chunkKey(store.chunkCoord(chunk));
  if (std::optional<MaterialId> m = store.chunkUniform(chunk)) {
    packed_.erase(key);
    const std::uint8_t rec[2] = {'U', *m};
    return XXH3_64bits(rec, sizeof rec);
  }
  auto it = packed_.find(key);
  if (it == packed_.end()) {
    if (packed_.size() >= kCachedChunks) {  // drop the least recently used
      auto oldest = std::min_element(packed_.begin(), packed_.end(), [](const auto& a, const auto& b) {
        return a.second.lastUse < b.second.lastUse;
      });
      packed_.erase(oldest);
    }
    PackedChunk& p = packed_[key];
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
  if (!reset_) {
    reset(store);
    return;
  }
  ++updates_;
  touched_.clear();
  touchedBricks_.clear();
  for (const EditRecord& e : edits) {
    const BrickCoord b = editBrick(e);
    if (store.bounds().containsBrick(b)) touchedBricks_.emplace_back(internal::chunkKey(chunkOf(b)), brickIndexInChunk(b));
  }
  if (touchedBricks_.empty()) return;
  std::sort(touchedBricks_.begin(), touchedBricks_.end());
  touchedBricks_.erase(std::unique(touchedBricks_.begin(), touchedBricks_.end()), touchedBricks_.end());
  for (std::size_t a = 0; a < touchedBricks_.size();) {
    const std::uint64_t key = touchedBricks_[a].first;
    localScratch_.clear();
    for (; a < touchedBricks_.size() && touchedBricks_[a].first == key; ++a)
      localScratch_.push_back(touchedBricks_[a].second);
    const ChunkCoord c = internal::chunkOfKey(key);
    const int slot = store.chunkIndex(c);
    if (slot >= 0 && internal::chunkChanged(store, slot)) {
      setTerm(c, true, internal::chunkTerm(c, hashTouchedChunk(store, slot, localScratch_)));
    } else {
      // Back to what generation made (or air that was never resident): no term, and
      // its packed bricks are stale.
      packed_.erase(key);
      setTerm(c, false, 0);
    }
    touched_.push_back({internal::cellOfChunk(c), 0});
  }
  world_ = internal::combineWorldHash(all_);

  std::sort(touched_.begin(), touched_.end(), [](const CellHash& a, const CellHash& b) { return a.cell < b.cell; });
  touched_.erase(std::unique(touched_.begin(), touched_.end(),
                             [](const CellHash& a, const CellHash& b) { return a.cell == b.cell; }),
                 touched_.end());
  for (CellHash& c : touched_) c.hash = cellHash(store, c.cell);
}

void WorldHashTracker::forgetColumns(const BrickStore& store, std::span<const ChunkColumn> columns) {
  const std::int32_t cy0 = store.bounds().minBrick.y >> kChunkShift, cy1 = store.bounds().maxBrick.y >> kChunkShift;
  for (const ChunkColumn col : columns) {
    for (std::int32_t cy = cy0; cy < cy1; ++cy) {
      const ChunkCoord c{col.x, cy, col.z};
      packed_.erase(internal::chunkKey(c));
      setTerm(c, false, 0);
    }
  }
}

std::uint64_t WorldHashTracker::cellHash(const BrickStore&, CellCoord cell) const {
  auto it = cells_.find(cellKey(cell));
  return internal::combineCellHash(cell, it == cells_.end() ? internal::TermSum{} : it->second);
}

}  // namespace loam::sim
