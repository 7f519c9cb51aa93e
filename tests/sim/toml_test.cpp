// sim/core/toml.h: text that breaks one of toml++ 3.3's parser invariants is a
// located syntax error in every build, never an abort (Debug) or undefined
// behaviour (clang release).
#include <doctest/doctest.h>

#include <string>

#include "sim/core/toml.h"
#include "sim/gen/scene.h"

TEST_CASE("text that breaks a toml++ invariant is a located parse error") {
  struct Case {
    const char* text;
    unsigned line, column;
  };
  // parse_key's first character (upstream PR #301) and parse_value's terminator.
  // And is_non_ascii_horizontal_whitespace's gaps (U+00A1 after a value: UB before).
  for (const Case& c : {Case{"[[[1]]]", 1, 3}, Case{"a = 1\n[[[\"q\"]]]\n", 2, 3}, Case{"a = [2.0, }.5]", 1, 11},
                        Case{"a = 1\xc2\xa1", 1, 6}, Case{"a = true\xe3\x84\x80", 1, 9}}) {
    CAPTURE(c.text);
    bool threw = false;
    try {
      (void)toml::parse(c.text);
    } catch (const toml::parse_error& e) {
      threw = true;
      CHECK(e.source().begin.line == c.line);
      CHECK(e.source().begin.column == c.column);
    }
    CHECK(threw);
  }
  CHECK(toml::parse("[a]\nb = 2\n")["a"]["b"].value_or(0) == 2);
  // Non-ASCII text in strings and comments is fine.
  CHECK(toml::parse("a = 1 # \xc3\xa9\nb = \"\xc2\xa1\"\n")["b"].value_or(std::string()) == "\xc2\xa1");
}

TEST_CASE("a scene with the pattern is refused with a located message") {
  auto scene = loam::sim::parseScene("name = \"x\"\n[[[1]]]\n", "t.toml", nullptr);
  REQUIRE_FALSE(scene.has_value());
  CHECK(scene.error().message.rfind("t.toml:2:3: TOML syntax error", 0) == 0);
}
