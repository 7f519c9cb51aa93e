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

namespace loam::mesh {

struct MeshCacheConfig {
  int workerThreads = 1;          ///< meshing threads (>= 1)
  double radiusMetres = 96.0;     ///< horizontal distance from the viewer kept meshed
};

struct MeshCacheStats {
  std::size_t queuedBricks = 0;   ///< waiting to be copied out
  std::size_t inFlightBricks = 0; ///< copied, being meshed
  std::size_t meshedBricks = 0;   ///< bricks meshed since construction
  std::size_t skippedBricks = 0;  ///< bricks found hidden without meshing
  std::size_t chunks = 0;         ///< chunks holding a non-empty mesh
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
  void reset(const sim::BrickStore& world, const std::array<double, 3>& centreMetres);
  /// Queues changed bricks (what a BrickStore change subscriber takes) and all 26
  /// neighbours of each (border faces and AO). Cheap; no world access.
  void markDirty(std::span<const sim::BrickCoord> bricks);
  /// Main thread, once per frame: copies queued bricks out of world (nearest first,
  /// until budgetMs is spent), hands them to the workers and collects finished ones.
  /// Moving centre far queues newly reached bricks and drops far chunks. world must
  /// not change during the call; it is not read after it returns.
  void update(const sim::BrickStore& world, const std::array<double, 3>& centreMetres, double budgetMs);
  /// Chunks whose mesh changed since the last call (an empty mesh = remove it).
  std::vector<ChunkMesh> takeChunkUpdates();
  /// True when nothing is queued or in flight.
  bool idle() const;
  /// Calls update() until idle() (benches, tests, offscreen shots). Blocks.
  void finish(const sim::BrickStore& world, const std::array<double, 3>& centreMetres);
  MeshCacheStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::mesh
