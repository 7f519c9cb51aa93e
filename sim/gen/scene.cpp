// Scene loading: TOML (toml++) to a validated Scene. Every value is read through a
// Reader that knows the keys a table may hold, checks types and ranges, and reports
// "file:line:column: path.key: what is wrong". Internally a failure throws a private
// exception that parseScene/loadScene turn into an Error; nothing escapes.
#include "sim/gen/scene.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

#include <toml++/toml.h>

#include "sim/gen/generator_version.h"

namespace loam::sim {
namespace {

/// The one internal failure type; carries a complete, located message.
class SceneError : public std::exception {
 public:
  explicit SceneError(std::string msg) : msg_(std::move(msg)) {}
  const char* what() const noexcept override { return msg_.c_str(); }
  const std::string& message() const { return msg_; }

 private:
  std::string msg_;
};

struct Ctx {
  std::string file;
  const MaterialTable* materials = nullptr;
};

std::string locate(const Ctx& ctx, const toml::source_region& r) {
  std::string s = ctx.file;
  if (r.begin.line > 0) {
    s += ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
  }
  return s;
}

[[noreturn]] void failAt(const Ctx& ctx, const toml::source_region& r, const std::string& msg) {
  throw SceneError(locate(ctx, r) + ": " + msg);
}

std::string_view typeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::none: return "nothing";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
  }
  return "a value";
}

std::string fmtNum(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// Levenshtein distance, for "did you mean" hints on unknown keys.
int editDistance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

/// Reads one TOML table: typed, range-checked getters that remember which keys the
/// table may hold; finish() rejects any other key.
class Reader {
 public:
  Reader(const toml::table& t, std::string path, const Ctx& ctx) : t_(t), path_(std::move(path)), ctx_(ctx) {}

  const std::string& path() const { return path_; }
  const Ctx& ctx() const { return ctx_; }
  const toml::table& table() const { return t_; }

  /// The node for key (registered as known), or null when absent.
  const toml::node* get(std::string_view key) {
    known_.emplace_back(key);
    return t_.get(key);
  }

  std::string keyPath(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  [[noreturn]] void fail(const toml::node& n, std::string_view key, const std::string& msg) const {
    failAt(ctx_, n.source(), keyPath(key) + ": " + msg);
  }
  [[noreturn]] void failHere(const std::string& msg) const {
    failAt(ctx_, t_.source(), (path_.empty() ? std::string("scene") : path_) + ": " + msg);
  }
  [[noreturn]] void missing(std::string_view key) const {
    failHere("missing required key '" + std::string(key) + "'");
  }

  static double asNumber(const Reader& r, const toml::node& n, std::string_view key) {
    if (auto i = n.as_integer()) return static_cast<double>(i->get());
    if (auto f = n.as_floating_point()) return f->get();
    r.fail(n, key, "expected a number, found " + std::string(typeName(n)));
  }

  void checkRange(const toml::node& n, std::string_view key, double v, double lo, double hi) const {
    if (!(v >= lo && v <= hi)) {
      fail(n, key, "value " + fmtNum(v) + " is out of range [" + fmtNum(lo) + ", " + fmtNum(hi) + "]");
    }
  }

  double num(std::string_view key, double def, double lo, double hi) {
    const toml::node* n = get(key);
    if (!n) return def;
    double v = asNumber(*this, *n, key);
    checkRange(*n, key, v, lo, hi);
    return v;
  }
  double reqNum(std::string_view key, double lo, double hi) {
    if (!t_.get(key)) missing(key);
    return num(key, 0.0, lo, hi);
  }
  std::optional<double> optNum(std::string_view key, double lo, double hi) {
    if (!t_.get(key)) {
      known_.emplace_back(key);
      return std::nullopt;
    }
    return num(key, 0.0, lo, hi);
  }

  std::int64_t integer(std::string_view key, std::int64_t def, std::int64_t lo, std::int64_t hi) {
    const toml::node* n = get(key);
    if (!n) return def;
    auto i = n->as_integer();
    if (!i) fail(*n, key, "expected an integer, found " + std::string(typeName(*n)));
    std::int64_t v = i->get();
    if (v < lo || v > hi) {
      fail(*n, key, "value " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "]");
    }
    return v;
  }

  bool boolean(std::string_view key, bool def) {
    const toml::node* n = get(key);
    if (!n) return def;
    auto b = n->as_boolean();
    if (!b) fail(*n, key, "expected true or false, found " + std::string(typeName(*n)));
    return b->get();
  }

  std::string str(std::string_view key, std::string_view def) {
    const toml::node* n = get(key);
    if (!n) return std::string(def);
    auto s = n->as_string();
    if (!s) fail(*n, key, "expected a string, found " + std::string(typeName(*n)));
    if (s->get().size() > 4096) fail(*n, key, "string longer than 4096 bytes");
    return s->get();
  }
  std::string reqStr(std::string_view key) {
    if (!t_.get(key)) missing(key);
    return str(key, "");
  }
  /// A name: non-empty, at most 64 bytes.
  std::string name(std::string_view key, std::string_view def) {
    std::string s = str(key, def);
    if (const toml::node* n = t_.get(key)) {
      if (s.empty() || s.size() > 64) fail(*n, key, "names must be 1 to 64 bytes long");
    }
    return s;
  }

  /// One of the given options; returns its index.
  int choice(std::string_view key, int def, std::initializer_list<std::string_view> options) {
    const toml::node* n = get(key);
    if (!n) {
      if (def < 0) missing(key);
      return def;
    }
    auto s = n->as_string();
    if (!s) fail(*n, key, "expected a string, found " + std::string(typeName(*n)));
    int idx = 0;
    std::string list;
    for (std::string_view o : options) {
      if (s->get() == o) return idx;
      list += (idx ? ", '" : "'") + std::string(o) + "'";
      ++idx;
    }
    fail(*n, key, "unknown value '" + s->get() + "' (expected one of " + list + ")");
  }

  /// Array of exactly `count` numbers, each in [lo, hi].
  std::vector<double> numbers(const toml::node& n, std::string_view key, size_t minCount, size_t maxCount, double lo,
                              double hi) const {
    auto a = n.as_array();
    if (!a) fail(n, key, "expected an array of numbers, found " + std::string(typeName(n)));
    if (a->size() < minCount || a->size() > maxCount) {
      std::string want = minCount == maxCount ? std::to_string(minCount)
                                              : std::to_string(minCount) + " or " + std::to_string(maxCount);
      fail(n, key, "expected " + want + " numbers, found " + std::to_string(a->size()));
    }
    std::vector<double> out;
    for (const toml::node& e : *a) {
      double v = asNumber(*this, e, key);
      checkRange(e, key, v, lo, hi);
      out.push_back(v);
    }
    return out;
  }

  Vec2 vec2(std::string_view key, double lim = 1e5) {
    const toml::node* n = get(key);
    if (!n) missing(key);
    auto v = numbers(*n, key, 2, 2, -lim, lim);
    return {v[0], v[1]};
  }
  Vec2 vec2Or(std::string_view key, Vec2 def, double lim = 1e5) {
    if (!t_.get(key)) {
      known_.emplace_back(key);
      return def;
    }
    return vec2(key, lim);
  }
  Vec3 vec3(std::string_view key, double lim = 1e5) {
    const toml::node* n = get(key);
    if (!n) missing(key);
    auto v = numbers(*n, key, 3, 3, -lim, lim);
    return {v[0], v[1], v[2]};
  }
  /// [x, z] (on the ground) or [x, y, z].
  std::pair<Vec3, bool> point(std::string_view key) {
    const toml::node* n = get(key);
    if (!n) missing(key);
    auto v = numbers(*n, key, 2, 3, -1e5, 1e5);
    if (v.size() == 2) return {{v[0], 0.0, v[1]}, true};
    return {{v[0], v[1], v[2]}, false};
  }

  Range range(std::string_view key, Range def, double lo, double hi) {
    const toml::node* n = get(key);
    if (!n) return def;
    if (n->is_array()) {
      auto v = numbers(*n, key, 2, 2, lo, hi);
      if (v[0] > v[1]) fail(*n, key, "range minimum " + fmtNum(v[0]) + " is above its maximum " + fmtNum(v[1]));
      return {v[0], v[1]};
    }
    double v = asNumber(*this, *n, key);
    checkRange(*n, key, v, lo, hi);
    return {v, v};
  }

  MaterialRef materialFromNode(const toml::node& n, std::string_view key) const {
    auto s = n.as_string();
    if (!s) fail(n, key, "expected a material name (string), found " + std::string(typeName(n)));
    MaterialRef ref;
    ref.name = s->get();
    if (ctx_.materials) {
      auto id = ctx_.materials->find(ref.name);
      if (!id) fail(n, key, "unknown material '" + ref.name + "'");
      ref.id = *id;
    }
    return ref;
  }
  MaterialRef material(std::string_view key, std::string_view def) {
    const toml::node* n = get(key);
    if (!n) {
      MaterialRef ref;
      ref.name = std::string(def);
      if (ctx_.materials) {
        auto id = ctx_.materials->find(ref.name);
        if (!id) failHere("the default material '" + ref.name + "' for '" + std::string(key) +
                          "' is not in the material table; name one explicitly");
        ref.id = *id;
      }
      return ref;
    }
    return materialFromNode(*n, key);
  }
  MaterialRef reqMaterial(std::string_view key) {
    const toml::node* n = get(key);
    if (!n) missing(key);
    return materialFromNode(*n, key);
  }
  std::optional<MaterialRef> optMaterial(std::string_view key) {
    const toml::node* n = get(key);
    if (!n) return std::nullopt;
    return materialFromNode(*n, key);
  }

  /// A sub-table (absent -> nullopt).
  std::optional<Reader> sub(std::string_view key) {
    const toml::node* n = get(key);
    if (!n) return std::nullopt;
    auto t = n->as_table();
    if (!t) fail(*n, key, "expected a table, found " + std::string(typeName(*n)));
    return Reader(*t, keyPath(key), ctx_);
  }

  /// An array of tables ([[key]] or key = [{...}, ...]); absent -> empty.
  std::vector<Reader> tables(std::string_view key, size_t maxCount) {
    std::vector<Reader> out;
    const toml::node* n = get(key);
    if (!n) return out;
    auto a = n->as_array();
    if (!a) fail(*n, key, "expected an array of tables ([[" + keyPath(key) + "]]), found " + std::string(typeName(*n)));
    if (a->size() > maxCount) fail(*n, key, "at most " + std::to_string(maxCount) + " entries allowed");
    size_t i = 0;
    for (const toml::node& e : *a) {
      auto t = e.as_table();
      if (!t) fail(e, key, "expected a table, found " + std::string(typeName(e)));
      out.emplace_back(*t, keyPath(key) + "[" + std::to_string(i) + "]", ctx_);
      ++i;
    }
    return out;
  }

  std::vector<Circle> circles(std::string_view key) {
    std::vector<Circle> out;
    for (Reader& r : tables(key, 256)) {
      Circle c;
      c.center = r.vec2("center");
      c.radius = r.reqNum("radius", 0.01, 1e5);
      r.finish();
      out.push_back(c);
    }
    return out;
  }

  std::vector<std::string> strings(std::string_view key, size_t maxCount) {
    std::vector<std::string> out;
    const toml::node* n = get(key);
    if (!n) return out;
    auto a = n->as_array();
    if (!a) fail(*n, key, "expected an array of strings, found " + std::string(typeName(*n)));
    if (a->size() > maxCount) fail(*n, key, "at most " + std::to_string(maxCount) + " entries allowed");
    for (const toml::node& e : *a) {
      auto s = e.as_string();
      if (!s) fail(e, key, "expected a string, found " + std::string(typeName(e)));
      out.push_back(s->get());
    }
    return out;
  }

  /// Rejects every key that no getter asked for.
  void finish() const {
    for (auto&& [k, v] : t_) {
      std::string_view ks = k.str();
      if (std::find(known_.begin(), known_.end(), ks) != known_.end()) continue;
      std::string msg = "unknown key '" + std::string(ks) + "'";
      std::string best;
      int bestD = 3;
      for (const std::string& c : known_) {
        int d = editDistance(ks, c);
        if (d < bestD) {
          bestD = d;
          best = c;
        }
      }
      if (!best.empty()) {
        msg += " (did you mean '" + best + "'?)";
      } else {
        msg += " (known keys:";
        for (size_t i = 0; i < known_.size(); ++i) msg += (i ? ", " : " ") + known_[i];
        msg += ")";
      }
      const toml::source_region& where = k.source().begin.line > 0 ? k.source() : v.source();
      failAt(ctx_, where, (path_.empty() ? std::string("scene") : path_) + ": " + msg);
    }
  }

 private:
  const toml::table& t_;
  std::string path_;
  const Ctx& ctx_;
  std::vector<std::string> known_;
};

constexpr double kBig = 1e5;  // metres: any coordinate or length in a scene

Octaves readOctaves(Reader& r) {
  Octaves o;
  o.count = static_cast<int>(r.integer("octaves", 1, 1, 12));
  o.lacunarity = r.num("lacunarity", 2.0, 1.0, 4.0);
  o.gain = r.num("gain", 0.5, 0.0, 1.0);
  return o;
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
  for (Reader& l : r.tables("layer", 16)) {
    NoiseLayer layer;
    layer.wavelength = l.reqNum("wavelength", 0.5, 8192.0);
    layer.amplitude = l.reqNum("amplitude", -kMaxSceneHeight, kMaxSceneHeight);
    layer.octaves = readOctaves(l);
    layer.ridged = l.boolean("ridged", false);
    layer.offset = l.vec2Or("offset", {}, kBig);
    l.finish();
    t.layers.push_back(layer);
  }
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

/// Reads the whole document into s (materials resolved through ctx).
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
  s.bounds.min = b->vec3("min", 4096.0);
  s.bounds.max = b->vec3("max", 4096.0);
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
  {
    const WorldBounds& wb = s.worldBounds;
    std::int64_t chunks = static_cast<std::int64_t>((wb.maxBrick.x - wb.minBrick.x) / kChunkBricks) *
                          ((wb.maxBrick.y - wb.minBrick.y) / kChunkBricks) * ((wb.maxBrick.z - wb.minBrick.z) / kChunkBricks);
    if (chunks > (std::int64_t{1} << 20)) {
      root.fail(*doc.get("bounds"), "bounds",
                "world of " + std::to_string(chunks) + " chunks (6.4 m) is larger than the 1048576 allowed");
    }
  }

  if (auto t = root.sub("terrain")) {
    readTerrain(*t, s.terrain);
  } else {
    // Defaults still need their materials resolved: read an empty table.
    toml::table blank;
    Reader r(blank, "terrain", ctx);
    readTerrain(r, s.terrain);
  }
  readBiomes(root, s);
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

std::string canonical(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != '\r') out.push_back(c);
  }
  return out;
}

Result<toml::table> parseToml(std::string_view text, const std::string& file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    Ctx ctx{file, nullptr};
    return makeError(locate(ctx, e.source()) + ": TOML syntax error: " + std::string(e.description()));
  }
}

Result<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return makeError(path + ": read error");
  return ss.str();
}

}  // namespace

WorldBounds worldBoundsFromMetres(const Vec3& min, const Vec3& max) noexcept {
  constexpr double kChunkMetres = static_cast<double>(kChunkBricks * kBrickSize) / kVoxelsPerMetre;  // 6.4
  // The small tolerance keeps a bound written as a whole number of chunks (12.8)
  // from growing by a chunk through rounding of the division.
  auto down = [&](double m) { return static_cast<std::int32_t>(floorToInt(m / kChunkMetres + 1e-9)) * kChunkBricks; };
  auto up = [&](double m) { return static_cast<std::int32_t>(-floorToInt(-(m / kChunkMetres - 1e-9))) * kChunkBricks; };
  WorldBounds wb;
  wb.minBrick = {down(min.x), down(min.y), down(min.z)};
  wb.maxBrick = {up(max.x), up(max.y), up(max.z)};
  return wb;
}

std::uint64_t sceneHash(std::string_view text) noexcept {
  std::string c;
  try {
    c = canonical(text);
  } catch (...) {
    return 0;
  }
  return XXH3_64bits(c.data(), c.size());
}

std::uint64_t sceneJoinHash(const Scene& scene) noexcept {
  std::uint64_t parts[2] = {scene.hash, scene.materialsHash};
  return XXH3_64bits(parts, sizeof parts);
}

Result<Scene> parseScene(std::string_view text, std::string_view sourceName,
                         std::shared_ptr<const MaterialTable> materials) {
  std::string file(sourceName);
  try {
    auto doc = parseToml(text, file);
    if (!doc) return std::move(doc).error();
    Scene s;
    s.sourcePath = file;
    s.materials = std::move(materials);
    Ctx ctx{file, s.materials.get()};
    readDocument(*doc, ctx, s);
    s.hash = sceneHash(text);
    return s;
  } catch (const SceneError& e) {
    return makeError(e.message());
  } catch (const std::exception& e) {
    return makeError(file + ": cannot load scene: " + e.what());
  }
}

Result<Scene> loadScene(const std::string& path) {
  try {
    auto text = readFile(path);
    if (!text) return std::move(text).error();
    auto doc = parseToml(*text, path);
    if (!doc) return std::move(doc).error();

    // Find the material table before validating names against it.
    Ctx pre{path, nullptr};
    std::string matPath = "sim/data/materials.toml";
    const toml::node* mn = doc->get("materials");
    if (mn) {
      auto str = mn->as_string();
      if (!str) failAt(pre, mn->source(), "materials: expected a string, found " + std::string(typeName(*mn)));
      matPath = str->get();
    }
    namespace fs = std::filesystem;
    fs::path resolved;
    fs::path want(matPath);
    if (want.is_absolute()) {
      resolved = want;
    } else {
      std::error_code ec;
      fs::path dir = fs::absolute(fs::path(path), ec).parent_path();
      for (int depth = 0; depth < 64 && !dir.empty(); ++depth) {
        if (fs::exists(dir / want, ec)) {
          resolved = dir / want;
          break;
        }
        fs::path parent = dir.parent_path();
        if (parent == dir) break;
        dir = parent;
      }
    }
    if (resolved.empty() || !fs::exists(resolved)) {
      toml::source_region where = mn ? mn->source() : doc->source();
      failAt(pre, where,
             "materials: material table '" + matPath + "' not found (looked beside the scene and in its parent folders)");
    }
    auto table = MaterialTable::load(resolved.string());
    if (!table) {
      toml::source_region where = mn ? mn->source() : doc->source();
      failAt(pre, where, "materials: cannot load '" + resolved.string() + "': " + table.error().message);
    }
    auto matText = readFile(resolved.string());
    if (!matText) return std::move(matText).error();

    Scene s;
    s.sourcePath = path;
    s.materialsFile = resolved.string();
    s.materials = std::make_shared<const MaterialTable>(std::move(table).value());
    Ctx ctx{path, s.materials.get()};
    readDocument(*doc, ctx, s);
    s.hash = sceneHash(*text);
    s.materialsHash = sceneHash(*matText);
    return s;
  } catch (const SceneError& e) {
    return makeError(e.message());
  } catch (const std::exception& e) {
    return makeError(path + ": cannot load scene: " + e.what());
  }
}

std::string_view scatterKindName(ScatterKind k) noexcept {
  switch (k) {
    case ScatterKind::Tree: return "tree";
    case ScatterKind::Bush: return "bush";
    case ScatterKind::Rock: return "rock";
    case ScatterKind::Grass: return "grass";
  }
  return "?";
}

std::string_view structureKindName(StructureKind k) noexcept {
  switch (k) {
    case StructureKind::Box: return "box";
    case StructureKind::Wall: return "wall";
    case StructureKind::Floor: return "floor";
    case StructureKind::Roof: return "roof";
    case StructureKind::Arch: return "arch";
    case StructureKind::Doorway: return "doorway";
    case StructureKind::Window: return "window";
    case StructureKind::Cylinder: return "cylinder";
  }
  return "?";
}

std::string_view speciesName(Species s) noexcept {
  switch (s) {
    case Species::Bird: return "bird";
    case Species::Fox: return "fox";
    case Species::Dog: return "dog";
  }
  return "?";
}

}  // namespace loam::sim
