// The world generator: world = generateWorld(scene, seed, kGeneratorVersion).
//
// Deterministic by chunk plus margin: every chunk's voxels are a pure function of
// (scene, seed, chunk coordinates). Terrain comes from keyed lattice noise
// (sim/gen/noise.h); scatter features, tunnels and structures are shapes with voxel
// bounding boxes, and a chunk paints every shape whose box overlaps it, in one fixed
// order (scatter by rule then cell, tunnels, structures). Chunk columns are handed to
// worker threads by an atomic counter; each chunk is written by exactly one thread,
// so the result (and its world hash) is the same for any thread count and any order.
#pragma once

#include <cstdint>
#include <functional>

#include "sim/world/brick_store.h"
#include "sim/gen/generator_version.h"
#include "sim/core/result.h"
#include "sim/gen/scene.h"

namespace loam::sim {

/// How to run a generation (none of it changes the result).
struct GenerateOptions {
  int threads = 0;              ///< worker threads including the caller; 0 = all hardware threads
  std::uint64_t orderSeed = 0;  ///< 0: canonical chunk order; otherwise a keyed shuffle (tests)
  /// Called on the calling thread with the fraction of chunk columns done (0..1],
  /// at least once at the end. May be empty.
  std::function<void(double)> progress;
};

/// The most chunks generateWorld builds (it generates the whole bounds at once).
inline constexpr std::int64_t kMaxGeneratedChunks = std::int64_t{1} << 20;

/// Builds the world of scene with seed. generatorVersion must be kGeneratorVersion
/// (an Error otherwise, e.g. for a server on another version). The store is returned
/// after markGenerated() (no dirty or modified bricks). Allocates the world; starts
/// and joins its own threads; safe to call from any thread.
Result<BrickStore> generateWorld(const Scene& scene, std::uint64_t seed,
                                 std::uint32_t generatorVersion = kGeneratorVersion,
                                 const GenerateOptions& options = {});

/// The generated terrain at voxel column (x, z), ignoring scatter, tunnels and
/// structures: voxels below `ground` are solid, those in [ground, water) are water.
struct TerrainColumn {
  std::int32_t ground = 0;  ///< voxel y of the first voxel above solid terrain
  std::int32_t water = 0;   ///< voxel y of the first voxel above water (== ground when dry)
};

/// The terrain column at voxel (x, z) without generating the world. Pure; thread-safe.
TerrainColumn terrainColumnAt(const Scene& scene, std::uint64_t seed, std::int32_t x, std::int32_t z);

/// The voxel a scene placement (spawn, den, ignition) refers to: with onGround, the
/// first voxel above the terrain at (x, z) (above water, if any); otherwise the voxel
/// holding position. Pure; thread-safe.
VoxelCoord placementVoxel(const Scene& scene, std::uint64_t seed, const Vec3& position, bool onGround);

}  // namespace loam::sim
