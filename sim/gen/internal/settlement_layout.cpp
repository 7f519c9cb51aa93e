#include "sim/gen/internal/settlement_layout.h"

#include <algorithm>
#include <cmath>

#include "sim/gen/gen_random.h"
#include "sim/gen/internal/world_field.h"

namespace loam::sim::internal {
namespace {

constexpr double kLot = 16.0;  // metres between lot centres

double sq(double v) { return v * v; }

std::int32_t toVoxel(double m) { return static_cast<std::int32_t>(floorToInt(m * kVoxelsPerMetreD)); }

}  // namespace

std::vector<Building> layoutBuildings(const WorldField& field, const LandscapePlan& plan, const SettlementRules& rules,
                                      std::uint64_t seed) {
  std::vector<Building> out;
  for (const Settlement& s : plan.settlements()) {
    // Lots on a grid around the centre, nearest first (ties by grid position).
    struct Lot {
      double d2;
      int a, b;
    };
    std::vector<Lot> lots;
    const int n = static_cast<int>(rules.radius / kLot);
    for (int b = -n; b <= n; ++b) {
      for (int a = -n; a <= n; ++a) {
        const double d2 = sq(a * kLot) + sq(b * kLot);
        if (d2 <= sq(rules.radius) && (a != 0 || b != 0)) lots.push_back({d2, a, b});  // the centre stays a square
      }
    }
    std::sort(lots.begin(), lots.end(), [](const Lot& l, const Lot& r) {
      return l.d2 != r.d2 ? l.d2 < r.d2 : (l.b != r.b ? l.b < r.b : l.a < r.a);
    });
    int placed = 0;
    for (const Lot& lot : lots) {
      if (placed >= s.buildings) break;
      const std::uint64_t key = genHash(seed, GenPurpose::Settlement, s.id, lot.a, lot.b, 2);
      const double w = 6.0 + genUnit(key) * 4.0, d = 5.0 + genUnit(genMix64(key)) * 3.0;
      const double cx = s.centre.x + lot.a * kLot + genRange(genMix64(key + 1), -1.5, 1.5);
      const double cz = s.centre.z + lot.b * kLot + genRange(genMix64(key + 2), -1.5, 1.5);
      const bool wide = genUnit(genMix64(key + 3)) < 0.5;
      Building bd;
      bd.settlement = s.id;
      bd.x0 = cx - (wide ? w : d) * 0.5;
      bd.x1 = cx + (wide ? w : d) * 0.5;
      bd.z0 = cz - (wide ? d : w) * 0.5;
      bd.z1 = cz + (wide ? d : w) * 0.5;
      bd.ridgeAlongX = bd.x1 - bd.x0 >= bd.z1 - bd.z0;
      bd.storeys = genUnit(genMix64(key + 4)) < 0.35 ? 2 : 1;
      bd.wall = s.wall;
      bd.roof = s.roof;
      // The door faces the centre along the lot's larger offset.
      bd.doorSide = std::abs(lot.a) > std::abs(lot.b) ? (lot.a > 0 ? 2 : 3) : (lot.b > 0 ? 0 : 1);
      // Not in or beside water, not on a steep site: the footprint's corners (and
      // centre) within 2.5 m of height, none near a river or under a lake.
      double lo = 1e300, hi = -1e300;
      bool wet = false;
      const double m = kPadMargin;
      for (const Vec2 p : {Vec2{bd.x0 - m, bd.z0 - m}, Vec2{bd.x1 + m, bd.z0 - m}, Vec2{bd.x0 - m, bd.z1 + m},
                           Vec2{bd.x1 + m, bd.z1 + m}, Vec2{cx, cz}}) {
        const double h = field.smoothHeightAt(toVoxel(p.x), toVoxel(p.z));
        lo = std::min(lo, h);
        hi = std::max(hi, h);
        const RiverHit r = plan.nearestRiver(p.x, p.z);
        if (r.found) wet = true;  // within a river's valley, which the generator cuts down
        if (plan.nearestRoad(p.x, p.z).found) wet = true;  // nor on a road
        double level = 0, depth = 0;
        bool sea = false;
        if (plan.standingWater(p.x, p.z, level, sea, depth) && h < level + 1.0) wet = true;
      }
      if (wet || hi - lo > 2.5) continue;
      // The pad: the footprint's mean height, on a voxel boundary.
      bd.pad = static_cast<double>(voxelFromMetres((lo + hi) * 0.5)) / kVoxelsPerMetreD;
      bool clear = true;  // lots are 16 m apart, but a jittered large footprint may reach a neighbour
      for (const Building& o : out) {
        clear = clear &&
                (bd.x1 + 2 * m <= o.x0 || o.x1 + 2 * m <= bd.x0 || bd.z1 + 2 * m <= o.z0 || o.z1 + 2 * m <= bd.z0);
      }
      if (!clear) continue;
      out.push_back(bd);
      ++placed;
    }
  }
  return out;
}

void buildingStructures(const Building& b, MaterialId plinth, MaterialId glass, std::vector<Structure>& out) {
  auto add = [&](StructureKind kind, MaterialId m, Vec3 from, Vec3 to) {
    Structure s;
    s.kind = kind;
    s.material.id = m;
    s.from = from;
    s.to = to;
    out.push_back(s);
    return &out.back();
  };
  constexpr double kStorey = 3.0, kFloor = 0.2, kWall = 0.3;
  const double top = b.pad + kFloor + kStorey * b.storeys;
  // A plinth from a metre below the pad to the floor: never floating where the
  // levelled ground blends away.
  add(StructureKind::Floor, plinth, {b.x0, b.pad - 1.0, b.z0}, {b.x1, b.pad + kFloor, b.z1});
  add(StructureKind::Wall, b.wall, {b.x0, b.pad + kFloor, b.z0}, {b.x1, top, b.z1});
  add(StructureKind::Doorway, kAir, {b.x0 + kWall, b.pad + kFloor, b.z0 + kWall},
      {b.x1 - kWall, top - kFloor, b.z1 - kWall});
  for (int s = 1; s < b.storeys; ++s) {
    const double y = b.pad + kFloor + kStorey * s;
    add(StructureKind::Floor, b.wall, {b.x0, y - kFloor, b.z0}, {b.x1, y, b.z1});
  }
  // The door: 1.2 m wide, 2.2 m high, in the middle of its wall.
  const double mx = (b.x0 + b.x1) * 0.5, mz = (b.z0 + b.z1) * 0.5, y0 = b.pad + kFloor;
  switch (b.doorSide) {
    case 0: add(StructureKind::Doorway, kAir, {mx - 0.6, y0, b.z0}, {mx + 0.6, y0 + 2.2, b.z0 + kWall}); break;
    case 1: add(StructureKind::Doorway, kAir, {mx - 0.6, y0, b.z1 - kWall}, {mx + 0.6, y0 + 2.2, b.z1}); break;
    case 2: add(StructureKind::Doorway, kAir, {b.x0, y0, mz - 0.6}, {b.x0 + kWall, y0 + 2.2, mz + 0.6}); break;
    default: add(StructureKind::Doorway, kAir, {b.x1 - kWall, y0, mz - 0.6}, {b.x1, y0 + 2.2, mz + 0.6}); break;
  }
  // Windows a metre square, 1.1 m above each storey's floor, on every wall side but the
  // door's middle, a window every 2.5 m of wall.
  for (int s = 0; s < b.storeys; ++s) {
    const double wy = b.pad + kFloor + kStorey * s + 1.1;
    for (double x = b.x0 + 1.5; x + 1.0 <= b.x1 - 1.0; x += 2.5) {
      const bool door = std::abs(x + 0.5 - mx) < 1.2 && s == 0;
      if (!(door && b.doorSide == 0))
        add(StructureKind::Window, glass, {x, wy, b.z0}, {x + 1.0, wy + 1.0, b.z0 + kWall});
      if (!(door && b.doorSide == 1))
        add(StructureKind::Window, glass, {x, wy, b.z1 - kWall}, {x + 1.0, wy + 1.0, b.z1});
    }
    for (double z = b.z0 + 1.5; z + 1.0 <= b.z1 - 1.0; z += 2.5) {
      const bool door = std::abs(z + 0.5 - mz) < 1.2 && s == 0;
      if (!(door && b.doorSide == 2))
        add(StructureKind::Window, glass, {b.x0, wy, z}, {b.x0 + kWall, wy + 1.0, z + 1.0});
      if (!(door && b.doorSide == 3))
        add(StructureKind::Window, glass, {b.x1 - kWall, wy, z}, {b.x1, wy + 1.0, z + 1.0});
    }
  }
  // A gable roof over eaves 40 cm wide, pitched 0.6 along the longer side.
  const double span = b.ridgeAlongX ? b.z1 - b.z0 : b.x1 - b.x0;
  Structure* roof = add(StructureKind::Roof, b.roof, {b.x0 - 0.4, top, b.z0 - 0.4},
                        {b.x1 + 0.4, top + 0.6 * (span * 0.5 + 0.4), b.z1 + 0.4});
  roof->pitch = 0.6;
  roof->ridgeAlongX = b.ridgeAlongX;
  roof->thickness = 0.3;
}

}  // namespace loam::sim::internal
