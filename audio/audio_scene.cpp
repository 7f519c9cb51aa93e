// AudioScene: world copy + event stream -> emitters (see audio_scene.h).
//
// Layout of one update:
//  1. events -> one-shot voices (keyed by world seed, tick and event index);
//  2. the column map (first non-air voxel from above on a 1 m grid around the
//     listener) is refreshed a few times a second; wind slots, rain patches and
//     streams are classified from it, then only their rates follow every update;
//  3. fires are regrouped every update (cheap: O(burning cells));
//  4. beds follow the time of day.
// Every continuous emitter is kept in an EmitterSet per kind: ids seen this update are
// started or updated, ids no longer seen are stopped (the engine fades them).
//
// This file: the update's order, the events (one-shot voices, and the short pours of
// falling water) and the acoustics pass; the continuous emitters are in
// audio_scene_ambience.cpp.
#include "audio/audio_scene.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "audio/internal/audio_scene_impl.h"
#include "audio/models.h"
#include "sim/systems/animals.h"
#include "sim/systems/fire.h"

namespace loam::audio {
using namespace internal;
namespace {

constexpr int kMapRowsPerUpdate = 4;     ///< rows re-read per update: a full sweep ~4 times a second
constexpr int kMapRecentre = 4;          ///< metres the listener may move before the map is rebuilt
constexpr int kMaxPours = 4;
constexpr int kMaxHissesPerUpdate = 4;
constexpr int kMaxIgnitionsPerUpdate = 2;

}  // namespace

void AudioScene::Impl::oneShot(EmitterId id, std::unique_ptr<Voice> voice, Vec3f at, float gain, float priority,
                               bool impulsive) {
  if (!voice) return;
  EmitterState s;
  s.position = at;
  s.gain = gain;
  s.priority = priority;
  s.impulsive = impulsive;
  engine.start(id, std::move(voice), s);
  ++stats.oneShots;
}

void AudioScene::Impl::playEvents(const sim::SimState& world, std::span<const sim::Event> events,
                                  const Listener& listener) {
  const std::uint64_t tickKey = combineKey(world.seed, world.tick);
  int hisses = 0, ignitions = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const std::uint64_t key = combineKey(tickKey, i);
    const std::uint64_t index = (world.tick << 16) | (i & 0xffffu);
    auto heard = [&](sim::VoxelCoord v, Vec3f& at) {
      at = centreOf(v);
      return distance(at, listener.position) <= config.hearingMetres;
    };
    auto own = [&](const sim::Actor& a) {
      return a.kind == sim::Actor::Kind::Player && config.self.value != 0 && a.id == config.self.value;
    };
    Vec3f at;
    const sim::Event& ev = events[i];
    if (const auto* e = std::get_if<sim::FootstepEvent>(&ev)) {
      sim::SoundClass c = soundOf(world, e->surface);
      if (c == sim::SoundClass::None || !heard(e->position, at)) continue;
      FootstepSpec spec;
      spec.surface = c;
      spec.speed = static_cast<float>(e->speed) / 1000.0f;
      spec.gait = e->speed >= 5200 ? Gait::Run : Gait::Walk;  // between walk (4 m/s) and run (6.5 m/s)
      spec.key = key;
      bool mine = own(e->who);
      float gain = e->who.kind == sim::Actor::Kind::Animal ? 0.5f : (mine ? 0.7f : 1.0f);
      oneShot(emitterId(EmitterKind::Footstep, index), makeFootstep(spec), at, gain, mine ? 4.0f : 1.5f, true);
    } else if (const auto* e = std::get_if<sim::LandedEvent>(&ev)) {
      sim::SoundClass c = soundOf(world, e->material);
      if (c == sim::SoundClass::None || !heard(e->position, at)) continue;
      float speed = static_cast<float>(e->impactSpeed) / 1000.0f;
      bool mine = own(e->who);
      if (e->who.kind == sim::Actor::Kind::None) {
        ImpactSpec spec;
        spec.surface = c;
        spec.speed = speed;
        spec.hardness = material(world, e->material).hardness;
        spec.key = key;
        oneShot(emitterId(EmitterKind::Impact, index), makeImpact(spec), at, 1.0f, 2.0f, true);
      } else {
        FootstepSpec spec;
        spec.surface = c;
        spec.gait = Gait::Land;
        spec.speed = speed;
        spec.key = key;
        float gain = e->who.kind == sim::Actor::Kind::Animal ? 0.5f : (mine ? 0.8f : 1.0f);
        oneShot(emitterId(EmitterKind::Footstep, index), makeFootstep(spec), at, gain, mine ? 4.0f : 1.5f, true);
      }
    } else if (const auto* e = std::get_if<sim::DigEvent>(&ev)) {
      sim::SoundClass c = soundOf(world, e->material);
      if (c == sim::SoundClass::None || !heard(e->position, at)) continue;
      DigSpec spec;
      spec.material = c;
      spec.voxels = e->voxels;
      spec.key = key;
      oneShot(emitterId(EmitterKind::Dig, index), makeDig(spec), at, 1.0f, own(e->who) ? 3.0f : 2.0f, true);
    } else if (const auto* e = std::get_if<sim::FractureEvent>(&ev)) {
      // Only brittle materials break with a crack; soft ones are the dig's scrape.
      sim::SoundClass c = soundOf(world, e->material);
      if ((c != sim::SoundClass::Stone && c != sim::SoundClass::Glass) || !heard(e->position, at)) continue;
      FractureSpec spec;
      spec.material = c;
      spec.voxels = e->voxels;
      spec.key = key;
      oneShot(emitterId(EmitterKind::Fracture, index), makeFracture(spec), at, 1.0f, 2.5f, true);
    } else if (const auto* e = std::get_if<sim::SplashEvent>(&ev)) {
      if (!heard(e->position, at)) continue;
      float speed = static_cast<float>(e->speed) / 1000.0f;
      if (e->who.kind != sim::Actor::Kind::None) {
        ImpactSpec spec;
        spec.surface = sim::SoundClass::Water;
        spec.sizeMetres = e->who.kind == sim::Actor::Kind::Player ? 0.5f : 0.3f;
        spec.speed = speed;
        spec.hardness = 0.0f;
        spec.key = key;
        oneShot(emitterId(EmitterKind::Impact, index), makeImpact(spec), at, 1.0f, own(e->who) ? 3.0f : 1.5f, true);
        continue;
      }
      // Falling water landing: a short pour, unless a waterfall is already there.
      bool covered = false;
      for (const WaterGroup& g : waterGroups) {
        if (g.kind == WaterKind::Waterfall && std::fabs(g.position.x - at.x) < 3.0f &&
            std::fabs(g.position.z - at.z) < 3.0f) {
          covered = true;
        }
      }
      if (covered || static_cast<int>(pours.size()) >= kMaxPours) continue;
      PourVoice p;
      p.id = emitterId(EmitterKind::Water, index | (std::uint64_t{1} << 55));
      p.position = at;
      p.flow = clamp01(0.3f + speed / 5.0f);
      p.updatesLeft = 10 + static_cast<int>(speed * 8.0f);
      EmitterState s;
      s.position = at;
      s.priority = 1.5f;
      s.params.v[0] = p.flow;
      s.params.v[1] = speed * speed / (2.0f * 9.81f);  // fall height from the landing speed
      engine.start(p.id, makeWater(WaterKind::Pour, key), s);
      ++stats.oneShots;
      pours.push_back(p);
    } else if (const auto* e = std::get_if<sim::IgnitedEvent>(&ev)) {
      // A whoosh where a fire starts (lit by someone, or a new group); spread within a
      // burning group is the fire emitter growing.
      if (ignitions >= kMaxIgnitionsPerUpdate || !heard(e->position, at)) continue;
      sim::VoxelCoord c = sim::fireCellOf(e->position);
      std::uint64_t g = gridKey(floorDiv(c.x, kFireGrid), floorDiv(c.y, kFireGrid), floorDiv(c.z, kFireGrid));
      bool fresh = !std::binary_search(fireKeys.begin(), fireKeys.end(), g);
      if (e->by.kind == sim::Actor::Kind::None && !fresh) continue;
      ImpactSpec spec;
      spec.surface = sim::SoundClass::Foliage;
      spec.sizeMetres = 1.0f;
      spec.speed = 0.8f;
      spec.hardness = 0.5f;
      spec.key = key;
      oneShot(emitterId(EmitterKind::Fire, index | (std::uint64_t{1} << 55)), makeImpact(spec), at, 0.8f, 1.5f);
      ++ignitions;
    } else if (const auto* e = std::get_if<sim::ExtinguishedEvent>(&ev)) {
      if (e->cause != sim::ExtinguishCause::Rain && e->cause != sim::ExtinguishCause::Water) continue;
      if (hisses >= kMaxHissesPerUpdate || !heard(e->position, at)) continue;
      float strength = e->cause == sim::ExtinguishCause::Water ? 1.0f : 0.5f;
      oneShot(emitterId(EmitterKind::Hiss, index), makeHiss(strength, key), at, 1.0f, 1.5f);
      ++hisses;
    } else if (const auto* e = std::get_if<sim::AnimalCallEvent>(&ev)) {
      if (!heard(e->position, at)) continue;
      CreatureCall call = CreatureCall::BirdSong;
      switch (static_cast<sim::AnimalSpecies>(e->species)) {
        case sim::AnimalSpecies::Bird:
          call = e->call == static_cast<std::uint8_t>(sim::AnimalCallKind::Idle) ? CreatureCall::BirdSong
                                                                                 : CreatureCall::BirdChirp;
          break;
        case sim::AnimalSpecies::Fox:
          call = CreatureCall::FoxBark;
          break;
        case sim::AnimalSpecies::Dog:
          call = CreatureCall::DogBark;
          break;
        default:
          continue;
      }
      // High 32 bits: the animal (its voice), low 32: this call (its variation).
      std::uint64_t callKey = (std::uint64_t{e->animal} << 32) | (key & 0xffff'ffffu);
      oneShot(emitterId(EmitterKind::Creature, index), makeCreatureCall(call, callKey), at, 1.0f, 1.2f);
    }
  }
}

// A pour runs while its water falls, then its flow goes to 0 and the voice ends itself.
void AudioScene::Impl::updatePours() {
  for (PourVoice& p : pours) {
    --p.updatesLeft;
    EmitterState st;
    st.position = p.position;
    st.priority = 1.5f;
    st.params.v[0] = p.updatesLeft > 0 ? p.flow : 0.0f;
    engine.update(p.id, st);
  }
  std::erase_if(pours, [](const PourVoice& p) { return p.updatesLeft <= 0; });
}

void AudioScene::Impl::update(const sim::SimState& world, std::span<const sim::Event> events,
                              const Listener& listener) {
  sink.setListener(listener);
  playEvents(world, events, listener);
  // The column map: rebuilt whole when the listener has moved away from its centre,
  // otherwise re-read a few rows per update (edits show up within a quarter second
  // and no update pays for the whole map); classification follows each full sweep.
  std::int32_t lx = static_cast<std::int32_t>(std::floor(listener.position.x));
  std::int32_t lz = static_cast<std::int32_t>(std::floor(listener.position.z));
  bool sweepDone = false;
  if (!mapValid || std::abs(lx - mapX) > kMapRecentre || std::abs(lz - mapZ) > kMapRecentre) {
    mapX = lx;
    mapZ = lz;
    refreshRows(world, 0, kMapSide);
    mapValid = true;
    mapRow = 0;
    sweepDone = true;
  } else {
    refreshRows(world, mapRow, mapRow + kMapRowsPerUpdate);
    mapRow += kMapRowsPerUpdate;
    if (mapRow >= kMapSide) {
      mapRow = 0;
      sweepDone = true;
    }
  }
  if (sweepDone) {
    classifyWind(world, listener);
    classifyRain(world, listener);
    classifyWater(world, listener);
  }
  updateWind(world);
  updateRain(world, listener);
  updateFire(world, listener);
  updateWater();
  updatePours();
  updateBeds(world, listener);
  applyAcoustics(world, listener);
}

ListenerAcoustics* AudioScene::Impl::acousticsFor(const sim::SimState& world) {
  if (!config.acoustics.enabled || !world.materials) return nullptr;
  if (!acoustics) acoustics = std::make_unique<ListenerAcoustics>(*world.materials, config.acoustics);
  return acoustics.get();
}

void AudioScene::Impl::applyAcoustics(const sim::SimState& world, const Listener& listener) {
  if (ListenerAcoustics* a = acousticsFor(world)) {
    if (a->updateRoom(world.world, listener.position, updates)) sink.setRoom(a->room());
    a->propagate(world.world, engine.states());
  }
  ++updates;
  engine.flush();
}

AudioScene::AudioScene(AudioEngine& engine, AudioSceneConfig config) : impl_(std::make_unique<Impl>(engine, config)) {}

AudioScene::~AudioScene() = default;

void AudioScene::update(const sim::SimState& world, std::span<const sim::Event> events, const Listener& listener) {
  impl_->update(world, events, listener);
}

void AudioScene::worldChanged(const sim::SimState& world, std::span<const sim::BrickCoord> bricks) {
  if (ListenerAcoustics* a = impl_->acousticsFor(world)) a->worldChanged(world.world, bricks);
}

AudioSceneStats AudioScene::stats() const { return impl_->stats; }
}  // namespace loam::audio
