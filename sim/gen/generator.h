// The world generator: world = generateWorld(scene, seed, kGeneratorVersion), or a
// region of it (generateRegion), or a chunk column at a time on demand (ChunkGenerator).
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
#include <memory>
#include <span>
#include <vector>

#include "sim/world/brick_store.h"
#include "sim/world/column_source.h"
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

/// The most chunks generateWorld or generateRegion builds at once.
inline constexpr std::int64_t kMaxGeneratedChunks = std::int64_t{1} << 20;

/// Generates a world a chunk column at a time, on demand: the scene's whole-world
/// setup (terrain field, tunnels, structures) is made once in create(); after that a
/// column's content is a function of (scene, seed, column) alone, never of which
/// columns were generated before, on which thread or in which order. Filling a store
/// column by column therefore gives the bits generateWorld gives for those columns
/// (tests: generator_test). Chunks generated into a store of their own join a world
/// through BrickStore::adoptChunks.
class ChunkGenerator {
 public:
  /// The generator of scene with seed; an Error for another generator version, a
  /// scene without materials or invalid bounds. Copies the scene.
  static Result<ChunkGenerator> create(const Scene& scene, std::uint64_t seed,
                                       std::uint32_t generatorVersion = kGeneratorVersion);
  ChunkGenerator(ChunkGenerator&&) noexcept;
  ChunkGenerator& operator=(ChunkGenerator&&) noexcept;
  ~ChunkGenerator();

  /// The world bounds of the scene.
  const WorldBounds& bounds() const noexcept;
  /// True when column lies inside the world bounds.
  bool contains(ChunkColumn column) const noexcept;
  /// Writes the generated content of column into out (a store with the scene's
  /// bounds), creating its chunks that are not all air. Any number of threads may
  /// generate at once into different stores, or into different columns of one store
  /// whose chunks are already resident (the store's threading rule). column must be
  /// inside the bounds (asserted). The generator keeps one scratch buffer per thread
  /// generating at once (the column table of a 128 x 128 voxel column, about 300 KB)
  /// and hands them out under a mutex.
  void generateColumn(ChunkColumn column, BrickStore& out) const;

 private:
  ChunkGenerator();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The chunk columns inside bounds within radiusVoxels (horizontally) of voxel column
/// (voxelX, voxelZ), nearest first (distance to the column's nearest voxel; ties in
/// canonical z, x order). Empty for a negative radius. O(columns in the square).
std::vector<ChunkColumn> columnsAround(const WorldBounds& bounds, std::int32_t voxelX, std::int32_t voxelZ,
                                       std::int32_t radiusVoxels);

/// The chunk columns within 2 m of a spawn point (the world's centre when the scene
/// lists none), canonical order: the ground a joining player stands on, whose
/// generated content the server and a streamed client compare at the join
/// (hashColumns). O(columns listed).
std::vector<ChunkColumn> spawnColumns(const Scene& scene);

/// Builds the given chunk columns of the world of scene (duplicates count once; the
/// rest of the world reads as air), on options.threads workers: the same bits in
/// those columns as generateWorld. An Error for a column outside the bounds or a
/// region of more than kMaxGeneratedChunks chunks. Returned after markGenerated().
Result<BrickStore> generateRegion(const Scene& scene, std::uint64_t seed, std::span<const ChunkColumn> columns,
                                  std::uint32_t generatorVersion = kGeneratorVersion,
                                  const GenerateOptions& options = {});

/// True when generateWorld can build scene's world whole (at most kMaxGeneratedChunks
/// chunks); a bigger world is streamed (sim/gen/column_streamer.h).
bool generatableWhole(const Scene& scene) noexcept;

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
  bool held = false;        ///< the water is a stream's or river's: held at its level (sim/systems/water.h)
};

/// The terrain column at voxel (x, z) without generating the world. Pure; thread-safe.
/// Sets the scene up for each call: TerrainSampler for many columns.
TerrainColumn terrainColumnAt(const Scene& scene, std::uint64_t seed, std::int32_t x, std::int32_t z);

/// The terrain at a voxel column with its materials and biome (no scatter, tunnels or
/// structures).
struct TerrainSample {
  TerrainColumn column;                ///< ground and water heights
  MaterialId surface = kAir;           ///< the top surface layer's material
  MaterialId waterMaterial = kAir;     ///< the liquid in [ground, water)
  std::int16_t biome = -1;             ///< index into Scene::biomes, -1 = none
};

/// A scene's terrain sampled anywhere without generating chunks, with the scene set
/// up once: what coarse maps of a world too big to generate read (loam-tool preview;
/// the far view later). at() is pure and thread-safe, about a microsecond a column.
class TerrainSampler {
 public:
  /// The sampler of scene with seed (copies the scene).
  TerrainSampler(const Scene& scene, std::uint64_t seed);
  TerrainSampler(TerrainSampler&&) noexcept;
  TerrainSampler& operator=(TerrainSampler&&) noexcept;
  ~TerrainSampler();
  /// The terrain at voxel column (x, z), bit-identical to what generation uses.
  TerrainSample at(std::int32_t x, std::int32_t z) const noexcept;
  /// The voxel y above a stream's or river's generated water in column (x, z) (what
  /// the water system holds at its level), or INT32_MIN when the column holds none.
  /// Rejects columns far from every channel without evaluating them.
  std::int32_t heldWaterTop(std::int32_t x, std::int32_t z) const noexcept;
  /// The scene it samples (its copy).
  const Scene& scene() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The voxel a scene placement (spawn, den, ignition) refers to: with onGround, the
/// first voxel above the terrain at (x, z) (above water, if any); otherwise the voxel
/// holding position. Pure; thread-safe.
VoxelCoord placementVoxel(const Scene& scene, std::uint64_t seed, const Vec3& position, bool onGround);

}  // namespace loam::sim
