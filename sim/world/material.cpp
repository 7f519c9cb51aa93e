#include "sim/world/material.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include "sim/core/toml.h"

namespace loam::sim {

namespace {

constexpr std::string_view kSoundNames[] = {"none",  "soil",  "grass",   "sand",  "gravel", "stone",
                                            "wood",  "foliage", "glass", "water", "metal"};
static_assert(std::size(kSoundNames) == static_cast<std::size_t>(SoundClass::Count));

constexpr std::string_view kFields[] = {"name",         "colour",          "density",          "hardness",
                                        "burn_ticks",   "flammability",    "sound",            "acoustic_opacity",
                                        "transmission_loss", "solid",      "liquid",           "foliage"};

/// "source:line:column: message" for a node's position.
Error errorAt(std::string_view source, const toml::source_region& where, const std::string& message) {
  std::ostringstream os;
  os << source;
  if (where.begin.line != 0) os << ':' << where.begin.line << ':' << where.begin.column;
  os << ": " << message;
  return makeError(os.str());
}

std::string_view typeName(toml::node_type t) {
  switch (t) {
    case toml::node_type::none:
      return "nothing";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
  }
  return "an unknown type";
}

/// Reads fields of one [[material]] table, turning every problem into an Error.
class FieldReader {
 public:
  FieldReader(std::string_view source, const toml::table& table, std::size_t index)
      : source_(source), table_(table), index_(index) {}

  /// The node for key, or an error "material #i ('name'): missing field 'key'".
  Result<const toml::node*> node(std::string_view key) const {
    const toml::node* n = table_.get(key);
    if (!n) return errorAt(source_, table_.source(), context() + "missing field '" + std::string(key) + "'");
    return n;
  }

  Result<float> number(std::string_view key, double lo, double hi) const {
    auto n = node(key);
    if (!n) return std::move(n).error();
    double v = 0.0;
    if (auto f = (*n)->as_floating_point()) {
      v = f->get();
    } else if (auto i = (*n)->as_integer()) {
      v = static_cast<double>(i->get());
    } else {
      return wrongType(**n, key, "a number");
    }
    if (!(v >= lo && v <= hi)) {
      std::ostringstream os;
      os << context() << "field '" << key << "' is " << v << ", must be in [" << lo << ", " << hi << "]";
      return errorAt(source_, (*n)->source(), os.str());
    }
    return static_cast<float>(v);
  }

  Result<std::int64_t> integer(std::string_view key, std::int64_t lo, std::int64_t hi) const {
    auto n = node(key);
    if (!n) return std::move(n).error();
    auto i = (*n)->as_integer();
    if (!i) return wrongType(**n, key, "an integer");
    std::int64_t v = i->get();
    if (v < lo || v > hi) {
      std::ostringstream os;
      os << context() << "field '" << key << "' is " << v << ", must be in [" << lo << ", " << hi << "]";
      return errorAt(source_, (*n)->source(), os.str());
    }
    return v;
  }

  Result<std::string> string(std::string_view key) const {
    auto n = node(key);
    if (!n) return std::move(n).error();
    auto s = (*n)->as_string();
    if (!s) return wrongType(**n, key, "a string");
    return s->get();
  }

  Result<bool> boolean(std::string_view key) const {
    auto n = node(key);
    if (!n) return std::move(n).error();
    auto b = (*n)->as_boolean();
    if (!b) return wrongType(**n, key, "a boolean (true or false)");
    return b->get();
  }

  Error fail(const toml::node& n, const std::string& message) const {
    return errorAt(source_, n.source(), context() + message);
  }

  void setName(std::string name) { name_ = std::move(name); }

 private:
  Error wrongType(const toml::node& n, std::string_view key, std::string_view want) const {
    return errorAt(source_, n.source(),
                   context() + "field '" + std::string(key) + "' must be " + std::string(want) + ", found " +
                       std::string(typeName(n.type())));
  }

  std::string context() const {
    std::string c = "material #" + std::to_string(index_);
    if (!name_.empty()) c += " ('" + name_ + "')";
    return c + ": ";
  }

  std::string_view source_;
  const toml::table& table_;
  std::size_t index_;
  std::string name_;
};

bool validName(std::string_view s) {
  if (s.empty() || s.size() > 31) return false;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
    if (!ok) return false;
  }
  return true;
}

std::optional<Rgb8> parseColour(std::string_view s) {
  if (s.size() != 7 || s[0] != '#') return std::nullopt;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  int v[6];
  for (int i = 0; i < 6; ++i) {
    v[i] = hex(s[static_cast<std::size_t>(i) + 1]);
    if (v[i] < 0) return std::nullopt;
  }
  return Rgb8{static_cast<std::uint8_t>(v[0] * 16 + v[1]), static_cast<std::uint8_t>(v[2] * 16 + v[3]),
              static_cast<std::uint8_t>(v[4] * 16 + v[5])};
}

/// Moves r's value into dst and returns true, or keeps its error in err.
template <class T, class U>
bool take(Result<U>&& r, T& dst, std::optional<Error>& err) {
  if (!r) {
    err = std::move(r).error();
    return false;
  }
  dst = static_cast<T>(std::move(*r));
  return true;
}

Result<Material> readMaterial(std::string_view source, const toml::table& t, std::size_t index) {
  FieldReader rd(source, t, index);
  Material m;
  std::optional<Error> err;
  // Name first, so later messages can say which material they are about.
  if (!take(rd.string("name"), m.name, err)) return std::move(*err);
  if (!validName(m.name))
    return rd.fail(*t.get("name"), "name '" + m.name + "' must be 1..31 characters of a-z, 0-9, '_' or '-'");
  rd.setName(m.name);
  for (auto&& [key, value] : t) {
    bool known = false;
    for (std::string_view f : kFields) known = known || key.str() == f;
    if (!known) return errorAt(source, key.source(), "material '" + m.name + "': unknown field '" + std::string(key.str()) + "'");
  }
  std::string colour;
  if (!take(rd.string("colour"), colour, err)) return std::move(*err);
  auto rgb = parseColour(colour);
  if (!rgb) return rd.fail(*t.get("colour"), "colour '" + colour + "' must be sRGB hex like \"#7d7d7d\"");
  m.colour = *rgb;
  if (!take(rd.number("density", 0.0, 100000.0), m.density, err)) return std::move(*err);
  if (!take(rd.number("hardness", 0.0, 10.0), m.hardness, err)) return std::move(*err);
  std::int64_t burn = 0;
  if (!take(rd.integer("burn_ticks", 0, 1000000000), burn, err)) return std::move(*err);
  m.burnTicks = static_cast<std::uint32_t>(burn);
  if (!take(rd.number("flammability", 0.0, 1.0), m.flammability, err)) return std::move(*err);
  std::string sound;
  if (!take(rd.string("sound"), sound, err)) return std::move(*err);
  bool soundFound = false;
  for (std::size_t i = 0; i < std::size(kSoundNames); ++i) {
    if (kSoundNames[i] == sound) {
      m.sound = static_cast<SoundClass>(i);
      soundFound = true;
    }
  }
  if (!soundFound) {
    std::string all;
    for (std::string_view n : kSoundNames) all += (all.empty() ? "" : ", ") + std::string(n);
    return rd.fail(*t.get("sound"), "unknown sound class '" + sound + "' (one of: " + all + ")");
  }
  if (!take(rd.number("acoustic_opacity", 0.0, 1.0), m.acousticOpacity, err)) return std::move(*err);
  {
    auto n = rd.node("transmission_loss");
    if (!n) return std::move(n).error();
    const toml::array* a = (*n)->as_array();
    if (!a || a->size() != 3)
      return rd.fail(**n, "field 'transmission_loss' must be an array of 3 numbers (dB per metre at low, mid, high)");
    for (std::size_t b = 0; b < 3; ++b) {
      const toml::node& e = *a->get(b);
      double v = 0.0;
      if (auto f = e.as_floating_point())
        v = f->get();
      else if (auto i = e.as_integer())
        v = static_cast<double>(i->get());
      else
        return rd.fail(e, "transmission_loss[" + std::to_string(b) + "] must be a number, found " +
                              std::string(typeName(e.type())));
      if (!(v >= 0.0 && v <= 10000.0))
        return rd.fail(e, "transmission_loss[" + std::to_string(b) + "] must be in [0, 10000] dB/m");
      m.transmissionLossDbPerM[b] = static_cast<float>(v);
    }
  }
  if (!take(rd.boolean("solid"), m.solid, err)) return std::move(*err);
  if (!take(rd.boolean("liquid"), m.liquid, err)) return std::move(*err);
  if (!take(rd.boolean("foliage"), m.foliage, err)) return std::move(*err);
  if (m.solid && m.liquid) return rd.fail(*t.get("liquid"), "a material cannot be both solid and liquid");
  return m;
}

}  // namespace

std::string_view soundClassName(SoundClass c) noexcept {
  auto i = static_cast<std::size_t>(c);
  return i < std::size(kSoundNames) ? kSoundNames[i] : std::string_view("?");
}

Result<MaterialTable> MaterialTable::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return makeError(path + ": cannot open material file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return makeError(path + ": read error");
  return loadFromString(text.str(), path);
}

Result<MaterialTable> MaterialTable::loadFromString(std::string_view text, std::string_view sourceName) {
  toml::table root;
  try {
    root = toml::parse(text, sourceName);
  } catch (const toml::parse_error& e) {
    return errorAt(sourceName, e.source(), "TOML syntax error: " + std::string(e.description()));
  }
  for (auto&& [key, value] : root) {
    if (key.str() != "material")
      return errorAt(sourceName, key.source(), "unknown top-level key '" + std::string(key.str()) +
                                                   "' (expected only [[material]] tables)");
  }
  const toml::node* list = root.get("material");
  if (!list) return makeError(std::string(sourceName) + ": no [[material]] tables");
  const toml::array* arr = list->as_array();
  if (!arr || !arr->is_array_of_tables())
    return errorAt(sourceName, list->source(), "'material' must be an array of tables ([[material]])");
  if (arr->size() > kMaxMaterials)
    return errorAt(sourceName, arr->get(kMaxMaterials)->source(),
                   "too many materials: at most " + std::to_string(kMaxMaterials));
  MaterialTable table;
  table.materials_.reserve(arr->size());
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::table& t = *arr->get(i)->as_table();
    auto m = readMaterial(sourceName, t, i);
    if (!m) return std::move(m).error();
    for (std::size_t j = 0; j < table.materials_.size(); ++j) {
      if (table.materials_[j].name == m->name) {
        const toml::source_region& first = arr->get(j)->as_table()->get("name")->source();
        return errorAt(sourceName, t.get("name")->source(),
                       "duplicate material name '" + m->name + "' (first defined at line " +
                           std::to_string(first.begin.line) + ")");
      }
    }
    if (i == 0 && (m->name != "air" || m->solid || m->liquid))
      return errorAt(sourceName, t.source(), "the first material must be 'air' (id 0), neither solid nor liquid");
    if (i != 0 && m->name == "air") return errorAt(sourceName, t.source(), "'air' must be the first material");
    table.materials_.push_back(std::move(*m));
  }
  return table;
}

const Material& MaterialTable::operator[](MaterialId id) const noexcept {
  LOAM_ASSERT(id < materials_.size());
  return materials_[id];
}

std::optional<MaterialId> MaterialTable::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < materials_.size(); ++i) {
    if (materials_[i].name == name) return static_cast<MaterialId>(i);
  }
  return std::nullopt;
}

}  // namespace loam::sim
