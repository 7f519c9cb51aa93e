#include "sim/gen/landscape_plan.h"

#include <algorithm>
#include <cmath>
#include <bit>
#include <cstring>
#include <mutex>
#include <queue>

#include "detmath/detmath.h"
#include "sim/gen/gen_random.h"
#include "sim/gen/noise.h"
#include "sim/world/voxel.h"

namespace loam::sim {
namespace {

constexpr double kNoLake = -1e300;
constexpr float kFar = 1e6f;
// Neighbours in the fixed order every loop uses; diagonals are sqrt(2) cells away.
constexpr int kNbX[8] = {-1, 1, 0, 0, -1, 1, -1, 1};
constexpr int kNbZ[8] = {0, 0, -1, 1, -1, -1, 1, 1};
constexpr double kSqrt2 = 1.4142135623730951;

double sq(double v) { return v * v; }

// The box within `reach` metres of the segment from a to b.
CellBuckets::Box reachBox(Vec2 a, Vec2 b, double reach) {
  return {std::min(a.x, b.x) - reach, std::min(a.z, b.z) - reach, std::max(a.x, b.x) + reach,
          std::max(a.z, b.z) + reach};
}

// The nearest point to (x, z) on the segment from a to b: its parameter t (0 at a) and
// distance, metres.
struct OnSegment {
  double t, distance;
};
OnSegment nearestOnSegment(Vec2 a, Vec2 b, double x, double z) {
  const double ex = b.x - a.x, ez = b.z - a.z;
  const double len2 = ex * ex + ez * ez;
  double t = 0.0;
  if (len2 > 0.0) t = std::clamp(((x - a.x) * ex + (z - a.z) * ez) / len2, 0.0, 1.0);
  return {t, dm::sqrt(sq(x - (a.x + ex * t)) + sq(z - (a.z + ez * t)))};
}

struct Grid {
  int nx = 0, nz = 0;
  std::size_t at(int i, int j) const { return static_cast<std::size_t>(j) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i); }
};

struct FloodEntry {
  double key;
  std::uint32_t node;
  bool operator>(const FloodEntry& o) const { return key != o.key ? key > o.key : node > o.node; }
};

/// The priority flood: every node's filled height (the lowest level at which water
/// standing there could leave the grid), its receiver (the node the flood reached it
/// from, -1 for the edge), and the order nodes were reached in (receivers first).
/// With a sea, the edge starts at max(height, sea level) and nodes below sea level
/// reached through sea nodes are sea.
struct Flood {
  std::vector<double> filled;
  std::vector<std::int32_t> receiver;
  std::vector<std::uint32_t> order;
  std::vector<std::uint8_t> sea;
};

void flood(const Grid& g, const std::vector<double>& h, bool hasSea, double seaLevel, Flood& f) {
  const std::size_t n = h.size();
  f.filled.assign(n, 0.0);
  f.receiver.assign(n, -1);
  f.order.clear();
  f.order.reserve(n);
  f.sea.assign(n, 0);
  std::vector<std::uint8_t> seen(n, 0);
  std::priority_queue<FloodEntry, std::vector<FloodEntry>, std::greater<FloodEntry>> heap;
  auto seed = [&](int i, int j) {
    const std::size_t k = g.at(i, j);
    if (seen[k]) return;
    seen[k] = 1;
    double key = h[k];
    if (hasSea && key < seaLevel) {
      key = seaLevel;
      f.sea[k] = 1;
    }
    f.filled[k] = key;
    heap.push({key, static_cast<std::uint32_t>(k)});
  };
  for (int i = 0; i < g.nx; ++i) {
    seed(i, 0);
    seed(i, g.nz - 1);
  }
  for (int j = 0; j < g.nz; ++j) {
    seed(0, j);
    seed(g.nx - 1, j);
  }
  while (!heap.empty()) {
    const FloodEntry e = heap.top();
    heap.pop();
    f.order.push_back(e.node);
    const int i = static_cast<int>(e.node % static_cast<std::uint32_t>(g.nx));
    const int j = static_cast<int>(e.node / static_cast<std::uint32_t>(g.nx));
    for (int d = 0; d < 8; ++d) {
      const int a = i + kNbX[d], b = j + kNbZ[d];
      if (a < 0 || b < 0 || a >= g.nx || b >= g.nz) continue;
      const std::size_t k = g.at(a, b);
      if (seen[k]) continue;
      seen[k] = 1;
      double key = std::max(h[k], e.key);
      if (f.sea[e.node] && hasSea && h[k] < seaLevel) f.sea[k] = 1;
      f.filled[k] = key;
      f.receiver[k] = static_cast<std::int32_t>(e.node);
      heap.push({key, static_cast<std::uint32_t>(k)});
    }
  }
}

/// Area (m2) draining through each node: its own cell plus everything upstream.
void drainageArea(const Flood& f, double cellArea, std::vector<double>& area) {
  area.assign(f.filled.size(), cellArea);
  for (std::size_t r = f.order.size(); r-- > 0;) {
    const std::uint32_t k = f.order[r];
    if (f.receiver[k] >= 0) area[static_cast<std::size_t>(f.receiver[k])] += area[k];
  }
}

double receiverDistance(const Grid& g, std::size_t k, std::size_t r, double cell) {
  const bool diagonal = (k % static_cast<std::size_t>(g.nx)) != (r % static_cast<std::size_t>(g.nx)) &&
                        (k / static_cast<std::size_t>(g.nx)) != (r / static_cast<std::size_t>(g.nx));
  return diagonal ? cell * kSqrt2 : cell;
}

/// Two-pass chamfer distance (metres) to the nodes where source is set.
void chamfer(const Grid& g, double cell, const std::vector<std::uint8_t>& source, std::vector<float>& out) {
  out.assign(source.size(), kFar);
  for (std::size_t k = 0; k < source.size(); ++k) {
    if (source[k]) out[k] = 0.0f;
  }
  const auto c1 = static_cast<float>(cell), c2 = static_cast<float>(cell * kSqrt2);
  auto relax = [&](int i, int j, int a, int b, float w) {
    if (a < 0 || b < 0 || a >= g.nx || b >= g.nz) return;
    float& d = out[g.at(i, j)];
    const float via = out[g.at(a, b)] + w;
    if (via < d) d = via;
  };
  for (int j = 0; j < g.nz; ++j) {
    for (int i = 0; i < g.nx; ++i) {
      relax(i, j, i - 1, j, c1);
      relax(i, j, i, j - 1, c1);
      relax(i, j, i - 1, j - 1, c2);
      relax(i, j, i + 1, j - 1, c2);
    }
  }
  for (int j = g.nz - 1; j >= 0; --j) {
    for (int i = g.nx - 1; i >= 0; --i) {
      relax(i, j, i + 1, j, c1);
      relax(i, j, i, j + 1, c1);
      relax(i, j, i + 1, j + 1, c2);
      relax(i, j, i - 1, j + 1, c2);
    }
  }
}

double catmullRom(double p0, double p1, double p2, double p3, double t) {
  const double t2 = t * t, t3 = t2 * t;
  return 0.5 * ((2.0 * p1) + (p2 - p0) * t + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * t2 +
                (3.0 * p1 - p0 - 3.0 * p2 + p3) * t3);
}

}  // namespace

std::size_t LandscapePlan::index(int i, int j) const noexcept {
  i = std::clamp(i, 0, nx_ - 1);
  j = std::clamp(j, 0, nz_ - 1);
  return static_cast<std::size_t>(j) * static_cast<std::size_t>(nx_) + static_cast<std::size_t>(i);
}

std::unique_ptr<const LandscapePlan> LandscapePlan::build(const Scene& scene, std::uint64_t seed) {
  const Landscape& land = *scene.landscape;
  std::unique_ptr<LandscapePlan> plan(new LandscapePlan());
  LandscapePlan& p = *plan;
  const WorldBounds& wb = scene.worldBounds;
  const double metresPerBrick = static_cast<double>(kBrickSize) / static_cast<double>(kVoxelsPerMetre);
  const double x0 = wb.minBrick.x * metresPerBrick, x1 = wb.maxBrick.x * metresPerBrick;
  const double z0 = wb.minBrick.z * metresPerBrick, z1 = wb.maxBrick.z * metresPerBrick;
  p.cell_ = land.cell;
  p.seaLevel_ = land.seaLevel;
  // Two nodes of margin beyond the world on every side (Catmull-Rom reads one).
  p.origin_ = {static_cast<double>(floorToInt(x0 / land.cell) - 2) * land.cell,
               static_cast<double>(floorToInt(z0 / land.cell) - 2) * land.cell};
  p.nx_ = static_cast<int>(floorToInt((x1 - p.origin_.x) / land.cell)) + 4;
  p.nz_ = static_cast<int>(floorToInt((z1 - p.origin_.z) / land.cell)) + 4;
  const Grid g{p.nx_, p.nz_};
  const std::size_t n = static_cast<std::size_t>(g.nx) * static_cast<std::size_t>(g.nz);

  // 1. Heights: the eroded layers now, the others after erosion.
  std::vector<std::uint64_t> keys;
  for (std::size_t l = 0; l < land.layers.size(); ++l)
    keys.push_back(genHash(seed, GenPurpose::LandscapeNoise, static_cast<std::int64_t>(l)));
  const std::uint64_t coastKey = genHash(seed, GenPurpose::LandscapeNoise, -1);
  // Each layer is sampled in its own rotated frame: lattice noise has faint ridges
  // along its lattice lines, which kilometres-wide layers would otherwise align
  // north-south and east-west across the whole map.
  std::vector<double> cosines, sines;
  for (std::size_t l = 0; l < land.layers.size(); ++l) {
    const double angle = 0.61 + 1.13 * static_cast<double>(l);
    cosines.push_back(dm::cos(angle));
    sines.push_back(dm::sin(angle));
  }
  auto layers = [&](double x, double z, bool eroded) {
    double h = 0.0;
    for (std::size_t l = 0; l < land.layers.size(); ++l) {
      const NoiseLayer& nl = land.layers[l];
      if (nl.erode != eroded) continue;
      const double px = x + nl.offset.x, pz = z + nl.offset.z;
      const double u = (px * cosines[l] - pz * sines[l]) / nl.wavelength;
      const double v = (px * sines[l] + pz * cosines[l]) / nl.wavelength;
      h += nl.amplitude * (nl.ridged ? ridged2(keys[l], u, v, nl.octaves) : fbm2(keys[l], u, v, nl.octaves));
    }
    return h;
  };
  auto nodeX = [&](int i) { return p.origin_.x + i * land.cell; };
  auto nodeZ = [&](int j) { return p.origin_.z + j * land.cell; };
  p.h_.assign(n, 0.0);
  for (int j = 0; j < g.nz; ++j) {
    for (int i = 0; i < g.nx; ++i) {
      const double x = nodeX(i), z = nodeZ(j);
      double h = land.baseHeight + layers(x, z, true);
      if (land.coastMargin > 0.0) {
        // The land falls to the sea floor toward the world's edge, along a coast
        // bent by noise a few kilometres across.
        double edge = std::min(std::min(x - x0, x1 - x), std::min(z - z0, z1 - z));
        edge += 0.5 * land.coastMargin * fbm2(coastKey, x / 3000.0, z / 3000.0, Octaves{3, 2.0, 0.5});
        h = land.seaFloor + (h - land.seaFloor) * smoothStep(edge / land.coastMargin);
      }
      p.h_[g.at(i, j)] = h;
    }
  }

  // 2. Erosion: implicit stream power, receivers first so each node moves toward its
  // receiver's new height. Depressions are filled first (sediment), each node a
  // millimetre above its receiver, so rivers cross them and cut their outlets down;
  // the sea floor is left alone.
  Flood f;
  std::vector<double> area;
  const double cellArea = land.cell * land.cell;
  for (int step = 0; step < land.erosionSteps; ++step) {
    flood(g, p.h_, false, 0.0, f);
    drainageArea(f, cellArea, area);
    for (std::uint32_t k : f.order) {
      const std::int32_t r = f.receiver[k];
      if (r < 0) continue;
      const auto rk = static_cast<std::size_t>(r);
      if (!(p.h_[k] > p.h_[rk])) p.h_[k] = p.h_[rk] + 1e-3;
      if (land.hasSea && p.h_[k] <= land.seaLevel) continue;
      const double factor = land.erosion * 1e-3 * dm::sqrt(area[k]) / receiverDistance(g, k, rk, land.cell);
      double lowered = (p.h_[k] + factor * p.h_[rk]) / (1.0 + factor);
      if (land.hasSea && lowered < land.seaLevel) lowered = land.seaLevel;
      p.h_[k] = std::max(lowered, p.h_[rk] + 1e-3);
    }
  }
  for (int j = 0; j < g.nz; ++j) {
    for (int i = 0; i < g.nx; ++i) p.h_[g.at(i, j)] += layers(nodeX(i), nodeZ(j), false);
  }

  // 3. Drainage.
  flood(g, p.h_, land.hasSea, land.seaLevel, f);
  drainageArea(f, cellArea, area);
  p.flags_.assign(n, 0);
  p.lake_.assign(n, kNoLake);
  for (std::size_t k = 0; k < n; ++k) {
    if (f.sea[k]) {
      p.flags_[k] |= kSea;
    } else if (f.filled[k] > p.h_[k] + 1e-6) {
      p.lake_[k] = f.filled[k];
    }
  }
  {  // count lakes: groups of lake nodes joined through neighbours
    std::vector<std::uint8_t> seen(n, 0);
    std::vector<std::size_t> stack;
    for (std::size_t k = 0; k < n; ++k) {
      if (p.lake_[k] == kNoLake || seen[k]) continue;
      ++p.lakes_;
      stack.push_back(k);
      seen[k] = 1;
      while (!stack.empty()) {
        const std::size_t c = stack.back();
        stack.pop_back();
        const int i = static_cast<int>(c % static_cast<std::size_t>(g.nx)), j = static_cast<int>(c / static_cast<std::size_t>(g.nx));
        for (int d = 0; d < 8; ++d) {
          const int a = i + kNbX[d], b = j + kNbZ[d];
          if (a < 0 || b < 0 || a >= g.nx || b >= g.nz) continue;
          const std::size_t o = g.at(a, b);
          if (seen[o] || p.lake_[o] == kNoLake) continue;
          seen[o] = 1;
          stack.push_back(o);
        }
      }
    }
  }

  // 4. Rivers, receivers first so a point's level can be held at or above its
  // receiver's.
  const RiverRules& rr = land.rivers;
  const double minArea = rr.minCatchment * 1e6;
  std::vector<std::int32_t> pointOf(n, -1);
  auto addPoint = [&](std::size_t k) {
    const int i = static_cast<int>(k % static_cast<std::size_t>(g.nx)), j = static_cast<int>(k / static_cast<std::size_t>(g.nx));
    RiverPoint pt;
    pt.at = {p.origin_.x + i * land.cell, p.origin_.z + j * land.cell};
    pt.area = area[k] / 1e6;
    const double s = dm::sqrt(std::max(1.0, area[k] / minArea));
    const double s2 = dm::sqrt(s);
    pt.halfWidth = 0.5 * std::min(rr.width.max, rr.width.min * s);
    pt.depth = std::min(rr.depth.max, rr.depth.min * s2);
    const double sink = std::min(rr.sink.max, rr.sink.min * s2);
    if (p.flags_[k] & kSea) {
      pt.level = land.seaLevel;
    } else if (p.lake_[k] != kNoLake) {
      pt.level = p.lake_[k];
    } else {
      pt.level = f.filled[k] - sink;
      const std::uint64_t key = genHash(seed, GenPurpose::RiverMeander, i, j);
      pt.at.x += genRange(key, -rr.meander, rr.meander) * land.cell;
      pt.at.z += genRange(genMix64(key), -rr.meander, rr.meander) * land.cell;
    }
    const std::int32_t r = f.receiver[k];
    if (r >= 0 && pointOf[static_cast<std::size_t>(r)] >= 0)
      pt.level = std::max(pt.level, p.points_[static_cast<std::size_t>(pointOf[static_cast<std::size_t>(r)])].level);
    pointOf[k] = static_cast<std::int32_t>(p.points_.size());
    p.points_.push_back(pt);
  };
  for (std::uint32_t k : f.order) {
    if ((p.flags_[k] & kSea) || area[k] < minArea) continue;
    p.flags_[k] |= kRiver;
    const std::int32_t r = f.receiver[k];
    if (r >= 0 && pointOf[static_cast<std::size_t>(r)] < 0) addPoint(static_cast<std::size_t>(r));  // a mouth at the sea
    addPoint(k);
    if (r < 0) continue;
    const auto rk = static_cast<std::size_t>(r);
    if (p.lake_[k] != kNoLake && p.lake_[rk] != kNoLake) continue;  // inside a lake: the lake covers it
    p.segments_.push_back({static_cast<std::uint32_t>(pointOf[k]), static_cast<std::uint32_t>(pointOf[rk])});
  }

  // Curves: each segment becomes four along a Catmull-Rom curve through the points
  // before and after it (upstream: the branch draining most), so a river bends
  // smoothly between its plan points. Levels and widths stay linear along it.
  {
    const std::size_t count = p.points_.size();
    std::vector<std::int32_t> mainUp(count, -1), next(count, -1);
    for (const RiverSegment& sg : p.segments_) {
      next[sg.up] = static_cast<std::int32_t>(sg.down);
      const std::int32_t m = mainUp[sg.down];
      if (m < 0 || p.points_[sg.up].area > p.points_[static_cast<std::size_t>(m)].area)
        mainUp[sg.down] = static_cast<std::int32_t>(sg.up);
    }
    std::vector<RiverSegment> curved;
    curved.reserve(p.segments_.size() * 4);
    for (const RiverSegment& sg : p.segments_) {
      const RiverPoint a = p.points_[sg.up], b = p.points_[sg.down];
      const Vec2 before = mainUp[sg.up] >= 0 ? p.points_[static_cast<std::size_t>(mainUp[sg.up])].at : a.at;
      const Vec2 after = next[sg.down] >= 0 ? p.points_[static_cast<std::size_t>(next[sg.down])].at : b.at;
      std::uint32_t prev = sg.up;
      for (int k = 1; k < 4; ++k) {
        const double t = k / 4.0;
        RiverPoint q;
        q.at = {catmullRom(before.x, a.at.x, b.at.x, after.x, t), catmullRom(before.z, a.at.z, b.at.z, after.z, t)};
        q.level = a.level + (b.level - a.level) * t;
        q.halfWidth = a.halfWidth + (b.halfWidth - a.halfWidth) * t;
        q.depth = a.depth + (b.depth - a.depth) * t;
        q.area = a.area;
        p.points_.push_back(q);
        const auto made = static_cast<std::uint32_t>(p.points_.size() - 1);
        curved.push_back({prev, made});
        prev = made;
      }
      curved.push_back({prev, sg.down});
    }
    p.segments_ = std::move(curved);
  }

  // Segments by plan cell (cell (i, j) spans nodes i..i+1, j..j+1): every segment
  // whose channel plus reach may touch the cell.
  {
    std::vector<CellBuckets::Box> boxes;
    for (const RiverSegment& sg : p.segments_) {
      const RiverPoint& a = p.points_[sg.up];
      const RiverPoint& b = p.points_[sg.down];
      boxes.push_back(reachBox(a.at, b.at, std::max(a.halfWidth, b.halfWidth) + kRiverReach));
    }
    p.riverBuckets_ = CellBuckets(boxes, p.origin_, land.cell, g.nx, g.nz);
  }

  // 5. Fields.
  std::vector<std::uint8_t> src(n);
  for (std::size_t k = 0; k < n; ++k) src[k] = (p.flags_[k] & kSea) ? 1 : 0;
  chamfer(g, land.cell, src, p.coastDist_);
  for (std::size_t k = 0; k < n; ++k) src[k] = (p.flags_[k] & kRiver) && p.lake_[k] == kNoLake ? 1 : 0;
  chamfer(g, land.cell, src, p.riverDist_);
  for (std::size_t k = 0; k < n; ++k) src[k] = (p.flags_[k] & (kSea | kRiver)) || p.lake_[k] != kNoLake ? 1 : 0;
  std::vector<float> waterDist;  // metres to the nearest sea, lake or river node
  chamfer(g, land.cell, src, waterDist);
  // Moisture: near water, and where much ground drains through (valleys are wetter
  // than ridges): 1 at water or 4,096 cells of catchment, 0 on a dry ridge.
  p.moisture_.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double near = std::max(0.0, 1.0 - static_cast<double>(waterDist[k]) / land.moistureRange);
    const double wet = std::clamp(dm::log2(area[k] / cellArea) / 12.0, 0.0, 1.0);
    p.moisture_[k] = static_cast<float>(std::max(near, wet));
  }

  // 6. Settlements: the scene's sites first, then the rules': every dry node that
  // passes them gets a score (flatter and nearer a river is better, plus a keyed
  // tenth), best first, each at least a spacing from those already placed.
  const SettlementRules& sr = land.settlements;
  auto settle = [&](int i, int j, const SettlementSite* site) {
    const std::uint64_t key = genHash(seed, GenPurpose::Settlement, i, j, 1);
    Settlement st;
    st.id = static_cast<std::uint32_t>(g.at(i, j));
    st.centre = {p.origin_.x + i * land.cell, p.origin_.z + j * land.cell};
    const std::size_t wall = static_cast<std::size_t>(key % sr.walls.size());
    const std::size_t roof = static_cast<std::size_t>(genMix64(key) % sr.roofs.size());
    st.wall = site && site->wall ? site->wall->id : sr.walls[wall].id;
    st.roof = site && site->roof ? site->roof->id : sr.roofs[roof].id;
    const double span = sr.buildings.max - sr.buildings.min + 1.0;
    st.buildings = static_cast<int>(sr.buildings.min + genUnit(genMix64(key + 1)) * span);
    st.buildings = std::min(st.buildings, static_cast<int>(sr.buildings.max));
    if (site && site->buildings > 0) st.buildings = site->buildings;
    p.settlements_.push_back(st);
  };
  for (const SettlementSite& site : sr.sites) {
    auto nearest = [&](double m, double origin, int nodes) {
      return static_cast<int>(std::clamp<std::int64_t>(floorToInt((m - origin) / land.cell + 0.5), 2, nodes - 3));
    };
    const int i = nearest(site.at.x, p.origin_.x, g.nx), j = nearest(site.at.z, p.origin_.z, g.nz);
    settle(i, j, &site);
  }
  if (sr.count > 0) {
    struct Site {
      double score;
      std::uint32_t node;
    };
    std::vector<Site> sites;
    for (int j = 2; j < g.nz - 2; ++j) {
      for (int i = 2; i < g.nx - 2; ++i) {
        const std::size_t k = g.at(i, j);
        if ((p.flags_[k] & (kSea | kRiver)) || p.lake_[k] != kNoLake) continue;
        const double h = p.h_[k];
        if (h < sr.height.min || h > sr.height.max) continue;
        const double wd = p.riverDist_[k];  // by a river
        if (wd > sr.nearWater) continue;
        double slope = 0.0;
        for (int d = 0; d < 8; ++d) {
          const std::size_t o = g.at(i + kNbX[d], j + kNbZ[d]);
          const double run = (kNbX[d] != 0 && kNbZ[d] != 0) ? land.cell * kSqrt2 : land.cell;
          slope = std::max(slope, std::abs(p.h_[o] - h) / run);
        }
        if (slope > sr.maxSlope) continue;
        const double jitter = genRange(genHash(seed, GenPurpose::Settlement, i, j), 0.0, 0.1);
        sites.push_back({-slope / std::max(sr.maxSlope, 1e-9) - wd / std::max(sr.nearWater, 1.0) + jitter,
                         static_cast<std::uint32_t>(k)});
      }
    }
    std::sort(sites.begin(), sites.end(), [](const Site& a, const Site& b) {
      return a.score != b.score ? a.score > b.score : a.node < b.node;
    });
    const std::size_t total = sr.sites.size() + static_cast<std::size_t>(sr.count);
    for (const Site& site : sites) {
      if (p.settlements_.size() >= total) break;
      const int i = static_cast<int>(site.node % static_cast<std::uint32_t>(g.nx));
      const int j = static_cast<int>(site.node / static_cast<std::uint32_t>(g.nx));
      const Vec2 c{p.origin_.x + i * land.cell, p.origin_.z + j * land.cell};
      bool clear = true;
      for (const Settlement& o : p.settlements_)
        clear = clear && sq(o.centre.x - c.x) + sq(o.centre.z - c.z) >= sq(sr.spacing);
      if (clear) settle(i, j, nullptr);
    }
  }

  {
    std::vector<CellBuckets::Box> boxes;
    const double reach = sr.radius + kSettlementReach;
    for (const Settlement& st : p.settlements_)
      boxes.push_back({st.centre.x - reach, st.centre.z - reach, st.centre.x + reach, st.centre.z + reach});
    p.settlementBuckets_ = CellBuckets(boxes, p.origin_, land.cell, g.nx, g.nz);
  }

  // 7. Roads: a spanning tree of the settlements (Prim's, from the first, shortest
  // link first), each link the cheapest path on the grid.
  p.roadHalfWidth_ = land.roads.width * 0.5;
  const std::size_t towns = p.settlements_.size();
  std::vector<std::pair<std::size_t, std::size_t>> links;
  if (towns > 1) {
    std::vector<std::uint8_t> joined(towns, 0);
    joined[0] = 1;
    for (std::size_t added = 1; added < towns; ++added) {
      double best = 1e300;
      std::pair<std::size_t, std::size_t> link{0, 0};
      for (std::size_t a = 0; a < towns; ++a) {
        if (!joined[a]) continue;
        for (std::size_t b = 0; b < towns; ++b) {
          if (joined[b]) continue;
          const Vec2& u = p.settlements_[a].centre;
          const Vec2& v = p.settlements_[b].centre;
          const double d2 = sq(u.x - v.x) + sq(u.z - v.z);
          if (d2 < best) {
            best = d2;
            link = {a, b};
          }
        }
      }
      joined[link.second] = 1;
      links.push_back(link);
    }
  }
  const double maxGrade = land.roads.maxGrade;
  std::vector<double> cost(n);
  std::vector<std::int32_t> from(n);
  for (const auto& [ta, tb] : links) {
    // A*: step cost = run x (1 + 40 grade^2), steps steeper than three times the
    // maximum grade, into the sea or a lake refused; the heuristic is the straight
    // distance (never more than the cost). Ties by node index.
    const std::uint32_t start = p.settlements_[ta].id, goal = p.settlements_[tb].id;
    const auto nx = static_cast<std::uint32_t>(g.nx);
    const int gi = static_cast<int>(goal % nx), gj = static_cast<int>(goal / nx);
    std::fill(cost.begin(), cost.end(), 1e300);
    std::fill(from.begin(), from.end(), -1);
    std::priority_queue<FloodEntry, std::vector<FloodEntry>, std::greater<FloodEntry>> open;
    cost[start] = 0.0;
    open.push({0.0, start});
    while (!open.empty()) {
      const FloodEntry e = open.top();
      open.pop();
      if (e.node == goal) break;
      const int i = static_cast<int>(e.node % nx), j = static_cast<int>(e.node / nx);
      const double here = cost[e.node];
      if (e.key > here + dm::sqrt(sq((gi - i) * land.cell) + sq((gj - j) * land.cell)) + 1e-6) continue;  // stale
      for (int d = 0; d < 8; ++d) {
        const int a = i + kNbX[d], b = j + kNbZ[d];
        if (a < 1 || b < 1 || a >= g.nx - 1 || b >= g.nz - 1) continue;
        const std::size_t k = g.at(a, b);
        if ((p.flags_[k] & kSea) || p.lake_[k] != kNoLake) continue;
        const double run = (kNbX[d] != 0 && kNbZ[d] != 0) ? land.cell * kSqrt2 : land.cell;
        const double grade = std::abs(p.h_[k] - p.h_[e.node]) / run;
        if (grade > 3.0 * maxGrade) continue;
        const double c = here + run * (1.0 + 40.0 * grade * grade);
        if (!(c < cost[k])) continue;
        cost[k] = c;
        from[k] = static_cast<std::int32_t>(e.node);
        open.push({c + dm::sqrt(sq((gi - a) * land.cell) + sq((gj - b) * land.cell)), static_cast<std::uint32_t>(k)});
      }
    }
    if (from[goal] < 0) continue;  // no way: the settlements stay apart
    std::vector<std::uint32_t> path;
    for (std::int32_t k = static_cast<std::int32_t>(goal); k >= 0; k = from[static_cast<std::size_t>(k)])
      path.push_back(static_cast<std::uint32_t>(k));
    std::reverse(path.begin(), path.end());
    // The profile: the plan's heights, then a pass each way holding every step to the
    // grade (the backward pass alone guarantees it; the forward one spreads the cuts).
    std::vector<double> level(path.size());
    std::vector<Vec2> at(path.size());
    for (std::size_t q = 0; q < path.size(); ++q) {
      const int i = static_cast<int>(path[q] % nx), j = static_cast<int>(path[q] / nx);
      at[q] = {p.origin_.x + i * land.cell, p.origin_.z + j * land.cell};
      level[q] = p.h_[path[q]];
    }
    auto step = [&](std::size_t q, std::size_t r) {
      const double run = dm::sqrt(sq(at[q].x - at[r].x) + sq(at[q].z - at[r].z));
      level[q] = std::clamp(level[q], level[r] - maxGrade * run, level[r] + maxGrade * run);
    };
    for (std::size_t q = 1; q < path.size(); ++q) step(q, q - 1);
    for (std::size_t q = path.size() - 1; q-- > 0;) step(q, q + 1);
    // Points along a Catmull-Rom curve through the path's nodes, four per step.
    const std::size_t first = p.roadPoints_.size();
    std::uint32_t prev = static_cast<std::uint32_t>(first);
    p.roadPoints_.push_back({at[0], level[0]});
    for (std::size_t q = 0; q + 1 < path.size(); ++q) {
      const Vec2 before = at[q > 0 ? q - 1 : q], after = at[q + 2 < path.size() ? q + 2 : q + 1];
      for (int k = 1; k <= 4; ++k) {
        const double t = k / 4.0;
        RoadPoint rp;
        rp.at = k == 4 ? at[q + 1]
                       : Vec2{catmullRom(before.x, at[q].x, at[q + 1].x, after.x, t),
                              catmullRom(before.z, at[q].z, at[q + 1].z, after.z, t)};
        rp.level = level[q] + (level[q + 1] - level[q]) * t;
        p.roadPoints_.push_back(rp);
        const auto made = static_cast<std::uint32_t>(p.roadPoints_.size() - 1);
        p.roadSegments_.push_back({prev, made});
        prev = made;
      }
    }
    // The curve's pieces are not all a quarter of their step: hold the grade again
    // over them, from the far end back.
    for (std::size_t q = p.roadPoints_.size() - 1; q > first; --q) {
      RoadPoint& a = p.roadPoints_[q - 1];
      const RoadPoint& b = p.roadPoints_[q];
      const double run = dm::sqrt(sq(a.at.x - b.at.x) + sq(a.at.z - b.at.z));
      a.level = std::clamp(a.level, b.level - maxGrade * run, b.level + maxGrade * run);
    }
  }
  {
    std::vector<CellBuckets::Box> boxes;
    for (const RoadSegment& sg : p.roadSegments_)
      boxes.push_back(reachBox(p.roadPoints_[sg.a].at, p.roadPoints_[sg.b].at, p.roadHalfWidth_ + kRoadReach));
    p.roadBuckets_ = CellBuckets(boxes, p.origin_, land.cell, g.nx, g.nz);
  }
  return plan;
}

double LandscapePlan::height(double x, double z) const noexcept {
  const double u = (x - origin_.x) / cell_, v = (z - origin_.z) / cell_;
  const auto i = static_cast<int>(floorToInt(u)), j = static_cast<int>(floorToInt(v));
  const double fx = u - i, fz = v - j;
  double row[4];
  for (int b = 0; b < 4; ++b) {
    row[b] = catmullRom(h_[index(i - 1, j - 1 + b)], h_[index(i, j - 1 + b)], h_[index(i + 1, j - 1 + b)],
                        h_[index(i + 2, j - 1 + b)], fx);
  }
  return catmullRom(row[0], row[1], row[2], row[3], fz);
}

LandscapePlan::Fields LandscapePlan::fields(double x, double z) const noexcept {
  const double u = (x - origin_.x) / cell_, v = (z - origin_.z) / cell_;
  const auto i = static_cast<int>(floorToInt(u)), j = static_cast<int>(floorToInt(v));
  const double fx = u - i, fz = v - j;
  const std::size_t k00 = index(i, j), k10 = index(i + 1, j), k01 = index(i, j + 1), k11 = index(i + 1, j + 1);
  auto at = [&](const std::vector<float>& f) {
    const double a = f[k00] + (f[k10] - f[k00]) * fx;
    const double b = f[k01] + (f[k11] - f[k01]) * fx;
    return a + (b - a) * fz;
  };
  return {std::clamp(at(moisture_), 0.0, 1.0), at(coastDist_), at(riverDist_)};
}

RiverHit LandscapePlan::nearestRiver(double x, double z) const noexcept {
  RiverHit best;
  double bestEdge = 1e300;
  for (const std::uint32_t si : riverBuckets_.at(x, z)) {
    const RiverSegment& s = segments_[si];
    const RiverPoint& a = points_[s.up];
    const RiverPoint& e = points_[s.down];
    const auto [t, d] = nearestOnSegment(a.at, e.at, x, z);
    const double hw = a.halfWidth + (e.halfWidth - a.halfWidth) * t;
    const double edge = d - hw;
    if (edge >= kRiverReach || !(edge < bestEdge)) continue;
    bestEdge = edge;
    best.found = true;
    best.distance = d;
    best.halfWidth = hw;
    best.level = a.level + (e.level - a.level) * t;
    best.depth = a.depth + (e.depth - a.depth) * t;
  }
  return best;
}

double LandscapePlan::settlementDistance(double x, double z, double far) const noexcept {
  double best = far;
  for (const std::uint32_t si : settlementBuckets_.at(x, z)) {
    const Vec2 c = settlements_[si].centre;
    best = std::min(best, dm::sqrt(sq(x - c.x) + sq(z - c.z)));
  }
  return best;
}

RoadHit LandscapePlan::nearestRoad(double x, double z) const noexcept {
  RoadHit best;
  double bestD = roadHalfWidth_ + kRoadReach;
  for (const std::uint32_t si : roadBuckets_.at(x, z)) {
    const RoadSegment& s = roadSegments_[si];
    const RoadPoint& a = roadPoints_[s.a];
    const RoadPoint& e = roadPoints_[s.b];
    const auto [t, d] = nearestOnSegment(a.at, e.at, x, z);
    if (!(d < bestD)) continue;
    bestD = d;
    best.found = true;
    best.distance = d;
    best.level = a.level + (e.level - a.level) * t;
  }
  return best;
}

bool LandscapePlan::standingWater(double x, double z, double& level, bool& sea, double& depth) const noexcept {
  const double u = (x - origin_.x) / cell_, v = (z - origin_.z) / cell_;
  const auto i = static_cast<int>(floorToInt(u));
  const auto j = static_cast<int>(floorToInt(v));
  const double fx = u - i, fz = v - j;
  const double weight[2][2] = {{(1 - fx) * (1 - fz), fx * (1 - fz)}, {(1 - fx) * fz, fx * fz}};
  bool any = false;
  depth = 0.0;
  for (int b = 0; b < 2; ++b) {
    for (int a = 0; a < 2; ++a) {
      const std::size_t k = index(i + a, j + b);
      double l;
      bool s = false;
      if (flags_[k] & kSea) {
        l = seaLevel_;
        s = true;
      } else if (lake_[k] != kNoLake) {
        l = lake_[k];
      } else {
        continue;
      }
      if (!any || l > level) {
        level = l;
        sea = s;
      }
      depth += weight[b][a];
      any = true;
    }
  }
  return any;
}

namespace {

/// The plan's inputs, hashed: bounds, the landscape's every value, the seed.
std::uint64_t planKey(const Scene& scene, std::uint64_t seed) {
  std::uint64_t h = genMix64(seed ^ 0x506c616e4b657931ull);
  auto num = [&](double v) { h = genCombine(h, std::bit_cast<std::uint64_t>(v)); };
  auto word = [&](std::int64_t v) { h = genCombine(h, static_cast<std::uint64_t>(v)); };
  const WorldBounds& wb = scene.worldBounds;
  for (std::int32_t v : {wb.minBrick.x, wb.minBrick.y, wb.minBrick.z, wb.maxBrick.x, wb.maxBrick.y, wb.maxBrick.z}) word(v);
  const Landscape& l = *scene.landscape;
  for (double v : {l.cell, l.baseHeight, l.seaLevel, l.seaFloor, l.coastMargin, l.erosion, l.moistureRange}) num(v);
  word(l.hasSea);
  word(l.erosionSteps);
  for (const NoiseLayer& nl : l.layers) {
    for (double v : {nl.wavelength, nl.amplitude, nl.octaves.lacunarity, nl.octaves.gain, nl.offset.x, nl.offset.z}) num(v);
    word(nl.octaves.count);
    word(nl.ridged);
    word(nl.erode);
  }
  const RiverRules& r = l.rivers;
  for (double v : {r.minCatchment, r.width.min, r.width.max, r.depth.min, r.depth.max, r.sink.min, r.sink.max, r.meander})
    num(v);
  const SettlementRules& t = l.settlements;
  for (const SettlementSite& site : t.sites) {
    for (double v : {site.at.x, site.at.z}) num(v);
    word(site.buildings);
    word(site.wall ? site.wall->id : kAir);
    word(site.roof ? site.roof->id : kAir);
  }
  word(t.count);
  for (double v : {t.spacing, t.radius, t.buildings.min, t.buildings.max, t.height.min, t.height.max, t.maxSlope,
                   t.nearWater})
    num(v);
  for (const MaterialRef& m : t.walls) word(m.id);
  for (const MaterialRef& m : t.roofs) word(m.id);
  num(l.roads.width);
  num(l.roads.maxGrade);
  return h;
}

}  // namespace

std::shared_ptr<const LandscapePlan> landscapePlan(const Scene& scene, std::uint64_t seed) {
  if (!scene.landscape) return nullptr;
  struct Entry {
    std::uint64_t key;
    std::shared_ptr<const LandscapePlan> plan;
  };
  static std::mutex mutex;
  static std::vector<Entry> cache;  // most recently used last
  const std::uint64_t key = planKey(scene, seed);
  // Held while building: two threads asking for one plan build it once.
  std::lock_guard<std::mutex> lock(mutex);
  for (std::size_t i = 0; i < cache.size(); ++i) {
    if (cache[i].key != key) continue;
    Entry e = cache[i];
    cache.erase(cache.begin() + static_cast<std::ptrdiff_t>(i));
    cache.push_back(e);
    return e.plan;
  }
  std::shared_ptr<const LandscapePlan> plan = LandscapePlan::build(scene, seed);
  if (cache.size() >= 4) cache.erase(cache.begin());
  cache.push_back({key, plan});
  return plan;
}

}  // namespace loam::sim
