// Structures (boxes, walls, floors, roofs, arches, doorways, windows, cylinders) and
// carved tunnels and caves: conversion to voxel-space shapes and painting.
#include <algorithm>
#include <span>

#include "sim/gen/gen_random.h"
#include "sim/gen/internal/shapes.h"
#include "sim/gen/noise.h"

namespace loam::sim::internal {
namespace {

constexpr double kV = kVoxelsPerMetreD;

inline std::int32_t floorI(double v) noexcept { return static_cast<std::int32_t>(floorToInt(v)); }
inline std::int32_t ceilI(double v) noexcept { return static_cast<std::int32_t>(-floorToInt(-v)); }
inline double sq(double v) noexcept { return v * v; }

/// A box in metres to voxels [v(from), v(to)), at least one voxel thick.
VoxelBounds boxFromMetres(const Vec3& a, const Vec3& b) noexcept {
  VoxelBounds v{voxelFromMetres(a.x), voxelFromMetres(a.y), voxelFromMetres(a.z),
                voxelFromMetres(b.x), voxelFromMetres(b.y), voxelFromMetres(b.z)};
  if (v.x1 <= v.x0) v.x1 = v.x0 + 1;
  if (v.y1 <= v.y0) v.y1 = v.y0 + 1;
  if (v.z1 <= v.z0) v.z1 = v.z0 + 1;
  return v;
}

/// The part of shape box b inside the brick at o, as local ranges; false if empty.
bool clip(const VoxelBounds& b, std::int32_t ox, std::int32_t oy, std::int32_t oz, int lo[3], int hi[3]) noexcept {
  lo[0] = std::max(b.x0 - ox, 0);
  hi[0] = std::min(b.x1 - ox, kBrickSize);
  lo[1] = std::max(b.y0 - oy, 0);
  hi[1] = std::min(b.y1 - oy, kBrickSize);
  lo[2] = std::max(b.z0 - oz, 0);
  hi[2] = std::min(b.z1 - oz, kBrickSize);
  return lo[0] < hi[0] && lo[1] < hi[1] && lo[2] < hi[2];
}

void paintBox(const Shape& s, const int lo[3], const int hi[3], MaterialId* vox) noexcept {
  for (int lz = lo[2]; lz < hi[2]; ++lz) {
    for (int ly = lo[1]; ly < hi[1]; ++ly) {
      for (int lx = lo[0]; lx < hi[0]; ++lx) vox[voxelIndexInBrick(lx, ly, lz)] = s.material;
    }
  }
}

void paintRoof(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, const int lo[3], const int hi[3],
               MaterialId* vox) noexcept {
  // Distance from the ridge line across the span, and the roof's top surface there.
  double spanLo = s.ridgeAlongX ? s.box.z0 : s.box.x0;
  double spanHi = s.ridgeAlongX ? s.box.z1 : s.box.x1;
  double mid = (spanLo + spanHi) * 0.5, half = (spanHi - spanLo) * 0.5;
  double rise = s.ridgeY - s.eaveY - s.thickness;
  if (rise < 0.0) rise = 0.0;
  for (int lz = lo[2]; lz < hi[2]; ++lz) {
    for (int lx = lo[0]; lx < hi[0]; ++lx) {
      double u = (s.ridgeAlongX ? oz + lz : ox + lx) + 0.5;
      double d = u - mid;
      if (d < 0) d = -d;
      double frac = half > 0.0 ? 1.0 - d / half : 1.0;
      if (frac < 0.0) frac = 0.0;
      double top = s.eaveY + s.thickness + rise * frac;
      for (int ly = lo[1]; ly < hi[1]; ++ly) {
        double y = oy + ly + 0.5;
        if (y < top && y >= top - s.thickness) vox[voxelIndexInBrick(lx, ly, lz)] = s.material;
      }
    }
  }
}

void paintArch(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, const int lo[3], const int hi[3],
               MaterialId* vox) noexcept {
  // The opening passes through the thinner horizontal axis; it spans the other.
  bool spanZ = (s.box.x1 - s.box.x0) <= (s.box.z1 - s.box.z0);
  double spanLo = spanZ ? s.box.z0 : s.box.x0, spanHi = spanZ ? s.box.z1 : s.box.x1;
  double mid = (spanLo + spanHi) * 0.5, w = (spanHi - spanLo) * 0.5;
  double height = s.box.y1 - s.box.y0;
  double ry = w < height ? w : height;
  double spring = s.box.y1 - ry;
  for (int lz = lo[2]; lz < hi[2]; ++lz) {
    for (int lx = lo[0]; lx < hi[0]; ++lx) {
      double u = ((spanZ ? oz + lz : ox + lx) + 0.5 - mid) / w;
      for (int ly = lo[1]; ly < hi[1]; ++ly) {
        double y = oy + ly + 0.5;
        bool in = y < spring || sq(u) + sq((y - spring) / ry) < 1.0;
        if (in) vox[voxelIndexInBrick(lx, ly, lz)] = s.material;
      }
    }
  }
}

void paintCylinder(const Shape& s, std::int32_t ox, std::int32_t oz, const int lo[3], const int hi[3],
                   MaterialId* vox) noexcept {
  double r2 = sq(s.rx), in2 = sq(s.ry);
  for (int lz = lo[2]; lz < hi[2]; ++lz) {
    double dz = oz + lz + 0.5 - s.cz;
    for (int lx = lo[0]; lx < hi[0]; ++lx) {
      double dx = ox + lx + 0.5 - s.cx;
      double d2 = dx * dx + dz * dz;
      if (d2 >= r2) continue;
      bool inner = d2 < in2;
      if (inner && !s.hasMaterial2) continue;
      MaterialId m = inner ? s.material2 : s.material;
      for (int ly = lo[1]; ly < hi[1]; ++ly) vox[voxelIndexInBrick(lx, ly, lz)] = m;
    }
  }
}

void paintTunnel(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, const int lo[3], const int hi[3],
                 MaterialId* vox) noexcept {
  const std::vector<TunnelSegment>& segs = *s.segments;
  double reach = s.radius * (1.0 + s.roughness) + 8.0;
  // Segments that can touch this brick.
  const TunnelSegment* near[64];
  int nn = 0;
  for (const TunnelSegment& g : segs) {
    double x0 = std::min(g.ax, g.bx) - reach, x1 = std::max(g.ax, g.bx) + reach;
    double y0 = std::min(g.ay, g.by) - reach, y1 = std::max(g.ay, g.by) + reach;
    double z0 = std::min(g.az, g.bz) - reach, z1 = std::max(g.az, g.bz) + reach;
    if (ox + 8 < x0 || ox > x1 || oy + 8 < y0 || oy > y1 || oz + 8 < z0 || oz > z1) continue;
    if (nn < 64) near[nn++] = &g;
  }
  if (nn == 0) return;
  double r2 = sq(s.radius);
  for (int lz = lo[2]; lz < hi[2]; ++lz) {
    double pz = oz + lz + 0.5;
    for (int ly = lo[1]; ly < hi[1]; ++ly) {
      double py = oy + ly + 0.5;
      for (int lx = lo[0]; lx < hi[0]; ++lx) {
        double px = ox + lx + 0.5;
        double best = 1e300, bestY = 0.0;
        for (int n = 0; n < nn; ++n) {
          const TunnelSegment& g = *near[n];
          double ex = g.bx - g.ax, ey = g.by - g.ay, ez = g.bz - g.az;
          double len2 = ex * ex + ey * ey + ez * ez;
          double t = len2 > 0.0 ? ((px - g.ax) * ex + (py - g.ay) * ey + (pz - g.az) * ez) / len2 : 0.0;
          if (t < 0.0) t = 0.0;
          if (t > 1.0) t = 1.0;
          double cx = g.ax + ex * t, cy = g.ay + ey * t, cz = g.az + ez * t;
          double d2 = sq(px - cx) + sq(py - cy) + sq(pz - cz);
          if (d2 < best) {
            best = d2;
            bestY = cy;
          }
        }
        double lim = r2;
        if (s.roughness > 0.0) {
          double n = valueNoise3(s.key, px * 0.0625, py * 0.0625, pz * 0.0625);
          lim = sq(s.radius * (1.0 + s.roughness * n));
        }
        if (best >= lim) continue;
        if (s.floorDrop > 0.0 && py < bestY - s.floorDrop) continue;
        vox[voxelIndexInBrick(lx, ly, lz)] = kAir;
      }
    }
  }
}

}  // namespace

void buildFixedShapes(const Scene& scene, std::uint64_t seed, std::span<const Structure> generated, FixedShapes& out) {
  out.segments.clear();
  out.tunnels.clear();
  out.structures.clear();
  out.segments.resize(scene.tunnels.size());
  for (size_t ti = 0; ti < scene.tunnels.size(); ++ti) {
    const Tunnel& t = scene.tunnels[ti];
    Shape s;
    s.kind = ShapeKind::Tunnel;
    s.source = static_cast<int>(ti);
    s.key = genHash(seed, GenPurpose::CaveNoise, static_cast<std::int64_t>(ti));
    s.radius = t.radius * kV;
    s.roughness = t.roughness;
    // A dug tunnel's centre line sits 0.6 radius above its floor points.
    double lift = t.kind == TunnelKind::Tunnel ? 0.6 * s.radius : 0.0;
    s.floorDrop = lift;
    std::vector<TunnelSegment>& segs = out.segments[ti];
    double reach = s.radius * (1.0 + s.roughness) + 1.0;
    s.box = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MIN, INT32_MIN, INT32_MIN};
    for (size_t i = 0; i + 1 < t.points.size(); ++i) {
      const Vec3& a = t.points[i];
      const Vec3& b = t.points[i + 1];
      segs.push_back({a.x * kV, a.y * kV + lift, a.z * kV, b.x * kV, b.y * kV + lift, b.z * kV});
    }
    for (const TunnelSegment& g : segs) {
      s.box.x0 = std::min({s.box.x0, floorI(g.ax - reach), floorI(g.bx - reach)});
      s.box.y0 = std::min({s.box.y0, floorI(g.ay - reach), floorI(g.by - reach)});
      s.box.z0 = std::min({s.box.z0, floorI(g.az - reach), floorI(g.bz - reach)});
      s.box.x1 = std::max({s.box.x1, ceilI(g.ax + reach), ceilI(g.bx + reach)});
      s.box.y1 = std::max({s.box.y1, ceilI(g.ay + reach), ceilI(g.by + reach)});
      s.box.z1 = std::max({s.box.z1, ceilI(g.az + reach), ceilI(g.bz + reach)});
    }
    s.segments = &segs;
    out.tunnels.push_back(s);
  }
  // The scene's structures, then the generated ones (settlements' buildings).
  for (size_t si = 0; si < scene.structures.size() + generated.size(); ++si) {
    const Structure& st = si < scene.structures.size() ? scene.structures[si] : generated[si - scene.structures.size()];
    Shape s;
    s.source = static_cast<int>(si);
    s.material = st.material.id;
    switch (st.kind) {
      case StructureKind::Box:
      case StructureKind::Wall:
      case StructureKind::Floor:
      case StructureKind::Doorway:
      case StructureKind::Window:
        s.kind = ShapeKind::Box;
        s.box = boxFromMetres(st.from, st.to);
        break;
      case StructureKind::Roof:
        s.kind = ShapeKind::Roof;
        s.box = boxFromMetres(st.from, st.to);
        s.ridgeAlongX = st.ridgeAlongX;
        s.eaveY = s.box.y0;
        s.ridgeY = s.box.y1;
        s.thickness = st.thickness * kV;
        break;
      case StructureKind::Arch:
        s.kind = ShapeKind::Arch;
        s.box = boxFromMetres(st.from, st.to);
        break;
      case StructureKind::Cylinder: {
        s.kind = ShapeKind::Cylinder;
        s.cx = st.center.x * kV;
        s.cz = st.center.z * kV;
        s.rx = st.radius * kV;
        s.ry = st.innerRadius * kV;
        if (st.innerMaterial) {
          s.material2 = st.innerMaterial->id;
          s.hasMaterial2 = true;
        }
        std::int32_t y0 = voxelFromMetres(st.center.y);
        std::int32_t y1 = std::max(voxelFromMetres(st.center.y + st.height), y0 + 1);
        s.box = {floorI(s.cx - s.rx), y0, floorI(s.cz - s.rx), ceilI(s.cx + s.rx), y1, ceilI(s.cz + s.rx)};
        break;
      }
    }
    out.structures.push_back(s);
  }
}

bool paintFixedShape(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, MaterialId* vox) noexcept {
  int lo[3], hi[3];
  if (!clip(s.box, ox, oy, oz, lo, hi)) return false;
  switch (s.kind) {
    case ShapeKind::Box:
      paintBox(s, lo, hi, vox);
      break;
    case ShapeKind::Roof:
      paintRoof(s, ox, oy, oz, lo, hi, vox);
      break;
    case ShapeKind::Arch:
      paintArch(s, ox, oy, oz, lo, hi, vox);
      break;
    case ShapeKind::Cylinder:
      paintCylinder(s, ox, oz, lo, hi, vox);
      break;
    case ShapeKind::Tunnel:
      paintTunnel(s, ox, oy, oz, lo, hi, vox);
      break;
    default:
      break;
  }
  return true;  // conservatively: the box overlaps this brick
}

}  // namespace loam::sim::internal
