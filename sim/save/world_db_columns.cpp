#include "sim/save/world_db_columns.h"

#include <algorithm>
#include <utility>

#include "sim/gen/column_streamer.h"
#include "sim/systems/sim_state.h"

namespace loam::sim {

namespace {

std::uint64_t keyOf(ChunkColumn c) noexcept {
  return (std::uint64_t{static_cast<std::uint32_t>(c.x)} << 32) | static_cast<std::uint32_t>(c.z);
}

ChunkColumn columnOfBrick(BrickCoord b) noexcept { return {b.x >> kChunkShift, b.z >> kChunkShift}; }

std::string columnName(ChunkColumn c) {
  return "column (" + std::to_string(c.x) + ", " + std::to_string(c.z) + ")";
}

}  // namespace

WorldDbColumns::WorldDbColumns(std::unique_ptr<WorldDb> reader, std::span<const ChunkColumn> columns,
                               std::vector<ChunkTerm> terms)
    : reader_(std::move(reader)), terms_(std::move(terms)) {
  for (ChunkColumn c : columns) held_.insert(keyOf(c));
  std::sort(terms_.begin(), terms_.end(), [](const ChunkTerm& a, const ChunkTerm& b) { return a.chunk < b.chunk; });
}

void WorldDbColumns::apply(ChunkColumn column, BrickStore& store) {
  auto r = reader_->loadColumn(column, rows_, damaged_);
  if (!r) {
    ++stats_.problems;
    problems_.push_back(columnName(column) + " cannot be read, it shows as generated: " + r.error().message);
    return;
  }
  for (std::string& line : damaged_) {
    ++stats_.problems;
    problems_.push_back(std::move(line) + " (it shows as generated)");
  }
  for (const SavedBrick& sb : rows_) writeSavedBrick(store, sb);
  ++stats_.columnsLoaded;
  stats_.bricksLoaded += rows_.size();
}

bool WorldDbColumns::holds(ChunkColumn column) const { return held_.contains(keyOf(column)); }

bool WorldDbColumns::pinned(ChunkColumn column) const {
  const std::uint64_t k = keyOf(column);
  return pending_.contains(k) || inflight_.contains(k);
}

void WorldDbColumns::applyPresent(BrickStore& store) {
  const std::vector<ChunkColumn> present(store.presentColumns().begin(), store.presentColumns().end());
  for (ChunkColumn c : present)
    if (holds(c)) apply(c, store);
}

void WorldDbColumns::touch(BrickCoord b) { pending_.insert(keyOf(columnOfBrick(b))); }

void WorldDbColumns::submitted() {
  held_.insert(pending_.begin(), pending_.end());  // the commit may write rows there
  inflight_.merge(pending_);
  pending_.clear();
}

void WorldDbColumns::landed(bool ok) {
  if (ok) inflight_.clear();
}

void WorldDbColumns::pageOut(std::span<const ChunkColumn> columns, const WorldBounds& bounds,
                             const ChunkTermOf& termOf) {
  std::unordered_set<std::uint64_t> leaving;
  std::vector<ChunkTerm> columnTerms;
  for (ChunkColumn c : columns) {
    leaving.insert(keyOf(c));
    for (std::int32_t cy = bounds.minBrick.y >> kChunkShift; cy < bounds.maxBrick.y >> kChunkShift; ++cy)
      if (std::optional<std::uint64_t> term = termOf({c.x, cy, c.z})) columnTerms.push_back({{c.x, cy, c.z}, *term});
  }
  std::erase_if(terms_, [&](const ChunkTerm& t) { return leaving.contains(keyOf({t.chunk.x, t.chunk.z})); });
  auto byChunk = [](const ChunkTerm& a, const ChunkTerm& b) { return a.chunk < b.chunk; };
  std::sort(columnTerms.begin(), columnTerms.end(), byChunk);
  const auto middle = static_cast<std::ptrdiff_t>(terms_.size());
  terms_.insert(terms_.end(), columnTerms.begin(), columnTerms.end());
  std::inplace_merge(terms_.begin(), terms_.begin() + middle, terms_.end(), byChunk);
  held_.merge(leaving);
  stats_.columnsPagedOut += columns.size();
}

std::vector<std::string> WorldDbColumns::takeProblems() { return std::exchange(problems_, {}); }

WorldDbCommit captureCommit(const BrickStore& store, std::span<const BrickCoord> touched, const ChunkTermOf& termOf) {
  WorldDbCommit commit;
  SavedBrick sb;
  std::vector<ChunkCoord> chunks;
  for (BrickCoord b : touched) {
    if (captureBrick(store, b, sb)) {
      commit.bricks.push_back(sb);
    } else {
      commit.removed.push_back(b);
    }
    chunks.push_back(chunkOf(b));
  }
  // The terms go with their bricks, so a lazily loaded world hashes what it has not read.
  std::sort(chunks.begin(), chunks.end());
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  for (ChunkCoord c : chunks) {
    if (std::optional<std::uint64_t> term = termOf(c)) {
      commit.terms.push_back({c, *term});
    } else {
      commit.removedTerms.push_back(c);
    }
  }
  return commit;
}

std::vector<ChunkColumn> columnsToPageOut(const SimState& state, const WorldDbColumns& stored,
                                          std::int32_t keepVoxels) {
  std::unordered_set<std::uint64_t> active;  // columns with water records or burning bricks
  const internal::WaterGrid& grid = state.water.grid;
  for (std::uint32_t slot : grid.sorted()) active.insert(keyOf(columnOfBrick(grid.brick(slot).coord)));
  for (const FireCell& c : state.fire.cells) active.insert(keyOf(columnOfBrick(brickOf(c.corner))));
  std::vector<StreamCentre> centres;
  playerStreamCentres(state, centres);
  const std::int64_t keep2 = std::int64_t{keepVoxels} * keepVoxels;
  std::vector<ChunkColumn> out;
  for (ChunkColumn c : state.world.presentColumns()) {
    if (active.contains(keyOf(c)) || stored.pinned(c) || !state.world.columnModified(c)) continue;
    if (std::any_of(centres.begin(), centres.end(), [&](StreamCentre s) { return distance2(c, s) <= keep2; }))
      continue;
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](ChunkColumn a, ChunkColumn b) { return canonicalBefore(a, b); });
  return out;
}

}  // namespace loam::sim
