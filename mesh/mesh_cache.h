// MeshCache: keeps the meshes of the world around the viewer up to date.
//
// The main thread (which owns the world and applies the server's edits) queues
// bricks and, each frame, copies the queued bricks' voxels out (PaddedBrick) within
// a time budget; worker threads mesh the copies; finished bricks are assembled into
// whole-chunk meshes that the renderer uploads (takeChunkUpdates). Workers never
// read the world, so edits never race with meshing. Queued bricks are served
// nearest chunk first; a brick dirtied again while in flight is meshed again.
//
// A changed brick also queues its 26 neighbours (their border faces depend on it,
// and the AO of their faces on its edge and corner voxels). Bricks outside the
// radius are neither queued nor kept: a brick column is in range when its distance
// (in plan) from the viewer's brick column is at most radiusMetres.
//
// Streamed worlds (BrickStore::columnSource() set): the cache never makes a column
// generate. A brick is read only once its chunk column and the 8 around it are
// present; until then it waits (MeshCacheStats::waitingForColumns) and is meshed on
// the first update() after those columns arrive.
//
// Levels of detail (MeshCacheConfig::coarseMetres): chunk columns far from the viewer
// are meshed from coarsened voxels (gatherCoarseBrick), whole columns at a time. A
// column changes level only once its centre is a quarter chunk (1.6 m) past a
// threshold, so a viewer standing on one does not re-mesh forever; its chunks are
// then queued whole, and each keeps showing its old mesh until its bricks are all
// meshed at the new level. Coarse bricks are meshed without AO (it would split their
// faces off the block grid). Neighbouring chunks at different levels do not match
// exactly at their shared face, so bricks on such a seam open their sides toward it
// (openFaces) where the brick across is mixed: each side then draws its solid voxels'
// faces on the seam whatever the other shows, and no crack opens. A column changing
// level re-queues the facing edges of its 4 neighbours: at once where a seam opens,
// and per chunk once that chunk shows its new level where one closes (closed beside
// the old mesh, a seam would crack until the new one came).
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>
#include "mesh/brick_mesher.h"
#include "mesh/mesh_types.h"
#include "sim/world/brick_store.h"
#include "sim/world/material.h"
#include "sim/world/voxel_overlay.h"

namespace loam::mesh {

struct MeshCacheConfig {
  int workerThreads = 1;          ///< meshing threads (>= 1)
  double radiusMetres = 96.0;     ///< horizontal distance from the viewer kept meshed
  /// Levels of detail: a chunk column whose centre lies at least coarseMetres[0]
  /// (metres, in plan) from the viewer is meshed at level 1 (2^3-voxel blocks), at
  /// least coarseMetres[1] at level 2 (4^3 blocks); 0 turns that level off. See
  /// gatherCoarseBrick. Glade's terrain has about 5x fewer quads at level 1 and 12x
  /// at level 2; its foliage, dithered in 2-voxel cells, gains only at level 2 (6x).
  double coarseMetres[2] = {0.0, 0.0};
};

struct MeshCacheStats {
  std::size_t queuedBricks = 0;   ///< waiting to be copied out (columns present)
  std::size_t waitingForColumns = 0;  ///< queued, but a column they read is absent (streamed worlds)
  std::size_t inFlightBricks = 0; ///< copied, being meshed
  std::size_t meshedBricks = 0;   ///< bricks meshed since construction
  std::size_t skippedBricks = 0;  ///< bricks found hidden without meshing
  std::size_t chunks = 0;         ///< chunks holding a non-empty mesh
  std::size_t coarseChunks = 0;   ///< of those, chunks at a level above 0 (or being re-meshed to one)
  std::size_t quads = 0;          ///< quads over all chunks (opaque + water)
  double lastGatherMs = 0;        ///< main-thread time of the last update()
};

class MeshCache {
 public:
  /// Starts the worker threads. materials gives the mesh classes.
  MeshCache(const sim::MaterialTable& materials, MeshCacheConfig config);
  /// Stops and joins the workers.
  ~MeshCache();
  MeshCache(const MeshCache&) = delete;
  MeshCache& operator=(const MeshCache&) = delete;

  /// Forgets every mesh and queues every brick of world within the radius of centre
  /// (metres, world coordinates). Chunks that had meshes are reported as removed.
  /// Reads only world's bounds (never faults a streamed world).
  void reset(const sim::BrickStore& world, const std::array<double, 3>& centreMetres);
  /// Queues changed bricks (what a BrickStore change subscriber takes) and all 26
  /// neighbours of each (border faces and AO). Cheap; no world access.
  void markDirty(std::span<const sim::BrickCoord> bricks);
  /// Main thread, once per frame: copies queued bricks out of world (nearest first,
  /// until budgetMs is spent), hands them to the workers and collects finished ones.
  /// Moving centre far queues newly reached bricks and drops far chunks; with levels
  /// of detail on, it also queues every brick of columns whose level changes (a scan
  /// of the chunk columns in range per brick column moved). world must not change
  /// during the call; it is not read after it returns. In a streamed world, bricks
  /// next to absent columns are left waiting (not read, not counted against the
  /// budget); each update checks O(1) per column they wait for.
  void update(const sim::BrickStore& world, const std::array<double, 3>& centreMetres, double budgetMs);
  /// Voxels shown instead of the world's (a client's predicted edits), read with the
  /// world by every later update() and finish(), or none (null). The overlay must
  /// outlive its use and not change during those calls; markDirty the bricks whose
  /// overlaid voxels change.
  void setOverlay(const sim::VoxelOverlay* overlay);
  /// Chunks whose mesh changed since the last call (an empty mesh = remove it).
  std::vector<ChunkMesh> takeChunkUpdates();
  /// True when nothing is queued or in flight, bricks waiting for absent columns
  /// aside (nothing more can be done until those columns arrive).
  bool idle() const;
  /// Calls update() until idle() (benches, tests, offscreen shots). Blocks. Workers
  /// read a non-streamed world directly meanwhile; a streamed one is read only by
  /// the calling thread. Returns with bricks still waiting when columns are absent.
  void finish(const sim::BrickStore& world, const std::array<double, 3>& centreMetres);
  MeshCacheStats stats() const;
  /// The level of detail chunk column c is meshed at now (0 when levels are off or c
  /// is out of range).
  int columnLevel(sim::ChunkColumn c) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::mesh
