// BrickMesher: bitmask face culling and per-slice greedy merging.
//
// The padded brick becomes bit rows along x (opaque, liquid, and "culls an opaque
// face"), indexed [z][y]. Face masks of ±Y and ±Z slices are then two row operations
// (voxel & ~neighbour); ±X faces come out as bits along x and are scattered into
// their slices. Only cells that do get a face pay for AO (a 9-bit neighbourhood ->
// table lookup) and a material read; the greedy pass then works on 8-bit rows.
#include "mesh/brick_mesher.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "mesh/internal/coarse_gather.h"
#include "mesh/internal/padded_gather.h"
#include "sim/core/assert.h"
#include "sim/world/voxel_overlay.h"

namespace loam::mesh {

namespace {

using Row = std::uint16_t;               // 10 bits: padded coordinates 0..9
constexpr Row kInner = 0x1FE;            // bits 1..8: the brick itself

using internal::paddedIndex;

/// Packed AO of the four canonical corners for a 9-bit neighbourhood of the layer
/// outside a face. Bit r * 3 + b of the index is the voxel at row offset r - 1, bit
/// offset b - 1 (b along the mask's bit axis). Canonical corners: p00 (-bit, -row),
/// p10 (+bit, -row), p11 (+bit, +row), p01 (-bit, +row), 2 bits each in that order.
struct AoTable {
  std::uint8_t packed[512];
  constexpr AoTable() : packed{} {
    for (int n = 0; n < 512; ++n) {
      auto at = [n](int r, int b) { return (n >> (r * 3 + b)) & 1; };
      const int sb[4] = {-1, 1, 1, -1};
      const int sr[4] = {-1, -1, 1, 1};
      int out = 0;
      for (int c = 0; c < 4; ++c) {
        int side1 = at(1, 1 + sb[c]);
        int side2 = at(1 + sr[c], 1);
        int corner = at(1 + sr[c], 1 + sb[c]);
        int ao = (side1 && side2) ? 0 : 3 - (side1 + side2 + corner);
        out |= ao << (2 * c);
      }
      packed[n] = static_cast<std::uint8_t>(out);
    }
  }
};
constexpr AoTable kAo;

/// Occupancy of a padded brick as rows along x, indexed [z][y]; bit x is padded x.
struct Rows {
  Row op[kPadded][kPadded];   // Opaque voxels
  Row liq[kPadded][kPadded];  // Liquid voxels
  Row cull[kPadded][kPadded]; // what hides an Opaque face: Opaque, plus sealed air
};

/// Face directions in sim::Face order. Plane: ±X slice x, rows z, bits y;
/// ±Y slice y, rows z, bits x; ±Z slice z, rows y, bits x.
enum class Plane : std::uint8_t { X, Y, Z };

struct Direction {
  int face;       // sim::Face
  Plane plane;
  int step;       // +1 or -1 along the normal
  bool reversed;  // bit axis x row axis points against the normal: emit p00 p01 p11 p10
};

// bit x row: X plane y*z = +x, Y plane x*z = -y, Z plane x*y = +z.
constexpr Direction kDirections[6] = {
    {0, Plane::X, -1, true},  {1, Plane::X, +1, false}, {2, Plane::Y, -1, false},
    {3, Plane::Y, +1, true},  {4, Plane::Z, -1, true},  {5, Plane::Z, +1, false},
};

/// Face masks of every direction: [face][slice 0..7][row 0..7], bit = position on the bit axis.
using FaceMasks = std::uint8_t[6][8][8];

/// Opaque faces toward what does not cull them; Liquid faces toward Empty. rows are
/// the voxel rows, out the rows of the layer faced (same bit positions).
inline Row faceBits(Row op, Row liq, Row outCull, Row outOp, Row outLiq) {
  return static_cast<Row>((op & ~outCull) | (liq & ~(outOp | outLiq)));
}

void buildFaceMasks(const Rows& m, FaceMasks& f) {
  for (int a = 1; a <= 8; ++a) {
    for (int b = 1; b <= 8; ++b) {
      // ±Y: slice y = a, row z = b.   ±Z: slice z = a, row y = b.
      auto bits = [&m](Row op, Row liq, int z, int y) {
        return static_cast<std::uint8_t>(faceBits(op, liq, m.cull[z][y], m.op[z][y], m.liq[z][y]) >> 1);
      };
      const Row opY = m.op[b][a], liqY = m.liq[b][a];
      f[2][a - 1][b - 1] = bits(opY, liqY, b, a - 1);
      f[3][a - 1][b - 1] = bits(opY, liqY, b, a + 1);
      const Row opZ = m.op[a][b], liqZ = m.liq[a][b];
      f[4][a - 1][b - 1] = bits(opZ, liqZ, a - 1, b);
      f[5][a - 1][b - 1] = bits(opZ, liqZ, a + 1, b);
    }
  }
  // ±X: faces come out as bits over x per (z, y) row; scatter them into slices x.
  std::memset(f[0], 0, sizeof(f[0]));
  std::memset(f[1], 0, sizeof(f[1]));
  for (int z = 1; z <= 8; ++z) {
    for (int y = 1; y <= 8; ++y) {
      const Row op = m.op[z][y], liq = m.liq[z][y], cull = m.cull[z][y];
      const std::uint8_t bit = static_cast<std::uint8_t>(1u << (y - 1));
      unsigned neg = static_cast<unsigned>(faceBits(op, liq, static_cast<Row>(cull << 1), static_cast<Row>(op << 1),
                                                    static_cast<Row>(liq << 1))) & kInner;
      unsigned pos = static_cast<unsigned>(faceBits(op, liq, static_cast<Row>(cull >> 1), static_cast<Row>(op >> 1),
                                                    static_cast<Row>(liq >> 1))) & kInner;
      while (neg) {
        int x = std::countr_zero(neg);
        neg &= neg - 1;
        f[0][x - 1][z - 1] = static_cast<std::uint8_t>(f[0][x - 1][z - 1] | bit);
      }
      while (pos) {
        int x = std::countr_zero(pos);
        pos &= pos - 1;
        f[1][x - 1][z - 1] = static_cast<std::uint8_t>(f[1][x - 1][z - 1] | bit);
      }
    }
  }
}

/// Padded voxel index of (slice s, row r, bit c) in plane p (padded coordinates).
inline int voxelIndex(Plane p, int s, int r, int c) {
  switch (p) {
    case Plane::X: return paddedIndex(s, c, r);
    case Plane::Y: return paddedIndex(c, s, r);
    case Plane::Z: return paddedIndex(c, r, s);
  }
  return 0;
}

/// 9-bit Opaque neighbourhood (see AoTable) of the cell at padded (row pr, bit pc) in
/// the layer at padded slice coordinate out.
inline unsigned neighbourhood(const Rows& m, Plane p, int out, int pr, int pc) {
  switch (p) {
    case Plane::Y:
      return ((m.op[pr - 1][out] >> (pc - 1)) & 7u) | (((m.op[pr][out] >> (pc - 1)) & 7u) << 3) |
             (((m.op[pr + 1][out] >> (pc - 1)) & 7u) << 6);
    case Plane::Z:
      return ((m.op[out][pr - 1] >> (pc - 1)) & 7u) | (((m.op[out][pr] >> (pc - 1)) & 7u) << 3) |
             (((m.op[out][pr + 1] >> (pc - 1)) & 7u) << 6);
    case Plane::X: {
      unsigned n = 0;
      for (int r = 0; r < 3; ++r) {
        const Row* row = m.op[pr - 1 + r];
        n |= (((row[pc - 1] >> out) & 1u) | (((row[pc] >> out) & 1u) << 1) | (((row[pc + 1] >> out) & 1u) << 2))
             << (3 * r);
      }
      return n;
    }
  }
  return 0;
}

/// One face direction; a template so that the plane switches fold away per direction.
template <int kDir>
void meshDirection(const std::uint8_t (&masks)[8][8], const Rows& m, const PaddedBrick& in,
                   const MeshClassTable& classes, int baseX, int baseY, int baseZ, std::vector<PackedVertex>& opaque,
                   std::vector<PackedVertex>& water) {
  constexpr Direction d = kDirections[kDir];
  for (int s = 1; s <= sim::kBrickSize; ++s) {
    std::uint8_t mask[8];
    std::uint64_t any = 0;
    for (int r = 0; r < 8; ++r) {
      mask[r] = masks[s - 1][r];
      any |= mask[r];
    }
    if (!any) continue;
    const int out = s + d.step;  // the layer the faces look into

    // Key per face cell: material | packed AO << 8. Only cells with a face are read.
    std::uint16_t key[8][8];
    for (int r = 0; r < 8; ++r) {
      unsigned bits = mask[r];
      while (bits) {
        int col = std::countr_zero(bits);
        bits &= bits - 1;
        unsigned n = neighbourhood(m, d.plane, out, r + 1, col + 1);
        sim::MaterialId mat = in.voxels[static_cast<std::size_t>(voxelIndex(d.plane, s, r + 1, col + 1))];
        const unsigned ao = classes.flatAo[mat] ? 0xFFu : kAo.packed[n];  // 0xFF: all four corners open
        key[r][col] = static_cast<std::uint16_t>(mat | (ao << 8));
      }
    }

    // Greedy: widest run along the bits, then as many rows as match it exactly.
    const int plane = s - 1 + (d.step > 0 ? 1 : 0);  // brick-local plane coordinate
    for (int r = 0; r < 8; ++r) {
      while (mask[r]) {
        int c0 = std::countr_zero(static_cast<unsigned>(mask[r]));
        std::uint16_t k = key[r][c0];
        int w = 1;
        while (c0 + w < 8 && ((mask[r] >> (c0 + w)) & 1u) && key[r][c0 + w] == k) ++w;
        const std::uint8_t run = static_cast<std::uint8_t>(((1u << w) - 1u) << c0);
        int h = 1;
        while (r + h < 8 && (mask[r + h] & run) == run) {
          bool same = true;
          for (int i = 0; i < w; ++i) same &= key[r + h][c0 + i] == k;
          if (!same) break;
          ++h;
        }
        for (int i = 0; i < h; ++i) mask[r + i] = static_cast<std::uint8_t>(mask[r + i] & ~run);

        // Corners in (bit, row) brick-local coordinates: p00 p10 p11 p01.
        const int bu[4] = {c0, c0 + w, c0 + w, c0};
        const int rv[4] = {r, r, r + h, r + h};
        const int packedAo = k >> 8;
        int order[4] = {0, 1, 2, 3};
        if constexpr (d.reversed) {
          order[1] = 3;
          order[3] = 1;
        }
        int ao[4];
        for (int i = 0; i < 4; ++i) ao[i] = (packedAo >> (2 * order[i])) & 3;
        // Split along the diagonal with the brighter sum (smooth AO on the shared 0-2 edge).
        const int rot = (ao[0] + ao[2] < ao[1] + ao[3]) ? 1 : 0;
        const sim::MaterialId mat = static_cast<sim::MaterialId>(k & 0xFF);
        std::vector<PackedVertex>& dst = classes[mat] == MeshClass::Liquid ? water : opaque;
        for (int i = 0; i < 4; ++i) {
          const int j = (i + rot) & 3;
          const int cu = bu[order[j]];
          const int cv = rv[order[j]];
          int x = 0, y = 0, z = 0;
          switch (d.plane) {
            case Plane::X: x = plane; y = cu; z = cv; break;
            case Plane::Y: x = cu; y = plane; z = cv; break;
            case Plane::Z: x = cu; y = cv; z = plane; break;
          }
          dst.push_back(packVertex(baseX + x, baseY + y, baseZ + z, d.face, ao[j], mat));
        }
      }
    }
  }
}

}  // namespace

MeshClassTable meshClasses(const sim::MaterialTable& materials) {
  MeshClassTable t;
  // Ids past the table never occur in a valid world; drawing them keeps mistakes visible.
  t.classes.fill(MeshClass::Opaque);
  for (std::size_t i = 0; i < materials.size(); ++i) {
    const sim::Material& m = materials[static_cast<sim::MaterialId>(i)];
    t[i] = i == sim::kAir ? MeshClass::Empty : m.liquid ? MeshClass::Liquid : MeshClass::Opaque;
    t.flatAo[i] = m.foliage ? 1 : 0;
  }
  t[sim::kAir] = MeshClass::Empty;
  return t;
}

void gatherPaddedBrick(const sim::BrickStore& world, sim::BrickCoord b, PaddedBrick& out) {
  using internal::PaddedSpan;
  auto copyMixed = [&out](const sim::BrickView& v, sim::BrickCoord, int dx, int dy, int dz, PaddedSpan x,
                          PaddedSpan y, PaddedSpan z) {
    if (dx == 0 && dy == 0 && dz == 0) {
      // The centre: one bulk decode, then rows. (For the 64-voxel slabs of face
      // neighbours per-voxel reads are cheaper than decoding 512.)
      sim::MaterialId tmp[sim::kBrickVoxels];
      v.decode(tmp);
      for (int lz = 0; lz < 8; ++lz)
        for (int ly = 0; ly < 8; ++ly)
          std::memcpy(&out.voxels[static_cast<std::size_t>(paddedIndex(1, ly + 1, lz + 1))],
                      &tmp[sim::voxelIndexInBrick(0, ly, lz)], 8);
      return;
    }
    for (int pz = z.lo; pz < z.hi; ++pz)
      for (int py = y.lo; py < y.hi; ++py)
        for (int px = x.lo; px < x.hi; ++px)
          out.voxels[static_cast<std::size_t>(paddedIndex(px, py, pz))] =
              v.get((px + 7) & 7, (py + 7) & 7, (pz + 7) & 7);
  };
  internal::gatherPadded(world, b, out, copyMixed);
}

namespace {

/// coarseBlockMaterial for a block edge known at compile time (shifts, unrolled loops).
template <int K>
sim::MaterialId coarseBlock(const sim::MaterialId* voxels, const MeshClassTable& classes) {
  constexpr int kN = K * K * K;
  constexpr int kShift = K == 2 ? 1 : 2;
  // Most blocks are uniform (air above the ground, stone below): 8 bytes at a time.
  std::uint64_t first;
  std::memcpy(&first, voxels, 8);
  bool uniform = first == 0x0101010101010101ull * voxels[0];
  for (int i = 8; i < kN && uniform; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, voxels + i, 8);
    uniform = word == first;
  }
  if (uniform) return classes[voxels[0]] == MeshClass::Empty ? sim::kAir : voxels[0];
  struct Tally {
    sim::MaterialId material;
    int count;
    int topY;
  };
  Tally tally[kN];  // distinct materials
  int distinct = 0, last = 0;
  for (int i = 0; i < kN; ++i) {
    const sim::MaterialId m = voxels[i];
    const int y = (i >> kShift) & (K - 1);
    int t = last;  // runs along x are common: try the previous voxel's material first
    if (distinct == 0 || tally[t].material != m) {
      t = 0;
      while (t < distinct && tally[t].material != m) ++t;
      if (t == distinct) tally[distinct++] = Tally{m, 0, y};
      last = t;
    }
    ++tally[t].count;
    tally[t].topY = std::max(tally[t].topY, y);
  }
  int opaque = 0, liquid = 0;  // per distinct material, not per voxel
  for (int t = 0; t < distinct; ++t) {
    const MeshClass c = classes[tally[t].material];
    opaque += c == MeshClass::Opaque ? tally[t].count : 0;
    liquid += c == MeshClass::Liquid ? tally[t].count : 0;
  }
  auto mostFrequent = [&](MeshClass cls) {
    const Tally* best = nullptr;
    for (int t = 0; t < distinct; ++t) {
      const Tally& c = tally[t];
      if (classes[c.material] != cls) continue;
      if (!best || c.count > best->count || (c.count == best->count && c.topY > best->topY) ||
          (c.count == best->count && c.topY == best->topY && c.material < best->material)) {
        best = &c;
      }
    }
    return best->material;
  };
  if (2 * opaque >= kN) return mostFrequent(MeshClass::Opaque);
  if (2 * liquid >= kN) return mostFrequent(MeshClass::Liquid);
  if (2 * (opaque + liquid) >= kN) return mostFrequent(opaque >= liquid ? MeshClass::Opaque : MeshClass::Liquid);
  return sim::kAir;
}

/// coarsenWide for a block edge known at compile time: the blocks, then expandBlocks.
template <int K>
void coarsen(const internal::WideBrick& in, const MeshClassTable& classes, bool atFloor, PaddedBrick& out) {
  constexpr int kBlocks = sim::kBrickSize / K + 2;  // 6 or 4 per axis
  constexpr int kEdge = sim::kBrickSize + 2 * K;    // 12 or 16
  sim::MaterialId coarse[kBlocks * kBlocks * kBlocks];
  sim::MaterialId block[K * K * K];
  for (int bz = 0; bz < kBlocks; ++bz)
    for (int by = 0; by < kBlocks; ++by)
      for (int bx = 0; bx < kBlocks; ++bx) {
        for (int z = 0; z < K; ++z)
          for (int y = 0; y < K; ++y)
            std::memcpy(&block[K * (y + K * z)],
                        &in.voxels[static_cast<std::size_t>(bx * K + kEdge * (by * K + y + kEdge * (bz * K + z)))], K);
        coarse[bx + kBlocks * (by + kBlocks * bz)] = coarseBlock<K>(block, classes);
      }
  internal::expandBlocks(coarse, K, atFloor, out);
}

/// blocksOfBrick for a block edge known at compile time.
template <int K>
void ownBlocks(const sim::MaterialId* voxels, const MeshClassTable& classes, internal::BrickBlocks& out) {
  constexpr int kM = sim::kBrickSize / K;
  sim::MaterialId block[K * K * K];
  for (int bz = 0; bz < kM; ++bz)
    for (int by = 0; by < kM; ++by)
      for (int bx = 0; bx < kM; ++bx) {
        for (int z = 0; z < K; ++z)
          for (int y = 0; y < K; ++y)
            std::memcpy(&block[K * (y + K * z)], &voxels[sim::voxelIndexInBrick(bx * K, by * K + y, bz * K + z)], K);
        out.material[bx + kM * (by + kM * bz)] = coarseBlock<K>(block, classes);
      }
}

}  // namespace

sim::MaterialId coarseBlockMaterial(const sim::MaterialId* voxels, int k, const MeshClassTable& classes) {
  LOAM_ASSERT(k == 2 || k == 4);
  return k == 2 ? coarseBlock<2>(voxels, classes) : coarseBlock<4>(voxels, classes);
}

namespace internal {

void patchWide(const sim::VoxelOverlay& overlay, WideBrick& out) {
  forOverlayAround(overlay, out.brick, out.k, [&](int x, int y, int z, sim::MaterialId m) {
    out.voxels[static_cast<std::size_t>(out.index(x, y, z))] = m;
  });
}

void coarsenWide(const WideBrick& in, const MeshClassTable& classes, bool atFloor, PaddedBrick& out) {
  LOAM_ASSERT(in.k == 2 || in.k == 4);
  if (in.k == 2) {
    coarsen<2>(in, classes, atFloor, out);
  } else {
    coarsen<4>(in, classes, atFloor, out);
  }
  out.brick = in.brick;
}

void expandBlocks(const sim::MaterialId* blocks, int k, bool atFloor, PaddedBrick& out) {
  const int e = sim::kBrickSize / k + 2;
  // Padded coordinate p is brick-local p - 1, in block (p - 1 + k) / k of the region.
  for (int pz = 0; pz < kPadded; ++pz)
    for (int py = 0; py < kPadded; ++py) {
      const sim::MaterialId* src = blocks + e * ((py - 1 + k) / k + e * ((pz - 1 + k) / k));
      sim::MaterialId* dst = &out.voxels[static_cast<std::size_t>(paddedIndex(0, py, pz))];
      for (int px = 0; px < kPadded; ++px) dst[px] = src[(px - 1 + k) / k];
    }
  if (atFloor) {  // below the floor repeats the bottom layer, as gatherPadded does
    for (int pz = 0; pz < kPadded; ++pz)
      for (int px = 0; px < kPadded; ++px)
        out.voxels[static_cast<std::size_t>(paddedIndex(px, 0, pz))] =
            out.voxels[static_cast<std::size_t>(paddedIndex(px, 1, pz))];
  }
}

void blocksOfBrick(const sim::MaterialId* voxels, int level, const MeshClassTable& classes, BrickBlocks& out) {
  LOAM_ASSERT(level == 1 || level == 2);
  if (level == 1) {
    ownBlocks<2>(voxels, classes, out);
  } else {
    ownBlocks<4>(voxels, classes, out);
  }
}

}  // namespace internal

void gatherCoarseBrick(const sim::BrickStore& world, sim::BrickCoord b, int level, const MeshClassTable& classes,
                       PaddedBrick& out, const sim::VoxelOverlay* overlay) {
  LOAM_ASSERT(level >= 1 && level <= kMaxMeshLevel);
  internal::WideBrick wide;
  sim::MaterialId decoded[sim::kBrickVoxels];
  internal::gatherWide(world, b, level, wide, [&decoded](const sim::BrickView& v, sim::BrickCoord) {
    v.decode(decoded);
    return static_cast<const sim::MaterialId*>(decoded);
  });
  if (overlay) internal::patchWide(*overlay, wide);
  internal::coarsenWide(wide, classes, b.y == world.bounds().minBrick.y, out);
}

bool brickIsHidden(const sim::BrickStore& world, sim::BrickCoord b, const MeshClassTable& classes) {
  sim::BrickView v = world.brick(b);
  if (!v.isUniform()) return false;
  const MeshClass self = classes[v.uniformMaterial()];
  // Faces belong to the voxel that draws them, so an Empty brick never has any.
  if (self == MeshClass::Empty) return true;
  const sim::BrickCoord n[6] = {{b.x - 1, b.y, b.z}, {b.x + 1, b.y, b.z}, {b.x, b.y - 1, b.z},
                                {b.x, b.y + 1, b.z}, {b.x, b.y, b.z - 1}, {b.x, b.y, b.z + 1}};
  const int floorY = world.bounds().minBrick.y;
  for (const sim::BrickCoord& c : n) {
    if (c.y < floorY) continue;  // below the floor repeats this brick (gatherPaddedBrick)
    sim::BrickView nv = world.brick(c);
    if (!nv.isUniform()) return false;
    const MeshClass other = classes[nv.uniformMaterial()];
    // Opaque draws toward Empty and Liquid; Liquid draws toward Empty.
    if (other == MeshClass::Empty) return false;
    if (self == MeshClass::Opaque && other == MeshClass::Liquid) return false;
  }
  return true;
}

bool uniformBrickHasNoFaces(const sim::BrickStore& world, sim::BrickCoord b, const MeshClassTable& classes,
                            int level) {
  sim::BrickView v = world.brick(b);
  if (!v.isUniform()) return false;
  const MeshClass self = classes[v.uniformMaterial()];
  if (self == MeshClass::Empty) return true;
  // What a neighbour voxel of class c does to this brick's face toward it.
  auto hides = [self](MeshClass c) {
    return c == MeshClass::Opaque || (self == MeshClass::Liquid && c == MeshClass::Liquid);
  };
  const int floorY = world.bounds().minBrick.y;
  for (int f = 0; f < 6; ++f) {
    const int axis = f / 2, dir = (f & 1) ? 1 : -1;
    sim::BrickCoord n = b;
    (axis == 0 ? n.x : axis == 1 ? n.y : n.z) += dir;
    if (n.y < floorY) continue;  // below the floor repeats this brick (gatherPaddedBrick)
    sim::BrickView nv = world.brick(n);
    if (nv.isUniform()) {
      if (!hides(classes[nv.uniformMaterial()])) return false;
      continue;
    }
    if (level > 0) {
      // The coarse blocks of the neighbour's layer k voxels thick touching b.
      const int k = 1 << level;
      sim::MaterialId voxels[sim::kBrickVoxels];
      sim::MaterialId block[64];
      nv.decode(voxels);
      for (int i = 0; i < sim::kBrickSize; i += k) {
        for (int j = 0; j < sim::kBrickSize; j += k) {
          int o[3];  // the block's corner in the neighbour
          o[axis] = dir > 0 ? 0 : sim::kBrickSize - k;
          o[(axis + 1) % 3] = i;
          o[(axis + 2) % 3] = j;
          for (int z = 0; z < k; ++z)
            for (int y = 0; y < k; ++y)
              for (int x = 0; x < k; ++x)
                block[x + k * (y + k * z)] = voxels[sim::voxelIndexInBrick(o[0] + x, o[1] + y, o[2] + z)];
          if (!hides(classes[coarseBlockMaterial(block, k, classes)])) return false;
        }
      }
      continue;
    }
    const int layer = dir > 0 ? 0 : sim::kBrickSize - 1;  // the neighbour's layer touching b
    for (int i = 0; i < sim::kBrickSize; ++i) {
      for (int j = 0; j < sim::kBrickSize; ++j) {
        const sim::MaterialId m = axis == 0   ? nv.get(layer, i, j)
                                  : axis == 1 ? nv.get(i, layer, j)
                                              : nv.get(i, j, layer);
        if (!hides(classes[m])) return false;
      }
    }
  }
  return true;
}

void openFaces(PaddedBrick& p, std::uint8_t sides, const MeshClassTable& classes) {
  // (side bit, padded x or z of the border layer, of the brick's layer next to it, along x?)
  struct Side {
    std::uint8_t bit;
    int border, inner;
    bool alongX;
  };
  static constexpr Side kSides[4] = {{kOpenNegX, 0, 1, true}, {kOpenPosX, kPadded - 1, kPadded - 2, true},
                                     {kOpenNegZ, 0, 1, false}, {kOpenPosZ, kPadded - 1, kPadded - 2, false}};
  for (const Side& s : kSides) {
    if (!(sides & s.bit)) continue;
    for (int a = 1; a <= sim::kBrickSize; ++a)      // the other horizontal axis
      for (int y = 1; y <= sim::kBrickSize; ++y) {  // padded y
        const int inner = s.alongX ? internal::paddedIndex(s.inner, y, a) : internal::paddedIndex(a, y, s.inner);
        const int border = s.alongX ? internal::paddedIndex(s.border, y, a) : internal::paddedIndex(a, y, s.border);
        if (classes[p.voxels[static_cast<std::size_t>(inner)]] == MeshClass::Opaque)
          p.voxels[static_cast<std::size_t>(border)] = sim::kAir;
      }
  }
}

void meshBrick(const PaddedBrick& in, const MeshClassTable& classes, std::vector<PackedVertex>& opaque,
               std::vector<PackedVertex>& water) {
  // Class rows. The usual table (only air Empty, at most one Liquid material) takes a
  // SWAR path, 8 voxels per step; any other table uses a per-voxel lookup.
  // The scan is cached per thread: a memcmp of the table is cheaper than the scan.
  thread_local MeshClassTable lastTable{};
  thread_local int lastLiquid = -1;
  thread_local bool lastSwar = false;
  thread_local bool lastValid = false;
  if (!lastValid || std::memcmp(&lastTable, &classes, sizeof(MeshClassTable)) != 0) {
    int id = -1;
    bool ok = classes[sim::kAir] == MeshClass::Empty;
    for (int i = 1; i < 256 && ok; ++i) {
      const MeshClass c = classes[static_cast<std::size_t>(i)];
      if (c == MeshClass::Empty) ok = false;
      if (c == MeshClass::Liquid) {
        if (id >= 0) ok = false;
        id = i;
      }
    }
    lastTable = classes;
    lastLiquid = id;
    lastSwar = ok;
    lastValid = true;
  }
  const int liquidId = lastLiquid;
  const bool swar = lastSwar;
  Rows m;
  Row anyInner = 0;
  if (swar) {
    constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
    constexpr std::uint64_t kHigh = 0x8080808080808080ull;
    constexpr std::uint64_t kGather = 0x0102040810204080ull;
    const std::uint64_t liqPattern = 0x0101010101010101ull * static_cast<std::uint64_t>(liquidId < 0 ? 0 : liquidId);
    // Bit i set iff byte i of v is zero (exact: no borrow between bytes).
    auto zeroBytes = [](std::uint64_t v) -> unsigned {
      std::uint64_t t = ((v & kLow7) + kLow7) | v;
      return static_cast<unsigned>((((~t & kHigh) >> 7) * kGather) >> 56);
    };
    const auto liq8 = static_cast<sim::MaterialId>(liquidId < 0 ? 0 : liquidId);
    for (int z = 0; z < kPadded; ++z) {
      for (int y = 0; y < kPadded; ++y) {
        const sim::MaterialId* row = &in.voxels[static_cast<std::size_t>(paddedIndex(0, y, z))];
        std::uint64_t v;
        std::memcpy(&v, row, 8);
        unsigned empty = zeroBytes(v) | (row[8] == sim::kAir ? 0x100u : 0u) | (row[9] == sim::kAir ? 0x200u : 0u);
        unsigned liq = 0;
        if (liquidId >= 0) {
          liq = zeroBytes(v ^ liqPattern) | (row[8] == liq8 ? 0x100u : 0u) | (row[9] == liq8 ? 0x200u : 0u);
        }
        const unsigned op = ~(empty | liq) & 0x3FFu;
        m.op[z][y] = static_cast<Row>(op);
        m.liq[z][y] = static_cast<Row>(liq);
        if (z >= 1 && z <= 8 && y >= 1 && y <= 8) anyInner = static_cast<Row>(anyInner | ((op | liq) & kInner));
      }
    }
  } else {
    std::uint8_t cls[256];  // bit 0 Opaque, bit 1 Liquid
    for (int i = 0; i < 256; ++i) {
      const MeshClass c = classes[static_cast<std::size_t>(i)];
      cls[i] = static_cast<std::uint8_t>((c == MeshClass::Opaque ? 1 : 0) | (c == MeshClass::Liquid ? 2 : 0));
    }
    for (int z = 0; z < kPadded; ++z) {
      for (int y = 0; y < kPadded; ++y) {
        const sim::MaterialId* row = &in.voxels[static_cast<std::size_t>(paddedIndex(0, y, z))];
        unsigned op = 0, liq = 0;
        for (int x = 0; x < kPadded; ++x) {
          const unsigned c = cls[row[x]];
          op |= (c & 1u) << x;
          liq |= (c >> 1) << x;
        }
        m.op[z][y] = static_cast<Row>(op);
        m.liq[z][y] = static_cast<Row>(liq);
        if (z >= 1 && z <= 8 && y >= 1 && y <= 8) anyInner = static_cast<Row>(anyInner | ((op | liq) & kInner));
      }
    }
  }
  if (!anyInner) return;  // no Opaque or Liquid voxel inside: no faces
  // Sealed air: an Empty voxel inside the brick whose six neighbours are Opaque can
  // only be seen from inside itself, so faces toward it are skipped (the holes of
  // generated foliage are mostly such pockets).
  std::memcpy(m.cull, m.op, sizeof(m.cull));
  for (int z = 1; z <= 8; ++z) {
    for (int y = 1; y <= 8; ++y) {
      const Row o = m.op[z][y];
      unsigned sealed = ~static_cast<unsigned>(o | m.liq[z][y]) & static_cast<unsigned>(o << 1) &
                        static_cast<unsigned>(o >> 1) & m.op[z][y - 1] & m.op[z][y + 1] & m.op[z - 1][y] &
                        m.op[z + 1][y] & kInner;
      m.cull[z][y] = static_cast<Row>(o | sealed);
    }
  }
  // The same for enclosed 2x2x2 pockets on even brick-local coordinates: the holes of
  // generated foliage are 10 cm blocks on that grid (about 13% of glade's quads).
  for (int z = 1; z <= 7; z += 2) {
    for (int y = 1; y <= 7; y += 2) {
      const unsigned o00 = m.op[z][y], o01 = m.op[z][y + 1], o10 = m.op[z + 1][y], o11 = m.op[z + 1][y + 1];
      const unsigned empty = ~(o00 | o01 | o10 | o11 | m.liq[z][y] | m.liq[z][y + 1] | m.liq[z + 1][y] |
                               m.liq[z + 1][y + 1]);
      const unsigned ox = o00 & o01 & o10 & o11;  // x neighbours: all four rows opaque there
      const unsigned oy = m.op[z][y - 1] & m.op[z + 1][y - 1] & m.op[z][y + 2] & m.op[z + 1][y + 2];
      const unsigned oz = m.op[z - 1][y] & m.op[z - 1][y + 1] & m.op[z + 2][y] & m.op[z + 2][y + 1];
      // Bit x (odd: even local x) set when voxels x, x+1 of the block qualify.
      const unsigned ok = empty & (empty >> 1) & (ox << 1) & (ox >> 2) & oy & (oy >> 1) & oz & (oz >> 1) & 0xAAu;
      if (!ok) continue;
      const Row block = static_cast<Row>(ok | (ok << 1));
      m.cull[z][y] = static_cast<Row>(m.cull[z][y] | block);
      m.cull[z][y + 1] = static_cast<Row>(m.cull[z][y + 1] | block);
      m.cull[z + 1][y] = static_cast<Row>(m.cull[z + 1][y] | block);
      m.cull[z + 1][y + 1] = static_cast<Row>(m.cull[z + 1][y + 1] | block);
    }
  }
  FaceMasks f;
  buildFaceMasks(m, f);
  const int baseX = (in.brick.x & (sim::kChunkBricks - 1)) * sim::kBrickSize;
  const int baseY = (in.brick.y & (sim::kChunkBricks - 1)) * sim::kBrickSize;
  const int baseZ = (in.brick.z & (sim::kChunkBricks - 1)) * sim::kBrickSize;
  meshDirection<0>(f[0], m, in, classes, baseX, baseY, baseZ, opaque, water);
  meshDirection<1>(f[1], m, in, classes, baseX, baseY, baseZ, opaque, water);
  meshDirection<2>(f[2], m, in, classes, baseX, baseY, baseZ, opaque, water);
  meshDirection<3>(f[3], m, in, classes, baseX, baseY, baseZ, opaque, water);
  meshDirection<4>(f[4], m, in, classes, baseX, baseY, baseZ, opaque, water);
  meshDirection<5>(f[5], m, in, classes, baseX, baseY, baseZ, opaque, water);
}

}  // namespace loam::mesh
