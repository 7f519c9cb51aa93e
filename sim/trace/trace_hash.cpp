#include "sim/trace/trace_hash.h"

#include <array>
#include <type_traits>

#include "sim/world/world_hash.h"

namespace loam::sim {

namespace {

void addCoord(StateHasher& h, VoxelCoord v) {
  h.add(v.x);
  h.add(v.y);
  h.add(v.z);
}
void addActor(StateHasher& h, Actor a) {
  h.add(a.kind);
  h.add(a.id);
}

}  // namespace

void hashEvent(const Event& e, StateHasher& h) noexcept {
  h.add(static_cast<std::uint32_t>(e.index()));
  if (auto* x = std::get_if<IgnitedEvent>(&e)) {
    addCoord(h, x->position);
    h.add(x->material);
    addActor(h, x->by);
  } else if (auto* x = std::get_if<ExtinguishedEvent>(&e)) {
    addCoord(h, x->position);
    h.add(x->cause);
  } else if (auto* x = std::get_if<LandedEvent>(&e)) {
    addActor(h, x->who);
    addCoord(h, x->position);
    h.add(x->material);
    h.add(x->impactSpeed);
  } else if (auto* x = std::get_if<FootstepEvent>(&e)) {
    addActor(h, x->who);
    addCoord(h, x->position);
    h.add(x->surface);
    h.add(x->speed);
  } else if (auto* x = std::get_if<DigEvent>(&e)) {
    addActor(h, x->who);
    addCoord(h, x->position);
    h.add(x->radius);
    h.add(x->material);
    h.add(x->voxels);
  } else if (auto* x = std::get_if<FractureEvent>(&e)) {
    addCoord(h, x->position);
    h.add(x->material);
    h.add(x->voxels);
  } else if (auto* x = std::get_if<SplashEvent>(&e)) {
    addActor(h, x->who);
    addCoord(h, x->position);
    h.add(x->speed);
  } else if (auto* x = std::get_if<AnimalCallEvent>(&e)) {
    h.add(x->animal);
    h.add(x->species);
    h.add(x->call);
    addCoord(h, x->position);
  } else if (auto* x = std::get_if<ChatEvent>(&e)) {
    h.add(x->from.value);
    h.add(x->text.view());
  } else if (auto* x = std::get_if<CommandRejectedEvent>(&e)) {
    h.add(x->player.value);
    h.add(x->sequence);
    h.add(x->commandIndex);
    h.add(x->reason);
  } else if (auto* x = std::get_if<PlayerJoinedEvent>(&e)) {
    h.add(x->player.value);
    h.add(x->name.view());
  } else if (auto* x = std::get_if<PlayerLeftEvent>(&e)) {
    h.add(x->player.value);
  }
}

void hashSystems(const SimState& s, StateHasher& h) noexcept {
  h.add(s.tick);
  h.add(static_cast<std::uint64_t>(s.players.size()));
  for (const Player& p : s.players) hashPlayer(p, h);
  hashWeather(s.weather, h);
  hashWater(s.water, h);
  hashFire(s.fire, h);
  hashAnimals(s.animals, h);
}

TraceHasher::TraceHasher(const SimState& initial) noexcept : h_(0x4C4F414D54524143ULL) {
  h_.add(initial.seed);
  h_.add(initial.sceneHash);
  h_.add(worldHash(initial.world));
  hashSystems(initial, h_);
}

void TraceHasher::addStep(const SimState& state, const StepOutput& out) noexcept {
  h_.add(out.tick);
  h_.add(static_cast<std::uint64_t>(out.edits.size()));
  for (const EditRecord& e : out.edits) {
    h_.add(e.kind);
    h_.add(e.x);
    h_.add(e.y);
    h_.add(e.z);
    h_.add(e.before);
    h_.add(e.after);
  }
  h_.add(static_cast<std::uint64_t>(out.events.size()));
  for (const Event& e : out.events) hashEvent(e, h_);
  h_.add(static_cast<std::uint64_t>(out.players.size()));
  for (const PlayerChange& c : out.players) {
    h_.add(c.kind);
    hashPlayer(c.player, h_);
  }
  h_.add(static_cast<std::uint64_t>(out.water.size()));
  for (const WaterChange& c : out.water) {
    addCoord(h_, c.voxel);
    h_.add(c.amount);
  }
  h_.add(static_cast<std::uint64_t>(out.fire.size()));
  for (const FireChange& c : out.fire) hashFields(h_, c, kFireChangeFields);
  h_.add(static_cast<std::uint64_t>(out.animals.size()));
  for (const AnimalChange& c : out.animals) {
    h_.add(c.removed);
    // The stream has always folded species last (the goldens pin this order).
    forEachField(kAnimalFields, [&](const auto& f) {
      if constexpr (!std::is_same_v<typename std::decay_t<decltype(f)>::Type, AnimalSpecies>) hashField(h_, c.animal, f);
    });
    h_.add(c.animal.species);
  }
  h_.add(out.weatherChanged);
  if (out.weatherChanged) hashWeather(out.weather, h_);
  // Players in full every step (cheap); the systems in full periodically.
  h_.add(static_cast<std::uint64_t>(state.players.size()));
  for (const Player& p : state.players) hashPlayer(p, h_);
  if (state.tick % kFullStateInterval == 0) hashSystems(state, h_);
}

std::uint64_t TraceHasher::finish(const SimState& state) noexcept {
  hashSystems(state, h_);
  h_.add(worldHash(state.world));
  return h_.digest();
}

}  // namespace loam::sim
