// The scene Reader's message helpers (sim/gen/internal/scene_reader.h).
#include "sim/gen/internal/scene_reader.h"

namespace loam::sim::internal::scene_toml {

std::string locate(const Ctx& ctx, const toml::source_region& r) {
  std::string s = ctx.file;
  if (r.begin.line > 0) {
    // Appended piece by piece: gcc 12 at -O3 warns (-Wrestrict, a false positive) on
    // ":" + std::to_string(...) here.
    s += ':';
    s += std::to_string(r.begin.line);
    s += ':';
    s += std::to_string(r.begin.column);
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

}  // namespace loam::sim::internal::scene_toml
