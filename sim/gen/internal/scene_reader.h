// The TOML reading layer of scene loading (sim/gen/scene.h), shared by
// sim/gen/scene.cpp (files, parsing, the public API) and sim/gen/scene_tables.cpp
// (each table of the document into its Scene part). Every value is read through a
// Reader that knows the keys a table may hold, checks types and ranges, and reports
// "file:line:column: path.key: what is wrong". A failure throws SceneError, which
// parseScene/loadScene turn into an Error; nothing escapes them.
#pragma once

#include <algorithm>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/toml.h"

#include "sim/gen/scene.h"

namespace loam::sim::internal::scene_toml {

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

/// "file:line:column" of a source region ("file" when it has no position).
std::string locate(const Ctx& ctx, const toml::source_region& r);

/// Throws SceneError "located: msg".
[[noreturn]] void failAt(const Ctx& ctx, const toml::source_region& r, const std::string& msg);

/// "a table", "an integer", ...: the kind of a node, for messages.
std::string_view typeName(const toml::node& n);

/// A number as %g, for messages.
std::string fmtNum(double v);

/// Levenshtein distance, for "did you mean" hints on unknown keys.
int editDistance(std::string_view a, std::string_view b);

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

  /// As range, but min may exceed max: the interval wraps around hi (angles).
  Range wrappedRange(std::string_view key, Range def, double lo, double hi) {
    const toml::node* n = get(key);
    if (!n) return def;
    auto v = numbers(*n, key, 2, 2, lo, hi);
    return {v[0], v[1]};
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

/// Reads the whole document into s (materials resolved through ctx); throws
/// SceneError on the first problem. Defined in sim/gen/scene_tables.cpp.
void readDocument(const toml::table& doc, const Ctx& ctx, Scene& s);

}  // namespace loam::sim::internal::scene_toml
