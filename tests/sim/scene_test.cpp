// Scene files: every shipped scene loads; every kind of bad input gives an error
// with file:line:column and what is wrong; thousands of mutated files never crash.
#include "sim/gen/scene.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sim/world/brick_store.h"
#include "sim/gen/gen_random.h"

using namespace loam::sim;

namespace {

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::shared_ptr<const MaterialTable> materials() {
  static std::shared_ptr<const MaterialTable> table = [] {
    auto t = MaterialTable::load(std::string(LOAM_SOURCE_DIR) + "/sim/data/materials.toml");
    REQUIRE(t.has_value());
    return std::make_shared<const MaterialTable>(std::move(t).value());
  }();
  return table;
}

// A small valid scene of 17 lines; tests append (from line 18) or replace lines.
const char* kBase = R"(name = "t"
[bounds]
min = [-12.8, -6.4, -12.8]
max = [12.8, 6.4, 12.8]
[terrain]
base_height = 1.0
[[biome]]
name = "all"
[[scatter]]
name = "rocks"
kind = "rock"
spacing = 4.0
biomes = ["all"]
[[pond]]
center = [0.0, 0.0]
radius = 3.0
depth = 1.0
)";

/// Parses kBase with `extra` appended; returns the error message ("" on success).
std::string errorOf(const std::string& text) {
  auto r = parseScene(text, "t.toml", materials());
  return r ? std::string() : r.error().message;
}

}  // namespace

TEST_CASE("shipped scenes load") {
  for (const char* name : {"glade", "court", "flat", "forest-fires", "highlands", "riverlands"}) {
    CAPTURE(name);
    auto s = loadScene(std::string(LOAM_SOURCE_DIR) + "/scenes/" + name + ".toml");
    if (!s) FAIL(s.error().message);
    REQUIRE(s.has_value());
    CHECK(s->name == name);
    CHECK(s->hash != 0);
    CHECK(s->materialsHash != 0);
    CHECK(s->materials != nullptr);
    CHECK(!s->spawns.empty());
    CHECK(BrickStore::validBounds(s->worldBounds));
  }
}

TEST_CASE("the base test scene is valid") {
  auto s = parseScene(kBase, "t.toml", materials());
  if (!s) FAIL(s.error().message);
  CHECK(s->scatter.size() == 1);
  CHECK(s->scatter[0].biomeIndices == std::vector<int>{0});
  CHECK(s->ponds.size() == 1);
  // Bounds round outward to whole chunks (6.4 m = 16 bricks).
  CHECK(s->worldBounds.minBrick.x == -32);
  CHECK(s->worldBounds.maxBrick.x == 32);
  CHECK(s->worldBounds.minBrick.y == -16);
  CHECK(s->worldBounds.maxBrick.y == 16);
}

TEST_CASE("errors name file, line, column and the problem") {
  struct Case {
    std::string text;
    std::string expect;  // regex the message must match
  };
  const std::string b = kBase;
  std::vector<Case> cases = {
      // TOML syntax: the line after the broken one, as toml++ reports it.
      {b + "[[pond]\n", R"(^t\.toml:18:\d+: TOML syntax error)"},
      // Unknown key (a typo) with a suggestion.
      {b + "radius_m = 2.0\n", R"(^t\.toml:18:1: pond\[0\]: unknown key 'radius_m' \(did you mean 'radius'\?\))"},
      // Wrong type.
      {b + "shore_width = \"wide\"\n", R"(^t\.toml:18:15: pond\[0\]\.shore_width: expected a number, found a string)"},
      // Out of range, and NaN is out of every range.
      {b + "shore_width = -1.0\n", R"(^t\.toml:18:15: pond\[0\]\.shore_width: value -1 is out of range \[0, 64\])"},
      {b + "shore_width = nan\n", R"(^t\.toml:18:15: pond\[0\]\.shore_width: value -?nan is out of range)"},
      // Unknown material.
      {b + "shore_material = \"granite\"\n", R"(^t\.toml:18:18: pond\[0\]\.shore_material: unknown material 'granite')"},
      // Unknown enum value lists the choices.
      {b + "[[den]]\nspecies = \"wolf\"\nposition = [0.0, 0.0]\n",
       R"(^t\.toml:19:11: den\[0\]\.species: unknown value 'wolf' \(expected one of 'bird', 'fox', 'dog'\))"},
      // Missing required key points at the table.
      {b + "[[tunnel]]\nradius = 1.0\n", R"(^t\.toml:18:1: tunnel\[0\]: missing required key 'points')"},
      // Unknown biome reference points at the string.
      {std::string(kBase).replace(b.find("biomes = [\"all\"]"), 16, "biomes = [\"all\", \"dunes\"]"),
       R"(^t\.toml:13:18: scatter\[0\]\.biomes: unknown biome 'dunes')"},
      // A key that belongs to another scatter kind is unknown for this one.
      {std::string(kBase).replace(b.find("biomes = [\"all\"]"), 16, "leaf_material = \"leaves\""),
       R"(^t\.toml:13:1: scatter\[0\]: unknown key 'leaf_material')"},
      // Wrong shape of a point.
      {b + "[[spawn]]\nposition = [1.0]\n", R"(^t\.toml:19:12: spawn\[0\]\.position: expected 2 or 3 numbers, found 1)"},
      // Integer required.
      {b + "[[den]]\nspecies = \"fox\"\nposition = [0.0, 0.0]\ncount = 2.5\n",
       R"(^t\.toml:21:9: den\[0\]\.count: expected an integer, found a number)"},
      // Unknown top-level key and table.
      {"nmae = \"x\"\n" + b, R"(^t\.toml:1:1: scene: unknown key 'nmae' \(did you mean 'name'\?\))"},
      {b + "[wether]\nwind_strength = 1.0\n", R"(^t\.toml:18:\d+: scene: unknown key 'wether' \(did you mean 'weather'\?\))"},
      // Overlapping rain spells.
      {b + "[weather]\nrain = [{ start = 0.0, duration = 100.0, intensity = 0.5 }, { start = 50.0, duration = 10.0, "
           "intensity = 0.5 }]\n",
       R"(^t\.toml:19:8: weather\.rain: rain spells overlap)"},
      // A newer generator than this build.
      {"generator_version = 99\n" + b, R"(^t\.toml:1:21: generator_version: scene needs generator version 99)"},
      // Bounds: empty and too large.
      {std::string(kBase).replace(b.find("max = [12.8, 6.4, 12.8]"), 23, "max = [12.8, -6.4, 12.8]"),
       R"(^t\.toml:4:7: bounds\.max: max must exceed min on every axis)"},
      {std::string(kBase).replace(b.find("max = [12.8, 6.4, 12.8]"), 23, "max = [40000.0, 6.4, 12.8]"),
       R"(^t\.toml:4:\d+: bounds\.max: value 40000 is out of range \[-32768, 32768\])"},
      {std::string(kBase).replace(b.find("max = [12.8, 6.4, 12.8]"), 23, "max = [12.8, 600.0, 12.8]"),
       R"(^t\.toml:4:7: bounds\.max: world taller than 512 m)"},
      // A landscape plan too big for its cell, and too many erosion steps over it.
      {std::string(kBase).replace(b.find("min = [-12.8, -6.4, -12.8]\nmax = [12.8, 6.4, 12.8]"), 50,
                                  "min = [-30000.0, -6.4, -30000.0]\nmax = [30000.0, 6.4, 30000.0]") +
           "[landscape]\ncell = 8.0\n",
       R"(^t\.toml:18:1: landscape: the world is \d+ plan nodes at this cell size, more than 1048576)"},
      {std::string(kBase).replace(b.find("min = [-12.8, -6.4, -12.8]\nmax = [12.8, 6.4, 12.8]"), 50,
                                  "min = [-10000.0, -6.4, -10000.0]\nmax = [10000.0, 6.4, 10000.0]") +
           "[landscape]\ncell = 32.0\nerosion_steps = 200\n",
       R"(^t\.toml:18:1: landscape: erosion_steps x plan nodes is more than)"},
      // Ecotope rules that read the plan need one.
      {b + "[[biome]]\nname = \"wet\"\nmoisture = [0.5, 1.0]\n",
       R"(biome 'wet' reads moisture or distances, which need \[landscape\])"},
      {b + "[landscape]\n[landscape.rivers]\nwidht = [1.0, 2.0]\n",
       R"(^t\.toml:20:1: landscape\.rivers: unknown key 'widht' \(did you mean 'width'\?\))"},
      {b + "[landscape]\n[[landscape.layer]]\nwavelength = 100.0\namplitude = 10.0\nerode = 1\n",
       R"(landscape\.layer\[0\]\.erode: expected true or false)"},
      {b + "[[biome]]\nname = \"town\"\nsettlement_distance = [0.0, 90.0]\n",
       R"(biome 'town' reads moisture or distances, which need \[landscape\])"},
      // Per-item tilt is for trees and rocks only, and bounded.
      {b + "[[scatter]]\nkind = \"grass\"\nspacing = 2.0\ntilt = [0.0, 10.0]\n",
       R"(scatter\[1\]: unknown key 'tilt')"},
      {b + "[[scatter]]\nkind = \"tree\"\nspacing = 2.0\nstretch = [1.0, 2.0]\n",
       R"(scatter\[1\]: unknown key 'stretch')"},
      {b + "[[scatter]]\nkind = \"rock\"\nspacing = 2.0\ntilt = [0.0, 50.0]\n",
       R"(scatter\[1\]\.tilt: value 50 is out of range \[0, 45\])"},
      // Settlements and roads.
      {b + "[landscape]\n[landscape.settlements]\ncount = 65\n",
       R"(^t\.toml:20:9: landscape\.settlements\.count: value 65 is out of range \[0, 64\])"},
      {b + "[landscape]\n[[landscape.settlements.site]]\nbuildings = 3\n",
       R"(^t\.toml:19:\d+: landscape\.settlements\.site\[0\]: missing required key 'at')"},
      {b + "[landscape]\n[[landscape.settlements.site]]\nat = [0.0, 0.0]\n[[landscape.settlements.site]]\n"
           "at = [10.0, 5.0]\n",
       R"(landscape\.settlements\.site\[1\]: settlement sites closer than a plan cell)"},
      {b + "[landscape]\n[landscape.settlements]\nwalls = \"brick\"\n",
       R"(^t\.toml:20:9: landscape\.settlements\.walls: expected an array)"},
      {b + "[landscape]\n[landscape.roads]\nmax_grade = 0.0\n",
       R"(^t\.toml:20:13: landscape\.roads\.max_grade: value 0 is out of range \[0\.01, 1\])"},
      // Duplicate keys are a TOML error.
      {b + "depth = 2.0\n", R"(^t\.toml:18:\d+: TOML syntax error)"},
  };
  for (const Case& c : cases) {
    std::string msg = errorOf(c.text);
    CAPTURE(c.expect);
    CAPTURE(msg);
    CHECK(std::regex_search(msg, std::regex(c.expect)));
  }
}

TEST_CASE("loadScene reports a missing file and a missing material table") {
  auto r = loadScene("/nonexistent/scene.toml");
  REQUIRE(!r);
  CHECK(r.error().message.find("/nonexistent/scene.toml") == 0);

  std::string path = "scene_test_tmp.toml";
  {
    std::ofstream out(path);
    out << "materials = \"no/such/materials.toml\"\n" << kBase;
  }
  auto m = loadScene(path);
  REQUIRE(!m);
  CHECK(m.error().message.find("scene_test_tmp.toml:1:13: materials: material table 'no/such/materials.toml' not found") ==
        0);
  std::remove(path.c_str());
}

TEST_CASE("a scene's identity is its parsed content: comments and layout change nothing, values do") {
  auto hashOf = [](const std::string& text) {
    auto r = parseScene(text, "t.toml", materials());
    REQUIRE_MESSAGE(r, (r ? std::string() : r.error().message));
    return r->hash;
  };
  const std::string base = kBase;
  const std::uint64_t h = hashOf(base);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = base;
    const std::size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  // Comments, blank lines, CRLF, spacing and key order.
  CHECK(hashOf("# a comment at the top\n\n" + base + "# and one at the end\n") == h);
  std::string crlf;
  for (char c : base) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  CHECK(hashOf(crlf) == h);
  CHECK(hashOf(replaced("base_height = 1.0", "base_height=1.0    # metres")) == h);
  CHECK(hashOf(replaced("radius = 3.0\ndepth = 1.0", "depth = 1.0\nradius = 3.0")) == h);
  CHECK(hashOf(replaced("[bounds]\nmin = [-12.8, -6.4, -12.8]", "[bounds]\nmin = [ -12.8,-6.4 , -12.8 ]")) == h);
  // Any value, added key or renamed thing changes it.
  CHECK(hashOf(replaced("base_height = 1.0", "base_height = 1.5")) != h);
  CHECK(hashOf(replaced("spacing = 4.0", "spacing = 5.0")) != h);
  CHECK(hashOf(replaced("kind = \"rock\"", "kind = \"bush\"")) != h);
  CHECK(hashOf(replaced("name = \"t\"", "name = \"u\"")) != h);
  CHECK(hashOf(base + "[time]\nday_length = 600.0\n") != h);
}

TEST_CASE("a material table's comment leaves the join identity alone") {
  const std::string dir = std::string(LOAM_SOURCE_DIR);
  std::string table;
  {
    std::ifstream in(dir + "/sim/data/materials.toml");
    std::ostringstream ss;
    ss << in.rdbuf();
    table = ss.str();
  }
  const std::string matPath = "scene_test_materials_tmp.toml", scenePath = "scene_test_identity_tmp.toml";
  auto identityWith = [&](const std::string& materialsText) {
    {
      std::ofstream m(matPath);
      m << materialsText;
      std::ofstream s(scenePath);
      s << "materials = \"" << matPath << "\"\n" << kBase;
    }
    auto r = loadScene(scenePath);
    REQUIRE_MESSAGE(r, (r ? std::string() : r.error().message));
    return sceneJoinHash(*r);
  };
  const std::uint64_t plain = identityWith(table);
  CHECK(identityWith("# the same table\n" + table + "\n# with comments\n") == plain);
  const std::size_t at = table.find("hardness");
  REQUIRE(at != std::string::npos);
  std::string harder = table;
  harder.insert(harder.find_first_of("0123456789", at), "1");
  CHECK(identityWith(harder) != plain);
  std::remove(matPath.c_str());
  std::remove(scenePath.c_str());
}

// Mutates glade.toml a few thousand times (delete, duplicate or replace characters
// and lines, with keyed randomness so failures reproduce) and checks that every load
// either succeeds or returns a located error, never crashing.
TEST_CASE("mutated scene files never crash the loader") {
  const std::string original = readText(std::string(LOAM_SOURCE_DIR) + "/scenes/glade.toml");
  REQUIRE(!original.empty());
  const std::string alphabet = "[]{}=\",.#-+_0123456789aeinrstxyz \n\t.\\'e9";
  constexpr int kMutations = 3000;
  int ok = 0, located = 0;
  for (int n = 0; n < kMutations; ++n) {
    std::string text = original;
    auto draw = [&](int i, std::uint64_t bound) {
      return static_cast<size_t>(genHash(2024, GenPurpose::ChunkOrder, n, i) % bound);
    };
    int edits = 1 + static_cast<int>(draw(0, 3));
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t pos = draw(10 + e * 4, text.size());
      switch (draw(11 + e * 4, 6)) {
        case 0:  // delete a character
          text.erase(pos, 1);
          break;
        case 1:  // duplicate a character
          text.insert(pos, 1, text[pos]);
          break;
        case 2:  // replace a character
          text[pos] = alphabet[draw(12 + e * 4, alphabet.size())];
          break;
        case 3: {  // delete a line
          size_t a = text.rfind('\n', pos);
          a = a == std::string::npos ? 0 : a + 1;
          size_t z = text.find('\n', pos);
          text.erase(a, z == std::string::npos ? std::string::npos : z - a + 1);
          break;
        }
        case 4: {  // duplicate a line
          size_t a = text.rfind('\n', pos);
          a = a == std::string::npos ? 0 : a + 1;
          size_t z = text.find('\n', pos);
          std::string line = text.substr(a, z == std::string::npos ? std::string::npos : z - a + 1);
          text.insert(a, line);
          break;
        }
        default:  // replace a number-ish run with an extreme value
          text.insert(pos, draw(13 + e * 4, 2) ? "1e308" : "-0");
          break;
      }
    }
    auto r = parseScene(text, "glade.toml", materials());
    if (r) {
      ++ok;
      continue;
    }
    const std::string& msg = r.error().message;
    CAPTURE(n);
    CAPTURE(msg);
    REQUIRE(msg.rfind("glade.toml", 0) == 0);
    if (std::regex_search(msg, std::regex(R"(^glade\.toml:\d+:\d+: )"))) ++located;
  }
  MESSAGE(ok << " of " << kMutations << " mutated scenes still valid; " << located << " of "
             << (kMutations - ok) << " errors carry line:column");
  CHECK(ok < kMutations);
  CHECK(located == kMutations - ok);
}
