// AudioScene's insides, shared by its two halves: audio_scene.cpp (one update in
// order, and the events: one-shot voices) and audio_scene_ambience.cpp (the continuous
// emitters: the column map, wind, rain, water, fire and beds). Nothing outside those
// two files includes this.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "audio/audio_scene.h"
#include "audio/models.h"

namespace loam::audio {
namespace internal {

inline constexpr float kMetresPerVoxel = 1.0f / static_cast<float>(sim::kVoxelsPerMetre);
inline constexpr int kMapRadius = 20;  ///< metres: the column map covers +-20 m around its centre
inline constexpr int kMapSide = 2 * kMapRadius + 1;
inline constexpr std::int32_t kFireGrid = 80;  ///< voxels (4 m): fires are grouped on this grid
inline constexpr std::int32_t kNoTop = std::numeric_limits<std::int32_t>::min();

inline Vec3f centreOf(sim::VoxelCoord v) {
  return {(static_cast<float>(v.x) + 0.5f) * kMetresPerVoxel, (static_cast<float>(v.y) + 0.5f) * kMetresPerVoxel,
          (static_cast<float>(v.z) + 0.5f) * kMetresPerVoxel};
}

inline float distance(Vec3f a, Vec3f b) {
  float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

inline float clamp01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

/// The first non-air voxel of a column from the top of the world: its y and material
/// (kNoTop when the column is empty).
struct ColumnTop {
  std::int32_t y = kNoTop;
  sim::MaterialId m = sim::kAir;
};

/// This update's emitter commands, held back so that propagation can fill every
/// state's acoustics (on the workers, all at once) before they go to the engine in
/// the order they were made.
class CommandBatch {
 public:
  explicit CommandBatch(AudioEngine& engine) : engine_(engine) {}
  bool alive(EmitterId id) const { return engine_.alive(id); }
  void start(EmitterId id, std::unique_ptr<Voice> voice, const EmitterState& state) {
    items_.push_back({Kind::Start, id, std::move(voice), state});
  }
  void update(EmitterId id, const EmitterState& state) { items_.push_back({Kind::Update, id, nullptr, state}); }
  void stop(EmitterId id) { items_.push_back({Kind::Stop, id, nullptr, {}}); }
  /// The states of this batch's starts and updates (pointers stay valid until flush()).
  std::vector<EmitterState*>& states() {
    states_.clear();
    for (Item& i : items_)
      if (i.kind != Kind::Stop) states_.push_back(&i.state);
    return states_;
  }
  /// Sends everything to the engine, in order.
  void flush() {
    for (Item& i : items_) {
      switch (i.kind) {
        case Kind::Start: engine_.start(i.id, std::move(i.voice), i.state); break;
        case Kind::Update: engine_.update(i.id, i.state); break;
        case Kind::Stop: engine_.stop(i.id); break;
      }
    }
    items_.clear();
  }

 private:
  enum class Kind : std::uint8_t { Start, Update, Stop };
  struct Item {
    Kind kind;
    EmitterId id;
    std::unique_ptr<Voice> voice;
    EmitterState state;
  };
  AudioEngine& engine_;
  std::vector<Item> items_;
  std::vector<EmitterState*> states_;
};

/// Continuous emitters of one kind: ids kept this update are started or updated,
/// ids not kept are stopped at finish(). (A new emitter whose model ramps up from
/// silence may start virtual; its skip() follows the parameters, so it becomes real
/// as soon as it is loud enough.)
class EmitterSet {
 public:
  template <class Make>
  void keep(CommandBatch& engine, EmitterId id, Make&& make, const EmitterState& state) {
    auto it = std::lower_bound(live_.begin(), live_.end(), Entry{id});
    bool known = it != live_.end() && it->id == id && engine.alive(id);
    if (known) {
      engine.update(id, state);
    } else {
      engine.start(id, make(), state);
    }
    next_.push_back({id});
  }
  void finish(CommandBatch& engine) {
    std::sort(next_.begin(), next_.end());
    next_.erase(std::unique(next_.begin(), next_.end(), [](const Entry& a, const Entry& b) { return a.id == b.id; }),
                next_.end());
    for (const Entry& e : live_) {
      if (!std::binary_search(next_.begin(), next_.end(), e)) engine.stop(e.id);
    }
    live_.swap(next_);
    next_.clear();
  }
  int size() const { return static_cast<int>(live_.size()); }

 private:
  struct Entry {
    EmitterId id = 0;
    bool operator<(const Entry& o) const { return id < o.id; }
  };
  std::vector<Entry> live_;  // sorted by id
  std::vector<Entry> next_;
};

/// A wind slot as last classified from the column map.
struct WindSlot {
  bool valid = false;
  WindCover cover = WindCover::Open;
  Vec3f position;
  Vec3f probe;       ///< where the wind is sampled: just above the surface it blows over
  float amount = 0;  ///< v[2]
};

/// A rain patch as last classified: a surface in one sector around the listener.
struct RainPatch {
  EmitterId id = 0;
  RainSurface surface = RainSurface::Soil;
  Vec3f position;
  float exposedM2 = 0;  ///< square metres of open surface (exposure-weighted)
};

/// A stream or falling-water group as last classified.
struct WaterGroup {
  EmitterId id = 0;
  WaterKind kind = WaterKind::Stream;
  Vec3f position;
  float flow = 0;
  float fall = 0;
  float dist = 0;
};

struct PourVoice {
  EmitterId id = 0;
  Vec3f position;
  float flow = 0;
  int updatesLeft = 0;
};

inline std::uint64_t gridKey(std::int32_t gx, std::int32_t gy, std::int32_t gz) {
  return (static_cast<std::uint64_t>(static_cast<std::uint16_t>(gx)) << 32) |
         (static_cast<std::uint64_t>(static_cast<std::uint16_t>(gy)) << 16) |
         static_cast<std::uint64_t>(static_cast<std::uint16_t>(gz));
}

inline std::int32_t floorDiv(std::int32_t a, std::int32_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace internal

struct AudioScene::Impl {
  AudioEngine& sink;   ///< receives the batch at the end of each update
  internal::CommandBatch engine;  ///< every start, update and stop of this update
  AudioSceneConfig config;
  AudioSceneStats stats;

  // Column map: tops of the columns at metre centres around (mapX, mapZ) (metres).
  std::array<internal::ColumnTop, internal::kMapSide * internal::kMapSide> map{};
  std::int32_t mapX = 0, mapZ = 0;
  bool mapValid = false;
  int mapRow = 0;  ///< next row the rolling refresh re-reads

  std::vector<internal::WindSlot> windSlots;
  std::vector<internal::RainPatch> rainPatches;
  std::vector<internal::WaterGroup> waterGroups;
  std::vector<internal::PourVoice> pours;

  internal::EmitterSet wind, rain, rainBed, fire, water, beds;
  std::vector<std::uint64_t> fireKeys;  ///< sorted grid keys of last update's fire groups

  std::unique_ptr<ListenerAcoustics> acoustics;  ///< built when first needed (from the world's materials)
  std::uint64_t updates = 0;

  Impl(AudioEngine& e, AudioSceneConfig c) : sink(e), engine(e), config(c) {}

  const internal::ColumnTop* column(std::int32_t mx, std::int32_t mz) const {
    std::int32_t i = mx - (mapX - internal::kMapRadius), k = mz - (mapZ - internal::kMapRadius);
    if (i < 0 || k < 0 || i >= internal::kMapSide || k >= internal::kMapSide) return nullptr;
    return &map[static_cast<std::size_t>(k * internal::kMapSide + i)];
  }

  const sim::Material& material(const sim::SimState& w, sim::MaterialId m) const { return (*w.materials)[m]; }
  sim::SoundClass soundOf(const sim::SimState& w, sim::MaterialId m) const {
    return m < w.materials->size() ? material(w, m).sound : sim::SoundClass::None;
  }

  void update(const sim::SimState& world, std::span<const sim::Event> events, const Listener& listener);
  void playEvents(const sim::SimState& world, std::span<const sim::Event> events, const Listener& listener);
  void refreshRows(const sim::SimState& world, int from, int to);
  void classifyWind(const sim::SimState& world, const Listener& listener);
  void classifyRain(const sim::SimState& world, const Listener& listener);
  void classifyWater(const sim::SimState& world, const Listener& listener);
  void updateWind(const sim::SimState& world);
  void updateRain(const sim::SimState& world, const Listener& listener);
  void updateFire(const sim::SimState& world, const Listener& listener);
  void updateWater();
  void updatePours();
  void updateBeds(const sim::SimState& world, const Listener& listener);
  ListenerAcoustics* acousticsFor(const sim::SimState& world);  ///< nullptr: acoustics off
  void applyAcoustics(const sim::SimState& world, const Listener& listener);
  void oneShot(EmitterId id, std::unique_ptr<Voice> voice, Vec3f at, float gain, float priority,
               bool impulsive = false);
};

}  // namespace loam::audio
