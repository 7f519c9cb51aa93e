// Scene tables: each table of a scene document (terrain, biomes, scatter,
// structures, tunnels, water, placements, weather, time) read into its part of the
// Scene, with the value ranges and the checks across values (bounds, world size,
// generator version). The Reader is in sim/gen/internal/scene_reader.h.
#include <algorithm>
#include <cmath>
#include <string>

#include "sim/gen/generator_version.h"
#include "sim/gen/internal/scene_reader.h"

namespace loam::sim::internal::scene_toml {

namespace {

constexpr double kBig = 1e5;  // metres: any coordinate or length in a scene

Octaves readOctaves(Reader& r) {
  Octaves o;
  o.count = static_cast<int>(r.integer("octaves", 1, 1, 12));
  o.lacunarity = r.num("lacunarity", 2.0, 1.0, 4.0);
  o.gain = r.num("gain", 0.5, 0.0, 1.0);
  return o;
}

NoiseLayer readNoiseLayer(Reader& l) {
  NoiseLayer layer;
  layer.wavelength = l.reqNum("wavelength", 0.5, 65536.0);
  layer.amplitude = l.reqNum("amplitude", -kMaxSceneHeight, kMaxSceneHeight);
  layer.octaves = readOctaves(l);
  layer.ridged = l.boolean("ridged", false);
  layer.offset = l.vec2Or("offset", {}, kBig);
  l.finish();
  return layer;
}

void readTerrain(Reader& r, Terrain& t) {
  t.baseHeight = r.num("base_height", 0.0, -kMaxSceneHeight, kMaxSceneHeight);
  t.surface = r.material("surface", "grass");
  t.surfaceDepth = r.num("surface_depth", 0.1, 0.0, 16.0);
  t.subsurface = r.material("subsurface", "soil");
  t.subsurfaceDepth = r.num("subsurface_depth", 1.0, 0.0, 64.0);
  t.deep = r.material("deep", "stone");
  if (auto b = r.sub("beach")) {
    Beach beach;
    beach.material = b->reqMaterial("material");
    beach.maxHeight = b->reqNum("max_height", -kMaxSceneHeight, kMaxSceneHeight);
    b->finish();
    t.beach = beach;
  }
  for (Reader& l : r.tables("layer", 16)) t.layers.push_back(readNoiseLayer(l));
  for (Reader& b : r.tables("basin", 256)) {
    Basin basin;
    basin.center = b.vec2("center", kBig);
    basin.radius = b.reqNum("radius", 0.1, 4096.0);
    basin.depth = b.reqNum("depth", -kMaxSceneHeight, kMaxSceneHeight);
    b.finish();
    t.basins.push_back(basin);
  }
  for (Reader& p : r.tables("plateau", 256)) {
    Plateau pl;
    pl.center = p.vec2("center", kBig);
    pl.radius = p.reqNum("radius", 0.1, 4096.0);
    pl.height = p.reqNum("height", -kMaxSceneHeight, kMaxSceneHeight);
    pl.falloff = p.num("falloff", 4.0, 0.05, 1024.0);
    p.finish();
    t.plateaus.push_back(pl);
  }
  r.finish();
}

void readLandscape(Reader& r, Landscape& l) {
  l.cell = r.num("cell", 32.0, 8.0, 512.0);
  l.baseHeight = r.num("base_height", 40.0, -kMaxSceneHeight, kMaxSceneHeight);
  for (Reader& n : r.tables("layer", 16)) {
    const bool erode = n.boolean("erode", true);
    l.layers.push_back(readNoiseLayer(n));
    l.layers.back().erode = erode;
  }
  if (auto sea = r.optNum("sea_level", -kMaxSceneHeight, kMaxSceneHeight)) {
    l.hasSea = true;
    l.seaLevel = *sea;
  }
  l.seaFloor = r.num("sea_floor", -30.0, -kMaxSceneHeight, kMaxSceneHeight);
  l.coastMargin = r.num("coast_margin", 0.0, 0.0, kBig);
  l.erosionSteps = static_cast<int>(r.integer("erosion_steps", 0, 0, 200));
  l.erosion = r.num("erosion", 1.0, 0.0, 100.0);
  l.moistureRange = r.num("moisture_range", 300.0, 1.0, kBig);
  l.lakeDepth = r.num("lake_depth", 3.0, 0.0, 100.0);
  l.seaFloorMaterial = r.material("sea_floor_material", "sand");
  toml::table blank;
  auto rivers = r.sub("rivers");
  Reader rr = rivers ? *rivers : Reader(blank, r.keyPath("rivers"), r.ctx());
  RiverRules& v = l.rivers;
  v.minCatchment = rr.num("min_catchment", 2.0, 0.001, 1e6);
  v.width = rr.range("width", v.width, 0.2, 400.0);
  v.depth = rr.range("depth", v.depth, 0.05, 40.0);
  v.sink = rr.range("sink", v.sink, 0.0, 40.0);
  v.meander = rr.num("meander", 0.3, 0.0, 0.45);
  v.valleySlope = rr.num("valley_slope", 0.35, 0.05, 10.0);
  v.water = rr.material("water", "water");
  v.bed = rr.optMaterial("bed");
  v.shoreMaterial = rr.optMaterial("shore");
  v.shoreWidth = rr.num("shore_width", 2.0, 0.0, 64.0);
  rr.finish();
  auto settlements = r.sub("settlements");
  Reader sr = settlements ? *settlements : Reader(blank, r.keyPath("settlements"), r.ctx());
  SettlementRules& t = l.settlements;
  for (Reader& n : sr.tables("site", 64)) {
    SettlementSite site;
    site.at = n.vec2("at", kBig);
    site.buildings = static_cast<int>(n.integer("buildings", 0, 0, 200));
    site.wall = n.optMaterial("wall");
    site.roof = n.optMaterial("roof");
    for (const SettlementSite& o : t.sites) {
      if (std::abs(o.at.x - site.at.x) < l.cell && std::abs(o.at.z - site.at.z) < l.cell)
        n.failHere("settlement sites closer than a plan cell (landscape.cell) would share a node");
    }
    n.finish();
    t.sites.push_back(site);
  }
  t.count = static_cast<int>(sr.integer("count", 0, 0, 64));
  t.spacing = sr.num("spacing", 2000.0, 100.0, kBig);
  t.radius = sr.num("radius", 70.0, 10.0, 500.0);
  t.buildings = sr.range("buildings", t.buildings, 1.0, 200.0);
  t.height = sr.range("height", t.height, -kMaxSceneHeight, kMaxSceneHeight);
  t.maxSlope = sr.num("max_slope", 0.12, 0.0, 10.0);
  t.nearWater = sr.num("near_water", 250.0, 0.0, kBig);
  auto materials = [&](std::string_view key, std::initializer_list<const char*> defaults) {
    std::vector<MaterialRef> out;
    const std::vector<std::string> names = sr.strings(key, 16);  // checks the type
    const toml::node* node = sr.table().get(key);
    if (node && !names.empty()) {
      const toml::array& arr = *node->as_array();
      for (std::size_t i = 0; i < arr.size(); ++i) out.push_back(sr.materialFromNode(*arr.get(i), key));
    } else {
      for (const char* n : defaults) {
        MaterialRef ref;
        ref.name = n;
        if (sr.ctx().materials) ref.id = sr.ctx().materials->find(n).value_or(kAir);
        out.push_back(ref);
      }
    }
    return out;
  };
  t.walls = materials("walls", {"planks", "brick", "cobble"});
  t.roofs = materials("roofs", {"planks", "wood"});
  sr.finish();
  auto roads = r.sub("roads");
  Reader rd = roads ? *roads : Reader(blank, r.keyPath("roads"), r.ctx());
  l.roads.width = rd.num("width", 4.0, 1.0, 32.0);
  l.roads.maxGrade = rd.num("max_grade", 0.08, 0.01, 1.0);
  l.roads.material = rd.material("material", "gravel");
  rd.finish();
  r.finish();
}

void readBiomes(Reader& root, Scene& s) {
  for (Reader& r : root.tables("biome", 16)) {
    Biome b;
    b.name = r.name("name", "");
    if (b.name.empty()) r.missing("name");
    for (const Biome& o : s.biomes) {
      if (o.name == b.name) r.fail(*r.table().get("name"), "name", "duplicate biome name '" + b.name + "'");
    }
    if (auto n = r.sub("noise")) {
      b.useNoise = true;
      b.noiseWavelength = n->reqNum("wavelength", 0.5, 8192.0);
      b.noiseOctaves = readOctaves(*n);
      b.noiseRange.min = n->num("min", -1.0, -1.0, 1.0);
      b.noiseRange.max = n->num("max", 1.0, -1.0, 1.0);
      if (b.noiseRange.min > b.noiseRange.max) n->failHere("min is above max");
      n->finish();
    }
    b.height = r.range("height", b.height, -kBig, kBig);
    b.slope = r.range("slope", b.slope, 0.0, kBig);
    b.aspect = r.wrappedRange("aspect", b.aspect, 0.0, 360.0);
    b.moisture = r.range("moisture", b.moisture, 0.0, 1.0);
    b.riverDistance = r.range("river_distance", b.riverDistance, 0.0, kBig);
    b.coastDistance = r.range("coast_distance", b.coastDistance, 0.0, kBig);
    b.roadDistance = r.range("road_distance", b.roadDistance, 0.0, kBig);
    b.settlementDistance = r.range("settlement_distance", b.settlementDistance, 0.0, kBig);
    b.edge = r.num("edge", 0.0, 0.0, kBig);
    b.inside = r.circles("inside");
    b.outside = r.circles("outside");
    b.surface = r.optMaterial("surface");
    r.finish();
    s.biomes.push_back(std::move(b));
  }
}

void readScatter(Reader& root, Scene& s) {
  int index = 0;
  for (Reader& r : root.tables("scatter", 64)) {
    ScatterRule rule;
    rule.name = r.name("name", "");
    if (rule.name.empty()) rule.name = "scatter" + std::to_string(index);
    rule.kind = static_cast<ScatterKind>(r.choice("kind", -1, {"tree", "bush", "rock", "grass"}));
    rule.spacing = r.reqNum("spacing", 0.25, 256.0);
    rule.jitter = r.num("jitter", 0.8, 0.0, 1.0);
    rule.density = r.num("density", 1.0, 0.0, 1.0);
    rule.biomes = r.strings("biomes", 64);
    if (!rule.biomes.empty()) {
      const toml::node* bn = r.table().get("biomes");
      size_t i = 0;
      for (const std::string& name : rule.biomes) {
        auto it = std::find_if(s.biomes.begin(), s.biomes.end(), [&](const Biome& b) { return b.name == name; });
        if (it == s.biomes.end()) {
          r.fail(*bn->as_array()->get(i), "biomes", "unknown biome '" + name + "'");
        }
        rule.biomeIndices.push_back(static_cast<int>(it - s.biomes.begin()));
        ++i;
      }
    }
    rule.maxSlope = r.num("max_slope", 10.0, 0.0, 100.0);
    rule.height = r.range("height", rule.height, -kBig, kBig);
    rule.inside = r.circles("inside");
    rule.exclude = r.circles("exclude");
    rule.allowInWater = r.boolean("allow_in_water", false);
    rule.scale = r.range("scale", rule.scale, 0.1, 10.0);
    if (rule.kind == ScatterKind::Tree || rule.kind == ScatterKind::Rock)
      rule.tilt = r.range("tilt", rule.tilt, 0.0, 45.0);
    switch (rule.kind) {
      case ScatterKind::Tree:
        rule.material = r.material("trunk_material", "wood");
        rule.leafMaterial = r.material("leaf_material", "leaves");
        rule.trunkHeight = r.range("trunk_height", {5.0, 8.0}, 0.5, 40.0);
        rule.trunkRadius = r.range("trunk_radius", {0.2, 0.3}, 0.05, 3.0);
        rule.radius = r.range("canopy_radius", {1.5, 2.5}, 0.2, 12.0);
        rule.clusters = r.range("clusters", {3.0, 5.0}, 1.0, 16.0);
        rule.spread = r.num("spread", 1.5, 0.0, 12.0);
        rule.leafFill = r.num("leaf_fill", 0.85, 0.0, 1.0);
        break;
      case ScatterKind::Bush:
        rule.material = r.material("material", "leaves");
        rule.radius = r.range("radius", {0.4, 0.8}, 0.1, 6.0);
        rule.clusters = r.range("clusters", {1.0, 3.0}, 1.0, 16.0);
        rule.spread = r.num("spread", 0.5, 0.0, 6.0);
        rule.leafFill = r.num("leaf_fill", 0.85, 0.0, 1.0);
        break;
      case ScatterKind::Rock:
        rule.material = r.material("material", "rock");
        rule.radius = r.range("radius", {0.5, 1.2}, 0.1, 16.0);
        rule.squash = r.range("squash", {0.5, 0.8}, 0.1, 2.0);
        rule.sink = r.num("sink", 0.3, 0.0, 0.9);
        rule.stretch = r.range("stretch", rule.stretch, 1.0, 4.0);
        break;
      case ScatterKind::Grass:
        rule.material = r.material("material", "grass");
        rule.radius = r.range("radius", {0.5, 1.0}, 0.1, 8.0);
        rule.bladeHeight = r.range("blade_height", {0.1, 0.3}, 0.05, 2.0);
        rule.fill = r.num("fill", 0.5, 0.0, 1.0);
        break;
    }
    for (double c : {rule.clusters.min, rule.clusters.max}) {
      if (c != static_cast<double>(static_cast<int>(c))) {
        r.fail(*r.table().get("clusters"), "clusters", "cluster counts must be whole numbers");
      }
    }
    r.finish();
    s.scatter.push_back(std::move(rule));
    ++index;
  }
}

void normaliseBox(Vec3& a, Vec3& b) {
  if (a.x > b.x) std::swap(a.x, b.x);
  if (a.y > b.y) std::swap(a.y, b.y);
  if (a.z > b.z) std::swap(a.z, b.z);
}

void readStructures(Reader& root, Scene& s) {
  for (Reader& r : root.tables("structure", 4096)) {
    Structure st;
    st.name = r.name("name", "");
    st.kind = static_cast<StructureKind>(
        r.choice("kind", -1, {"box", "wall", "floor", "roof", "arch", "doorway", "window", "cylinder"}));
    switch (st.kind) {
      case StructureKind::Box:
      case StructureKind::Wall:
      case StructureKind::Floor:
      case StructureKind::Roof:
        st.material = r.reqMaterial("material");
        break;
      case StructureKind::Arch:
      case StructureKind::Doorway:
        st.material = r.material("material", "air");
        break;
      case StructureKind::Window:
        st.material = r.material("material", "glass");
        break;
      case StructureKind::Cylinder:
        st.material = r.reqMaterial("material");
        break;
    }
    if (st.kind == StructureKind::Cylinder) {
      st.center = r.vec3("center", kBig);
      st.radius = r.reqNum("radius", 0.05, 256.0);
      st.innerRadius = r.num("inner_radius", 0.0, 0.0, 256.0);
      if (st.innerRadius >= st.radius) {
        r.fail(*r.table().get("inner_radius"), "inner_radius", "must be smaller than radius");
      }
      st.height = r.reqNum("height", 0.05, kMaxSceneHeight);
      st.innerMaterial = r.optMaterial("inner_material");
    } else {
      st.from = r.vec3("from", kBig);
      st.to = r.vec3("to", kBig);
      normaliseBox(st.from, st.to);
      if (st.kind == StructureKind::Roof) {
        st.pitch = r.num("pitch", 0.5, 0.0, 4.0);
        st.ridgeAlongX = r.choice("ridge", 0, {"x", "z"}) == 0;
        st.thickness = r.num("thickness", 0.3, 0.05, 8.0);
      }
    }
    r.finish();
    s.structures.push_back(std::move(st));
  }
}

void readTunnels(Reader& root, Scene& s) {
  for (Reader& r : root.tables("tunnel", 256)) {
    Tunnel t;
    t.name = r.name("name", "");
    t.kind = static_cast<TunnelKind>(r.choice("kind", 0, {"tunnel", "cave"}));
    const toml::node* pn = r.get("points");
    if (!pn) r.missing("points");
    auto arr = pn->as_array();
    if (!arr) r.fail(*pn, "points", "expected an array of [x, y, z] points, found " + std::string(typeName(*pn)));
    if (arr->size() < 2 || arr->size() > 256) r.fail(*pn, "points", "expected 2 to 256 points");
    for (const toml::node& e : *arr) {
      auto v = r.numbers(e, "points", 3, 3, -kBig, kBig);
      t.points.push_back({v[0], v[1], v[2]});
    }
    t.radius = r.reqNum("radius", 0.2, 32.0);
    t.roughness = t.kind == TunnelKind::Cave ? r.num("roughness", 0.3, 0.0, 0.8) : 0.0;
    r.finish();
    s.tunnels.push_back(std::move(t));
  }
}

void readWater(Reader& root, Scene& s) {
  for (Reader& r : root.tables("water_source", 256)) {
    WaterSource w;
    w.name = r.name("name", "");
    w.kind = static_cast<WaterSourceKind>(r.choice("kind", -1, {"spring", "waterfall"}));
    w.position = r.vec3("position", kBig);
    w.flowRate = r.reqNum("flow_rate", 0.0, 100000.0);
    w.width = r.num("width", 1.0, 0.05, 64.0);
    r.finish();
    s.waterSources.push_back(std::move(w));
  }
  for (Reader& r : root.tables("pond", 256)) {
    Pond p;
    p.name = r.name("name", "");
    p.center = r.vec2("center", kBig);
    p.radius = r.reqNum("radius", 0.5, 1024.0);
    p.depth = r.reqNum("depth", 0.05, 64.0);
    if (auto lv = r.optNum("level", -kMaxSceneHeight, kMaxSceneHeight)) {
      p.hasLevel = true;
      p.level = *lv;
    }
    if (r.table().get("level") && r.table().get("level_offset")) {
      r.fail(*r.table().get("level_offset"), "level_offset", "give either level or level_offset, not both");
    }
    p.levelOffset = r.num("level_offset", -0.2, -64.0, 64.0);
    p.water = r.material("water", "water");
    p.shoreMaterial = r.optMaterial("shore_material");
    p.shoreWidth = r.num("shore_width", 1.0, 0.0, 64.0);
    r.finish();
    s.ponds.push_back(std::move(p));
  }
  for (Reader& r : root.tables("stream", 256)) {
    Stream st;
    st.name = r.name("name", "");
    const toml::node* pn = r.get("points");
    if (!pn) r.missing("points");
    auto arr = pn->as_array();
    if (!arr) r.fail(*pn, "points", "expected an array of [x, z] points, found " + std::string(typeName(*pn)));
    if (arr->size() < 2 || arr->size() > 256) r.fail(*pn, "points", "expected 2 to 256 points");
    for (const toml::node& e : *arr) {
      auto v = r.numbers(e, "points", 2, 2, -kBig, kBig);
      st.points.push_back({v[0], v[1]});
    }
    st.width = r.reqNum("width", 0.2, 64.0);
    st.depth = r.reqNum("depth", 0.05, 16.0);
    st.sink = r.num("sink", 0.3, 0.0, 16.0);
    st.water = r.material("water", "water");
    st.shoreMaterial = r.optMaterial("shore_material");
    st.shoreWidth = r.num("shore_width", 0.6, 0.0, 16.0);
    r.finish();
    s.streams.push_back(std::move(st));
  }
}

void readPlacements(Reader& root, Scene& s) {
  for (Reader& r : root.tables("spawn", 256)) {
    SpawnPoint p;
    p.name = r.name("name", "");
    std::tie(p.position, p.onGround) = r.point("position");
    p.yaw = r.num("yaw", 0.0, -360.0, 360.0);
    r.finish();
    s.spawns.push_back(std::move(p));
  }
  for (Reader& r : root.tables("den", 256)) {
    AnimalDen d;
    d.name = r.name("name", "");
    d.species = static_cast<Species>(r.choice("species", -1, {"bird", "fox", "dog"}));
    std::tie(d.position, d.onGround) = r.point("position");
    d.count = static_cast<int>(r.integer("count", 1, 1, 64));
    d.range = r.num("range", 30.0, 1.0, 1024.0);
    r.finish();
    s.dens.push_back(std::move(d));
  }
  for (Reader& r : root.tables("ignition", 256)) {
    IgnitionPoint p;
    p.name = r.name("name", "");
    std::tie(p.position, p.onGround) = r.point("position");
    p.delay = r.num("delay", 0.0, 0.0, 1e6);
    r.finish();
    s.ignitions.push_back(std::move(p));
  }
}

void readWeather(Reader& r, Weather& w) {
  w.windDirection = r.num("wind_direction", 270.0, 0.0, 360.0);
  w.windStrength = r.num("wind_strength", 2.0, 0.0, 60.0);
  w.gustiness = r.num("gustiness", 0.3, 0.0, 1.0);
  w.rainIntensity = r.num("rain_intensity", 0.0, 0.0, 1.0);
  for (Reader& sp : r.tables("rain", 1024)) {
    RainSpell spell;
    spell.start = sp.reqNum("start", 0.0, 1e7);
    spell.duration = sp.reqNum("duration", 1.0, 1e7);
    spell.intensity = sp.reqNum("intensity", 0.0, 1.0);
    sp.finish();
    w.rain.push_back(spell);
  }
  std::stable_sort(w.rain.begin(), w.rain.end(), [](const RainSpell& a, const RainSpell& b) { return a.start < b.start; });
  for (size_t i = 1; i < w.rain.size(); ++i) {
    if (w.rain[i].start < w.rain[i - 1].start + w.rain[i - 1].duration) {
      r.fail(*r.table().get("rain"), "rain", "rain spells overlap (one starting at " + fmtNum(w.rain[i].start) +
                                                 " s begins before the previous one ends)");
    }
  }
  r.finish();
}

}  // namespace

void readDocument(const toml::table& doc, const Ctx& ctx, Scene& s) {
  Reader root(doc, "", ctx);
  s.name = root.name("name", "");
  if (s.name.empty()) root.missing("name");
  s.description = root.str("description", "");
  s.defaultSeed = static_cast<std::uint64_t>(root.integer("seed", 1, 0, INT64_MAX));
  std::int64_t gv = root.integer("generator_version", kGeneratorVersion, 1, 1000000);
  if (gv > static_cast<std::int64_t>(kGeneratorVersion)) {
    root.fail(*doc.get("generator_version"), "generator_version",
              "scene needs generator version " + std::to_string(gv) + "; this build has " +
                  std::to_string(kGeneratorVersion));
  }
  s.generatorVersion = static_cast<std::uint32_t>(gv);
  s.materialsPath = root.str("materials", "sim/data/materials.toml");

  auto b = root.sub("bounds");
  if (!b) root.missing("bounds");
  s.bounds.min = b->vec3("min", kMaxSceneCoordinate);
  s.bounds.max = b->vec3("max", kMaxSceneCoordinate);
  const Vec3& lo = s.bounds.min;
  const Vec3& hi = s.bounds.max;
  if (!(lo.x < hi.x && lo.y < hi.y && lo.z < hi.z)) b->fail(*b->table().get("max"), "max", "max must exceed min on every axis");
  if (hi.x - lo.x > kMaxSceneExtent || hi.z - lo.z > kMaxSceneExtent) {
    b->fail(*b->table().get("max"), "max", "world wider than " + fmtNum(kMaxSceneExtent) + " m");
  }
  if (hi.y - lo.y > kMaxSceneHeight) {
    b->fail(*b->table().get("max"), "max", "world taller than " + fmtNum(kMaxSceneHeight) + " m");
  }
  b->finish();
  s.worldBounds = worldBoundsFromMetres(lo, hi);


  if (auto t = root.sub("terrain")) {
    readTerrain(*t, s.terrain);
  } else {
    // Defaults still need their materials resolved: read an empty table.
    toml::table blank;
    Reader r(blank, "terrain", ctx);
    readTerrain(r, s.terrain);
  }
  if (auto l = root.sub("landscape")) {
    s.landscape.emplace();
    readLandscape(*l, *s.landscape);
    // The plan's memory and time follow its nodes: bound both (about 70 bytes a node,
    // and a priority flood over every node per erosion step).
    const double nodes = ((hi.x - lo.x) / s.landscape->cell + 5.0) * ((hi.z - lo.z) / s.landscape->cell + 5.0);
    if (nodes > kMaxPlanNodes) {
      l->failHere("the world is " + std::to_string(static_cast<long long>(nodes)) +
                  " plan nodes at this cell size, more than " + std::to_string(static_cast<long long>(kMaxPlanNodes)) +
                  "; use a larger cell");
    }
    if (nodes * (s.landscape->erosionSteps + 1) > kMaxPlanNodeSteps) {
      l->failHere("erosion_steps x plan nodes is more than " + std::to_string(static_cast<long long>(kMaxPlanNodeSteps)) +
                  "; use fewer steps or a larger cell");
    }
  }
  readBiomes(root, s);
  for (const Biome& b : s.biomes) {
    const bool needsPlan = b.moisture.min > 0.0 || b.moisture.max < 1.0 || b.riverDistance.min > 0.0 ||
                           b.riverDistance.max < 1e9 || b.coastDistance.min > 0.0 || b.coastDistance.max < 1e9 ||
                           b.roadDistance.min > 0.0 || b.roadDistance.max < 1e9 || b.settlementDistance.min > 0.0 ||
                           b.settlementDistance.max < 1e9;
    if (needsPlan && !s.landscape) root.failHere("biome '" + b.name + "' reads moisture or distances, which need [landscape]");
  }
  readScatter(root, s);
  readStructures(root, s);
  readTunnels(root, s);
  readWater(root, s);
  readPlacements(root, s);
  if (auto w = root.sub("weather")) readWeather(*w, s.weather);
  if (auto t = root.sub("time")) {
    s.time.dayLength = t->num("day_length", 1200.0, 10.0, 1e7);
    s.time.startHour = t->num("start_hour", 9.0, 0.0, 24.0);
    t->finish();
  }
  root.finish();
}

}  // namespace loam::sim::internal::scene_toml
