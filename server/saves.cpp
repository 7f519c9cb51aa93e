#include "server/saves.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <span>
#include <system_error>
#include <utility>

#include "server/log.h"
#include "sim/save/state_codec.h"

namespace loam::server {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kExtension = ".loamsave";
constexpr std::string_view kDbExtension = ".loamdb";

std::string safeName(std::string_view name) {
  std::string s(name);
  for (char& c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-';
    if (!ok) c = '_';
  }
  return s;
}

std::string prefixFor(std::string_view sceneName, std::uint64_t seed) {
  return safeName(sceneName) + "-" + std::to_string(seed) + "-";
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Moves a save out of the way (renamed path + suffix, never deleted) so the next
/// start does not trip on it again and pruning does not count it.
void moveAside(const std::string& path, const char* suffix = ".corrupt") {
  std::error_code ec;
  fs::rename(path, path + suffix, ec);
  if (ec) {
    logLine("could not rename %s to %s: %s", LogValue(path).c_str(), suffix, ec.message().c_str());
  } else {
    logLine("moved %s aside to %s%s", LogValue(path).c_str(), LogValue(path).c_str(), suffix);
  }
}

}  // namespace

std::string saveFileName(std::string_view sceneName, std::uint64_t seed, std::uint64_t tick) {
  return prefixFor(sceneName, seed) + std::to_string(tick) + std::string(kExtension);
}

std::vector<SaveFile> listSaves(const std::string& dir, std::string_view sceneName, std::uint64_t seed) {
  std::vector<SaveFile> out;
  const std::string prefix = prefixFor(sceneName, seed);
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return out;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() + kExtension.size()) continue;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.compare(name.size() - kExtension.size(), kExtension.size(), kExtension) != 0) continue;
    // The middle must be the tick and nothing else (a scene named "a-1" with seed 2
    // must not pick up scene "a"'s files and vice versa).
    std::string_view digits(name.data() + prefix.size(), name.size() - prefix.size() - kExtension.size());
    std::uint64_t tick = 0;
    auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), tick);
    if (err != std::errc{} || end != digits.data() + digits.size()) continue;
    out.push_back({it->path().string(), tick});
  }
  std::sort(out.begin(), out.end(), [](const SaveFile& a, const SaveFile& b) { return a.tick > b.tick; });
  return out;
}

namespace {

/// The format version of save bytes by the documented header layout (sim/save/save.h:
/// magic "LOAMSAVE", then u32 little-endian version), or nothing when the bytes are
/// not a Loam save at all (then decodeSave's verdict, corrupt, applies).
std::optional<std::uint32_t> saveFormatOf(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 12 || std::memcmp(bytes.data(), "LOAMSAVE", 8) != 0) return std::nullopt;
  return static_cast<std::uint32_t>(bytes[8]) | static_cast<std::uint32_t>(bytes[9]) << 8 |
         static_cast<std::uint32_t>(bytes[10]) << 16 | static_cast<std::uint32_t>(bytes[11]) << 24;
}

}  // namespace

sim::Result<SaveSearch> loadNewestSave(const std::string& dir, std::string_view sceneName,
                                       const sim::SaveIdentity& identity, sim::SimState& state,
                                       const std::function<sim::Result<sim::SimState>()>& regenerate,
                                       bool freshWorld) {
  SaveSearch search;
  // A save that belongs elsewhere: a stop, or (asked for) set aside.
  auto unusable = [&](const std::string& path, const std::string& why) {
    if (!freshWorld) {
      search.unusable = "save " + path + " cannot be used here: " + why +
                        "; start with --fresh-world to set it aside (as .stale) and start from the generated world, "
                        "or move it out of the save folder";
      return false;
    }
    logLine("--fresh-world: skipping save %s: %s", LogValue(path).c_str(), LogValue(why).c_str());
    // Out of the list, or pruning would count its higher ticks and delete every save
    // of the current world as soon as it is written.
    moveAside(path, ".stale");
    return true;
  };
  for (const SaveFile& file : listSaves(dir, sceneName, identity.seed)) {
    auto t0 = std::chrono::steady_clock::now();
    auto bytes = sim::readFileBytes(file.path);
    if (!bytes) {
      logLine("cannot read save: %s; trying the next one", LogValue(bytes.error().message).c_str());
      continue;
    }
    if (auto format = saveFormatOf(*bytes); format && *format != sim::kSaveFormatVersion) {
      if (!unusable(file.path, "save format version " + std::to_string(*format) + ", this build reads version " +
                                   std::to_string(sim::kSaveFormatVersion))) {
        return search;
      }
      continue;
    }
    auto data = sim::decodeSave(*bytes);
    if (!data) {
      logLine("save %s is corrupt: %s", LogValue(file.path).c_str(), LogValue(data.error().message).c_str());
      moveAside(file.path);
      continue;
    }
    if (auto id = sim::checkSaveIdentity(data->header, identity); !id) {
      // Another world under the same name and seed (the scene, materials or generator changed).
      if (!unusable(file.path, id.error().message)) return search;
      continue;
    }
    if (auto r = sim::restoreState(*data, state); !r) {
      logLine("save %s does not restore: %s", LogValue(file.path).c_str(), LogValue(r.error().message).c_str());
      moveAside(file.path);
      logLine("regenerating the world after the failed restore");
      auto fresh = regenerate();
      if (!fresh) return fresh.error();
      state = std::move(*fresh);
      continue;
    }
    LoadedSave loaded{file.path, data->header.tick, data->bricks.size(), data->blobs.size()};
    logLine("loaded save %s: tick %" PRIu64 ", %zu bricks, %zu state blobs, %.1f ms", LogValue(file.path).c_str(),
            loaded.tick, loaded.bricks, loaded.blobs, msSince(t0));
    search.loaded = std::move(loaded);
    return search;
  }
  return search;
}

std::string worldDbFileName(std::string_view sceneName, std::uint64_t seed) {
  return safeName(sceneName) + "-" + std::to_string(seed) + std::string(kDbExtension);
}

namespace {

/// Moves a database and its WAL files aside (the database must be closed).
void moveDbAside(const std::string& path, const char* suffix) {
  moveAside(path, suffix);
  for (const char* side : {"-wal", "-shm"}) {
    std::error_code ec;
    if (fs::exists(path + side, ec)) fs::rename(path + side, path + suffix + side, ec);
  }
}

/// A new database holding state (all of it: the import of a save or the generated world).
sim::Result<std::unique_ptr<sim::WorldDb>> createFromState(const std::string& path, const sim::SaveIdentity& identity,
                                                           const sim::SimState& state) {
  sim::SaveHeader header;
  header.identity = identity;
  header.tick = state.tick;
  auto data = sim::captureSave(header, state.world, sim::stateBlobs(state));
  if (!data) return data.error();
  return sim::createWorldDbFromSave(path, std::move(*data), sim::changedChunkTerms(state.world));
}

/// Deletes the damaged rows a load or an index named (logged one per line), or says
/// why the start stops: "" when it may go on.
std::string dropDamaged(sim::WorldDb& db, const std::string& path, const std::vector<std::string>& damaged,
                        std::size_t rows, std::vector<sim::BrickCoord> bricks, std::vector<sim::ChunkCoord> terms,
                        bool skipDamaged) {
  for (const std::string& line : damaged)
    logLine("world database %s: damaged %s", LogValue(path).c_str(), line.c_str());  // our words and numbers
  if (damaged.empty()) return "";
  if (!skipDamaged) {
    return "world database " + path + " has " + std::to_string(rows) +
           " damaged rows (listed above); start with --skip-damaged-bricks to continue without them "
           "(their bricks return to their generated content), or restore a backup with loam-tool import-save";
  }
  sim::WorldDbCommit drop;
  drop.tick = db.header().tick;
  drop.removed = std::move(bricks);
  drop.removedTerms = std::move(terms);
  if (auto r = db.commit(drop); !r) return "cannot delete the damaged rows: " + r.error().message;
  logLine("--skip-damaged-bricks: continuing without %zu damaged rows (deleted)", rows);
  return "";
}

/// The stored columns of a streamed state's database at path (a read-only connection),
/// given to state's store: from here on its columns load their rows as they arrive.
sim::Result<std::unique_ptr<sim::WorldDbColumns>> storeColumns(const std::string& path, sim::SimState& state,
                                                                 std::span<const sim::ChunkColumn> columns,
                                                                 std::vector<sim::ChunkTerm> terms) {
  auto reader = sim::WorldDb::openReader(path);
  if (!reader) return reader.error();
  auto stored = std::make_unique<sim::WorldDbColumns>(std::move(*reader), columns, std::move(terms));
  stored->applyPresent(state.world);
  state.world.setStoredColumns(stored.get());
  return stored;
}

/// Opens a streamed world's database lazily: its index, not its rows. Columns load
/// their rows when something reads them (the blobs' restore reads those with water
/// and fire). Chunks without a stored term (a format-1 database) are loaded now and
/// their terms committed.
sim::Result<void> openLazily(WorldDbStart& start, const std::string& path, sim::SimState& state,
                             bool skipDamaged) {
  auto t0 = std::chrono::steady_clock::now();
  sim::WorldDb& db = *start.db;
  auto index = db.loadIndex();
  if (!index) {
    start.stop = "world database is damaged: " + index.error().message;
    return {};
  }
  start.stop = dropDamaged(db, path, index->damaged, index->damagedRows, std::move(index->damagedBricks),
                           std::move(index->damagedTerms), skipDamaged);
  if (!start.stop.empty()) return {};
  auto stored = storeColumns(path, state, index->columns, std::move(index->terms));
  if (!stored) return stored.error();
  start.stored = std::move(*stored);
  if (!index->missingTerms.empty()) {
    for (sim::ChunkCoord c : index->missingTerms) state.world.ensureColumn({c.x, c.z});
    sim::WorldDbCommit terms;
    terms.tick = db.header().tick;
    for (const sim::ChunkTerm& t : sim::changedChunkTerms(state.world))
      if (std::binary_search(index->missingTerms.begin(), index->missingTerms.end(), t.chunk)) terms.terms.push_back(t);
    if (auto r = db.commit(terms); !r) return r.error();
    logLine("world database %s: computed the terms of %zu chunks that had none (an older database)",
            LogValue(path).c_str(), terms.terms.size());
  }
  sim::SaveData blobs;
  blobs.header = db.header();
  blobs.bounds = db.bounds();
  blobs.blobs = std::move(index->blobs);
  if (auto r = sim::restoreState(blobs, state); !r) {
    start.stop = "world database " + path + " does not restore: " + r.error().message;
    return {};
  }
  logLine("loaded world database %s lazily: tick %" PRIu64 ", %zu columns hold edits, %zu loaded at start, %.1f ms",
          LogValue(path).c_str(), db.header().tick, index->columns.size(),
          static_cast<std::size_t>(start.stored->stats().columnsLoaded), msSince(t0));
  return {};
}

}  // namespace

sim::Result<WorldDbStart> openWorldDb(const std::string& dir, std::string_view sceneName,
                                      const sim::SaveIdentity& identity, sim::SimState& state,
                                      const std::function<sim::Result<sim::SimState>()>& regenerate, bool freshWorld,
                                      bool skipDamaged) {
  WorldDbStart start;
  const std::string path = (fs::path(dir) / worldDbFileName(sceneName, identity.seed)).string();
  std::error_code ec;
  if (fs::exists(path, ec)) {
    auto t0 = std::chrono::steady_clock::now();
    auto db = sim::WorldDb::open(path);
    if (!db) {
      start.stop = "world database " + db.error().message +
                   "; it was left as it is (move it away, or restore a backup with loam-tool import-save)";
      return start;
    }
    std::string why;
    if ((*db)->header().formatVersion != sim::kSaveFormatVersion) {
      why = "save format version " + std::to_string((*db)->header().formatVersion) + ", this build reads version " +
            std::to_string(sim::kSaveFormatVersion);
    } else if (auto id = sim::checkSaveIdentity((*db)->header(), identity); !id) {
      why = id.error().message;
    }
    if (!why.empty()) {
      if (!freshWorld) {
        start.stop = "world database " + path + " cannot be used here: " + why +
                     "; start with --fresh-world to set it aside (as .stale) and start from the generated world, "
                     "or move it out of the save folder";
        return start;
      }
      logLine("--fresh-world: setting world database %s aside: %s", LogValue(path).c_str(), LogValue(why).c_str());
      db->reset();
      moveDbAside(path, ".stale");
    } else if (state.world.columnSource() != nullptr) {
      start.db = std::move(*db);
      if (auto r = openLazily(start, path, state, skipDamaged); !r) return r.error();
      if (!start.stop.empty()) start.db.reset();
      return start;
    } else {
      auto contents = (*db)->load();
      if (!contents) {
        start.stop = "world database is damaged: " + contents.error().message;
        return start;
      }
      start.stop = dropDamaged(**db, path, contents->damaged, contents->damagedRows,
                               std::move(contents->damagedBricks), std::move(contents->damagedTerms), skipDamaged);
      if (!start.stop.empty()) return start;
      if (auto r = sim::restoreState(contents->save, state); !r) {
        start.stop = "world database " + path + " does not restore: " + r.error().message;
        return start;
      }
      logLine("loaded world database %s: tick %" PRIu64 ", %zu bricks, %zu state blobs, %.1f ms",
              LogValue(path).c_str(), contents->save.header.tick, contents->save.bricks.size(),
              contents->save.blobs.size(), msSince(t0));
      start.db = std::move(*db);
      return start;
    }
  }
  // No database: the newest usable single-file save, imported, or the generated world.
  auto search = loadNewestSave(dir, sceneName, identity, state, regenerate, freshWorld);
  if (!search) return search.error();
  if (!search->unusable.empty()) {
    start.stop = search->unusable;
    return start;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto db = createFromState(path, identity, state);
  if (!db) return db.error();
  if (search->loaded) {
    logLine("imported save %s into world database %s: tick %" PRIu64 ", %zu bricks, %.1f ms",
            LogValue(search->loaded->path).c_str(), LogValue(path).c_str(), search->loaded->tick,
            search->loaded->bricks, msSince(t0));
  } else {
    logLine("created world database %s for the generated world", LogValue(path).c_str());
  }
  start.db = std::move(*db);
  if (state.world.columnSource() != nullptr) {
    auto stored = storeColumns(path, state, {}, {});
    if (!stored) return stored.error();
    start.stored = std::move(*stored);
  }
  return start;
}

}  // namespace loam::server
