#include "sim/step/mirror.h"

#include <algorithm>

#include "sim/core/assert.h"
#include "sim/core/internal/format.h"

namespace loam::sim {

void applyEdits(SimState& mirror, std::span<const EditRecord> edits) noexcept {
  for (const EditRecord& e : edits) {
    switch (e.kind) {
      case EditRecord::Kind::Voxel:
        mirror.world.set(VoxelCoord{e.x, e.y, e.z}, e.after);
        break;
      case EditRecord::Kind::BrickFill:
        mirror.world.fillBrick(BrickCoord{e.x, e.y, e.z}, e.after);
        break;
    }
  }
}

void followerEdits(const StepOutput& out, std::vector<EditRecord>& edits) {
  edits.clear();
  std::size_t next = 0;  // first edit not yet copied
  for (const SweepRun& run : out.sweeps) {
    edits.insert(edits.end(), out.edits.begin() + static_cast<std::ptrdiff_t>(next),
                 out.edits.begin() + static_cast<std::ptrdiff_t>(run.firstEdit));
    next = std::size_t{run.firstEdit} + run.edits;
  }
  edits.insert(edits.end(), out.edits.begin() + static_cast<std::ptrdiff_t>(next), out.edits.end());
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

StepRecords recordsOf(const StepOutput& out, std::vector<EditRecord>& edits) {
  followerEdits(out, edits);
  StepRecords r;
  r.tick = out.tick;
  r.edits = edits;
  r.players = out.players;
  r.water = out.water;
  r.fire = out.fire;
  r.animals = out.animals;
  r.weather = out.weatherChanged ? &out.weather : nullptr;
  return r;
}

void applyStep(SimState& mirror, const StepRecords& step, std::vector<EditRecord>* made) {
  if (step.tick > 0) catchUpFire(mirror, static_cast<std::uint32_t>(step.tick - 1), made);
  applyEdits(mirror, step.edits);
  applyPlayerChanges(mirror.players, step.players);
  applyWaterChanges(mirror.water, mirror.world, step.water);
  followFire(mirror, static_cast<std::uint32_t>(step.tick), step.fire, made);
  applyAnimalChanges(mirror.animals, step.animals);
  if (step.weather) applyWeatherChange(mirror.weather, *step.weather);
  mirror.tick = step.tick;
}

void applyStepOutput(SimState& mirror, const StepOutput& out) {
  std::vector<EditRecord> edits;
  applyStep(mirror, recordsOf(out, edits));
}

void applyCellState(SimState& mirror, std::uint64_t tick, CellCoord cell, bool full, std::span<const WaterChange> water,
                    std::span<const FireChange> fire) {
  if (full) {
    resetWaterInCell(mirror.water, mirror.world, cell);
    clearFireInCell(mirror.fire, cell);
    insertFireCells(mirror.fire, mirror.seed, static_cast<std::uint32_t>(tick), fire);
  }
  applyWaterChanges(mirror.water, mirror.world, water);
}

void clearFireInCell(FireState& fire, CellCoord cell) {
  LOAM_ASSERT(fire.work.size() == fire.cells.size());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < fire.cells.size(); ++i) {
    if (cellOf(brickOf(fire.cells[i].corner)) == cell) continue;
    fire.cells[kept] = fire.cells[i];
    fire.work[kept] = fire.work[i];
    ++kept;
  }
  fire.cells.resize(kept);
  fire.work.resize(kept);
}

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
  if (auto d = diffPlayers(expected.players, actual.players)) return d;
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
