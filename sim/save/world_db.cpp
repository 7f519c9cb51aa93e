#include "sim/save/world_db.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <limits>
#include <span>
#include <utility>

#include "sim/world/brick_store.h"

namespace loam::sim {

namespace {

/// At most this many damaged rows are named one by one (then a count).
constexpr std::size_t kDamagedLinesNamed = 64;
/// Blob rows a database may hold (the state codec writes five).
constexpr std::size_t kMaxBlobRows = 64;

const char* const kSchema =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE bricks(x INTEGER NOT NULL, y INTEGER NOT NULL, z INTEGER NOT NULL, content BLOB NOT NULL,"
    " hash INTEGER NOT NULL, PRIMARY KEY(x, y, z)) WITHOUT ROWID;"
    "CREATE TABLE blobs(name TEXT PRIMARY KEY, raw_size INTEGER NOT NULL, packed BLOB NOT NULL,"
    " hash INTEGER NOT NULL) WITHOUT ROWID;";

/// zstd level of the stored blobs (the water blob of a large world is ~100 MB raw).
constexpr int kBlobLevel = 1;

/// A prepared statement, finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK && s_ != nullptr; }
  sqlite3_stmt* get() const { return s_; }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

Error dbError(sqlite3* db, const std::string& path, const std::string& what) {
  return makeError(path + ": " + what + ": " + sqlite3_errmsg(db));
}

Result<void> exec(sqlite3* db, const std::string& path, const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg != nullptr ? msg : sqlite3_errmsg(db);
    sqlite3_free(msg);
    return makeError(path + ": " + m);
  }
  return ok();
}

std::int64_t asI64(std::uint64_t v) { return static_cast<std::int64_t>(v); }
std::uint64_t asU64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

std::uint64_t brickHash(BrickCoord c, std::span<const std::uint8_t> content) {
  std::uint8_t key[12];
  const std::int32_t v[3] = {c.x, c.y, c.z};
  for (int i = 0; i < 3; ++i)
    for (int b = 0; b < 4; ++b) key[i * 4 + b] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(v[i]) >> (8 * b));
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, key, sizeof key);
  XXH3_64bits_update(&st, content.data(), content.size());
  return XXH3_64bits_digest(&st);
}

std::uint64_t blobHash(const std::string& name, std::span<const std::uint8_t> bytes) {
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, name.data(), name.size());
  XXH3_64bits_update(&st, bytes.data(), bytes.size());
  return XXH3_64bits_digest(&st);
}

std::string brickName(BrickCoord c) {
  return "brick (" + std::to_string(c.x) + ", " + std::to_string(c.y) + ", " + std::to_string(c.z) + ")";
}

std::span<const std::uint8_t> columnBytes(sqlite3_stmt* s, int col) {
  const void* p = sqlite3_column_blob(s, col);
  const int n = sqlite3_column_bytes(s, col);
  if (p == nullptr || n <= 0) return {};
  return {static_cast<const std::uint8_t*>(p), static_cast<std::size_t>(n)};
}

Result<void> setMeta(sqlite3* db, const std::string& path, const char* key, std::int64_t value) {
  Stmt s(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
  if (!s.ok()) return dbError(db, path, "cannot write meta");
  sqlite3_bind_text(s.get(), 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s.get(), 2, value);
  if (sqlite3_step(s.get()) != SQLITE_DONE) return dbError(db, path, std::string("cannot write meta ") + key);
  return ok();
}

/// Opens the connection with the settings every use needs.
Result<sqlite3*> connect(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::string m = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return makeError(path + ": cannot open: " + m);
  }
  // A hostile file must not run SQL of its own (triggers, views) or corrupt memory.
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_extended_result_codes(db, 1);
  return db;
}

}  // namespace

WorldDb::~WorldDb() { sqlite3_close(db_); }

Result<void> WorldDb::prepare() {
  // WAL: a commit appends to the log, readers never block it; FULL: the log is
  // fsynced at every commit, so a committed transaction survives power loss.
  if (auto r = exec(db_, path_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cell_size_check=ON;"); !r)
    return r;
  Stmt s(db_, "PRAGMA journal_mode");
  if (!s.ok() || sqlite3_step(s.get()) != SQLITE_ROW)
    return dbError(db_, path_, "cannot read the journal mode");
  const unsigned char* mode = sqlite3_column_text(s.get(), 0);
  if (mode == nullptr || std::string(reinterpret_cast<const char*>(mode)) != "wal")
    return makeError(path_ + ": cannot switch the database to WAL mode");
  return ok();
}

Result<std::unique_ptr<WorldDb>> WorldDb::create(const std::string& path, const SaveHeader& header,
                                                 const WorldBounds& bounds) {
  struct stat sb {};
  if (::stat(path.c_str(), &sb) == 0) return makeError(path + ": already exists");
  auto conn = connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!conn) return conn.error();
  std::unique_ptr<WorldDb> db(new WorldDb(*conn, path));
  auto build = [&]() -> Result<void> {
    if (auto r = db->prepare(); !r) return r;
    if (auto r = exec(db->db_, path, "BEGIN IMMEDIATE"); !r) return r;
    if (auto r = exec(db->db_, path, kSchema); !r) return r;
    const std::pair<const char*, std::int64_t> meta[] = {
        {"db_format", kWorldDbFormatVersion},
        {"save_format", header.formatVersion},
        {"scene_hash", asI64(header.identity.sceneHash)},
        {"seed", asI64(header.identity.seed)},
        {"generator_version", header.identity.generatorVersion},
        {"tick", asI64(header.tick)},
        {"min_x", bounds.minBrick.x},
        {"min_y", bounds.minBrick.y},
        {"min_z", bounds.minBrick.z},
        {"max_x", bounds.maxBrick.x},
        {"max_y", bounds.maxBrick.y},
        {"max_z", bounds.maxBrick.z},
    };
    for (const auto& [key, value] : meta)
      if (auto r = setMeta(db->db_, path, key, value); !r) return r;
    return exec(db->db_, path, "COMMIT");
  };
  if (auto r = build(); !r) {
    // Half a database would stop the next start as "not a Loam world database".
    db.reset();
    for (const char* ext : {"", "-wal", "-shm"}) ::unlink((path + ext).c_str());
    return r.error();
  }
  db->header_ = header;
  db->bounds_ = bounds;
  return db;
}

Result<std::unique_ptr<WorldDb>> WorldDb::open(const std::string& path) {
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) return makeError(path + ": no such file");
  auto conn = connect(path, SQLITE_OPEN_READWRITE);
  if (!conn) return conn.error();
  std::unique_ptr<WorldDb> db(new WorldDb(*conn, path));
  // Meta first: a file that is not a database fails here, before anything is written.
  if (auto r = db->readMeta(); !r) return r.error();
  if (auto r = db->prepare(); !r) return r.error();
  return db;
}

Result<void> WorldDb::readMeta() {
  std::map<std::string, std::int64_t> meta;
  {
    Stmt s(db_, "SELECT key, value FROM meta");
    if (!s.ok()) {
      const int code = sqlite3_errcode(db_) & 0xff;
      if (code == SQLITE_NOTADB) return makeError(path_ + ": not an SQLite database (" + sqlite3_errmsg(db_) + ")");
      return makeError(path_ + ": not a Loam world database (" + sqlite3_errmsg(db_) + ")");
    }
    int rc;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
      const unsigned char* key = sqlite3_column_text(s.get(), 0);
      if (key == nullptr || sqlite3_column_type(s.get(), 1) != SQLITE_INTEGER || meta.size() > 64)
        return makeError(path_ + ": damaged meta table");
      meta[reinterpret_cast<const char*>(key)] = sqlite3_column_int64(s.get(), 1);
    }
    if (rc != SQLITE_DONE) return dbError(db_, path_, "cannot read the meta table");
  }
  std::string missing;
  auto get = [&](const char* key) -> std::int64_t {
    auto it = meta.find(key);
    if (it == meta.end()) {
      missing += std::string(missing.empty() ? "" : ", ") + key;
      return 0;
    }
    return it->second;
  };
  const std::int64_t format = get("db_format");
  const std::int64_t saveFormat = get("save_format");
  header_.identity.sceneHash = asU64(get("scene_hash"));
  header_.identity.seed = asU64(get("seed"));
  const std::int64_t generator = get("generator_version");
  header_.tick = asU64(get("tick"));
  std::int64_t b[6] = {get("min_x"), get("min_y"), get("min_z"), get("max_x"), get("max_y"), get("max_z")};
  if (!missing.empty()) return makeError(path_ + ": not a Loam world database (meta lacks " + missing + ")");
  if (format != kWorldDbFormatVersion)
    return makeError(path_ + ": world database format " + std::to_string(format) + " is not supported (this build reads " +
                     std::to_string(kWorldDbFormatVersion) + ")");
  auto u32 = [](std::int64_t v) { return v >= 0 && v <= std::numeric_limits<std::uint32_t>::max(); };
  auto i32 = [](std::int64_t v) {
    return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
  };
  if (!u32(saveFormat) || !u32(generator)) return makeError(path_ + ": damaged meta table (version out of range)");
  for (std::int64_t v : b)
    if (!i32(v)) return makeError(path_ + ": damaged meta table (bounds out of range)");
  header_.formatVersion = static_cast<std::uint32_t>(saveFormat);
  header_.identity.generatorVersion = static_cast<std::uint32_t>(generator);
  bounds_ = {{static_cast<std::int32_t>(b[0]), static_cast<std::int32_t>(b[1]), static_cast<std::int32_t>(b[2])},
             {static_cast<std::int32_t>(b[3]), static_cast<std::int32_t>(b[4]), static_cast<std::int32_t>(b[5])}};
  if (!BrickStore::validBounds(bounds_)) return makeError(path_ + ": damaged meta table (invalid bounds)");
  // The stored blobs' hashes, so a commit skips blobs that did not change.
  Stmt s(db_, "SELECT name, hash FROM blobs");
  if (!s.ok()) return makeError(path_ + ": not a Loam world database (" + sqlite3_errmsg(db_) + ")");
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    const unsigned char* name = sqlite3_column_text(s.get(), 0);
    if (blobHashes_.size() >= kMaxBlobRows) return makeError(path_ + ": damaged blobs table (too many rows)");
    if (name != nullptr) blobHashes_[reinterpret_cast<const char*>(name)] = asU64(sqlite3_column_int64(s.get(), 1));
  }
  if (rc != SQLITE_DONE) return dbError(db_, path_, "cannot read the blobs table");
  Stmt probe(db_, "SELECT x, y, z, content, hash FROM bricks LIMIT 0");
  if (!probe.ok()) return makeError(path_ + ": not a Loam world database (" + sqlite3_errmsg(db_) + ")");
  return ok();
}

Result<WorldDbContents> WorldDb::load() {
  WorldDbContents out;
  out.save.header = header_;
  out.save.bounds = bounds_;
  std::size_t damagedRows = 0;
  auto damaged = [&](std::string line) {
    if (++damagedRows <= kDamagedLinesNamed) out.damaged.push_back(std::move(line));
  };
  {
    Stmt s(db_, "SELECT x, y, z, content, hash FROM bricks");
    if (!s.ok()) return dbError(db_, path_, "cannot read the bricks table");
    int rc;
    SavedBrick sb;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
      sqlite3_stmt* st = s.get();
      bool typed = true;
      for (int col : {0, 1, 2, 4}) typed &= sqlite3_column_type(st, col) == SQLITE_INTEGER;
      const std::int64_t x = sqlite3_column_int64(st, 0), y = sqlite3_column_int64(st, 1),
                         z = sqlite3_column_int64(st, 2);
      auto i32 = [](std::int64_t v) {
        return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
      };
      if (!typed || !i32(x) || !i32(y) || !i32(z)) {
        damaged("brick row (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
                "): malformed key or hash");
        continue;
      }
      sb.coord = {static_cast<std::int32_t>(x), static_cast<std::int32_t>(y), static_cast<std::int32_t>(z)};
      // Named below if damaged; kept here so a caller can delete the row.
      out.damagedBricks.push_back(sb.coord);
      if (!bounds_.containsBrick(sb.coord)) {
        damaged(brickName(sb.coord) + ": outside the world's bounds");
        continue;
      }
      if (sqlite3_column_type(st, 3) != SQLITE_BLOB) {
        damaged(brickName(sb.coord) + ": content is not a blob");
        continue;
      }
      // Size before anything else reads the bytes (a row may claim a gigabyte).
      if (sqlite3_column_bytes(st, 3) > static_cast<int>(kMaxBrickContentBytes)) {
        damaged(brickName(sb.coord) + ": content is " + std::to_string(sqlite3_column_bytes(st, 3)) +
                " bytes, more than a brick takes");
        continue;
      }
      std::span<const std::uint8_t> content = columnBytes(st, 3);
      if (brickHash(sb.coord, content) != asU64(sqlite3_column_int64(st, 4))) {
        damaged(brickName(sb.coord) + ": hash mismatch");
        continue;
      }
      if (auto d = decodeBrickContent(content, sb); !d) {
        damaged(brickName(sb.coord) + ": " + d.error().message);
        continue;
      }
      out.damagedBricks.pop_back();  // not damaged
      out.save.bricks.push_back(sb);
    }
    if (rc != SQLITE_DONE) return dbError(db_, path_, "cannot read the bricks table (damaged file?)");
  }
  out.damagedRows = damagedRows;
  if (damagedRows > kDamagedLinesNamed)
    out.damaged.push_back("and " + std::to_string(damagedRows - kDamagedLinesNamed) + " more damaged rows");
  std::sort(out.save.bricks.begin(), out.save.bricks.end(), [&](const SavedBrick& a, const SavedBrick& b) {
    return canonicalBrickOrder(bounds_, a.coord) < canonicalBrickOrder(bounds_, b.coord);
  });
  Stmt s(db_, "SELECT name, raw_size, packed, hash FROM blobs ORDER BY name");
  if (!s.ok()) return dbError(db_, path_, "cannot read the blobs table");
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    if (out.save.blobs.size() >= kMaxBlobRows) return makeError(path_ + ": damaged blobs table (too many rows)");
    sqlite3_stmt* st = s.get();
    const int nameBytes = sqlite3_column_bytes(st, 0);
    const unsigned char* name = sqlite3_column_text(st, 0);
    if (name == nullptr || nameBytes <= 0 || nameBytes > 255)
      return makeError(path_ + ": damaged blob row (name missing or longer than 255 bytes)");
    std::string n(reinterpret_cast<const char*>(name), static_cast<std::size_t>(nameBytes));
    if (sqlite3_column_type(st, 1) != SQLITE_INTEGER || sqlite3_column_type(st, 2) != SQLITE_BLOB ||
        sqlite3_column_type(st, 3) != SQLITE_INTEGER)
      return makeError(path_ + ": blob '" + n + "' is damaged (malformed row)");
    const std::int64_t rawSize = sqlite3_column_int64(st, 1);
    if (rawSize < 0 || static_cast<std::uint64_t>(rawSize) > kMaxWorldDbBlobBytes)
      return makeError(path_ + ": blob '" + n + "' is damaged (size " + std::to_string(rawSize) + " out of range)");
    std::span<const std::uint8_t> packed = columnBytes(st, 2);
    SaveBlob& b = out.save.blobs.emplace_back();
    if (auto d = decompressZstdFrame(packed.data(), packed.size(), static_cast<std::uint64_t>(rawSize), b.bytes); !d)
      return makeError(path_ + ": blob '" + n + "' is damaged (" + d.error().message + ")");
    if (blobHash(n, b.bytes) != asU64(sqlite3_column_int64(st, 3)))
      return makeError(path_ + ": blob '" + n + "' is damaged (hash mismatch)");
    b.name = std::move(n);
  }
  if (rc != SQLITE_DONE) return dbError(db_, path_, "cannot read the blobs table (damaged file?)");
  return out;
}

Result<WorldDbCommitStats> WorldDb::commit(const WorldDbCommit& c) {
  WorldDbCommitStats stats;
  std::map<std::string, std::uint64_t> newHashes;
  auto body = [&]() -> Result<void> {
    if (auto r = exec(db_, path_, "BEGIN IMMEDIATE"); !r) return r;
    {
      Stmt put(db_, "INSERT OR REPLACE INTO bricks(x, y, z, content, hash) VALUES(?1, ?2, ?3, ?4, ?5)");
      if (!put.ok()) return dbError(db_, path_, "cannot prepare the brick write");
      std::vector<std::uint8_t> content;
      content.reserve(kMaxBrickContentBytes);
      for (const SavedBrick& b : c.bricks) {
        content.clear();
        encodeBrickContent(b, content);
        sqlite3_stmt* st = put.get();
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, b.coord.x);
        sqlite3_bind_int64(st, 2, b.coord.y);
        sqlite3_bind_int64(st, 3, b.coord.z);
        sqlite3_bind_blob(st, 4, content.data(), static_cast<int>(content.size()), SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 5, asI64(brickHash(b.coord, content)));
        if (sqlite3_step(st) != SQLITE_DONE) return dbError(db_, path_, "cannot write " + brickName(b.coord));
        ++stats.bricksWritten;
        stats.bytesWritten += content.size();
      }
    }
    {
      Stmt del(db_, "DELETE FROM bricks WHERE x = ?1 AND y = ?2 AND z = ?3");
      if (!del.ok()) return dbError(db_, path_, "cannot prepare the brick delete");
      for (BrickCoord b : c.removed) {
        sqlite3_stmt* st = del.get();
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, b.x);
        sqlite3_bind_int64(st, 2, b.y);
        sqlite3_bind_int64(st, 3, b.z);
        if (sqlite3_step(st) != SQLITE_DONE) return dbError(db_, path_, "cannot delete " + brickName(b));
        stats.bricksDeleted += static_cast<std::uint64_t>(sqlite3_changes(db_));
      }
    }
    {
      Stmt put(db_, "INSERT OR REPLACE INTO blobs(name, raw_size, packed, hash) VALUES(?1, ?2, ?3, ?4)");
      std::vector<std::uint8_t> packed;
      if (!put.ok()) return dbError(db_, path_, "cannot prepare the blob write");
      for (const SaveBlob& b : c.blobs) {
        if (b.name.empty() || b.name.size() > 255) return makeError("world db blob name must be 1..255 bytes");
        if (b.bytes.size() > kMaxWorldDbBlobBytes) return makeError("world db blob '" + b.name + "' is too large");
        const std::uint64_t h = blobHash(b.name, b.bytes);
        auto it = blobHashes_.find(b.name);
        if (it != blobHashes_.end() && it->second == h) continue;
        packed.resize(ZSTD_compressBound(b.bytes.size()));
        const std::size_t n = ZSTD_compress(packed.data(), packed.size(), b.bytes.data(), b.bytes.size(), kBlobLevel);
        if (ZSTD_isError(n)) return makeError(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
        sqlite3_stmt* st = put.get();
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, b.name.data(), static_cast<int>(b.name.size()), SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, static_cast<std::int64_t>(b.bytes.size()));
        sqlite3_bind_blob(st, 3, packed.data(), static_cast<int>(n), SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, asI64(h));
        if (sqlite3_step(st) != SQLITE_DONE) return dbError(db_, path_, "cannot write blob '" + b.name + "'");
        newHashes[b.name] = h;
        ++stats.blobsWritten;
        stats.bytesWritten += n;
      }
    }
    if (auto r = setMeta(db_, path_, "tick", asI64(c.tick)); !r) return r;
    return exec(db_, path_, "COMMIT");
  };
  if (auto r = body(); !r) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return r.error();
  }
  header_.tick = c.tick;
  for (auto& [name, h] : newHashes) blobHashes_[name] = h;
  return stats;
}

Result<std::uint64_t> WorldDb::brickRows() {
  Stmt s(db_, "SELECT count(*) FROM bricks");
  if (!s.ok() || sqlite3_step(s.get()) != SQLITE_ROW) return dbError(db_, path_, "cannot count bricks");
  return asU64(sqlite3_column_int64(s.get(), 0));
}

namespace {

Result<std::unique_ptr<WorldDb>> createFromCommit(const std::string& path, const SaveHeader& header,
                                                  const WorldBounds& bounds, const WorldDbCommit& c) {
  auto db = WorldDb::create(path, header, bounds);
  if (!db) return db;
  if (auto r = (*db)->commit(c); !r) {
    // Its meta without its bricks would load as a world with the edits missing.
    db->reset();
    for (const char* ext : {"", "-wal", "-shm"}) ::unlink((path + ext).c_str());
    return r.error();
  }
  return db;
}

}  // namespace

Result<std::unique_ptr<WorldDb>> createWorldDbFromSave(const std::string& path, const SaveData& data) {
  WorldDbCommit c;
  c.tick = data.header.tick;
  c.bricks = data.bricks;
  c.blobs = data.blobs;
  return createFromCommit(path, data.header, data.bounds, c);
}

Result<std::unique_ptr<WorldDb>> createWorldDbFromSave(const std::string& path, SaveData&& data) {
  WorldDbCommit c;
  c.tick = data.header.tick;
  c.bricks = std::move(data.bricks);
  c.blobs = std::move(data.blobs);
  return createFromCommit(path, data.header, data.bounds, c);
}

}  // namespace loam::sim
