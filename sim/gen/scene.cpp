// Scene loading, the public API of sim/gen/scene.h: files, TOML parsing, the
// material table a scene names, hashes and the kind names. The document is read
// table by table in sim/gen/scene_tables.cpp through the checked Reader of
// sim/gen/internal/scene_reader.h; a failure there throws a private exception that
// parseScene/loadScene turn into an Error; nothing escapes.
#include "sim/gen/scene.h"

#include <xxhash.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>
#include <utility>

#include "sim/core/toml.h"

#include "sim/core/state_hasher.h"
#include "sim/gen/internal/scene_reader.h"

namespace loam::sim {

using namespace internal::scene_toml;

namespace {

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

/// Adds a parsed TOML node to h: a tag per type, tables in key order (toml++ keeps
/// them sorted), values as parsed (a float by its bits, so "1.0" and "1.00" agree).
void addNode(StateHasher& h, const toml::node& node) {
  node.visit([&](const auto& v) {
    using T = std::remove_cvref_t<decltype(v)>;
    if constexpr (std::is_same_v<T, toml::table>) {
      h.add('t'), h.add(static_cast<std::uint64_t>(v.size()));
      for (const auto& [key, child] : v) h.add(key.str()), addNode(h, child);
    } else if constexpr (std::is_same_v<T, toml::array>) {
      h.add('a'), h.add(static_cast<std::uint64_t>(v.size()));
      for (const toml::node& child : v) addNode(h, child);
    } else if constexpr (std::is_same_v<T, toml::value<std::string>>) {
      h.add('s'), h.add(std::string_view(v.get()));
    } else if constexpr (std::is_same_v<T, toml::value<std::int64_t>>) {
      h.add('i'), h.add(v.get());
    } else if constexpr (std::is_same_v<T, toml::value<double>>) {
      h.add('f'), h.add(v.get());
    } else if constexpr (std::is_same_v<T, toml::value<bool>>) {
      h.add('b'), h.add(v.get());
    } else if constexpr (std::is_same_v<T, toml::value<toml::date>>) {
      h.add('d'), h.add(v.get().year), h.add(v.get().month), h.add(v.get().day);
    } else if constexpr (std::is_same_v<T, toml::value<toml::time>>) {
      h.add('c'), h.add(v.get().hour), h.add(v.get().minute), h.add(v.get().second), h.add(v.get().nanosecond);
    } else {  // toml::value<toml::date_time>: written out whole, offset included
      const toml::date_time& t = v.get();
      h.add('D'), h.add(t.date.year), h.add(t.date.month), h.add(t.date.day), h.add(t.time.hour);
      h.add(t.time.minute), h.add(t.time.second), h.add(t.time.nanosecond), h.add(t.offset.has_value());
      if (t.offset) h.add(t.offset->minutes);
    }
  });
}

/// The scene's identity is its parsed content, not its bytes: a comment, blank line,
/// CRLF, spacing, key order or spelling of a number changes nothing, any value does.
std::uint64_t tomlContentHash(const toml::table& doc) {
  StateHasher h(0x4C4F414D5343454EULL);  // "LOAMSCEN"
  addNode(h, doc);
  return h.digest();
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
    s.hash = tomlContentHash(*doc);
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
    s.hash = tomlContentHash(*doc);
    auto matDoc = parseToml(*matText, resolved.string());
    if (!matDoc) return std::move(matDoc).error();
    s.materialsHash = tomlContentHash(*matDoc);
    return s;
  } catch (const SceneError& e) {
    return makeError(e.message());
  } catch (const std::exception& e) {
    return makeError(path + ": cannot load scene: " + e.what());
  }
}

}  // namespace loam::sim
