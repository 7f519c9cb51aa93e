#include "net/host/surface_sync.h"

#include <algorithm>

#include "loam_generated.h"
#include "sim/world/brick_store.h"
#include "sim/world/column_source.h"

namespace loam::net::host {

void SurfaceSync::makeDue(std::int32_t x, std::int32_t z) {
  const std::uint64_t key = sim::surfacePatchKey(x, z);
  if (due_.insert(key).second) dueOrder_.push_back(key);
}

void SurfaceSync::init() {
  if (core_.state.materials) treeParts_ = sim::treePartsOf(*core_.state.materials);
  const sim::BrickStore& world = core_.state.world;
  // A brick's 8 columns lie in one patch in x and in z (patch edges are at 16x - 8).
  world.forEachModified([&](sim::BrickCoord b) {
    makeDue(sim::surfacePatchOf(b.x * sim::kBrickSize), sim::surfacePatchOf(b.z * sim::kBrickSize));
  });
  // A world database's columns that are not loaded: every patch their changed chunks meet.
  if (const sim::StoredColumns* stored = world.storedColumns()) {
    constexpr std::int32_t kChunkVoxels = sim::kChunkBricks * sim::kBrickSize;
    for (const sim::ChunkTerm& t : stored->terms()) {
      const std::int32_t x0 = t.chunk.x * kChunkVoxels, z0 = t.chunk.z * kChunkVoxels;
      for (std::int32_t z = sim::surfacePatchOf(z0); z <= sim::surfacePatchOf(z0 + kChunkVoxels - 1); ++z)
        for (std::int32_t x = sim::surfacePatchOf(x0); x <= sim::surfacePatchOf(x0 + kChunkVoxels - 1); ++x)
          makeDue(x, z);
    }
  }
}

void SurfaceSync::noteEdits(const sim::StepOutput& out) {
  const sim::MaterialLut& lut = core_.state.lut;
  for (const sim::EditRecord& e : out.edits) {
    switch (e.kind) {
      case sim::EditRecord::Kind::Voxel:
        if (lut.collides[e.before] != lut.collides[e.after])
          makeDue(sim::surfacePatchOf(e.x), sim::surfacePatchOf(e.z));
        break;
      case sim::EditRecord::Kind::BrickFill:  // `before` may be a mix: always due
        makeDue(sim::surfacePatchOf(e.x * sim::kBrickSize), sim::surfacePatchOf(e.z * sim::kBrickSize));
        break;
    }
  }
}

void SurfaceSync::send() {
  // Sum a few due patches.
  const sim::BrickStore& world = core_.state.world;
  for (std::size_t n = 0; n < kPatchesPerTick && dueNext_ < dueOrder_.size(); ++n, ++dueNext_) {
    const std::uint64_t key = dueOrder_[dueNext_];
    due_.erase(key);
    const auto [x, z] = sim::surfacePatchOfKey(key);
    fresh_[key] = sim::surfaceChange(world, core_.state.lut, treeParts_, x, z);
  }
  // The summed prefix goes once it is half the list (edits may keep it from emptying).
  if (2 * dueNext_ >= dueOrder_.size()) {
    dueOrder_.erase(dueOrder_.begin(), dueOrder_.begin() + static_cast<std::ptrdiff_t>(dueNext_));
    dueNext_ = 0;
  }
  if (core_.state.tick % kFlushTicks == 0) publish();

  // Each full client's next messages.
  for (Session& s : core_.sessions) {
    if (s.phase != Phase::Playing || !s.wantsWorld || !s.stream.open) continue;
    for (std::size_t n = 0; n < kMessagesPerTick && s.surfaceSent < log_.size(); ++n) {
      if (s.stream.unacked.size() > kMaxUnackedItems) break;
      queueMessage(s, wire::ServerBody::SurfaceChanges, log_[s.surfaceSent++]);
    }
  }
}

void SurfaceSync::publish() {
  if (fresh_.empty()) return;
  std::vector<std::pair<std::uint64_t, sim::SurfaceChange>> sorted(fresh_.begin(), fresh_.end());
  fresh_.clear();
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<sim::SurfaceChange> changes;
  for (const auto& [key, c] : sorted) {
    auto it = published_.find(key);
    const bool same = it == published_.end() ? c.rise == 0 && c.material == sim::kAir : it->second == c;
    if (same) continue;
    published_[key] = c;
    changes.push_back(c);
  }
  appendMessages(changes);
  const std::size_t needed = (published_.size() + kChangesPerMessage - 1) / kChangesPerMessage;
  if (log_.size() > 2 * needed + 16) compact();
}

void SurfaceSync::appendMessages(const std::vector<sim::SurfaceChange>& changes) {
  std::vector<wire::SurfaceChangeRec> recs;
  for (std::size_t i = 0; i < changes.size(); i += kChangesPerMessage) {
    recs.clear();
    for (std::size_t k = i; k < std::min(changes.size(), i + kChangesPerMessage); ++k)
      recs.emplace_back(changes[k].x, changes[k].z, changes[k].rise, changes[k].material);
    flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
    fbb.Clear();
    const auto body = wire::CreateSurfaceChanges(fbb, fbb.CreateVectorOfStructs(recs));
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::SurfaceChanges, body.Union()));
    log_.push_back(core_.messageFromBuilder());
  }
}

void SurfaceSync::compact() {
  const std::size_t before = log_.size();
  std::vector<std::pair<std::uint64_t, sim::SurfaceChange>> sorted(published_.begin(), published_.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<sim::SurfaceChange> changes;
  changes.reserve(sorted.size());
  for (const auto& [key, c] : sorted) changes.push_back(c);
  log_.clear();
  appendMessages(changes);
  for (Session& s : core_.sessions) s.surfaceSent = s.surfaceSent == before ? log_.size() : 0;
}

}  // namespace loam::net::host
