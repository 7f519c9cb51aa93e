// The animal system's init and mirror side (model in sim/systems/animals.h; contract
// in sim/systems/water.h): dens, perches and spawns from the scene and the generated
// world. The step is in animal_step.cpp, the codec, hash and diff in animal_codec.cpp,
// what they share in sim/systems/internal/animal_support.h.
#include "sim/systems/animals.h"

#include <algorithm>
#include <limits>

#include "sim/world/brick_store.h"
#include "sim/world/material.h"
#include "sim/world/material_lut.h"
#include "sim/gen/scene.h"
#include "sim/systems/internal/animal_support.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/world/voxel_collision.h"

namespace loam::sim {

using namespace internal::animal;

namespace {

// ---- init ------------------------------------------------------------------------------

std::uint32_t spawnDraw(std::uint64_t seed, std::uint64_t id, std::uint32_t index, std::uint32_t bound) {
  return keyedBelow(RandomKey{seed, RandomPurpose::AnimalSpawn, 0, id, index}, bound);
}

// Perch spots near a den: per brick column within the den's range, looking down
// from the sky to the first brick that is not air (the canopy top where there is a
// tree, else the ground), the highest foliage voxel with air above, where a bird's
// box (and one voxel over it) is clear. Keeps at most kMaxPerchesPerDen in a keyed
// order; appends to out. Air chunks are skipped whole, so the cost is about one
// brick decode per column.
void findPerches(const BrickStore& world, const MaterialLut& lut, const std::array<std::uint8_t, 256>& foliage,
                 std::uint64_t seed, std::uint32_t denIndex, Vec3i home, std::int32_t range, std::vector<Vec3i>& out) {
  const WorldBounds& wb = world.bounds();
  constexpr std::int32_t kBrickUnits = kBrickSize * kUnitsPerVoxel;
  const std::int32_t bx0 = std::max((home.x - range) >> (kUnitShift + kBrickShift), wb.minBrick.x);
  const std::int32_t bx1 = std::min((home.x + range) >> (kUnitShift + kBrickShift), wb.maxBrick.x - 1);
  const std::int32_t bz0 = std::max((home.z - range) >> (kUnitShift + kBrickShift), wb.minBrick.z);
  const std::int32_t bz1 = std::min((home.z + range) >> (kUnitShift + kBrickShift), wb.maxBrick.z - 1);
  const std::int64_t range2 = std::int64_t{range} * range;
  std::vector<VoxelCoord> top;
  std::array<MaterialId, kBrickVoxels> vox{};
  for (std::int32_t bz = bz0; bz <= bz1; ++bz) {
    for (std::int32_t bx = bx0; bx <= bx1; ++bx) {
      const Vec3i centre{bx * kBrickUnits + kBrickUnits / 2, 0, bz * kBrickUnits + kBrickUnits / 2};
      if (horizontalDistanceSquared(centre, home) > range2) continue;
      for (std::int32_t by = wb.maxBrick.y - 1; by >= wb.minBrick.y; --by) {
        const BrickCoord b{bx, by, bz};
        if ((by & (kChunkBricks - 1)) == kChunkBricks - 1) {
          // Top brick of a chunk: skip the whole chunk when it is collapsed to air.
          if (world.chunkIsAir(chunkOf(b))) {
            by -= kChunkBricks - 1;
            continue;
          }
        }
        const BrickView view = world.brick(b);
        if (view.isAir()) continue;
        VoxelCoord best{0, std::numeric_limits<std::int32_t>::min(), 0};
        if (view.isUniform()) {
          const std::int32_t y = by * kBrickSize + kBrickSize;
          if (foliage[view.uniformMaterial()] && world.get(bx * kBrickSize + 3, y, bz * kBrickSize + 3) == kAir) {
            best = VoxelCoord{bx * kBrickSize + 3, y, bz * kBrickSize + 3};
          }
        } else {
          view.decode(vox.data());
          for (int lz = 0; lz < kBrickSize; ++lz) {
            for (int lx = 0; lx < kBrickSize; ++lx) {
              for (int ly = kBrickSize - 1; ly >= 0; --ly) {
                if (ly + by * kBrickSize + 1 <= best.y) break;
                const MaterialId m = vox[static_cast<std::size_t>(voxelIndexInBrick(lx, ly, lz))];
                if (m == kAir) continue;
                if (foliage[m]) {
                  const std::int32_t x = bx * kBrickSize + lx, y = by * kBrickSize + ly, z = bz * kBrickSize + lz;
                  const MaterialId above = ly + 1 < kBrickSize
                                               ? vox[static_cast<std::size_t>(voxelIndexInBrick(lx, ly + 1, lz))]
                                               : world.get(x, y + 1, z);
                  if (above == kAir) best = VoxelCoord{x, y + 1, z};
                }
                break;
              }
            }
          }
        }
        if (best.y != std::numeric_limits<std::int32_t>::min()) top.push_back(best);
        break;  // the first non-air brick decides this column
      }
    }
  }

  std::array<std::uint8_t, 256> nonAir{};
  nonAir.fill(1);
  nonAir[kAir] = 0;
  struct Candidate {
    std::uint64_t key;
    Vec3i spot;
  };
  std::vector<Candidate> found;
  for (const VoxelCoord& c : top) {
    const Vec3i spot{c.x * kUnitsPerVoxel + kUnitsPerVoxel / 2, c.y * kUnitsPerVoxel,
                     c.z * kUnitsPerVoxel + kUnitsPerVoxel / 2};
    if (horizontalDistanceSquared(spot, home) > range2) continue;
    VoxelBox clear = voxelsOfBox(boxAtFeet(spot, kBirdHalfWidth, kBirdHeight));
    clear.max.y += 1;
    if (regionHasAny(world, nonAir, clear) || regionCollides(world, lut, clear)) continue;
    found.push_back(
        {keyedHash(RandomKey{seed, RandomPurpose::AnimalSpawn, 0, packCoordId(c.x, c.y, c.z), 0x10000u + denIndex}),
         spot});
  }
  std::sort(found.begin(), found.end(), [](const Candidate& l, const Candidate& r) {
    if (l.key != r.key) return l.key < r.key;
    if (l.spot.x != r.spot.x) return l.spot.x < r.spot.x;
    if (l.spot.y != r.spot.y) return l.spot.y < r.spot.y;
    return l.spot.z < r.spot.z;
  });
  if (found.size() > kMaxPerchesPerDen) found.resize(kMaxPerchesPerDen);
  for (const Candidate& c : found) out.push_back(c.spot);
}

}  // namespace

void initAnimals(AnimalState& state, const SimSetup& setup) {
  state = AnimalState{};
  const BrickStore& world = setup.world;
  const MaterialLut lut = makeMaterialLut(setup.materials);
  std::array<std::uint8_t, 256> foliage{};
  const std::size_t n = std::min<std::size_t>(setup.materials.size(), 256);
  for (std::size_t i = 1; i < n; ++i) {
    const Material& m = setup.materials[static_cast<MaterialId>(i)];
    foliage[i] = m.foliage ? 1 : 0;
    state.standable[i] = (lut.collides[i] || m.foliage) ? 1 : 0;
  }

  std::size_t total = 0;
  for (const AnimalDen& d : setup.scene.dens) total += static_cast<std::size_t>(std::max(d.count, 0));
  state.animals.reserve(total);
  state.brains.reserve(total);

  for (std::size_t di = 0; di < setup.scene.dens.size(); ++di) {
    const AnimalDen& den = setup.scene.dens[di];
    AnimalSpecies species = AnimalSpecies::Fox;
    switch (den.species) {
      case Species::Bird:
        species = AnimalSpecies::Bird;
        break;
      case Species::Fox:
        species = AnimalSpecies::Fox;
        break;
      case Species::Dog:
        species = AnimalSpecies::Dog;
        break;
    }
    const Body body = bodyOf(species);
    AnimalDenInfo info;
    info.species = static_cast<std::uint8_t>(species);
    info.range = unitsFromMetres(den.range);
    info.home.x = unitsFromMetres(den.position.x);
    info.home.z = unitsFromMetres(den.position.z);
    const std::optional<std::int32_t> ground = dropToGround(world, lut, info.home.x, info.home.z, body);
    info.home.y = den.onGround || !ground ? ground.value_or(0) : unitsFromMetres(den.position.y);
    if (species == AnimalSpecies::Bird) {
      info.perchBegin = static_cast<std::uint32_t>(state.perches.size());
      findPerches(world, lut, foliage, setup.seed, static_cast<std::uint32_t>(di), info.home, info.range,
                  state.perches);
      // No canopy in range: the birds sit on dry ground near the den instead.
      for (std::uint32_t k = 0; state.perches.size() - info.perchBegin < 4 && k < 32; ++k) {
        const std::uint64_t key = 0x100000000ull + di;
        const Vec2i off = along(static_cast<std::uint16_t>(spawnDraw(setup.seed, key, 2 * k, 65536)),
                                static_cast<std::int32_t>(spawnDraw(setup.seed, key, 2 * k + 1,
                                                                    static_cast<std::uint32_t>(info.range / 2 + 1))));
        const Vec3i p{info.home.x + off.x, 0, info.home.z + off.z};
        if (auto y = dropToGround(world, lut, p.x, p.z, body)) {
          const Vec3i spot{p.x, *y, p.z};
          if (!wetAt(world, lut, boxAtFeet(spot, body.halfWidth, body.height))) state.perches.push_back(spot);
        }
      }
      info.perchEnd = static_cast<std::uint32_t>(state.perches.size());
    }
    state.dens.push_back(info);

    for (int i = 0; i < den.count; ++i) {
      Animal a;
      a.id = AnimalId{state.nextId++};
      a.species = species;
      AnimalBrain b;
      b.den = static_cast<std::uint32_t>(di);
      const std::uint64_t id = a.id.value;
      a.yaw = static_cast<std::uint16_t>(spawnDraw(setup.seed, id, 0, 65536));
      if (species == AnimalSpecies::Bird) {
        a.mode = static_cast<std::uint8_t>(BirdMode::Perched);
        a.position = info.home;
        const std::uint32_t np = info.perchEnd - info.perchBegin;
        if (np > 0) {
          // Distinct perches while there are enough.
          std::int32_t pick = -1;
          for (std::uint32_t k = 0; k < 8; ++k) {
            pick = static_cast<std::int32_t>(info.perchBegin + spawnDraw(setup.seed, id, kDrawSpawnPerch + k, np));
            bool taken = false;
            for (const AnimalBrain& o : state.brains) taken = taken || o.perch == pick;
            if (!taken) break;
          }
          b.perch = pick;
          a.position = state.perches[static_cast<std::size_t>(pick)];
        }
        b.untilTick = spawnDraw(setup.seed, id, 1, kBirdPerchMin + kBirdPerchSpread);
      } else {
        a.mode = static_cast<std::uint8_t>(WalkerMode::Idle);
        a.position = info.home;
        const std::int32_t radius = std::min(info.range, kSpawnRadius);
        for (std::uint32_t k = 0; k < 32; ++k) {
          const Vec2i off = along(static_cast<std::uint16_t>(spawnDraw(setup.seed, id, kDrawSpawn + 2 * k, 65536)),
                                  static_cast<std::int32_t>(spawnDraw(setup.seed, id, kDrawSpawn + 2 * k + 1,
                                                                      static_cast<std::uint32_t>(radius))));
          const std::int32_t x = info.home.x + off.x, z = info.home.z + off.z;
          const std::optional<std::int32_t> y = dropToGround(world, lut, x, z, body);
          if (!y) continue;
          if (ground && (*y > *ground + kSpawnHeightTolerance || *y < *ground - kSpawnHeightTolerance)) continue;
          const Vec3i spot{x, *y, z};
          if (wetAt(world, lut, boxAtFeet(spot, body.halfWidth, body.height))) continue;
          a.position = spot;
          break;
        }
        b.onGround = true;
        b.untilTick = spawnDraw(setup.seed, id, 1, 3 * kTicksPerSecond);
      }
      state.animals.push_back(a);
      state.brains.push_back(b);
    }
  }
}


void applyAnimalChanges(AnimalState& state, std::span<const AnimalChange> changes) {
  // Brains stay parallel to animals (defaults for animals the mirror had not seen).
  const bool parallel = state.brains.size() == state.animals.size();
  for (const AnimalChange& c : changes) {
    auto it = std::lower_bound(state.animals.begin(), state.animals.end(), c.animal.id,
                               [](const Animal& a, AnimalId id) { return a.id < id; });
    const auto index = it - state.animals.begin();
    const bool present = it != state.animals.end() && it->id == c.animal.id;
    if (c.removed) {
      if (present) {
        state.animals.erase(it);
        if (parallel) state.brains.erase(state.brains.begin() + index);
      }
    } else if (present) {
      *it = c.animal;
    } else {
      state.animals.insert(it, c.animal);
      if (parallel) state.brains.insert(state.brains.begin() + index, AnimalBrain{});
    }
  }
}

}  // namespace loam::sim
