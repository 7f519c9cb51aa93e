// Far terrain: the landscape beyond the voxel meshes, as heightfield tiles in levels
// of detail sampled from the scene's generator (sim::TerrainSampler). The generator
// is deterministic, so far terrain needs no network and no full-resolution voxels.
//
// Levels: level L has cells of farCellMetres(L) = cellMetres * 2^L and square tiles of
// kFarTileCells cells (farTileMetres(L)), aligned to multiples of their size in world
// metres (x east, z south). The tiles drawn are the leaves of a quadtree: starting
// from the top level's tiles that meet the square of half side farMetres around the
// eye, a tile splits into its 4 children while its plan distance from the eye (to the
// nearest point of its square) is below kFarSplit times its size. Tiles whose square
// lies wholly within nearMetres of the eye are left out (the voxel meshes draw
// there). Neighbouring leaves then differ by at most one level.
//
// Seams: each vertex carries its own height and the height of the parent level's
// surface at its place (interpolated along the parent's triangulation); the vertex
// shader slides from one to the other with distance (farMorphRange), so a tile's
// edge has its coarser neighbour's shape where they meet, and levels change without
// popping. A skirt (a strip hanging kFarSkirtCells cells down from each edge) hides
// what is left of any crack.
//
// Threads: FarTerrainCache builds tiles on its own worker threads; its methods are
// called from one thread (the renderer's).
#pragma once
#include <array>
#include <compare>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sim/gen/generator.h"
#include "sim/world/material.h"

namespace loam::mesh {

inline constexpr int kFarTileCells = 32;                     ///< cells per tile edge
inline constexpr int kFarTileSide = kFarTileCells + 1;        ///< grid vertices per tile edge (33)
inline constexpr int kFarGridVertices = kFarTileSide * kFarTileSide;          ///< 1089
inline constexpr int kFarTileVertices = kFarGridVertices + 4 * kFarTileSide;  ///< grid, then 4 skirts (1221)
inline constexpr double kFarSplit = 3.0;   ///< a tile splits while nearer than this many of its sizes
inline constexpr double kFarSkirtCells = 2.0;  ///< skirt depth, in the tile's cells
inline constexpr int kFarMaxLevels = 16;

struct FarTerrainConfig {
  double cellMetres = 0.8;    ///< level 0 cell (16 voxels)
  double nearMetres = 96.0;   ///< tiles wholly within this plan distance of the eye are not drawn
  double farMetres = 2048.0;  ///< how far the tiles reach (half side of the covered square)
  /// The world's plan bounds, metres: tiles wholly outside are left out (the far
  /// shader cuts what a tile holds beyond them).
  double minX = -1e30, minZ = -1e30, maxX = 1e30, maxZ = 1e30;
};

/// A tile: level, and its index on that level's grid (covers x in [x, x+1) * size).
struct FarTileKey {
  std::int32_t level = 0;
  std::int32_t x = 0, z = 0;
  friend auto operator<=>(const FarTileKey&, const FarTileKey&) = default;
};

/// One grid or skirt vertex (16 bytes; matches render/shaders/far.vert). Its place in
/// the tile is (i, j) * the tile's cell size from the tile's minimum corner.
struct FarVertex {
  float height = 0;        ///< metres (world y); skirts hang kFarSkirtCells cells below the edge
  float parentHeight = 0;  ///< the parent level's surface here (same skirt offset)
  std::uint8_t i = 0, j = 0;  ///< grid position, 0..kFarTileCells
  std::int8_t nx = 0, nz = 0; ///< unit normal x and z * 127 (y is positive: sqrt(1 - x^2 - z^2))
  sim::MaterialId material = 0;  ///< surface material (water's where water lies above ground)
  std::uint8_t skirt = 0;      ///< 1 for skirt vertices
  sim::MaterialId canopy = 0;  ///< leaves of the trees of the biome here (farCanopies), dry ground only
  std::uint8_t canopyCover = 0;  ///< share of the ground those trees' crowns cover, 0..255
};
static_assert(sizeof(FarVertex) == 16);

/// A built tile: kFarTileVertices vertices (grid row-major, j outer, then skirts) and
/// its height range in metres (skirts and parent heights included). Skirt s (0: edge
/// j = 0, 1: i = 32, 2: j = 32, 3: i = 0) holds kFarTileSide vertices, vertex k under
/// the edge's grid vertex k (k runs along +x or +z).
struct FarTileMesh {
  FarTileKey key;
  std::vector<FarVertex> vertices;
  float minY = 0, maxY = 0;
};

/// Cell size of level, metres: cellMetres * 2^level.
double farCellMetres(const FarTerrainConfig& c, int level);
/// Tile size of level, metres: kFarTileCells cells.
double farTileMetres(const FarTerrainConfig& c, int level);
/// The coarsest level needed to cover farMetres (its tiles are the quadtree's roots).
int farTopLevel(const FarTerrainConfig& c);
/// Plan distance band [start, end] (metres from the eye) over which level's vertices
/// slide from their own height to their parent's; at end a vertex lies on the parent
/// surface. Where a level's leaf meets a finer leaf it is nearer than its start (not
/// morphed), and where it meets a coarser leaf it is at least its end away (fully
/// morphed onto the coarser tile's edge), so seams close. The derivation is in
/// far_terrain.cpp.
std::array<double, 2> farMorphRange(const FarTerrainConfig& c, int level);

/// The leaf tiles to draw for an eye at plan position (x, z) metres, sorted by key:
/// those of the quadtree that are not wholly within nearMetres of the eye nor wholly
/// beyond farMetres. Allocates; some tens of microseconds.
std::vector<FarTileKey> selectFarTiles(const FarTerrainConfig& c, double eyeX, double eyeZ);

/// The shared triangle list of every tile (indices into its vertices): two triangles
/// per grid cell with the diagonal from (i, j) to (i + 1, j + 1), then the skirts; the
/// winding is counter-clockwise seen from above (and from outside for skirts).
std::span<const std::uint16_t> farTileIndices();

/// What trees cover from afar, per biome: the leaves of its tree scatter rules and the
/// share of the ground their crowns hide (density x crown area / cell area, summed,
/// at most 1). The far terrain has no trees of its own; it tints the ground with them.
struct FarCanopy {
  sim::MaterialId leaves = 0;
  std::uint8_t cover = 0;  ///< 0..255
};
/// Index biome + 1 (0: ground in no biome). Pure.
std::vector<FarCanopy> farCanopies(const sim::Scene& scene);

/// Samples the tile's grid (and one cell around it, for normals) from sampler at the
/// voxel columns holding the grid points (35 x 35 samples, about a millisecond). Pure;
/// thread-safe.
FarTileMesh buildFarTile(const sim::TerrainSampler& sampler, const FarTerrainConfig& c, FarTileKey key);

struct FarTerrainUpdate {
  std::vector<FarTileMesh> built;       ///< tiles finished since the last update (upload these)
  std::vector<FarTileKey> released;     ///< tiles no longer drawn nor wanted (free their GPU copies)
};

/// Keeps the tiles around the eye built. The set drawn (drawn()) switches to a new
/// selection only once all its tiles are built, so what is drawn is always a whole
/// cover; until then the previous cover stays.
class FarTerrainCache {
 public:
  /// Starts workerThreads (at least 1) building tiles from sampler.
  FarTerrainCache(std::shared_ptr<const sim::TerrainSampler> sampler, FarTerrainConfig config, int workerThreads);
  /// Stops and joins the workers (each finishes the tile it is building).
  ~FarTerrainCache();
  FarTerrainCache(const FarTerrainCache&) = delete;
  FarTerrainCache& operator=(const FarTerrainCache&) = delete;

  /// Once per frame: selects the tiles for the eye (again once it has moved more than a
  /// level-0 cell), queues the missing ones (nearest first) and drops queued ones no
  /// longer wanted, collects finished ones. Each built tile is returned once; a key
  /// returned is released once, when neither drawn nor wanted (then built again if
  /// wanted later). Cheap when the selection has not changed.
  FarTerrainUpdate update(double eyeX, double eyeZ);
  /// The tiles to draw (all built and handed out by update()), sorted by key.
  const std::vector<FarTileKey>& drawn() const;
  /// True when the wanted selection is built and drawn.
  bool idle() const;
  /// Blocks until idle() for an eye that stays at (x, z); returns everything update()
  /// would have (benches, tests, offscreen shots).
  FarTerrainUpdate finish(double eyeX, double eyeZ);
  /// The configuration the cache was made with.
  const FarTerrainConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::mesh
