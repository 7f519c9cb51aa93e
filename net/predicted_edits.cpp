#include "net/predicted_edits.h"

#include <algorithm>
#include <array>

#include "sim/step/edit_footprint.h"

namespace loam::net {

namespace {

template <class T>
constexpr std::uint8_t indexOf() {
  return static_cast<std::uint8_t>(sim::CommandBody(T{}).index());
}

sim::Actor actorOf(sim::PlayerId id) { return {sim::Actor::Kind::Player, id.value}; }

sim::VoxelCoord brickCorner(sim::VoxelCoord v) {
  const sim::BrickCoord b = sim::brickOf(v);
  return {b.x * sim::kBrickSize, b.y * sim::kBrickSize, b.z * sim::kBrickSize};
}

}  // namespace

void PredictedEdits::predict(std::uint32_t sequence, const sim::CommandBody& body, const sim::SimState& mirror,
                             sim::PlayerId own, double nowMs, std::vector<sim::Event>& events) {
  Prediction p;
  p.sequence = sequence;
  p.madeMs = nowMs;
  p.command = static_cast<std::uint8_t>(body.index());
  const sim::BrickStore& world = mirror.world;
  const sim::MaterialLut& lut = mirror.lut;
  const auto shown = [&](sim::VoxelCoord v) { return overlay_.get(world, v); };
  if (const auto* d = std::get_if<sim::DigCommand>(&body)) {
    p.target = d->target;
    if (!sim::validToolSize(d->radius)) return;
    std::array<std::uint32_t, 256> counts{};
    sim::forEachDugVoxel(*d, world.bounds(), lut, shown, [&](sim::VoxelCoord v, sim::MaterialId m) {
      ++counts[m];
      p.voxels.push_back({v, sim::kAir});
    });
    sim::emitDigEvents(actorOf(own), *d, counts, [&](const sim::Event& e) { events.push_back(e); });
  } else if (const auto* pc = std::get_if<sim::PlaceCommand>(&body)) {
    p.target = pc->target;
    const sim::VoxelRange r = sim::placeRange(*pc);
    const bool valid = sim::validToolSize(pc->size) && sim::validFace(pc->face) && pc->material < lut.count &&
                       lut.placeable[pc->material] && !sim::placeFills(lut, shown(pc->target)) &&
                       world.bounds().containsVoxel({r.lo[0], r.lo[1], r.lo[2]}) &&
                       world.bounds().containsVoxel({r.hi[0] - 1, r.hi[1] - 1, r.hi[2] - 1});
    if (valid)
      sim::forEachPlacedVoxel(*pc, lut, shown, [&](sim::VoxelCoord v) { p.voxels.push_back({v, pc->material}); });
  } else if (const auto* w = std::get_if<sim::PourCommand>(&body)) {
    p.target = w->position;
    const sim::MaterialId water = mirror.water.water;
    if (water != sim::kAir && world.bounds().containsVoxel(w->position) && sim::placeFills(lut, shown(w->position)))
      p.voxels.push_back({w->position, water});
  } else if (const auto* i = std::get_if<sim::IgniteCommand>(&body)) {
    p.target = i->position;
    if (world.bounds().containsVoxel(i->position)) {
      const sim::MaterialId m = shown(i->position);
      if (lut.flammable[m]) {
        p.flame = true;
        events.push_back(sim::IgnitedEvent{i->position, m, actorOf(own)});
      }
    }
  } else {
    return;  // chat and anything else: nothing to show
  }
  for (const Shown& s : p.voxels) {
    overlay_.set(s.voxel, s.material);
    changed_.push_back(sim::brickOf(s.voxel));
  }
  pending_.push_back(std::move(p));
  ++stats_.predicted;
}

bool PredictedEdits::settle(std::uint32_t sequence, bool applied, const sim::BrickStore& world, double nowMs) {
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Prediction& p) { return p.sequence == sequence; });
  if (it == pending_.end()) return false;
  stats_.answerMsTotal += nowMs - it->madeMs;
  stats_.answerMsMax = std::max(stats_.answerMsMax, nowMs - it->madeMs);
  if (!applied) {
    ++stats_.rolledBack;
  } else if (std::all_of(it->voxels.begin(), it->voxels.end(),
                         [&](const Shown& s) { return world.get(s.voxel) == s.material; }) ||
             it->command == indexOf<sim::PourCommand>()) {
    // A pour's water moves in the step that pours it: the server's water shows.
    ++stats_.confirmed;
  } else {
    ++stats_.overridden;
  }
  remove(it);
  return true;
}

void PredictedEdits::expire(double nowMs) {
  while (!pending_.empty() && nowMs - pending_.front().madeMs > kPredictionTimeoutMs) {
    ++stats_.expired;
    remove(pending_.begin());
  }
}

void PredictedEdits::clear() {
  for (const Prediction& p : pending_)
    for (const Shown& s : p.voxels) changed_.push_back(sim::brickOf(s.voxel));
  pending_.clear();
  overlay_.clear();
}

void PredictedEdits::remove(std::deque<Prediction>::iterator it) {
  for (const Shown& s : it->voxels) changed_.push_back(sim::brickOf(s.voxel));
  const bool shownAny = !it->voxels.empty();
  pending_.erase(it);
  if (shownAny) rebuildOverlay();
}

// Later predictions over earlier ones, as they were made.
void PredictedEdits::rebuildOverlay() {
  overlay_.clear();
  for (const Prediction& p : pending_)
    for (const Shown& s : p.voxels) overlay_.set(s.voxel, s.material);
}

bool PredictedEdits::echoes(const sim::Event& e, sim::PlayerId own) const {
  // A pending prediction that played its sound: a dig that removed something, an
  // ignite that caught.
  const auto played = [&](std::uint8_t command, sim::VoxelCoord at) {
    return std::any_of(pending_.begin(), pending_.end(), [&](const Prediction& p) {
      return p.command == command && p.target == at && (p.flame || !p.voxels.empty());
    });
  };
  if (const auto* d = std::get_if<sim::DigEvent>(&e))
    return d->who == actorOf(own) && played(indexOf<sim::DigCommand>(), d->position);
  if (const auto* f = std::get_if<sim::FractureEvent>(&e)) return played(indexOf<sim::DigCommand>(), f->position);
  if (const auto* i = std::get_if<sim::IgnitedEvent>(&e))
    return i->by == actorOf(own) && played(indexOf<sim::IgniteCommand>(), i->position);
  return false;
}

std::vector<sim::BrickCoord> PredictedEdits::takeChangedBricks() {
  std::sort(changed_.begin(), changed_.end());
  changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
  std::vector<sim::BrickCoord> out;
  out.swap(changed_);
  return out;
}

std::vector<sim::VoxelCoord> PredictedEdits::flames() const {
  std::vector<sim::VoxelCoord> out;
  for (const Prediction& p : pending_)
    if (p.flame) out.push_back(brickCorner(p.target));
  return out;
}

std::size_t PredictedEdits::ghostVoxels(const sim::BrickStore& world) const {
  std::size_t n = 0;
  for (const sim::BrickCoord b : overlay_.bricks())
    for (const sim::VoxelOverlay::Voxel& v : overlay_.voxelsOf(b))
      n += world.get(sim::voxelOfBrick(b, v.index)) != v.material ? 1u : 0u;
  return n;
}

EditPredictionStats PredictedEdits::stats() const noexcept {
  EditPredictionStats s = stats_;
  s.pending = pending_.size();
  return s;
}

}  // namespace loam::net
