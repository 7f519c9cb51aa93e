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
// Edits: the generator knows nothing of what players dug or built. A FarSurface holds
// the server's surface changes (sim/world/surface_change.h) summed per grid point of
// each level, and tiles lay them over the generator's heights: a vertex rises by the
// mean change of the patches its cell covers.
//
// Threads: FarTerrainCache builds tiles on its own worker threads; its methods are
// called from one thread (the renderer's).
#pragma once
#include <array>
#include <atomic>
#include <compare>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/gen/generator.h"
#include "sim/world/material.h"
#include "sim/world/surface_change.h"

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
  std::uint64_t surfaceVersion = 0;  ///< FarSurface::version() it was built from (0: none or no change yet)
};

inline constexpr std::size_t kFarSurfaceMaxPatches = std::size_t{1} << 20;  ///< distinct patches kept
/// Grid points kept over all levels. Edits in clusters need about 4/3 of a point per
/// patch; patches scattered a kilometre apart need one per level each, so this (not
/// kFarSurfaceMaxPatches) bounds what a hostile server can make a client hold (~120 MB).
inline constexpr std::size_t kFarSurfaceMaxPoints = 2 * kFarSurfaceMaxPatches;
inline constexpr std::int64_t kFarSurfaceMaxRise = std::int64_t{256} * 65536;  ///< |rise| kept per patch, voxels
/// Levels a FarSurface sums: every tile level and the parent of the last (parentHeight).
inline constexpr int kFarSurfaceLevels = kFarMaxLevels + 1;

/// The level grid point (per axis) whose footprint holds patch p (sim::SurfaceChange):
/// p on level 0, the nearest point floor((p + 2^(level-1)) / 2^level) above. Level-L
/// point g samples the same voxel column as level-0 point g * 2^L, and its footprint
/// is the 2^L patches [g * 2^L - 2^(L-1), g * 2^L + 2^(L-1)) per axis.
constexpr std::int64_t farSurfacePoint(int level, std::int64_t p) {
  return level == 0 ? p : (p + (std::int64_t{1} << (level - 1))) >> level;
}

/// The surface changes the far terrain lays over the generator, summed per grid point
/// of every level. Bounded against a hostile server: at most kFarSurfaceMaxPatches
/// distinct patches and kFarSurfaceMaxPoints grid points; new patches beyond either are
/// ignored (and counted); rises are clamped to kFarSurfaceMaxRise.
///
/// Threads: apply() takes the lock exclusively; the queries marked "under readLock()"
/// must be called holding readLock(); version(), patches() and ignored() any time.
class FarSurface {
 public:
  /// Replaces each given patch's change (a later one in the span wins); a change of
  /// rise 0 and kAir forgets the patch. Allocates; about 20 hash updates a patch.
  /// Bumps version(). Any thread (the renderer's).
  void apply(std::span<const sim::SurfaceChange> changes);
  /// The shared lock the queries below need.
  [[nodiscard]] std::shared_lock<std::shared_mutex> readLock() const { return std::shared_lock(mutex_); }

  /// Under readLock(): the mean rise, metres, of the footprint of level point (gx, gz):
  /// its summed rise / (256 * 4^level) / kVoxelsPerMetre (patches without a change are 0).
  float riseMetres(int level, std::int64_t gx, std::int64_t gz) const;
  /// Under readLock(): the latest changed top material among the footprint's patches
  /// when at least half of its 4^level patches carry one; kAir otherwise.
  sim::MaterialId material(int level, std::int64_t gx, std::int64_t gz) const;
  /// Under readLock(): false when no level point in [gx0, gx1] x [gz0, gz1] has a
  /// change (true may also mean a change just outside). At most 9 lookups for a range
  /// of up to 35 points below level 12.
  bool anyIn(int level, std::int64_t gx0, std::int64_t gz0, std::int64_t gx1, std::int64_t gz1) const;

  /// Number of apply() calls so far: a build that read version v saw every change
  /// applied up to the v-th call.
  std::uint64_t version() const { return version_.load(std::memory_order_acquire); }
  /// Distinct patches holding a change.
  std::size_t patches() const { return patches_.load(std::memory_order_relaxed); }
  /// New patches dropped for being beyond the bounds.
  std::size_t ignored() const { return ignored_.load(std::memory_order_relaxed); }

 private:
  /// One grid point's sums over its footprint (on level 0, one patch's change). A point
  /// is kept while its footprint holds a changed patch (anyIn relies on that).
  struct Cell {
    std::int64_t rise = 0;              ///< voxels, summed over the footprint's columns
    std::uint32_t patches = 0;          ///< patches of the footprint holding a change
    std::uint32_t changedTops = 0;      ///< those with a material (not kAir)
    sim::MaterialId material = sim::kAir;  ///< the latest of those
  };
  const Cell* find(int level, std::int64_t gx, std::int64_t gz) const;

  mutable std::shared_mutex mutex_;
  std::array<std::unordered_map<std::uint64_t, Cell>, kFarSurfaceLevels> cells_;
  std::size_t points_ = 0;  // cells over all levels
  std::atomic<std::uint64_t> version_{0};
  std::atomic<std::size_t> patches_{0}, ignored_{0};
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
/// voxel columns holding the grid points (35 x 35 samples, about a millisecond). With
/// a surface that has changes near the tile, its ground rises by surface->riseMetres
/// (water stays where it was), its top takes surface->material where dry, and each
/// vertex's parentHeight follows the parent level's changes; the result records the
/// version read. Without (or none near) the output is the generator's alone. Thread-safe
/// (takes surface's read lock briefly, after sampling).
FarTileMesh buildFarTile(const sim::TerrainSampler& sampler, const FarTerrainConfig& c, FarTileKey key,
                         const FarSurface* surface = nullptr);

struct FarTerrainUpdate {
  std::vector<FarTileMesh> built;       ///< tiles finished since the last update (upload these)
  std::vector<FarTileKey> released;     ///< tiles no longer drawn nor wanted (free their GPU copies)
};

/// Keeps the tiles around the eye built. The set drawn (drawn()) switches to a new
/// selection only once all its tiles are built, so what is drawn is always a whole
/// cover; until then the previous cover stays.
class FarTerrainCache {
 public:
  /// Starts workerThreads (at least 1) building tiles from sampler, with the changes of
  /// surface laid over them (null: none).
  FarTerrainCache(std::shared_ptr<const sim::TerrainSampler> sampler, FarTerrainConfig config, int workerThreads,
                  std::shared_ptr<FarSurface> surface = nullptr);
  /// Stops and joins the workers (each finishes the tile it is building).
  ~FarTerrainCache();
  FarTerrainCache(const FarTerrainCache&) = delete;
  FarTerrainCache& operator=(const FarTerrainCache&) = delete;

  /// Once per frame: selects the tiles for the eye (again once it has moved more than a
  /// level-0 cell), queues the missing ones (nearest first) and drops queued ones no
  /// longer wanted, collects finished ones. Each built tile is returned once, except
  /// that a tile rebuilt for surface changes comes again with the same key (replace
  /// the old copy); a key returned is released once, when neither drawn nor wanted
  /// (then built again if wanted later). Cheap when the selection has not changed.
  FarTerrainUpdate update(double eyeX, double eyeZ);
  /// Applies changes to the surface (none without one) and queues again every tile
  /// handed out or pending whose vertices they may move. The old tiles stay drawn until
  /// update() hands out the rebuilt ones (same keys); a build that read the surface
  /// before this call never has the last word. Allocates; about 100 set lookups per
  /// distinct changed point of each level.
  void applySurfaceChanges(std::span<const sim::SurfaceChange> changes);
  /// The tiles to draw (all built and handed out by update()), sorted by key.
  const std::vector<FarTileKey>& drawn() const;
  /// True when the wanted selection is built and drawn, and no rebuild is pending.
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
