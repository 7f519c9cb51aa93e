#include "sim/world/material.h"

#include <doctest/doctest.h>

#include <string>

using namespace loam::sim;

namespace {

const char* kAirText = R"([[material]]
name = "air"
colour = "#000000"
density = 1.2
hardness = 0.0
burn_ticks = 0
flammability = 0.0
sound = "none"
acoustic_opacity = 0.0
transmission_loss = [0.0, 0.0, 0.0]
solid = false
liquid = false
foliage = false
)";

// Lines 14..27 (line 14 is blank).
const char* kStoneText = R"(
[[material]]
name = "stone"
colour = "#7d7d7d"
density = 2600
hardness = 6.0
burn_ticks = 0
flammability = 0.0
sound = "stone"
acoustic_opacity = 1.0
transmission_loss = [45.0, 60.0, 75.0]
solid = true
liquid = false
foliage = false
)";

std::string replaceLine(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

std::string errorOf(const std::string& text) {
  auto r = MaterialTable::loadFromString(text, "test.toml");
  REQUIRE_FALSE(r.has_value());
  return r.error().message;
}

}  // namespace

TEST_CASE("the shipped material table loads") {
  auto r = MaterialTable::load(LOAM_SOURCE_DIR "/sim/data/materials.toml");
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  const MaterialTable& t = *r;
  CHECK(t[kAir].name == "air");
  CHECK_FALSE(t[kAir].solid);
  for (const char* name : {"air", "grass", "soil", "sand", "gravel", "stone", "rock", "wood", "planks", "leaves",
                           "water", "glass", "ash", "charcoal", "cobble", "clay"}) {
    INFO(name);
    auto id = t.find(name);
    REQUIRE(id.has_value());
    CHECK(t[*id].name == name);
  }
  CHECK(t.find("unobtainium") == std::nullopt);
  const Material& water = t[*t.find("water")];
  CHECK(water.liquid);
  CHECK_FALSE(water.solid);
  CHECK(water.sound == SoundClass::Water);
  const Material& leaves = t[*t.find("leaves")];
  CHECK(leaves.foliage);
  CHECK(leaves.transmissionLossDbPerM[kBandLow] < leaves.transmissionLossDbPerM[kBandHigh]);
  const Material& stone = t[*t.find("stone")];
  CHECK(stone.colour == Rgb8{0x7d, 0x7d, 0x7d});
  CHECK(stone.density == 2600.0f);
  CHECK(t[*t.find("wood")].burnTicks > 0);
  CHECK(soundClassName(SoundClass::Foliage) == "foliage");
}

TEST_CASE("a minimal table: integers accepted where numbers are wanted") {
  auto r = MaterialTable::loadFromString(std::string(kAirText) + kStoneText, "test.toml");
  REQUIRE_MESSAGE(r.has_value(), (r ? "" : r.error().message));
  CHECK(r->size() == 2);
  CHECK((*r)[1].density == 2600.0f);
}

TEST_CASE("material file errors name file, line and column") {
  const std::string good = std::string(kAirText) + kStoneText;
  SUBCASE("bad TOML") {
    std::string e = errorOf(replaceLine(good, "hardness = 6.0", "hardness = = 6.0"));
    CHECK(e.find("test.toml:19:") == 0);
    CHECK(e.find("TOML syntax error") != std::string::npos);
  }
  SUBCASE("missing field") {
    std::string e = errorOf(replaceLine(good, "sound = \"stone\"\n", ""));
    CHECK(e.find("test.toml:15:1:") == 0);  // the [[material]] header
    CHECK(e.find("'stone'") != std::string::npos);
    CHECK(e.find("missing field 'sound'") != std::string::npos);
  }
  SUBCASE("wrong type") {
    std::string e = errorOf(replaceLine(good, "solid = true", "solid = \"yes\""));
    CHECK(e.find("test.toml:25:9:") == 0);
    CHECK(e.find("field 'solid' must be a boolean") != std::string::npos);
    CHECK(e.find("found a string") != std::string::npos);
  }
  SUBCASE("wrong type for a number") {
    std::string e = errorOf(replaceLine(good, "density = 2600", "density = \"heavy\""));
    CHECK(e.find("test.toml:18:11:") == 0);
    CHECK(e.find("must be a number") != std::string::npos);
  }
  SUBCASE("duplicate name") {
    std::string e = errorOf(good + replaceLine(kStoneText, "#7d7d7d", "#000000"));
    CHECK(e.find("test.toml:30:8:") == 0);
    CHECK(e.find("duplicate material name 'stone' (first defined at line 16)") != std::string::npos);
  }
  SUBCASE("unknown field") {
    std::string e = errorOf(replaceLine(good, "liquid = false\nfoliage = false\n\0", "liquid = false\nfoliage = false\nshiny = true\n"));
    CHECK(e.find("unknown field 'shiny'") != std::string::npos);
    CHECK(e.find("test.toml:") == 0);
  }
  SUBCASE("values out of range or malformed") {
    CHECK(errorOf(replaceLine(good, "acoustic_opacity = 1.0", "acoustic_opacity = 1.5")).find("test.toml:23:20:") == 0);
    CHECK(errorOf(replaceLine(good, "#7d7d7d", "grey")).find("must be sRGB hex") != std::string::npos);
    CHECK(errorOf(replaceLine(good, "sound = \"stone\"", "sound = \"boing\"")).find("unknown sound class 'boing'") !=
          std::string::npos);
    CHECK(errorOf(replaceLine(good, "[45.0, 60.0, 75.0]", "[45.0, 60.0]")).find("array of 3 numbers") !=
          std::string::npos);
    CHECK(errorOf(replaceLine(good, "burn_ticks = 0\nflammability = 0.0\nsound = \"stone\"", "burn_ticks = -5\nflammability = 0.0\nsound = \"stone\"")).find("must be in [0,") != std::string::npos);
    CHECK(errorOf(replaceLine(good, "name = \"stone\"", "name = \"Stone Block\"")).find("a-z") != std::string::npos);
  }
  SUBCASE("air must come first") {
    std::string e = errorOf(std::string(kStoneText) + kAirText);
    CHECK(e.find("first material must be 'air'") != std::string::npos);
  }
  SUBCASE("no materials, or something else at top level") {
    CHECK(errorOf("").find("no [[material]]") != std::string::npos);
    CHECK(errorOf("title = 3\n").find("test.toml:1:1: unknown top-level key 'title'") == 0);
    CHECK(errorOf("material = 3\n").find("array of tables") != std::string::npos);
  }
}

TEST_CASE("a missing file is an error, not a crash") {
  auto r = MaterialTable::load("/nonexistent/materials.toml");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("/nonexistent/materials.toml: cannot open") == 0);
}
