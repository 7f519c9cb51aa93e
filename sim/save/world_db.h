// The world database: a server's world as an SQLite file (WAL mode, synchronous=FULL)
// that holds only what differs from the generated world, one row per changed brick,
// and is written incrementally: a commit writes the bricks touched since the last
// commit, deletes the rows of bricks that went back to their generated content and
// replaces the state blobs whose bytes changed, in one transaction. A crash (kill -9,
// power loss) loses at most the last commit; the single-file save (save.h) stays as
// export and backup.
//
// A streamed world loads lazily: at start the server reads only the index (loadIndex:
// meta, blobs, chunk terms and which chunk columns hold rows) and reads a column's
// brick rows (loadColumn) when the column is first needed, possibly on another thread
// through a read-only connection (openReader) while the writer keeps committing.
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
//   chunks(x, y, z INTEGER, term INTEGER, hash INTEGER; PRIMARY KEY (x, y, z)):
//     one row per changed chunk holding its world-hash term (ChunkTerm in
//     column_source.h), so a server hashes the world without reading every brick;
//     hash = XXH3-64 of the 12 coordinate bytes (little-endian x, y, z) followed by
//     the 8 term bytes (little-endian). Since format 2, with the index
//     bricks_by_column(x >> 4, z >> 4) that loadColumn seeks: open() upgrades a
//     format-1 database in place (creates both, sets db_format 2) in one transaction;
//     its terms are absent (WorldDbIndex::missingTerms).
// A u64 (hash, term, seed) is stored as the signed INTEGER of the same 64 bits.
//
// Every byte of the file is hostile: sizes are checked before use, a row whose hash
// or content is wrong is reported as damaged (named by its brick or chunk coordinates
// or blob name), a file that is not an SQLite database or not a Loam world is an
// error, never a crash. Library loam_save (links SQLite). One WorldDb is used by one
// thread at a time; a writer and its readers (openReader) may each be on their own.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/core/result.h"
#include "sim/save/save.h"
#include "sim/world/column_source.h"

struct sqlite3;
struct sqlite3_stmt;

namespace loam::sim {

/// The database layout this build writes and reads (meta "db_format"; 2: the chunks
/// table). open() upgrades format 1.
inline constexpr std::uint32_t kWorldDbFormatVersion = 2;
/// Largest blob (raw bytes) a loader accepts; the buffer also grows only as the
/// compressed frame yields bytes (decompressZstdFrame).
inline constexpr std::uint64_t kMaxWorldDbBlobBytes = std::uint64_t{1} << 30;

/// What a commit changes.
struct WorldDbCommit {
  std::uint64_t tick = 0;               ///< the state's tick (meta "tick")
  std::vector<SavedBrick> bricks;       ///< rows written (inserted or replaced)
  std::vector<BrickCoord> removed;      ///< rows deleted (back to generated content)
  std::vector<SaveBlob> blobs;          ///< written only when their bytes changed
  std::vector<ChunkTerm> terms;         ///< chunk term rows written (inserted or replaced)
  std::vector<ChunkCoord> removedTerms; ///< chunk term rows deleted (after terms are written)
};

/// What a commit wrote.
struct WorldDbCommitStats {
  std::uint64_t bricksWritten = 0;
  std::uint64_t bricksDeleted = 0;   ///< rows that existed and were deleted
  std::uint64_t blobsWritten = 0;    ///< blobs whose bytes changed
  std::uint64_t termsWritten = 0;
  std::uint64_t termsDeleted = 0;    ///< term rows that existed and were deleted
  std::uint64_t bytesWritten = 0;    ///< brick contents and (compressed) blob bytes written
};

/// A database's contents as read by load().
struct WorldDbContents {
  SaveData save;                      ///< header, bounds, readable bricks (canonical order), blobs
  std::vector<ChunkTerm> terms;       ///< readable term rows, sorted by chunk (x, y, z)
  /// One line per damaged row: "brick (x, y, z): why" or "chunk (x, y, z): why".
  std::vector<std::string> damaged;
  std::vector<BrickCoord> damagedBricks;  ///< the damaged brick rows' keys (commit them as removed to drop them)
  std::vector<ChunkCoord> damagedTerms;   ///< the damaged term rows' keys (commit them as removedTerms)
  std::size_t damagedRows = 0;            ///< all damaged brick and term rows (damaged names at most 64)
};

/// What a lazy load reads at start (loadIndex): everything but the bricks' contents.
struct WorldDbIndex {
  SaveHeader header;                  ///< identity, save format and tick, as load() gives
  WorldBounds bounds;                 ///< the store's bounds
  std::vector<SaveBlob> blobs;        ///< every blob, in name order
  std::vector<ChunkTerm> terms;       ///< readable term rows, sorted by chunk (x, y, z)
  /// The chunk columns holding at least one readable brick row, canonical order
  /// (canonicalBefore), unique: the ones loadColumn has rows for.
  std::vector<ChunkColumn> columns;
  /// Chunks holding a readable brick row but no readable term row, sorted: a format-1
  /// database, an import, or a damaged term row (the caller computes their terms).
  std::vector<ChunkCoord> missingTerms;
  std::vector<std::string> damaged;       ///< as WorldDbContents::damaged (at most 64 lines, then a count)
  std::vector<BrickCoord> damagedBricks;  ///< the damaged brick rows' keys
  std::vector<ChunkCoord> damagedTerms;   ///< the damaged term rows' keys
  std::size_t damagedRows = 0;            ///< all damaged brick and term rows
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

  /// Opens an existing database and reads its meta; a format-1 database is upgraded
  /// to format 2 in place (one transaction: the chunks table, meta db_format). Errors
  /// (the file is then never changed): missing, not an SQLite database, not a Loam
  /// world database (tables or meta missing or out of range), another db_format, the
  /// upgrade failed. The save format and identity are read, not checked: see
  /// checkSaveIdentity and header().formatVersion.
  static Result<std::unique_ptr<WorldDb>> open(const std::string& path);

  /// Opens a second, read-only connection to a database that a WorldDb opened with
  /// open() or create() (the writer, on another thread or process) commits to: each
  /// load sees the last complete commit, also while the writer writes (WAL). Checks
  /// meta as open() does and never writes; commit() on a reader fails. Errors: as
  /// open(), and a format-1 database (only open() upgrades it).
  static Result<std::unique_ptr<WorldDb>> openReader(const std::string& path);

  const std::string& path() const noexcept { return path_; }
  /// Identity, save format (of the state blobs) and tick of the last commit (a
  /// reader's: of the commit its last load() or loadIndex() read).
  const SaveHeader& header() const noexcept { return header_; }
  const WorldBounds& bounds() const noexcept { return bounds_; }

  /// Reads every row, all of one commit. A brick or term row whose hash, coordinates
  /// (outside the bounds) or content is wrong is left out and named in damaged; blobs
  /// must all be readable (a damaged blob is an error: the state cannot be restored
  /// without it). Errors: SQLite cannot read the tables (a damaged file). Allocates
  /// about 600 bytes per brick row.
  Result<WorldDbContents> load();

  /// Reads what a lazy load needs at start, all of one commit: meta, blobs, term rows
  /// and the columns holding brick rows. Checks every brick row's key, size and hash
  /// but does not decode its content (loadColumn does); damaged rows are left out and
  /// named as by load(). Errors: as load(). Allocates in proportion to the blobs,
  /// terms and changed chunks, not to the bricks' contents.
  Result<WorldDbIndex> loadIndex();

  /// The readable brick rows of one chunk column (every y), all of one commit, into
  /// out, cleared first, in canonical brick order (canonicalBrickOrder); appends a line
  /// per damaged row (hash, coordinates or content wrong; as load() names it) to
  /// damaged. Cost: an index range seek on brick x, then the rows of that 16-brick
  /// slab of x (every z) are visited, the column's read. Errors (out then empty):
  /// SQLite cannot read the rows. Allocates out (about 600 bytes per brick).
  Result<void> loadColumn(ChunkColumn column, std::vector<SavedBrick>& out, std::vector<std::string>& damaged);

  /// Applies one commit in a single transaction (rolled back on any error): writes the
  /// bricks, deletes the removed rows, writes the terms, deletes removedTerms, then
  /// sets meta "tick". Blobs whose bytes equal the stored ones are not written. Keys
  /// are not checked (a row outside the bounds loads as damaged).
  Result<WorldDbCommitStats> commit(const WorldDbCommit& c);

  /// Rows in the bricks table (tests, tools).
  Result<std::uint64_t> brickRows();

 private:
  WorldDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  /// Reads and checks meta and the tables; returns db_format (1 or 2).
  Result<std::uint32_t> readMeta();
  Result<void> prepare();
  /// Format 1 to 2, in one transaction.
  Result<void> upgradeFromFormat1();
  /// Reads meta "tick" into header_ (inside a load's read transaction).
  Result<void> readTick();

  sqlite3* db_ = nullptr;
  sqlite3_stmt* columnStmt_ = nullptr;  ///< loadColumn's query, prepared at its first use
  std::string path_;
  SaveHeader header_;
  WorldBounds bounds_{};
  std::map<std::string, std::uint64_t> blobHashes_;  ///< stored blobs, to skip unchanged ones
};

/// Writes a whole save (every brick and blob of data) and terms (the chunks table)
/// into a new database at path, in one commit: the import of an old save and
/// loam-tool import-save. Errors: path exists, SQLite (then no file is left behind).
Result<std::unique_ptr<WorldDb>> createWorldDbFromSave(const std::string& path, const SaveData& data,
                                                       std::span<const ChunkTerm> terms = {});
/// As above, taking data's bricks and blobs instead of copying them (the server's new
/// database for a generated world: highlands' water blob is 150 MB).
Result<std::unique_ptr<WorldDb>> createWorldDbFromSave(const std::string& path, SaveData&& data,
                                                       std::span<const ChunkTerm> terms = {});

}  // namespace loam::sim
