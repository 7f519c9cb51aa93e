// Vertex format shared by the mesher (CPU) and the renderer's shaders (render/shaders).
//
// A chunk (16^3 bricks, 6.4 m) is the draw unit: its quads are positioned in voxel
// corners relative to the chunk's minimum corner (0..128 on each axis), so a vertex
// fits in 8 bytes and the chunk's world position is a push constant. Quads are 4
// vertices drawn with one shared index pattern (0,1,2, 0,2,3); the mesher rotates a
// quad's corners so that the shared diagonal gives smooth ambient occlusion.
//
// Conventions (mesh/brick_mesher.cpp, checked by tests/mesh/brick_mesher_test.cpp):
// - Winding: a quad's corners are counter-clockwise seen from outside the face, in
//   the world's right-handed axes (x east, y up, z south); both triangles of the
//   index pattern have (v1 - v0) x (v2 - v0) along the face normal.
// - AO per corner from the three voxels (two sides, one corner) next to it in the
//   layer outside the face, counting Opaque voxels: 3 - (side1 + side2 + corner),
//   0 when both sides are set. Corners are ordered so ao0 + ao2 >= ao1 + ao3.
// - Quads merge only with the same material and the same AO at all four corners.
#pragma once
#include <cstdint>
#include <vector>
#include "sim/world/voxel.h"

namespace loam::mesh {

inline constexpr int kChunkVoxels = sim::kChunkBricks * sim::kBrickSize;  ///< 128 voxels per chunk edge

/// One quad corner (8 bytes, matches the vertex input of render/shaders/voxel.vert).
///   word0: x (bits 0-7) | y (8-15) | z (16-23) | face (24-26, sim::Face order) | ao (27-28, 0 darkest .. 3 open)
///   word1: material (bits 0-7)
struct PackedVertex {
  std::uint32_t word0 = 0;
  std::uint32_t word1 = 0;
  friend bool operator==(const PackedVertex&, const PackedVertex&) = default;
};
static_assert(sizeof(PackedVertex) == 8);

/// Packs a corner; x, y, z in 0..128 (chunk-relative voxel corners), face 0..5, ao 0..3.
constexpr PackedVertex packVertex(int x, int y, int z, int face, int ao, sim::MaterialId material) {
  return PackedVertex{static_cast<std::uint32_t>(x) | (static_cast<std::uint32_t>(y) << 8) |
                          (static_cast<std::uint32_t>(z) << 16) | (static_cast<std::uint32_t>(face) << 24) |
                          (static_cast<std::uint32_t>(ao) << 27),
                      material};
}
constexpr int vertexX(PackedVertex v) { return static_cast<int>(v.word0 & 0xffu); }
constexpr int vertexY(PackedVertex v) { return static_cast<int>((v.word0 >> 8) & 0xffu); }
constexpr int vertexZ(PackedVertex v) { return static_cast<int>((v.word0 >> 16) & 0xffu); }
constexpr int vertexFace(PackedVertex v) { return static_cast<int>((v.word0 >> 24) & 0x7u); }
constexpr int vertexAo(PackedVertex v) { return static_cast<int>((v.word0 >> 27) & 0x3u); }
constexpr sim::MaterialId vertexMaterial(PackedVertex v) { return static_cast<sim::MaterialId>(v.word1 & 0xffu); }

/// How the mesher treats a material.
enum class MeshClass : std::uint8_t {
  Empty,   ///< air: faces of neighbours toward it are drawn
  Opaque,  ///< solid (and foliage, glass): drawn in the opaque pass, hides what is behind
  Liquid,  ///< water: drawn in the translucent pass where it meets Empty
};

/// A chunk's mesh: 4 vertices per quad, opaque and translucent (water) lists.
/// Both empty means "no mesh" (remove the chunk's buffers).
struct ChunkMesh {
  sim::ChunkCoord chunk;
  std::vector<PackedVertex> opaque;
  std::vector<PackedVertex> water;
};

}  // namespace loam::mesh
