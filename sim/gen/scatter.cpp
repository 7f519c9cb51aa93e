// Scatter rules: jittered-grid placement with keyed randomness, feature shapes, and
// painting of trees, bushes, rocks and grass patches.
#include "sim/gen/scatter.h"

#include <algorithm>

#include "detmath/detmath.h"
#include "sim/gen/gen_random.h"
#include "sim/gen/internal/shapes.h"
#include "sim/gen/noise.h"

namespace loam::sim {
namespace internal {
namespace {

constexpr double kV = kVoxelsPerMetreD;

inline double sq(double v) noexcept { return v * v; }

inline bool inCircle(const Circle& c, double x, double z) noexcept {
  return sq(x - c.center.x) + sq(z - c.center.z) < sq(c.radius);
}

inline std::int32_t floorI(double v) noexcept { return static_cast<std::int32_t>(floorToInt(v)); }
inline std::int32_t ceilI(double v) noexcept { return static_cast<std::int32_t>(-floorToInt(-v)); }

/// Keyed draw n of the shape of feature (rule, i, k).
struct Draws {
  std::uint64_t seed;
  int rule;
  std::int32_t i, k;
  double unit(int n) const noexcept { return genUnit(genHash(seed, GenPurpose::ScatterShape, rule, i, k, n)); }
  double in(const Range& r, int n) const noexcept { return r.min + (r.max - r.min) * unit(n); }
  int count(const Range& r, int n) const noexcept {
    auto lo = static_cast<int>(r.min), hi = static_cast<int>(r.max);
    int c = lo + static_cast<int>(unit(n) * static_cast<double>(hi - lo + 1));
    return c > hi ? hi : c;
  }
};

/// An item's keyed scale, heading (radians, the direction it leans and a rock's long
/// axis points) and lean from upright (radians).
struct ItemPose {
  double scale, heading, tilt;
};
ItemPose itemPose(const ScatterRule& rule, const Draws& d) noexcept {
  return {d.in(rule.scale, 90), 2.0 * dm::kPi * d.unit(92), d.in(rule.tilt, 91) * (dm::kPi / 180.0)};
}

/// Leaf clusters around (x0, topY, z0), sizes times scale.
void addClusters(Shape& s, const ScatterRule& rule, const Draws& d, double scale, double x0, double topY, double z0,
                 double centreLift) {
  int n = d.count(rule.clusters, 10);
  if (n > kMaxClusters) n = kMaxClusters;
  double spread = rule.spread * kV * scale;
  for (int c = 0; c < n; ++c) {
    double r = d.in(rule.radius, 20 + c * 4) * kV * scale;
    double x = x0, z = z0, y = topY + centreLift * r;
    if (c > 0) {  // the first cluster crowns the trunk; the others spread around it
      x += spread * (2.0 * d.unit(21 + c * 4) - 1.0);
      z += spread * (2.0 * d.unit(22 + c * 4) - 1.0);
      y += rule.radius.max * kV * 0.5 * scale * (2.0 * d.unit(23 + c * 4) - 1.0);
    }
    LeafCluster& lc = s.clusters[c];
    lc.x = x;
    lc.y = y;
    lc.z = z;
    lc.r = r;
    lc.r2 = r * r;
    lc.inner2 = 0.85 * 0.85 * r * r;
    double ri = r + 1.0;
    s.box.x0 = std::min(s.box.x0, floorI(x - ri));
    s.box.x1 = std::max(s.box.x1, ceilI(x + ri));
    s.box.y0 = std::min(s.box.y0, floorI(y - ri));
    s.box.y1 = std::max(s.box.y1, ceilI(y + ri));
    s.box.z0 = std::min(s.box.z0, floorI(z - ri));
    s.box.z1 = std::max(s.box.z1, ceilI(z + ri));
  }
  s.clusterCount = n;
}

/// Brick-vs-sphere: 0 outside, 2 the whole brick inside the core, 1 partial.
inline int classifySphere(double cx, double cy, double cz, double r2, double inner2, std::int32_t ox, std::int32_t oy,
                          std::int32_t oz) noexcept {
  auto axisMin = [](double c, double lo, double hi) {
    if (c < lo) return lo - c;
    if (c > hi) return c - hi;
    return 0.0;
  };
  auto axisMax = [](double c, double lo, double hi) {
    double a = c - lo, b = hi - c;
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    return a > b ? a : b;
  };
  // Voxel centres span [o + 0.5, o + 7.5].
  double lx = ox + 0.5, hx = ox + 7.5, ly = oy + 0.5, hy = oy + 7.5, lz = oz + 0.5, hz = oz + 7.5;
  double dmin = sq(axisMin(cx, lx, hx)) + sq(axisMin(cy, ly, hy)) + sq(axisMin(cz, lz, hz));
  if (dmin >= r2) return 0;
  double dmax = sq(axisMax(cx, lx, hx)) + sq(axisMax(cy, ly, hy)) + sq(axisMax(cz, lz, hz));
  if (dmax < inner2) return 2;
  return 1;
}

bool paintLeaves(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, MaterialId leaf,
                 MaterialId* vox) noexcept {
  int active[kMaxClusters];
  int na = 0;
  for (int c = 0; c < s.clusterCount; ++c) {
    const LeafCluster& lc = s.clusters[c];
    int k = classifySphere(lc.x, lc.y, lc.z, lc.r2, lc.inner2, ox, oy, oz);
    if (k == 2) {
      for (int i = 0; i < kBrickVoxels; ++i) {
        if (vox[i] == kAir) vox[i] = leaf;
      }
      return true;
    }
    if (k == 1) active[na++] = c;
  }
  if (na == 0) return false;
  // Leaves are decided per 2x2x2 block of voxels (10 cm), tested at the block centre:
  // an eighth of the work of per-voxel tests, and a leafy texture at that scale.
  for (int bz = 0; bz < kBrickSize; bz += 2) {
    double pz = oz + bz + 1.0;
    for (int by = 0; by < kBrickSize; by += 2) {
      double py = oy + by + 1.0;
      for (int bx = 0; bx < kBrickSize; bx += 2) {
        double px = ox + bx + 1.0;
        bool leafy = false;
        for (int a = 0; a < na && !leafy; ++a) {
          const LeafCluster& lc = s.clusters[active[a]];
          double d2 = sq(px - lc.x) + sq(py - lc.y) + sq(pz - lc.z);
          leafy = d2 < lc.r2 && (d2 < lc.inner2 || voxelDither(s.key, ox + bx, oy + by, oz + bz) < s.fill);
        }
        if (!leafy) continue;
        for (int dz = 0; dz < 2; ++dz)
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx) {
              int vi = voxelIndexInBrick(bx + dx, by + dy, bz + dz);
              if (vox[vi] == kAir) vox[vi] = leaf;
            }
      }
    }
  }
  return true;
}

bool paintTrunk(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, MaterialId* vox) noexcept {
  int y0 = std::max(s.trunkY0 - oy, 0), y1 = std::min(s.trunkY1 - oy, kBrickSize);
  if (y0 >= y1) return false;
  bool wrote = false;
  for (int ly = y0; ly < y1; ++ly) {
    // A leaning trunk's centre moves with height (upright: leanX = leanZ = 0).
    const double h = oy + ly + 0.5 - s.ground;
    const double cx = s.cx + s.leanX * h, cz = s.cz + s.leanZ * h;
    for (int lz = 0; lz < kBrickSize; ++lz) {
      double dz = oz + lz + 0.5 - cz;
      for (int lx = 0; lx < kBrickSize; ++lx) {
        double dx = ox + lx + 0.5 - cx;
        if (dx * dx + dz * dz >= s.trunkR2) continue;
        wrote = true;
        vox[voxelIndexInBrick(lx, ly, lz)] = s.material;
      }
    }
  }
  return wrote;
}

bool paintRock(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, MaterialId* vox) noexcept {
  bool wrote = false;
  // Work in a space where the ellipsoid is a sphere of radius rx (y stretched); an
  // oriented rock's offsets are first turned into its own frame: heading, then lean,
  // then its long axis shrunk by its stretch.
  double k = s.rx / s.ry;
  double outer = 1.25 * s.rx, inner = 0.75 * s.rx;
  for (int lz = 0; lz < kBrickSize; ++lz) {
    for (int ly = 0; ly < kBrickSize; ++ly) {
      for (int lx = 0; lx < kBrickSize; ++lx) {
        double dx = ox + lx + 0.5 - s.cx, dy = oy + ly + 0.5 - s.cy, dz = oz + lz + 0.5 - s.cz;
        if (s.oriented) {
          const double along = dx * s.cosHeading + dz * s.sinHeading, across = dz * s.cosHeading - dx * s.sinHeading;
          const double up = dy * s.cosTilt - along * s.sinTilt;
          dx = (along * s.cosTilt + dy * s.sinTilt) / s.stretch;
          dy = up;
          dz = across;
        }
        dy *= k;
        double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 >= outer * outer) continue;
        bool in = d2 < inner * inner;
        if (!in) {
          // Rough surface: radius varies by +-25% with 3-D noise of ~40 cm features.
          double n = valueNoise3(s.key, (ox + lx) * 0.125, (oy + ly) * 0.125, (oz + lz) * 0.125);
          double r = s.rx * (1.0 + 0.25 * n);
          in = d2 < r * r;
        }
        if (in) {
          vox[voxelIndexInBrick(lx, ly, lz)] = s.material;
          wrote = true;
        }
      }
    }
  }
  return wrote;
}

bool paintGrass(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, const ColumnWindow& cols,
                MaterialId* vox) noexcept {
  double r2 = s.rx * s.rx;
  bool wrote = false;
  for (int lz = 0; lz < kBrickSize; ++lz) {
    std::int32_t z = oz + lz;
    if (z < s.box.z0 || z >= s.box.z1) continue;
    double dz = z + 0.5 - s.cz;
    for (int lx = 0; lx < kBrickSize; ++lx) {
      std::int32_t x = ox + lx;
      if (x < s.box.x0 || x >= s.box.x1) continue;
      const Column& c = cols.at(x, z);
      // Cheap exits first: this brick's rows cannot hold a blade of this column.
      if (c.ground >= oy + kBrickSize || c.ground + s.bladeMax + 1.0 <= oy) continue;
      double dx = x + 0.5 - s.cx;
      double d2 = dx * dx + dz * dz;
      if (d2 >= r2) continue;
      if (c.water > c.ground) continue;
      // Sparser towards the rim of the patch.
      double u = voxelDither(s.key, x, 0, z);
      if (u >= s.fill * (1.0 - 0.5 * d2 / r2)) continue;
      double hb = s.bladeMin + (s.bladeMax - s.bladeMin) * voxelDither(s.key, x, 1, z);
      std::int32_t top = c.ground + std::max<std::int32_t>(1, static_cast<std::int32_t>(hb));
      std::int32_t y0 = std::max({c.ground, oy, s.box.y0});
      std::int32_t y1 = std::min({top, oy + kBrickSize, s.box.y1});
      for (std::int32_t y = y0; y < y1; ++y) {
        int vi = voxelIndexInBrick(lx, y - oy, lz);
        if (vox[vi] == kAir) {
          vox[vi] = s.material;
          wrote = true;
        }
      }
    }
  }
  return wrote;
}

}  // namespace

double scatterReach(const ScatterRule& rule) noexcept {
  const double s = rule.scale.max;
  switch (rule.kind) {
    case ScatterKind::Tree: {
      // A leaning tree's crown moves by its trunk's height times the lean's tangent.
      const double lean = rule.tilt.max > 0.0 ? rule.trunkHeight.max * dm::tan(rule.tilt.max * (dm::kPi / 180.0)) : 0.0;
      return (std::max(rule.spread + rule.radius.max, rule.trunkRadius.max) + lean) * s * kV + 2.0;
    }
    case ScatterKind::Bush:
      return (rule.spread + rule.radius.max) * s * kV + 2.0;
    case ScatterKind::Rock: {
      const double longest = rule.tilt.max > 0.0 ? std::max(rule.stretch.max, rule.squash.max) : rule.stretch.max;
      return rule.radius.max * longest * 1.25 * s * kV + 2.0;
    }
    case ScatterKind::Grass:
      return rule.radius.max * s * kV + 2.0;
  }
  return 0.0;
}

std::optional<Shape> buildScatterShape(const WorldField& field, int ruleIndex, std::int32_t i, std::int32_t k) {
  const Scene& scene = field.scene();
  const ScatterRule& rule = scene.scatter[static_cast<size_t>(ruleIndex)];
  std::uint64_t seed = field.seed();
  auto place = [&](int n) { return genUnit(genHash(seed, GenPurpose::ScatterPlace, ruleIndex, i, k, n)); };
  if (!(place(0) < rule.density)) return std::nullopt;
  double xm = (static_cast<double>(i) + 0.5 + rule.jitter * (place(1) - 0.5)) * rule.spacing;
  double zm = (static_cast<double>(k) + 0.5 + rule.jitter * (place(2) - 0.5)) * rule.spacing;

  for (const Circle& c : rule.exclude) {
    if (inCircle(c, xm, zm)) return std::nullopt;
  }
  if (!rule.inside.empty()) {
    bool in = false;
    for (const Circle& c : rule.inside) in = in || inCircle(c, xm, zm);
    if (!in) return std::nullopt;
  }
  std::int32_t vx = floorI(xm * kV), vz = floorI(zm * kV);
  // Cheap rejection before any noise: outside the world's plan bounds.
  const WorldBounds& wb = scene.worldBounds;
  double reach = scatterReach(rule);
  if (vx + reach < wb.minBrick.x * kBrickSize || vx - reach >= wb.maxBrick.x * kBrickSize ||
      vz + reach < wb.minBrick.z * kBrickSize || vz - reach >= wb.maxBrick.z * kBrickSize) {
    return std::nullopt;
  }
  Column col = field.columnAt(vx, vz);
  if (!rule.biomeIndices.empty() &&
      std::find(rule.biomeIndices.begin(), rule.biomeIndices.end(), col.biome) == rule.biomeIndices.end()) {
    return std::nullopt;
  }
  double groundM = static_cast<double>(col.ground) / kV;
  if (!(groundM >= rule.height.min && groundM <= rule.height.max)) return std::nullopt;
  if (!rule.allowInWater && col.water > col.ground) return std::nullopt;
  if (col.built) return std::nullopt;  // buildings' pads stay clear
  if (rule.maxSlope < 10.0) {
    double gx = (field.smoothHeightAt(vx + kVoxelsPerMetre, vz) - field.smoothHeightAt(vx - kVoxelsPerMetre, vz)) * 0.5;
    double gz = (field.smoothHeightAt(vx, vz + kVoxelsPerMetre) - field.smoothHeightAt(vx, vz - kVoxelsPerMetre)) * 0.5;
    if (gx * gx + gz * gz > rule.maxSlope * rule.maxSlope) return std::nullopt;
  }

  Shape s;
  s.source = ruleIndex;
  s.cellX = i;
  s.cellZ = k;
  s.key = genHash(seed, GenPurpose::VoxelDither, ruleIndex, i, k);
  s.cx = xm * kV;
  s.cz = zm * kV;
  s.cy = col.ground;
  s.ground = col.ground;
  s.material = rule.material.id;
  Draws d{seed, ruleIndex, i, k};
  // Start from an empty box at the position; shapes grow it.
  s.box = {floorI(s.cx), col.ground, floorI(s.cz), floorI(s.cx) + 1, col.ground + 1, floorI(s.cz) + 1};
  const ItemPose pose = itemPose(rule, d);
  switch (rule.kind) {
    case ScatterKind::Tree: {
      s.kind = ShapeKind::Tree;
      s.material2 = rule.leafMaterial.id;
      s.hasMaterial2 = true;
      s.fill = rule.leafFill;
      double trunkH = d.in(rule.trunkHeight, 0) * kV * pose.scale;
      double trunkR = d.in(rule.trunkRadius, 1) * kV * pose.scale;
      s.trunkR2 = trunkR * trunkR;
      s.trunkY0 = col.ground - kVoxelsPerMetre / 2;  // roots 0.5 m into the ground
      s.trunkY1 = col.ground + static_cast<std::int32_t>(trunkH);
      if (pose.tilt > 0.0) {
        const double t = dm::tan(pose.tilt);
        s.leanX = t * dm::cos(pose.heading);
        s.leanZ = t * dm::sin(pose.heading);
      }
      // The trunk's box spans its roots (0.5 m deep, leaning back) and its top.
      const double topX = s.cx + s.leanX * trunkH, topZ = s.cz + s.leanZ * trunkH;
      const double rootX = std::abs(s.leanX) * kVoxelsPerMetre, rootZ = std::abs(s.leanZ) * kVoxelsPerMetre;
      s.box.x0 = floorI(std::min(s.cx - rootX, topX) - trunkR - 1);
      s.box.x1 = ceilI(std::max(s.cx + rootX, topX) + trunkR + 1);
      s.box.z0 = floorI(std::min(s.cz - rootZ, topZ) - trunkR - 1);
      s.box.z1 = ceilI(std::max(s.cz + rootZ, topZ) + trunkR + 1);
      s.box.y0 = s.trunkY0;
      s.box.y1 = s.trunkY1;
      addClusters(s, rule, d, pose.scale, topX, col.ground + trunkH, topZ, 0.0);
      break;
    }
    case ScatterKind::Bush:
      s.kind = ShapeKind::Bush;
      s.material2 = rule.material.id;
      s.fill = rule.leafFill;
      addClusters(s, rule, d, pose.scale, s.cx, col.ground, s.cz, 0.5);
      break;
    case ScatterKind::Rock: {
      s.kind = ShapeKind::Rock;
      s.rx = d.in(rule.radius, 0) * kV * pose.scale;
      s.ry = s.rx * d.in(rule.squash, 1);
      s.cy = col.ground + s.ry * (1.0 - 2.0 * rule.sink);
      s.stretch = d.in(rule.stretch, 93);
      s.oriented = pose.tilt > 0.0 || s.stretch > 1.0;
      double ex = 1.25 * s.rx + 1.0, ey = 1.25 * s.ry + 1.0;
      if (s.oriented) {
        s.cosHeading = dm::cos(pose.heading);
        s.sinHeading = dm::sin(pose.heading);
        s.cosTilt = dm::cos(pose.tilt);
        s.sinTilt = dm::sin(pose.tilt);
        ex = ey = 1.25 * std::max(s.rx * s.stretch, s.ry) + 1.0;  // any turn stays inside its longest radius
      }
      s.box = {floorI(s.cx - ex), floorI(s.cy - ey), floorI(s.cz - ex), ceilI(s.cx + ex), ceilI(s.cy + ey),
               ceilI(s.cz + ex)};
      break;
    }
    case ScatterKind::Grass: {
      s.kind = ShapeKind::Grass;
      s.rx = d.in(rule.radius, 0) * kV * pose.scale;
      s.fill = rule.fill;
      s.bladeMin = rule.bladeHeight.min * kV * pose.scale;
      s.bladeMax = rule.bladeHeight.max * kV * pose.scale;
      // Blades stand on each column's own ground; the box allows for a slope of up to
      // 1:1 across the patch (beyond that blades are clipped, the same in every chunk).
      double ex = s.rx + 1.0;
      s.box = {floorI(s.cx - ex), col.ground - ceilI(ex), floorI(s.cz - ex), ceilI(s.cx + ex),
               col.ground + ceilI(ex + s.bladeMax) + 1, ceilI(s.cz + ex)};
      break;
    }
  }
  return s;
}

void collectScatterShapes(const WorldField& field, const VoxelBounds& region, std::vector<Shape>& out) {
  const Scene& scene = field.scene();
  for (size_t r = 0; r < scene.scatter.size(); ++r) {
    const ScatterRule& rule = scene.scatter[r];
    double cell = rule.spacing * kV;
    double reach = scatterReach(rule);
    std::int32_t i0 = floorI((region.x0 - reach) / cell) - 1, i1 = floorI((region.x1 + reach) / cell) + 1;
    std::int32_t k0 = floorI((region.z0 - reach) / cell) - 1, k1 = floorI((region.z1 + reach) / cell) + 1;
    for (std::int32_t k = k0; k <= k1; ++k) {
      for (std::int32_t i = i0; i <= i1; ++i) {
        std::optional<Shape> s = buildScatterShape(field, static_cast<int>(r), i, k);
        if (!s) continue;
        bool overlaps = s->box.x0 < region.x1 && region.x0 < s->box.x1 && s->box.z0 < region.z1 &&
                        region.z0 < s->box.z1 && s->box.y0 < region.y1 && region.y0 < s->box.y1;
        if (overlaps) out.push_back(*s);
      }
    }
  }
}

bool paintScatterShape(const Shape& s, std::int32_t ox, std::int32_t oy, std::int32_t oz, const ColumnWindow& cols,
                       MaterialId* vox) noexcept {
  switch (s.kind) {
    case ShapeKind::Tree: {
      bool leaves = paintLeaves(s, ox, oy, oz, s.material2, vox);
      bool trunk = paintTrunk(s, ox, oy, oz, vox);
      return leaves || trunk;
    }
    case ShapeKind::Bush:
      return paintLeaves(s, ox, oy, oz, s.material2, vox);
    case ShapeKind::Rock:
      return paintRock(s, ox, oy, oz, vox);
    case ShapeKind::Grass:
      return paintGrass(s, ox, oy, oz, cols, vox);
    default:
      return false;
  }
}

}  // namespace internal

std::vector<FeatureInfo> enumerateFeatures(const Scene& scene, std::uint64_t seed) {
  internal::WorldField field(scene, seed);
  const WorldBounds& wb = scene.worldBounds;
  internal::VoxelBounds region{wb.minBrick.x * kBrickSize, wb.minBrick.y * kBrickSize, wb.minBrick.z * kBrickSize,
                               wb.maxBrick.x * kBrickSize, wb.maxBrick.y * kBrickSize, wb.maxBrick.z * kBrickSize};
  std::vector<internal::Shape> shapes;
  internal::collectScatterShapes(field, region, shapes);
  std::vector<FeatureInfo> out;
  out.reserve(shapes.size());
  for (const internal::Shape& s : shapes) {
    FeatureInfo f;
    f.id = {s.source, s.cellX, s.cellZ};
    f.kind = scene.scatter[static_cast<size_t>(s.source)].kind;
    f.position = {s.cx / internal::kV, static_cast<double>(s.ground) / internal::kV, s.cz / internal::kV};
    f.bounds = {{s.box.x0, s.box.y0, s.box.z0}, {s.box.x1, s.box.y1, s.box.z1}};
    for (int c = 0; c < s.clusterCount; ++c) {
      const internal::LeafCluster& lc = s.clusters[c];
      f.leafClusters.push_back({{lc.x / internal::kV, lc.y / internal::kV, lc.z / internal::kV}, lc.r / internal::kV});
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace loam::sim
