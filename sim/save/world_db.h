// The world database: a server's world as an SQLite file (WAL mode, synchronous=FULL)
// that holds only what differs from the generated world, one row per changed brick,
// and is written incrementally: a commit writes the bricks touched since the last
// commit, deletes the rows of bricks that went back to their generated content and
// replaces the state blobs whose bytes changed, in one transaction. A crash (kill -9,
// power loss) loses at most the last commit; the single-file save (save.h) stays as
// export and backup.
//
// Tables:
//   meta(key TEXT PRIMARY KEY, value INTEGER): "db_format", "save_format",
//     "scene_hash", "seed", "generator_version", "tick", "min_x" .. "max_z" (bounds)
//   bricks(x, y, z INTEGER, content BLOB, hash INTEGER; PRIMARY KEY (x, y, z)):
//     content = encodeBrickContent (the save file's brick codec), hash = XXH3-64 of
//     the 12 coordinate bytes (little-endian x, y, z) followed by content
//   blobs(name TEXT PRIMARY KEY, raw_size INTEGER, packed BLOB, hash INTEGER):
//     packed = the blob's bytes as one zstd frame of raw_size bytes, hash = XXH3-64
//     of name then the raw bytes
//
// Every byte of the file is hostile: sizes are checked before use, a row whose hash
// or content is wrong is reported as damaged (named by its brick coordinates or blob
// name), a file that is not an SQLite database or not a Loam world is an error, never
// a crash. Library loam_save (links SQLite). One WorldDb is used by one thread at a
// time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/result.h"
#include "sim/save/save.h"

struct sqlite3;

namespace loam::sim {

/// The database layout this build writes and reads (meta "db_format").
inline constexpr std::uint32_t kWorldDbFormatVersion = 1;
/// Largest blob (raw bytes) a loader accepts; the buffer also grows only as the
/// compressed frame yields bytes (decompressZstdFrame).
inline constexpr std::uint64_t kMaxWorldDbBlobBytes = std::uint64_t{1} << 30;

/// What a commit changes.
struct WorldDbCommit {
  std::uint64_t tick = 0;               ///< the state's tick (meta "tick")
  std::vector<SavedBrick> bricks;       ///< rows written (inserted or replaced)
  std::vector<BrickCoord> removed;      ///< rows deleted (back to generated content)
  std::vector<SaveBlob> blobs;          ///< written only when their bytes changed
};

/// What a commit wrote.
struct WorldDbCommitStats {
  std::uint64_t bricksWritten = 0;
  std::uint64_t bricksDeleted = 0;   ///< rows that existed and were deleted
  std::uint64_t blobsWritten = 0;    ///< blobs whose bytes changed
  std::uint64_t bytesWritten = 0;    ///< brick contents and (compressed) blob bytes written
};

/// A database's contents as read by load().
struct WorldDbContents {
  SaveData save;                      ///< header, bounds, readable bricks (canonical order), blobs
  std::vector<std::string> damaged;   ///< one line per damaged row: "brick (x, y, z): why"
  std::vector<BrickCoord> damagedBricks;  ///< the damaged rows' keys (commit them as removed to drop them)
  std::size_t damagedRows = 0;            ///< all damaged brick rows (damaged names at most 64)
};

class WorldDb {
 public:
  ~WorldDb();
  WorldDb(const WorldDb&) = delete;
  WorldDb& operator=(const WorldDb&) = delete;

  /// Creates a new, empty database at path for the world of header (its tick too) and
  /// bounds. Errors: path exists, or SQLite cannot create it (then no file is left).
  static Result<std::unique_ptr<WorldDb>> create(const std::string& path, const SaveHeader& header,
                                                 const WorldBounds& bounds);

  /// Opens an existing database and reads its meta. Errors (the file is then never
  /// changed): missing, not an SQLite database, not a Loam world database (tables or
  /// meta missing or out of range), another db_format. The save format and identity
  /// are read, not checked: see checkSaveIdentity and header().formatVersion.
  static Result<std::unique_ptr<WorldDb>> open(const std::string& path);

  const std::string& path() const noexcept { return path_; }
  /// Identity, save format (of the state blobs) and tick of the last commit.
  const SaveHeader& header() const noexcept { return header_; }
  const WorldBounds& bounds() const noexcept { return bounds_; }

  /// Reads every row. A row whose hash, coordinates (outside the bounds) or content is
  /// wrong is left out and named in damaged; blobs must all be readable (a damaged
  /// blob is an error: the state cannot be restored without it). Errors: SQLite
  /// cannot read the tables (a damaged file). Allocates about 600 bytes per row.
  Result<WorldDbContents> load();

  /// Applies one commit in a single transaction (rolled back on any error), then
  /// sets meta "tick". Blobs whose bytes equal the stored ones are not written.
  Result<WorldDbCommitStats> commit(const WorldDbCommit& c);

  /// Rows in the bricks table (tests, tools).
  Result<std::uint64_t> brickRows();

 private:
  WorldDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Result<void> readMeta();
  Result<void> prepare();

  sqlite3* db_ = nullptr;
  std::string path_;
  SaveHeader header_;
  WorldBounds bounds_{};
  std::map<std::string, std::uint64_t> blobHashes_;  ///< stored blobs, to skip unchanged ones
};

/// Writes a whole save (every brick and blob of data) into a new database at path:
/// the import of an old save and loam-tool import-save. Errors: path exists, SQLite
/// (then no file is left behind).
Result<std::unique_ptr<WorldDb>> createWorldDbFromSave(const std::string& path, const SaveData& data);
/// As above, taking data's bricks and blobs instead of copying them (the server's new
/// database for a generated world: highlands' water blob is 150 MB).
Result<std::unique_ptr<WorldDb>> createWorldDbFromSave(const std::string& path, SaveData&& data);

}  // namespace loam::sim
