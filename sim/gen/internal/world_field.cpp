#include "sim/gen/internal/world_field.h"

#include <algorithm>
#include <limits>

#include "detmath/detmath.h"
#include "sim/gen/gen_random.h"
#include "sim/gen/noise.h"

namespace loam::sim::internal {
namespace {

inline double lerp(double a, double b, double t) noexcept { return a + (b - a) * t; }

inline double bilerp(double v00, double v10, double v01, double v11, double fx, double fz) noexcept {
  return lerp(lerp(v00, v10, fx), lerp(v01, v11, fx), fz);
}

inline double sq(double v) noexcept { return v * v; }

/// Degrees clockwise from north of the direction (east, north), in [0, 360); 0 for
/// none. A polynomial atan (error under 0.001 degrees): cheap enough per column.
double compassDegrees(double east, double north) noexcept {
  const double ae = east < 0 ? -east : east, an = north < 0 ? -north : north;
  if (ae == 0.0 && an == 0.0) return 0.0;
  const bool swap = ae > an;
  const double x = swap ? an / ae : ae / an;  // in [0, 1]
  const double x2 = x * x;
  double a = x * (0.99997726 + x2 * (-0.33262347 + x2 * (0.19354346 + x2 * (-0.11643287 + x2 * (0.05265332 + x2 * -0.01172120)))));
  a *= 57.29577951308232;  // degrees from the nearer of north/south toward east/west
  if (swap) a = 90.0 - a;
  // a is now the angle from the north-south axis toward the east-west axis, in [0, 90].
  if (north >= 0) return east >= 0 ? a : (a == 0.0 ? 0.0 : 360.0 - a);
  return east >= 0 ? 180.0 - a : 180.0 + a;
}

inline bool inCircle(const Circle& c, double x, double z) noexcept {
  return sq(x - c.center.x) + sq(z - c.center.z) < sq(c.radius);
}

/// Plan position of the centre of voxel column x, metres.
inline double centreMetres(std::int32_t v) noexcept { return (static_cast<double>(v) + 0.5) / kVoxelsPerMetreD; }

struct SegmentHit {
  double d2;     // squared plan distance, metres^2
  double level;  // water surface at the nearest point, metres
};

/// Nearest point of a stream's polyline to (x, z).
SegmentHit nearestOnStream(const Stream& s, const std::vector<double>& levels, double x, double z) noexcept {
  SegmentHit best{1e300, 0.0};
  for (size_t i = 0; i + 1 < s.points.size(); ++i) {
    const Vec2& a = s.points[i];
    const Vec2& b = s.points[i + 1];
    double ex = b.x - a.x, ez = b.z - a.z;
    double len2 = ex * ex + ez * ez;
    double t = 0.0;
    if (len2 > 0.0) {
      t = ((x - a.x) * ex + (z - a.z) * ez) / len2;
      if (t < 0.0) t = 0.0;
      if (t > 1.0) t = 1.0;
    }
    double px = a.x + ex * t, pz = a.z + ez * t;
    double d2 = sq(x - px) + sq(z - pz);
    if (d2 < best.d2) best = {d2, lerp(levels[i], levels[i + 1], t)};
  }
  return best;
}

}  // namespace

WorldField::WorldField(const Scene& scene, std::uint64_t seed)
    : scene_(scene), seed_(seed), plan_(landscapePlan(scene, seed)), edgeKey_(genHash(seed, GenPurpose::BiomeEdge, 0)) {
  const Biome unset;
  // A distance's upper limit at the largest length a scene can write (1e5 m) has no
  // bound: far from every road is beyond it.
  auto limit = [](Range r, const Range& def) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    if (r.min == def.min && r.max == def.max) return Range{-kInf, kInf};
    if (def.max == 1e9 && r.max >= 1e5) r.max = kInf;
    return r;
  };
  for (const Biome& b : scene.biomes) {
    biomeLimits_.push_back({limit(b.height, unset.height), limit(b.slope, unset.slope),
                            limit(b.moisture, unset.moisture), limit(b.riverDistance, unset.riverDistance),
                            limit(b.coastDistance, unset.coastDistance), limit(b.roadDistance, unset.roadDistance),
                            limit(b.settlementDistance, unset.settlementDistance)});
    anyEdge_ = anyEdge_ || b.edge > 0.0;
    usesSlope_ = usesSlope_ || b.slope.min > 0.0 || b.slope.max < 1e9 || b.aspect.min > 0.0 || b.aspect.max < 360.0;
  }
  for (size_t i = 0; i < scene.terrain.layers.size(); ++i) {
    layerKeys_.push_back(genHash(seed, GenPurpose::TerrainNoise, static_cast<std::int64_t>(i)));
  }
  for (size_t i = 0; i < scene.biomes.size() && i < static_cast<size_t>(kMaxBiomes); ++i) {
    biomeKeys_.push_back(genHash(seed, GenPurpose::BiomeNoise, static_cast<std::int64_t>(i)));
    if (scene.biomes[i].useNoise) noisyBiomes_.push_back(static_cast<int>(i));
  }
  if (plan_ && !plan_->settlements().empty()) {
    buildings_ = layoutBuildings(*this, *plan_, scene.landscape->settlements, seed);
    // Buildings by plan cell, as the rivers: every building whose pad and blend may
    // reach the cell.
    std::vector<CellBuckets::Box> boxes;
    const double r = kPadMargin + kPadBlend;
    for (const Building& b : buildings_) boxes.push_back({b.x0 - r, b.z0 - r, b.x1 + r, b.z1 + r});
    pads_ = CellBuckets(boxes, plan_->origin(), plan_->cell(), plan_->nodesX(), plan_->nodesZ());
  }
  surfaceVoxels_ = voxelFromMetres(scene.terrain.surfaceDepth);
  deepVoxels_ = voxelFromMetres(scene.terrain.surfaceDepth + scene.terrain.subsurfaceDepth);

  for (const Pond& p : scene.ponds) {
    PreparedPond pp{};
    if (p.hasLevel) {
      pp.level = p.level;
    } else {
      auto cx = static_cast<std::int32_t>(floorToInt(p.center.x * kVoxelsPerMetreD));
      auto cz = static_cast<std::int32_t>(floorToInt(p.center.z * kVoxelsPerMetreD));
      pp.level = smoothHeightAt(cx, cz) + p.levelOffset;
    }
    pp.reach = p.radius + (p.shoreMaterial ? p.shoreWidth : 0.0);
    ponds_.push_back(pp);
  }
  for (const Stream& s : scene.streams) {
    PreparedStream ps{};
    double reach = s.width * 0.5 + (s.shoreMaterial ? s.shoreWidth : 0.0);
    ps.minX = ps.minZ = 1e300;
    ps.maxX = ps.maxZ = -1e300;
    for (const Vec2& p : s.points) {
      auto cx = static_cast<std::int32_t>(floorToInt(p.x * kVoxelsPerMetreD));
      auto cz = static_cast<std::int32_t>(floorToInt(p.z * kVoxelsPerMetreD));
      double level = smoothHeightAt(cx, cz) - s.sink;
      // Water never runs uphill: each point's surface is at most the previous one's.
      if (!ps.levels.empty() && level > ps.levels.back()) level = ps.levels.back();
      ps.levels.push_back(level);
      if (p.x - reach < ps.minX) ps.minX = p.x - reach;
      if (p.x + reach > ps.maxX) ps.maxX = p.x + reach;
      if (p.z - reach < ps.minZ) ps.minZ = p.z - reach;
      if (p.z + reach > ps.maxZ) ps.maxZ = p.z + reach;
    }
    regions_.push_back({ps.minX, ps.minZ, ps.maxX, ps.maxZ});
    streams_.push_back(std::move(ps));
  }
  for (size_t i = 0; i < scene.ponds.size(); ++i) {
    const Pond& p = scene.ponds[i];
    double r = ponds_[i].reach;
    regions_.push_back({p.center.x - r, p.center.z - r, p.center.x + r, p.center.z + r});
  }
  for (const Biome& b : scene.biomes) {
    for (const auto* list : {&b.inside, &b.outside}) {
      for (const Circle& c : *list) {
        regions_.push_back({c.center.x - c.radius, c.center.z - c.radius, c.center.x + c.radius, c.center.z + c.radius});
      }
    }
  }
}

bool WorldField::regionsTouch(std::int32_t x0, std::int32_t z0, std::int32_t x1, std::int32_t z1) const noexcept {
  if (plan_) return true;  // rivers, lakes, sea and the biome fields vary everywhere
  // Column centres of the rectangle span [x0 + 0.5, x1 - 0.5] voxels; a margin of one
  // voxel keeps the test conservative.
  double ax = (x0 - 1) / kVoxelsPerMetreD, az = (z0 - 1) / kVoxelsPerMetreD;
  double bx = (x1 + 1) / kVoxelsPerMetreD, bz = (z1 + 1) / kVoxelsPerMetreD;
  for (const PlanBox& r : regions_) {
    if (r.x0 <= bx && ax <= r.x1 && r.z0 <= bz && az <= r.z1) return true;
  }
  return false;
}

bool WorldField::mayHoldStreamWater(std::int32_t x, std::int32_t z) const noexcept {
  const double xm = centreMetres(x), zm = centreMetres(z);
  for (const PreparedStream& ps : streams_) {
    if (xm >= ps.minX && xm <= ps.maxX && zm >= ps.minZ && zm <= ps.maxZ) return true;
  }
  if (!plan_) return false;
  const RiverHit r = plan_->nearestRiver(xm, zm);
  return r.found && r.distance < r.halfWidth;
}

double WorldField::latticeHeight(std::int64_t gx, std::int64_t gz) const noexcept {
  const Terrain& t = scene_.terrain;
  double x = static_cast<double>(gx * kGridStep) / kVoxelsPerMetreD;
  double z = static_cast<double>(gz * kGridStep) / kVoxelsPerMetreD;
  double h = t.baseHeight;
  if (plan_) h += plan_->height(x, z);
  for (size_t i = 0; i < t.layers.size(); ++i) {
    const NoiseLayer& l = t.layers[i];
    double u = (x + l.offset.x) / l.wavelength, v = (z + l.offset.z) / l.wavelength;
    double n = l.ridged ? ridged2(layerKeys_[i], u, v, l.octaves) : fbm2(layerKeys_[i], u, v, l.octaves);
    h += l.amplitude * n;
  }
  for (const Basin& b : t.basins) {
    double d2 = sq(x - b.center.x) + sq(z - b.center.z);
    double r2 = sq(b.radius);
    if (d2 < r2) {
      double k = 1.0 - d2 / r2;
      h -= b.depth * k * k;
    }
  }
  for (const Plateau& p : t.plateaus) {
    double d2 = sq(x - p.center.x) + sq(z - p.center.z);
    double outer = p.radius + p.falloff;
    if (d2 >= sq(outer)) continue;
    double w = 1.0;
    if (d2 > sq(p.radius)) w = smoothStep((outer - dm::sqrt(d2)) / p.falloff);
    h += (p.height - h) * w;
  }
  return h;
}

void WorldField::latticeSample(std::int64_t gx, std::int64_t gz, GridSample& out) const noexcept {
  out.height = latticeHeight(gx, gz);
  if (noisyBiomes_.empty()) return;
  double x = static_cast<double>(gx * kGridStep) / kVoxelsPerMetreD;
  double z = static_cast<double>(gz * kGridStep) / kVoxelsPerMetreD;
  for (int bi : noisyBiomes_) {
    const Biome& b = scene_.biomes[static_cast<size_t>(bi)];
    out.biomeNoise[bi] =
        valueFbm2(biomeKeys_[static_cast<size_t>(bi)], x / b.noiseWavelength, z / b.noiseWavelength, b.noiseOctaves);
  }
}

double WorldField::smoothHeightAt(std::int32_t x, std::int32_t z) const noexcept {
  std::int64_t gx = x >> kGridShift, gz = z >> kGridShift;
  double fx = static_cast<double>(x & (kGridStep - 1)) / kGridStep;
  double fz = static_cast<double>(z & (kGridStep - 1)) / kGridStep;
  return bilerp(latticeHeight(gx, gz), latticeHeight(gx + 1, gz), latticeHeight(gx, gz + 1),
                latticeHeight(gx + 1, gz + 1), fx, fz);
}

int WorldField::biomeOf(double xm, double zm, const BiomeFields& f, const double* noise) const noexcept {
  // One coherent noise in [-1, 1] per column moves every limit of a biome with an
  // edge by up to edge units, so borders between biomes fray instead of following a
  // contour exactly.
  double dither = 0.0;
  if (anyEdge_) dither = valueNoise2(edgeKey_, xm / 3.0, zm / 3.0);
  auto in = [](double v, const Range& r) { return v >= r.min && v <= r.max; };
  for (size_t i = 0; i < scene_.biomes.size(); ++i) {
    const Biome& b = scene_.biomes[i];
    if (b.useNoise && !(noise[i] >= b.noiseRange.min && noise[i] <= b.noiseRange.max)) continue;
    const BiomeLimits& l = biomeLimits_[i];
    const double e = b.edge * dither;
    if (!in(f.height + e, l.height) || !in(f.slope + e * 0.1, l.slope) || !in(f.moisture + e * 0.05, l.moisture) ||
        !in(f.riverDistance + e, l.riverDistance) || !in(f.coastDistance + e, l.coastDistance) ||
        !in(f.roadDistance + e, l.roadDistance) || !in(f.settlementDistance + e, l.settlementDistance))
      continue;
    const bool aspectIn = b.aspect.min <= b.aspect.max ? in(f.aspect, b.aspect)
                                                       : (f.aspect >= b.aspect.min || f.aspect <= b.aspect.max);
    if (!aspectIn) continue;
    if (!b.inside.empty()) {
      bool in = false;
      for (const Circle& c : b.inside) in = in || inCircle(c, xm, zm);
      if (!in) continue;
    }
    bool out = false;
    for (const Circle& c : b.outside) out = out || inCircle(c, xm, zm);
    if (out) continue;
    return static_cast<int>(i);
  }
  return -1;
}

bool WorldField::applyPads(double xm, double zm, double& h) const noexcept {
  const std::span<const std::uint32_t> near = pads_.at(xm, zm);
  auto gap2 = [&](const Building& b) {
    const double dx = std::max({b.x0 - kPadMargin - xm, 0.0, xm - b.x1 - kPadMargin});
    const double dz = std::max({b.z0 - kPadMargin - zm, 0.0, zm - b.z1 - kPadMargin});
    return dx * dx + dz * dz;
  };
  // On a pad (footprint plus margin) the pad's height, whatever is near; beside pads
  // a blend toward each.
  for (const std::uint32_t bi : near) {
    const Building& b = buildings_[bi];
    if (gap2(b) == 0.0) {
      h = b.pad;
      return true;
    }
  }
  bool beside = false;
  for (const std::uint32_t bi : near) {
    const Building& b = buildings_[bi];
    const double d2 = gap2(b);
    if (d2 >= kPadBlend * kPadBlend) continue;
    h += (b.pad - h) * smoothStep(1.0 - dm::sqrt(d2) / kPadBlend);
    beside = beside || d2 < 4.0;
  }
  return beside;
}

void WorldField::applyLandscape(Column& c, double xm, double zm, double& h, const LandscapePlan::Fields& far,
                                BiomeFields& fields, MaterialId& shore) const noexcept {
  double& riverDistance = fields.riverDistance;
  const RiverRules& rr = scene_.landscape->rivers;
  // A road: its surface level across its width, blending back to the terrain beyond
  // (cut and fill); a river crossing it cuts it down to a ford below.
  const RoadHit road = plan_->nearestRoad(xm, zm);
  bool onRoad = false;
  if (road.found) {
    fields.roadDistance = road.distance;
    const double hw = plan_->roadHalfWidth();
    if (road.distance < hw) {
      h = road.level;
      onRoad = true;
    } else {
      h += (road.level - h) * smoothStep(1.0 - (road.distance - hw) / kRoadReach);
    }
    if (road.distance < hw + 1.5) c.built = true;
  }
  const RiverHit river = plan_->nearestRiver(xm, zm);
  double standing = 0.0, depth = 0.0;
  bool sea = false;
  bool hasStanding = plan_->standingWater(xm, zm, standing, sea, depth);
  // The shore: where the share of the cell's corners under water passes a noisy
  // threshold. Short of it the ground stands at least a voxel above the water, so the
  // water's edge follows that line and not the plan cells' squares.
  bool inStanding = false;
  if (hasStanding) inStanding = depth >= 0.5 + 0.2 * valueNoise2(edgeKey_ + 2, xm / 6.0, zm / 6.0);
  // A lake deepens away from its shores (the plan's filled basins are flat).
  if (hasStanding && !sea && h < standing + 1.0) h -= scene_.landscape->lakeDepth * smoothStep(depth * 1.5 - 0.25);
  riverDistance = far.riverDistance;
  if (river.found) {
    const double edge = river.distance - river.halfWidth;
    riverDistance = std::max(0.0, edge);
    // The valley: ground beside the river is cut down to a slope rising from just
    // above its water, fading out toward kRiverReach.
    if (edge > 0.0) {
      const double limit = river.level + 0.1 + edge * rr.valleySlope;
      if (h > limit) h -= (h - limit) * smoothStep((kRiverReach - edge) / (0.3 * kRiverReach));
    }
  }
  c.ground = voxelFromMetres(h);
  if (river.found) {
    const std::int32_t top = voxelFromMetres(river.level);
    if (river.distance < river.halfWidth) {
      const double r = river.distance / river.halfWidth;
      c.ground = std::min(c.ground, voxelFromMetres(river.level - river.depth * (1.0 - r * r)));
      if (top > c.ground) {
        c.water = top;
        c.waterMaterial = rr.water.id;
        c.held = true;
        if (rr.bed) c.surface = rr.bed->id;
      }
    } else if (!inStanding && river.distance < river.halfWidth + 1.5) {
      c.ground = std::max(c.ground, top + 1);  // a bank: the held water never spills sideways
    }
    if (rr.shoreMaterial && river.distance >= river.halfWidth && river.distance < river.halfWidth + rr.shoreWidth)
      shore = rr.shoreMaterial->id;
  }
  if (onRoad && c.water == INT32_MIN) shore = scene_.landscape->roads.material.id;
  if (hasStanding) {
    const std::int32_t top = voxelFromMetres(standing);
    if (!inStanding) {
      if (c.water <= c.ground) c.ground = std::max(c.ground, top + 1);
    } else if (top > c.ground && top >= c.water) {
      c.water = top;
      c.waterMaterial = rr.water.id;
      c.held = false;
      c.surface = scene_.landscape->seaFloorMaterial.id;
    }
  }
}

Column WorldField::finishColumn(std::int32_t x, std::int32_t z, const GridSample& s00, const GridSample& s10,
                                const GridSample& s01, const GridSample& s11) const noexcept {
  const Terrain& t = scene_.terrain;
  double fx = static_cast<double>(x & (kGridStep - 1)) / kGridStep;
  double fz = static_cast<double>(z & (kGridStep - 1)) / kGridStep;
  double h = bilerp(s00.height, s10.height, s01.height, s11.height, fx, fz);
  double xm = centreMetres(x), zm = centreMetres(z);

  Column c;
  c.water = INT32_MIN;  // raised by rivers, lakes, the sea, ponds and streams, then clamped to the ground
  c.surface = t.surface.id;
  BiomeFields fields{};
  constexpr double kFar = 1e9;  // beyond every field's reach
  fields.riverDistance = kFar;
  fields.coastDistance = kFar;
  fields.roadDistance = kFar;
  fields.settlementDistance = kFar;
  MaterialId riverShore = kAir;
  if (plan_) {
    c.built = applyPads(xm, zm, h);
    const LandscapePlan::Fields far = plan_->fields(xm, zm);
    applyLandscape(c, xm, zm, h, far, fields, riverShore);
    fields.moisture = far.moisture;
    fields.coastDistance = far.coastDistance;
    fields.settlementDistance = plan_->settlementDistance(xm, zm, kFar);
  } else {
    c.ground = voxelFromMetres(h);
  }
  fields.height = h;
  if (usesSlope_) {
    // The lattice cell's gradient, metres per metre.
    constexpr double kCellMetres = kGridStep / kVoxelsPerMetreD;
    const double dx = lerp(s10.height - s00.height, s11.height - s01.height, fz) / kCellMetres;
    const double dz = lerp(s01.height - s00.height, s11.height - s10.height, fx) / kCellMetres;
    fields.slope = dm::sqrt(dx * dx + dz * dz);
    // Downhill faces -gradient; 0 = north (-z), clockwise.
    fields.aspect = compassDegrees(-dx, dz);
  }

  double noise[kMaxBiomes];
  for (int bi : noisyBiomes_) {
    noise[bi] = bilerp(s00.biomeNoise[bi], s10.biomeNoise[bi], s01.biomeNoise[bi], s11.biomeNoise[bi], fx, fz);
  }
  c.biome = static_cast<std::int16_t>(biomeOf(xm, zm, fields, noise));
  if (c.biome >= 0 && !(c.water > c.ground)) {
    const Biome& b = scene_.biomes[static_cast<size_t>(c.biome)];
    if (b.surface) c.surface = b.surface->id;
  }

  bool shore = riverShore != kAir;
  MaterialId shoreMat = riverShore;
  for (size_t i = 0; i < scene_.ponds.size(); ++i) {
    const Pond& p = scene_.ponds[i];
    const PreparedPond& pp = ponds_[i];
    double d2 = sq(xm - p.center.x) + sq(zm - p.center.z);
    if (d2 >= sq(pp.reach)) continue;
    double r2 = sq(p.radius);
    if (d2 < r2) {
      double bed = pp.level - p.depth * (1.0 - d2 / r2);
      std::int32_t gb = voxelFromMetres(bed);
      if (gb < c.ground) c.ground = gb;
      std::int32_t wl = voxelFromMetres(pp.level);
      if (wl > c.ground && wl > c.water) {
        c.water = wl;
        c.waterMaterial = p.water.id;
        c.held = false;
      }
    }
    if (p.shoreMaterial) {
      shore = true;
      shoreMat = p.shoreMaterial->id;
    }
  }
  for (size_t i = 0; i < scene_.streams.size(); ++i) {
    const Stream& s = scene_.streams[i];
    const PreparedStream& ps = streams_[i];
    if (xm < ps.minX || xm > ps.maxX || zm < ps.minZ || zm > ps.maxZ) continue;
    SegmentHit hit = nearestOnStream(s, ps.levels, xm, zm);
    double hw = s.width * 0.5;
    if (hit.d2 < sq(hw)) {
      double bed = hit.level - s.depth * (1.0 - hit.d2 / sq(hw));
      std::int32_t gb = voxelFromMetres(bed);
      if (gb < c.ground) c.ground = gb;
      std::int32_t wl = voxelFromMetres(hit.level);
      if (wl > c.ground && wl > c.water) {
        c.water = wl;
        c.waterMaterial = s.water.id;
        c.held = true;
      }
      if (s.shoreMaterial) {
        shore = true;
        shoreMat = s.shoreMaterial->id;
      }
    } else if (s.shoreMaterial && hit.d2 < sq(hw + s.shoreWidth)) {
      shore = true;
      shoreMat = s.shoreMaterial->id;
    }
  }
  if (c.water < c.ground) c.water = c.ground;
  // The deep layer starts on a brick boundary (40 cm steps) so it never splits a
  // brick: the subsurface is deepVoxels_ to deepVoxels_ + 7 voxels thick.
  c.deepTop = (c.ground - deepVoxels_) & ~(kBrickSize - 1);
  if (t.beach && static_cast<double>(c.ground) <= t.beach->maxHeight * kVoxelsPerMetreD) c.surface = t.beach->material.id;
  if (shore) c.surface = shoreMat;
  return c;
}

Column WorldField::columnAt(std::int32_t x, std::int32_t z) const noexcept {
  std::int64_t gx = x >> kGridShift, gz = z >> kGridShift;
  GridSample s[4];
  latticeSample(gx, gz, s[0]);
  latticeSample(gx + 1, gz, s[1]);
  latticeSample(gx, gz + 1, s[2]);
  latticeSample(gx + 1, gz + 1, s[3]);
  return finishColumn(x, z, s[0], s[1], s[2], s[3]);
}

void WorldField::columns(std::int32_t x0, std::int32_t z0, int n, std::vector<GridSample>& lattice,
                         std::vector<Column>& out, std::vector<std::uint8_t>& flatCells) const {
  int g = n / kGridStep + 1;
  lattice.resize(static_cast<size_t>(g) * static_cast<size_t>(g));
  std::int64_t gx0 = x0 >> kGridShift, gz0 = z0 >> kGridShift;
  for (int j = 0; j < g; ++j) {
    for (int i = 0; i < g; ++i) latticeSample(gx0 + i, gz0 + j, lattice[static_cast<size_t>(j * g + i)]);
  }
  out.resize(static_cast<size_t>(n) * static_cast<size_t>(n));
  flatCells.assign(static_cast<size_t>(g - 1) * static_cast<size_t>(g - 1), 0);
  auto same = [this](const GridSample& a, const GridSample& b) {
    if (a.height != b.height) return false;
    for (int bi : noisyBiomes_) {
      if (a.biomeNoise[bi] != b.biomeNoise[bi]) return false;
    }
    return true;
  };
  for (int j = 0; j + 1 < g; ++j) {
    for (int i = 0; i + 1 < g; ++i) {
      const GridSample& s00 = lattice[static_cast<size_t>(j * g + i)];
      const GridSample& s10 = lattice[static_cast<size_t>(j * g + i + 1)];
      const GridSample& s01 = lattice[static_cast<size_t>((j + 1) * g + i)];
      const GridSample& s11 = lattice[static_cast<size_t>((j + 1) * g + i + 1)];
      std::int32_t cx = x0 + i * kGridStep, cz = z0 + j * kGridStep;
      // A lattice cell with four equal corners and no circle, pond or stream nearby
      // has one column value throughout (lerp(a, a, t) == a exactly): compute it once.
      bool flat = same(s00, s10) && same(s00, s01) && same(s00, s11) &&
                  !regionsTouch(cx, cz, cx + kGridStep, cz + kGridStep);
      Column* first = &out[static_cast<size_t>(j * kGridStep * n + i * kGridStep)];
      if (flat) {
        flatCells[static_cast<size_t>(j * (g - 1) + i)] = 1;
        *first = finishColumn(cx, cz, s00, s10, s01, s11);
        continue;
      }
      for (int dz = 0; dz < kGridStep; ++dz) {
        Column* row = first + static_cast<size_t>(dz * n);
        for (int dx = 0; dx < kGridStep; ++dx) row[dx] = finishColumn(cx + dx, cz + dz, s00, s10, s01, s11);
      }
    }
  }
}

}  // namespace loam::sim::internal
