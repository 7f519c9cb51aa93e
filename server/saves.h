// Server saves: the world database a server commits to (sim/save/world_db.h; the
// writing is server/commit_writer.h), opened at start, and the single-file saves of
// earlier versions, imported when no database exists yet.
//
// The database is <save-dir>/<scene>-<seed>.loamdb (with SQLite's -wal and -shm next
// to it while open; scene name with anything but [A-Za-z0-9_.-] replaced by '_').
// Single-file saves (<scene>-<seed>-<tick>.loamsave) are no longer written by the
// server (loam-tool export-save makes one); when importing, the highest tick is tried
// first; a file that does not decode is renamed to <file>.corrupt and the next one is
// tried. A database or save that cannot be used here (another save format, or
// another world: scene content, seed or generator differ) stops the start, so a world
// is never silently replaced by a fresh one; only when the operator asks for a fresh
// world (--fresh-world) is it renamed to <file>.stale (and the next one tried).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/result.h"
#include "sim/save/state_codec.h"
#include "sim/save/save.h"
#include "sim/save/world_db.h"
#include "sim/save/world_db_columns.h"
#include "sim/systems/sim_state.h"

namespace loam::server {

/// A save file found on disk.
struct SaveFile {
  std::string path;
  std::uint64_t tick = 0;  ///< from the file name
};

/// The file name (no folder) of a save. Allocates.
std::string saveFileName(std::string_view sceneName, std::uint64_t seed, std::uint64_t tick);

/// Save files of this scene and seed in dir, highest tick first. A missing or
/// unreadable folder gives an empty list. Allocates.
std::vector<SaveFile> listSaves(const std::string& dir, std::string_view sceneName, std::uint64_t seed);

/// What loadNewestSave did.
struct LoadedSave {
  std::string path;
  std::uint64_t tick = 0;
  std::size_t bricks = 0;
  std::size_t blobs = 0;
};

/// What loadNewestSave found.
struct SaveSearch {
  std::optional<LoadedSave> loaded;  ///< the save applied; none = the generated world
  /// Not empty: a save that cannot be used here stopped the search (freshWorld off).
  /// One line naming the file and what differs; nothing was applied or moved.
  std::string unusable;
};

/// Finds the newest save of this scene and seed and applies it to state with
/// restoreState. state must be the freshly generated state; `regenerate` is called to
/// rebuild it when a save fails part-way through restoring (the state may then be
/// half-applied). A save of another format or world stops the search (unusable set)
/// unless freshWorld, which moves it aside as .stale and goes on. Logs one line per
/// file it rejects. Errors: regenerate failed.
sim::Result<SaveSearch> loadNewestSave(const std::string& dir, std::string_view sceneName,
                                       const sim::SaveIdentity& identity, sim::SimState& state,
                                       const std::function<sim::Result<sim::SimState>()>& regenerate,
                                       bool freshWorld);

/// The world database's file (no folder): <scene>-<seed>.loamdb. Allocates.
std::string worldDbFileName(std::string_view sceneName, std::uint64_t seed);

/// What openWorldDb did.
struct WorldDbStart {
  std::unique_ptr<sim::WorldDb> db;  ///< open and in step with state (none when stop is set)
  /// A streamed state's stored columns (given to its store, which they must outlive):
  /// the database's rows load as columns arrive, and columns page out.
  std::unique_ptr<sim::WorldDbColumns> stored;
  /// Not empty: the start must stop (exit 2) with this one line; nothing was replaced.
  std::string stop;
};

/// Opens <dir>/worldDbFileName and restores state from it (restoreState; a streamed
/// state lazily: WorldDbStart::stored loads each column's rows as it arrives), or, when
/// there is none, imports the newest usable .loamsave (loadNewestSave) into a new
/// database, or creates an empty one for the generated world. state must be the
/// freshly generated state. Stops (WorldDbStart::stop) when the file is not a world
/// database or cannot be read, when it belongs to another world or save format
/// (unless freshWorld: then it is moved aside as .stale with its -wal and -shm), and
/// when rows are damaged (named one per log line) unless skipDamaged: then they are
/// logged, deleted from the database and the bricks keep their generated content.
/// Errors: regenerate failed, or a new database cannot be created.
sim::Result<WorldDbStart> openWorldDb(const std::string& dir, std::string_view sceneName,
                                      const sim::SaveIdentity& identity, sim::SimState& state,
                                      const std::function<sim::Result<sim::SimState>()>& regenerate, bool freshWorld,
                                      bool skipDamaged);

}  // namespace loam::server
