#include "sim/systems/sim_state.h"

#include <algorithm>
#include <cmath>

#include "sim/world/material.h"
#include "sim/systems/motion.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#if __has_include("sim/gen/generator.h")
#include "sim/gen/generator.h"
#define LOAM_SIM_HAS_GENERATOR 1
#endif

namespace loam::sim {

namespace {

std::uint16_t angleFromDegrees(double deg) {
  double a = deg * (65536.0 / 360.0);
  auto i = static_cast<std::int64_t>(a < 0 ? a - 0.5 : a + 0.5);
  return static_cast<std::uint16_t>(static_cast<std::uint64_t>(i) & 0xFFFFu);
}

// Feet height of a player box standing on the highest colliding voxel under its
// footprint at (x, z); the world's floor when the column is empty.
std::int32_t groundFeetY(const BrickStore& world, const MaterialLut& lut, std::int32_t x, std::int32_t z) {
  const WorldBounds& b = world.bounds();
  const std::int32_t top = b.maxBrick.y * kBrickSize - 1, bottom = b.minBrick.y * kBrickSize;
  const std::int32_t x0 = (x - kPlayerHalfWidth) >> kUnitShift, x1 = (x + kPlayerHalfWidth - 1) >> kUnitShift;
  const std::int32_t z0 = (z - kPlayerHalfWidth) >> kUnitShift, z1 = (z + kPlayerHalfWidth - 1) >> kUnitShift;
  for (std::int32_t y = top; y >= bottom; --y) {
    for (std::int32_t vz = z0; vz <= z1; ++vz) {
      for (std::int32_t vx = x0; vx <= x1; ++vx) {
        if (lut.collides[world.get(vx, y, vz)]) return (y + 1) * kUnitsPerVoxel;
      }
    }
  }
  return bottom * kUnitsPerVoxel;
}

}  // namespace

const Player* SimState::findPlayer(PlayerId id) const noexcept {
  auto it = std::lower_bound(players.begin(), players.end(), id, [](const Player& p, PlayerId v) { return p.id < v; });
  return it != players.end() && it->id == id ? &*it : nullptr;
}

Player* SimState::findPlayer(PlayerId id) noexcept {
  auto it = std::lower_bound(players.begin(), players.end(), id, [](const Player& p, PlayerId v) { return p.id < v; });
  return it != players.end() && it->id == id ? &*it : nullptr;
}

namespace {

// A simulating state sets every system up from the world; a mirror of a streamed world
// holds no animals (it follows them in snapshots) and no water records (its water is
// implicit until the server's changes arrive).
enum class Role : std::uint8_t { Simulation, Mirror };

SimState stateAroundWorld(const Scene& scene, std::uint64_t seed, BrickStore world, Role role) {
  SimState s{.seed = seed,
             .sceneHash = sceneJoinHash(scene),
             .tick = 0,
             .materials = scene.materials,
             .lut = makeMaterialLut(*scene.materials),
             .world = std::move(world),
             .spawns = {},
             .rules = {},
             .players = {},
             .weather = {},
             .water = {},
             .fire = {},
             .animals = {},
             .scratch = {}};
  // Spawns, in scene order.
  for (const SpawnPoint& sp : scene.spawns) {
    Spawn out;
    out.position.x = unitsFromMetres(sp.position.x);
    out.position.z = unitsFromMetres(sp.position.z);
    out.position.y = sp.onGround ? groundFeetY(s.world, s.lut, out.position.x, out.position.z)
                                 : unitsFromMetres(sp.position.y);
    out.yaw = angleFromDegrees(sp.yaw);
    s.spawns.push_back(out);
  }
  if (s.spawns.empty()) {
    const WorldBounds& b = s.world.bounds();
    Spawn out;
    out.position.x = (b.minBrick.x + b.maxBrick.x) / 2 * kBrickSize * kUnitsPerVoxel;
    out.position.z = (b.minBrick.z + b.maxBrick.z) / 2 * kBrickSize * kUnitsPerVoxel;
    out.position.y = groundFeetY(s.world, s.lut, out.position.x, out.position.z);
    s.spawns.push_back(out);
  }
  s.players.reserve(s.rules.maxPlayers);
  s.scratch.order.reserve(1024);
  s.scratch.counts.assign(256, 0);
  s.scratch.players.reserve(s.rules.maxPlayers);

  const SimSetup setup{scene, s.world, *s.materials, seed};
  initWeather(s.weather, setup);
  initFire(s.fire, setup);
  if (role == Role::Simulation) {
    initWater(s.water, setup);
    initAnimals(s.animals, setup);
    scheduleIgnitions(s.fire, setup);
  } else {
    initMirrorWater(s.water, s.world, *scene.materials);
  }
  return s;
}

}  // namespace

SimState createSimStateFromWorld(const Scene& scene, std::uint64_t seed, BrickStore world) {
  return stateAroundWorld(scene, seed, std::move(world), Role::Simulation);
}

Result<SimState> createSimState(const Scene& scene, std::uint64_t seed) {
#ifdef LOAM_SIM_HAS_GENERATOR
  Result<BrickStore> world = generateWorld(scene, seed);
  if (!world) return world.error();
  return createSimStateFromWorld(scene, seed, std::move(world).value());
#else
  (void)scene;
  (void)seed;
  return makeError("createSimState: the generator is not built yet");
#endif
}

void playerStreamCentres(const SimState& state, std::vector<StreamCentre>& out) {
  out.clear();
  for (const Player& p : state.players)
    out.push_back({p.motion.position.x >> kUnitShift, p.motion.position.z >> kUnitShift});
}

namespace {

// A streamed state. It starts with what its setup reads generated at once (on the
// source's threads) rather than a fault at a time: the ground under the spawns and,
// for a simulating state, what initAnimals reads around the dens (a bird den's perches within its range,
// a walker den's spawn ground). The rest of the dens' ranges, where the animals go
// first, is asked of the source ahead (prefetch): it arrives between steps, or
// faults in when an animal reaches it first. Either way it reads the same.
Result<SimState> streamedState(const Scene& scene, std::uint64_t seed, ColumnSource& source, Role role) {
#ifdef LOAM_SIM_HAS_GENERATOR
  if (!BrickStore::validBounds(scene.worldBounds)) return makeError(scene.sourcePath + ": invalid world bounds");
  BrickStore world(scene.worldBounds);
  world.markGenerated();
  world.setColumnSource(&source);
  std::vector<ChunkColumn> start = spawnColumns(scene);
  std::vector<ChunkColumn> later;
  if (role == Role::Simulation) {
    for (const AnimalDen& d : scene.dens) {
      const auto x = static_cast<std::int32_t>(std::floor(d.position.x * kVoxelsPerMetre));
      const auto z = static_cast<std::int32_t>(std::floor(d.position.z * kVoxelsPerMetre));
      // initAnimals reads bricks whose centre is within a bird den's range, and the
      // ground within kSpawnRadius (5 m) of a walker den; a metre more for the bodies.
      const double reads = d.species == Species::Bird ? d.range : std::min(d.range, 5.0);
      for (ChunkColumn c : columnsAround(scene.worldBounds, x, z, static_cast<std::int32_t>((reads + 1.0) * kVoxelsPerMetre)))
        start.push_back(c);
      for (ChunkColumn c : columnsAround(scene.worldBounds, x, z, static_cast<std::int32_t>((d.range + 6.0) * kVoxelsPerMetre)))
        later.push_back(c);
    }
  }
  source.faultAll(start, world);
  SimState state = stateAroundWorld(scene, seed, std::move(world), role);
  if (!later.empty()) source.prefetch(later);
  return state;
#else
  (void)scene;
  (void)seed;
  (void)source;
  (void)role;
  return makeError("a streamed state needs the generator, which this build lacks");
#endif
}

}  // namespace

Result<SimState> createStreamedSimState(const Scene& scene, std::uint64_t seed, ColumnSource& source) {
  return streamedState(scene, seed, source, Role::Simulation);
}

Result<SimState> createMirrorState(const Scene& scene, std::uint64_t seed, ColumnSource& source) {
  return streamedState(scene, seed, source, Role::Mirror);
}

}  // namespace loam::sim
