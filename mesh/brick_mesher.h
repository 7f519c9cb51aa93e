// BrickMesher: turns one brick (plus a one-voxel border of its neighbours) into
// greedy-merged quads with per-vertex voxel ambient occlusion.
//
// Faces: an Opaque voxel gets a face toward every Empty or Liquid neighbour; a
// Liquid voxel gets a face toward every Empty neighbour (the translucent list).
// Faces merge when they lie in one plane, share material and have the same four
// AO values. Faces toward a sealed air pocket (one voxel, or a 2x2x2 block on even
// brick-local coordinates, inside the brick, every face neighbour Opaque) are left
// out: they can only be seen from inside the pocket, and the holes of generated
// foliage are such blocks. Pure functions over copied voxels, so any thread may run
// them. Conventions (winding, AO, corner order): mesh/mesh_types.h.
#pragma once
#include <array>
#include <memory>
#include <vector>
#include "mesh/mesh_types.h"
#include "sim/world/brick_store.h"
#include "sim/world/material.h"

namespace loam::sim {
class VoxelOverlay;
}

namespace loam::mesh {

inline constexpr int kPadded = sim::kBrickSize + 2;  ///< 10: a brick and its border
inline constexpr int kPaddedVoxels = kPadded * kPadded * kPadded;

/// A brick's voxels with a one-voxel border, index (x+1) + 10*((y+1) + 10*(z+1)) for
/// x, y, z in -1..8 (brick-local).
struct PaddedBrick {
  sim::BrickCoord brick;
  std::array<sim::MaterialId, kPaddedVoxels> voxels{};
};

/// MeshClass per material id (256 entries), from a material table: air Empty, liquid
/// materials Liquid, everything else (solid, foliage, glass, ids past the table) Opaque.
/// Foliage is also flatAo: its faces carry no ambient occlusion, so the dithered
/// canopy shells merge into large quads (with AO they split into single voxels:
/// leaves were 10 of glade's 13 million quads).
struct MeshClassTable {
  std::array<MeshClass, 256> classes{};
  std::array<std::uint8_t, 256> flatAo{};  ///< 1: faces of this material get AO 3 (open) everywhere
  const MeshClass& operator[](std::size_t i) const { return classes[i]; }
  MeshClass& operator[](std::size_t i) { return classes[i]; }
};
MeshClassTable meshClasses(const sim::MaterialTable& materials);

/// Copies brick b and its border out of world: air outside the bounds, except below
/// the world's floor, where the bottom voxel layer repeats (the underside is never
/// seen, and air there would give every bottom brick a face). About 1-2 µs.
/// Thread: any, while nobody writes the chunks involved.
void gatherPaddedBrick(const sim::BrickStore& world, sim::BrickCoord b, PaddedBrick& out);

/// Coarser levels of detail a brick can be gathered at: level L meshes blocks of
/// 2^L voxels per edge (gatherCoarseBrick).
inline constexpr int kMaxMeshLevel = 2;

/// The material a coarse block of k^3 voxels (k = 2 or 4, index x + k * (y + k * z))
/// shows, by MeshClass: Opaque voxels at least half of the block: the most frequent
/// Opaque material; else Liquid at least half: the most frequent Liquid one; else
/// Opaque + Liquid at least half: the most frequent material of the more frequent of
/// those two classes (Opaque on a tie); else kAir. Ties between materials go to the
/// one reaching the highest y (a grass top over soil stays grass), then the lowest id.
/// Pure; at most k^3 steps plus a scan of the distinct materials. Thread: any.
sim::MaterialId coarseBlockMaterial(const sim::MaterialId* voxels, int k, const MeshClassTable& classes);

/// gatherPaddedBrick for level 1 or 2 (k = 2^level voxels per coarse block): padded
/// voxel (x, y, z) gets coarseBlockMaterial of the world-aligned block of k^3 voxels
/// holding it, read from the fine voxels of brick-local -k..7+k (the same 27 bricks
/// as a fine gather), with overlay (if any) over them before coarsening. Each block
/// depends only on its own voxels, so neighbouring bricks agree at their border and
/// meshBrick merges each coarse face into quads whose corners are multiples of k
/// when given a table with flatAo set for every material (as MeshCache does): AO is
/// read per fine cell and would split a coarse face. Below the floor the bottom
/// padded layer repeats, as in gatherPaddedBrick. No heap allocation; about 5 KB of
/// stack, 5-15 µs (every mixed neighbour is decoded). Thread: any, while nobody
/// writes the chunks involved (nor the overlay).
void gatherCoarseBrick(const sim::BrickStore& world, sim::BrickCoord b, int level, const MeshClassTable& classes,
                       PaddedBrick& out, const sim::VoxelOverlay* overlay = nullptr);

/// True when brick b can produce no face: it and its six face neighbours are uniform
/// and of classes that make no face between them (all Opaque, all Empty, ...). O(1)
/// per neighbour, no voxel reads. Lets the cache skip most of a world cheaply. Holds
/// at every level (a uniform brick's coarse blocks are the brick's material).
bool brickIsHidden(const sim::BrickStore& world, sim::BrickCoord b, const MeshClassTable& classes);

/// Exact for uniform bricks: true when uniform brick b makes no face, reading only the
/// 8x8 layers of its mixed face neighbours that touch it (at most 6 x 64 voxel reads).
/// False for mixed bricks. Catches what brickIsHidden cannot: a uniform soil brick
/// under a mixed grass/soil brick. At level 1 or 2 (b gathered by gatherCoarseBrick)
/// it reads the coarse blocks of the neighbours' layers 2^level voxels thick instead
/// (a coarse layer can differ from the fine one; one decode per mixed neighbour).
/// Thread: any, while nobody writes the chunks involved.
bool uniformBrickHasNoFaces(const sim::BrickStore& world, sim::BrickCoord b, const MeshClassTable& classes,
                            int level = 0);

/// Bits of the sides along x and z (1 << sim::Face: NegX, PosX, NegZ, PosZ) of a brick.
inline constexpr std::uint8_t kOpenNegX = 1u << 0, kOpenPosX = 1u << 1, kOpenNegZ = 1u << 4, kOpenPosZ = 1u << 5;

/// Opens the given sides of a padded brick: the border voxels facing its Opaque voxels
/// become air, so every Opaque voxel on those sides gets its face there whatever the
/// neighbour holds. The mesh cache opens the sides where a neighbouring chunk column is
/// meshed at another level of detail: that column draws the neighbour's voxels at its
/// own level, which can be air where this brick's copy is solid (a crack), and with
/// both sides open the seam is always closed (each twin face looks away from the other,
/// so back-face culling keeps one). Border voxels facing Empty or Liquid ones stay:
/// those faces are as before, and AO of existing faces changes at most at corners.
void openFaces(PaddedBrick& p, std::uint8_t sides, const MeshClassTable& classes);

/// Meshes one padded brick, appending quads (4 vertices each, chunk-relative
/// positions) to opaque and water. Allocates only if the vectors grow.
void meshBrick(const PaddedBrick& in, const MeshClassTable& classes, std::vector<PackedVertex>& opaque,
               std::vector<PackedVertex>& water);

}  // namespace loam::mesh
