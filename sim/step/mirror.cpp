#include "sim/step/mirror.h"

#include <algorithm>
#include <array>

#include "sim/core/internal/format.h"

namespace loam::sim {

namespace {

// Every replicated field of a player as (name, value), one table for all comparisons.
struct PlayerField {
  const char* name;
  std::int64_t value;
};
constexpr std::size_t kPlayerFieldCount = 25;

std::array<PlayerField, kPlayerFieldCount> playerFields(const Player& p) {
  const PlayerState& m = p.motion;
  const RateBudget& b = p.budget;
  return {{{"position.x", m.position.x},
           {"position.y", m.position.y},
           {"position.z", m.position.z},
           {"velocity.x", m.velocity.x},
           {"velocity.y", m.velocity.y},
           {"velocity.z", m.velocity.z},
           {"yaw", m.yaw},
           {"pitch", m.pitch},
           {"onGround", m.onGround},
           {"crouching", m.crouching},
           {"swimming", m.swimming},
           {"running", m.running},
           {"lastInput", m.lastInput},
           {"stride", m.stride},
           {"motionEvents", m.motionEvents},
           {"surface", m.surface},
           {"impactSpeed", m.impactSpeed},
           {"budget.editTokens", b.editTokens},
           {"budget.editTick", static_cast<std::int64_t>(b.editTick)},
           {"budget.chatTokens", b.chatTokens},
           {"budget.chatTick", static_cast<std::int64_t>(b.chatTick)},
           {"budget.inputTick", static_cast<std::int64_t>(b.inputTick)},
           {"budget.inputsInTick", b.inputsInTick},
           {"name.length", p.name.length},
           {"id", p.id.value}}};
}

}  // namespace

void applyEdits(BrickStore& world, std::span<const EditRecord> edits) noexcept {
  for (const EditRecord& e : edits) {
    switch (e.kind) {
      case EditRecord::Kind::Voxel:
        world.set(VoxelCoord{e.x, e.y, e.z}, e.after);
        break;
      case EditRecord::Kind::BrickFill:
        world.fillBrick(BrickCoord{e.x, e.y, e.z}, e.after);
        break;
    }
  }
}

void applyPlayerChanges(std::vector<Player>& players, std::span<const PlayerChange> changes) {
  for (const PlayerChange& ch : changes) {
    auto it = std::lower_bound(players.begin(), players.end(), ch.player.id,
                               [](const Player& p, PlayerId id) { return p.id < id; });
    const bool present = it != players.end() && it->id == ch.player.id;
    switch (ch.kind) {
      case PlayerChange::Kind::Left:
        if (present) players.erase(it);
        break;
      case PlayerChange::Kind::Joined:
      case PlayerChange::Kind::Updated:
        if (present) {
          *it = ch.player;
        } else {
          players.insert(it, ch.player);
        }
        break;
    }
  }
}

StepRecords recordsOf(const StepOutput& out) noexcept {
  StepRecords r;
  r.tick = out.tick;
  r.edits = out.edits;
  r.players = out.players;
  r.water = out.water;
  r.fire = out.fire;
  r.animals = out.animals;
  r.weather = out.weatherChanged ? &out.weather : nullptr;
  return r;
}

void applyStep(SimState& mirror, const StepRecords& step) {
  applyEdits(mirror.world, step.edits);
  applyPlayerChanges(mirror.players, step.players);
  applyWaterChanges(mirror.water, step.water);
  applyFireChanges(mirror.fire, step.fire);
  applyAnimalChanges(mirror.animals, step.animals);
  if (step.weather) applyWeatherChange(mirror.weather, *step.weather);
  mirror.tick = step.tick;
}

void applyStepOutput(SimState& mirror, const StepOutput& out) { applyStep(mirror, recordsOf(out)); }

std::optional<std::string> diffBrick(const BrickStore& expected, const BrickStore& actual, BrickCoord b) {
  const BrickView e = expected.brick(b);
  const BrickView a = actual.brick(b);
  if (e.isUniform() && a.isUniform() && e.uniformMaterial() == a.uniformMaterial()) return std::nullopt;
  for (int i = 0; i < kBrickVoxels; ++i) {
    const MaterialId me = e.at(i), ma = a.at(i);
    if (me != ma) {
      const int lx = i & 7, ly = (i >> 3) & 7, lz = i >> 6;
      return internal::format("brick (%d,%d,%d) voxel (%d,%d,%d): expected material %u, actual %u", b.x, b.y, b.z,
                              b.x * kBrickSize + lx, b.y * kBrickSize + ly, b.z * kBrickSize + lz, unsigned{me},
                              unsigned{ma});
    }
  }
  return std::nullopt;
}

std::optional<std::string> firstDifference(const SimState& expected, const SimState& actual,
                                           std::span<const BrickCoord> bricks) {
  if (expected.tick != actual.tick) {
    return internal::format("tick: expected %llu, actual %llu", static_cast<unsigned long long>(expected.tick),
                            static_cast<unsigned long long>(actual.tick));
  }
  if (expected.players.size() != actual.players.size()) {
    return internal::format("players.size: expected %zu, actual %zu", expected.players.size(), actual.players.size());
  }
  for (std::size_t i = 0; i < expected.players.size(); ++i) {
    const Player& pe = expected.players[i];
    const Player& pa = actual.players[i];
    if (pe == pa) continue;
    const auto fe = playerFields(pe);
    const auto fa = playerFields(pa);
    for (std::size_t k = 0; k < kPlayerFieldCount; ++k) {
      if (fe[k].value != fa[k].value) {
        return internal::format("player %u %s: expected %lld, actual %lld", pe.id.value, fe[k].name,
                                static_cast<long long>(fe[k].value), static_cast<long long>(fa[k].value));
      }
    }
    return internal::format("player %u name: expected '%.*s', actual '%.*s'", pe.id.value,
                            static_cast<int>(pe.name.length), pe.name.bytes.data(), static_cast<int>(pa.name.length),
                            pa.name.bytes.data());
  }
  if (auto d = diffWeather(expected.weather, actual.weather)) return d;
  if (auto d = diffWater(expected.water, actual.water)) return d;
  if (auto d = diffFire(expected.fire, actual.fire)) return d;
  if (auto d = diffAnimals(expected.animals, actual.animals)) return d;
  for (const BrickCoord& b : bricks) {
    if (auto d = diffBrick(expected.world, actual.world, b)) return d;
  }
  return std::nullopt;
}

}  // namespace loam::sim
