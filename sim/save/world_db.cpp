#include "sim/save/world_db.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
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
/// How long a connection waits for another's lock (a writer's checkpoint, a reader
/// opening the WAL) before SQLite reports busy.
constexpr int kBusyTimeoutMs = 5000;

const char* const kSchema =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE bricks(x INTEGER NOT NULL, y INTEGER NOT NULL, z INTEGER NOT NULL, content BLOB NOT NULL,"
    " hash INTEGER NOT NULL, PRIMARY KEY(x, y, z)) WITHOUT ROWID;"
    "CREATE TABLE blobs(name TEXT PRIMARY KEY, raw_size INTEGER NOT NULL, packed BLOB NOT NULL,"
    " hash INTEGER NOT NULL) WITHOUT ROWID;";
/// Format 2's table and the bricks' index by chunk column (loadColumn seeks it; SQLite's
/// >> shifts negative numbers arithmetically, as C++ does), also what the upgrade from
/// format 1 creates.
const char* const kChunksSchema =
    "CREATE TABLE chunks(x INTEGER NOT NULL, y INTEGER NOT NULL, z INTEGER NOT NULL, term INTEGER NOT NULL,"
    " hash INTEGER NOT NULL, PRIMARY KEY(x, y, z)) WITHOUT ROWID;"
    "CREATE INDEX bricks_by_column ON bricks(x >> 4, z >> 4);";
static_assert(kChunkShift == 4, "kChunksSchema and loadColumn shift brick coordinates by kChunkShift");

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

/// Runs body in a write transaction: committed when it succeeds, rolled back on any error.
template <class Body>
Result<void> inTransaction(sqlite3* db, const std::string& path, Body&& body) {
  Result<void> r = exec(db, path, "BEGIN IMMEDIATE");
  if (r) r = body();
  if (r) r = exec(db, path, "COMMIT");
  if (!r) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  return r;
}

/// A read transaction for the guard's scope, so that every query in it sees the same
/// commit (a reader's writer may commit between two of them).
class ReadTransaction {
 public:
  explicit ReadTransaction(sqlite3* db)
      : db_(db), open_(sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK) {}
  ~ReadTransaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  bool ok() const { return open_; }

 private:
  sqlite3* db_;
  bool open_;
};

std::int64_t asI64(std::uint64_t v) { return static_cast<std::int64_t>(v); }
std::uint64_t asU64(std::int64_t v) { return static_cast<std::uint64_t>(v); }

bool isI32(std::int64_t v) {
  return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

/// XXH3-64 of the 12 key bytes (little-endian x, y, z) followed by bytes: a brick or
/// term row's hash.
std::uint64_t keyedHash(std::int32_t x, std::int32_t y, std::int32_t z, std::span<const std::uint8_t> bytes) {
  std::uint8_t key[12];
  const std::int32_t v[3] = {x, y, z};
  for (int i = 0; i < 3; ++i)
    for (int b = 0; b < 4; ++b) key[i * 4 + b] = static_cast<std::uint8_t>(static_cast<std::uint32_t>(v[i]) >> (8 * b));
  XXH3_state_t st;
  XXH3_64bits_reset(&st);
  XXH3_64bits_update(&st, key, sizeof key);
  XXH3_64bits_update(&st, bytes.data(), bytes.size());
  return XXH3_64bits_digest(&st);
}

std::uint64_t brickHash(BrickCoord c, std::span<const std::uint8_t> content) {
  return keyedHash(c.x, c.y, c.z, content);
}

std::uint64_t termHash(const ChunkTerm& t) {
  std::uint8_t bytes[8];
  for (int b = 0; b < 8; ++b) bytes[b] = static_cast<std::uint8_t>(t.term >> (8 * b));
  return keyedHash(t.chunk.x, t.chunk.y, t.chunk.z, bytes);
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

std::string chunkName(ChunkCoord c) {
  return "chunk (" + std::to_string(c.x) + ", " + std::to_string(c.y) + ", " + std::to_string(c.z) + ")";
}

/// True when chunk c holds bricks inside bounds (whose faces are on chunk boundaries).
bool chunkInBounds(const WorldBounds& b, ChunkCoord c) {
  return c.x >= (b.minBrick.x >> kChunkShift) && c.x < (b.maxBrick.x >> kChunkShift) &&
         c.y >= (b.minBrick.y >> kChunkShift) && c.y < (b.maxBrick.y >> kChunkShift) &&
         c.z >= (b.minBrick.z >> kChunkShift) && c.z < (b.maxBrick.z >> kChunkShift);
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
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  return db;
}

/// One row's verdict: its key when readable, and why it is damaged (empty when good).
template <class Key>
struct RowCheck {
  Key key{};
  bool keyed = false;
  std::string damage;
};

/// Reads the key in columns 0..2 (x, y, z) into key; false when a key column or one of
/// the other integer columns `ints` is not an integer, or the key is out of int32 range.
template <class Key>
bool readKey(sqlite3_stmt* st, std::initializer_list<int> ints, Key& key) {
  bool typed = true;
  for (int col : {0, 1, 2}) typed &= sqlite3_column_type(st, col) == SQLITE_INTEGER;
  for (int col : ints) typed &= sqlite3_column_type(st, col) == SQLITE_INTEGER;
  const std::int64_t x = sqlite3_column_int64(st, 0), y = sqlite3_column_int64(st, 1), z = sqlite3_column_int64(st, 2);
  if (!typed || !isI32(x) || !isI32(y) || !isI32(z)) return false;
  key = {static_cast<std::int32_t>(x), static_cast<std::int32_t>(y), static_cast<std::int32_t>(z)};
  return true;
}

/// The line naming a row whose key cannot be read.
std::string malformedRow(sqlite3_stmt* st, const char* table, const char* what) {
  return std::string(table) + " row (" + std::to_string(sqlite3_column_int64(st, 0)) + ", " +
         std::to_string(sqlite3_column_int64(st, 1)) + ", " + std::to_string(sqlite3_column_int64(st, 2)) +
         "): malformed " + what;
}

/// Checks the brick row at st (columns x, y, z, content, hash): key, bounds, content
/// size and hash; with decodeInto also the content, decoded into it (and its coord
/// set). No allocation for a good row.
RowCheck<BrickCoord> checkBrickRow(sqlite3_stmt* st, const WorldBounds& bounds, SavedBrick* decodeInto) {
  RowCheck<BrickCoord> r;
  if (!readKey(st, {4}, r.key)) {
    r.damage = malformedRow(st, "brick", "key or hash");
    return r;
  }
  r.keyed = true;
  if (!bounds.containsBrick(r.key)) {
    r.damage = brickName(r.key) + ": outside the world's bounds";
  } else if (sqlite3_column_type(st, 3) != SQLITE_BLOB) {
    r.damage = brickName(r.key) + ": content is not a blob";
  } else if (sqlite3_column_bytes(st, 3) > static_cast<int>(kMaxBrickContentBytes)) {
    // Size before anything else reads the bytes (a row may claim a gigabyte).
    r.damage = brickName(r.key) + ": content is " + std::to_string(sqlite3_column_bytes(st, 3)) +
               " bytes, more than a brick takes";
  } else if (brickHash(r.key, columnBytes(st, 3)) != asU64(sqlite3_column_int64(st, 4))) {
    r.damage = brickName(r.key) + ": hash mismatch";
  } else if (decodeInto != nullptr) {
    if (auto d = decodeBrickContent(columnBytes(st, 3), *decodeInto); !d) {
      r.damage = brickName(r.key) + ": " + d.error().message;
    } else {
      decodeInto->coord = r.key;
    }
  }
  return r;
}

/// Checks the term row at st (columns x, y, z, term, hash): key, bounds and hash.
RowCheck<ChunkTerm> checkTermRow(sqlite3_stmt* st, const WorldBounds& bounds) {
  RowCheck<ChunkTerm> r;
  if (!readKey(st, {3, 4}, r.key.chunk)) {
    r.damage = malformedRow(st, "chunk", "key, term or hash");
    return r;
  }
  r.keyed = true;
  r.key.term = asU64(sqlite3_column_int64(st, 3));
  if (!chunkInBounds(bounds, r.key.chunk)) {
    r.damage = chunkName(r.key.chunk) + ": outside the world's bounds";
  } else if (termHash(r.key) != asU64(sqlite3_column_int64(st, 4))) {
    r.damage = chunkName(r.key.chunk) + ": hash mismatch";
  }
  return r;
}

/// Damaged rows of a load: the first kDamagedLinesNamed named in lines, then a count.
class DamageLog {
 public:
  explicit DamageLog(std::vector<std::string>& lines) : lines_(lines) {}
  void add(std::string line) {
    if (++rows_ <= kDamagedLinesNamed) lines_.push_back(std::move(line));
  }
  /// Appends the count of the rows not named; returns the count of all.
  std::size_t finish() {
    if (rows_ > kDamagedLinesNamed)
      lines_.push_back("and " + std::to_string(rows_ - kDamagedLinesNamed) + " more damaged rows");
    return rows_;
  }

 private:
  std::vector<std::string>& lines_;
  std::size_t rows_ = 0;
};

/// Every readable term row into terms (sorted by chunk), the damaged ones to log and
/// damagedTerms.
Result<void> readTerms(sqlite3* db, const std::string& path, const WorldBounds& bounds, std::vector<ChunkTerm>& terms,
                       std::vector<ChunkCoord>& damagedTerms, DamageLog& log) {
  Stmt s(db, "SELECT x, y, z, term, hash FROM chunks");
  if (!s.ok()) return dbError(db, path, "cannot read the chunks table");
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    RowCheck<ChunkTerm> r = checkTermRow(s.get(), bounds);
    if (r.damage.empty()) {
      terms.push_back(r.key);
      continue;
    }
    if (r.keyed) damagedTerms.push_back(r.key.chunk);
    log.add(std::move(r.damage));
  }
  if (rc != SQLITE_DONE) return dbError(db, path, "cannot read the chunks table (damaged file?)");
  // Key order already, unless the file's b-tree is damaged.
  std::sort(terms.begin(), terms.end(), [](const ChunkTerm& a, const ChunkTerm& b) { return a.chunk < b.chunk; });
  return ok();
}

/// Every blob row into blobs, in name order; any damaged blob is an error.
Result<void> readBlobs(sqlite3* db, const std::string& path, std::vector<SaveBlob>& blobs) {
  Stmt s(db, "SELECT name, raw_size, packed, hash FROM blobs ORDER BY name");
  if (!s.ok()) return dbError(db, path, "cannot read the blobs table");
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    if (blobs.size() >= kMaxBlobRows) return makeError(path + ": damaged blobs table (too many rows)");
    sqlite3_stmt* st = s.get();
    const int nameBytes = sqlite3_column_bytes(st, 0);
    const unsigned char* name = sqlite3_column_text(st, 0);
    if (name == nullptr || nameBytes <= 0 || nameBytes > 255)
      return makeError(path + ": damaged blob row (name missing or longer than 255 bytes)");
    std::string n(reinterpret_cast<const char*>(name), static_cast<std::size_t>(nameBytes));
    if (sqlite3_column_type(st, 1) != SQLITE_INTEGER || sqlite3_column_type(st, 2) != SQLITE_BLOB ||
        sqlite3_column_type(st, 3) != SQLITE_INTEGER)
      return makeError(path + ": blob '" + n + "' is damaged (malformed row)");
    const std::int64_t rawSize = sqlite3_column_int64(st, 1);
    if (rawSize < 0 || static_cast<std::uint64_t>(rawSize) > kMaxWorldDbBlobBytes)
      return makeError(path + ": blob '" + n + "' is damaged (size " + std::to_string(rawSize) + " out of range)");
    std::span<const std::uint8_t> packed = columnBytes(st, 2);
    SaveBlob& b = blobs.emplace_back();
    if (auto d = decompressZstdFrame(packed.data(), packed.size(), static_cast<std::uint64_t>(rawSize), b.bytes); !d)
      return makeError(path + ": blob '" + n + "' is damaged (" + d.error().message + ")");
    if (blobHash(n, b.bytes) != asU64(sqlite3_column_int64(st, 3)))
      return makeError(path + ": blob '" + n + "' is damaged (hash mismatch)");
    b.name = std::move(n);
  }
  if (rc != SQLITE_DONE) return dbError(db, path, "cannot read the blobs table (damaged file?)");
  return ok();
}

/// Sorts v and drops repeats.
template <class T, class Less = std::less<>>
void sortUnique(std::vector<T>& v, Less less = {}) {
  std::sort(v.begin(), v.end(), less);
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

/// Deletes the rows of keys with del (a DELETE taking x, y, z); returns the rows that existed.
template <class Key>
Result<std::uint64_t> deleteRows(sqlite3* db, const std::string& path, const char* del, std::span<const Key> keys,
                                 std::string (*name)(Key)) {
  Stmt s(db, del);
  if (!s.ok()) return dbError(db, path, "cannot prepare a delete");
  std::uint64_t deleted = 0;
  for (const Key& k : keys) {
    sqlite3_stmt* st = s.get();
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, k.x);
    sqlite3_bind_int64(st, 2, k.y);
    sqlite3_bind_int64(st, 3, k.z);
    if (sqlite3_step(st) != SQLITE_DONE) return dbError(db, path, "cannot delete " + name(k));
    deleted += static_cast<std::uint64_t>(sqlite3_changes(db));
  }
  return deleted;
}

}  // namespace

WorldDb::~WorldDb() {
  // Closing fails while a statement is still prepared.
  sqlite3_finalize(columnStmt_);
  sqlite3_close(db_);
}

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
  auto schema = [&]() -> Result<void> {
    if (auto r = exec(db->db_, path, kSchema); !r) return r;
    if (auto r = exec(db->db_, path, kChunksSchema); !r) return r;
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
    return ok();
  };
  auto build = [&]() -> Result<void> {
    if (auto r = db->prepare(); !r) return r;
    return inTransaction(db->db_, path, schema);
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
  auto format = db->readMeta();
  if (!format) return format.error();
  if (auto r = db->prepare(); !r) return r.error();
  if (*format == 1)
    if (auto r = db->upgradeFromFormat1(); !r) return r.error();
  return db;
}

Result<std::unique_ptr<WorldDb>> WorldDb::openReader(const std::string& path) {
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) return makeError(path + ": no such file");
  auto conn = connect(path, SQLITE_OPEN_READONLY);
  if (!conn) return conn.error();
  std::unique_ptr<WorldDb> db(new WorldDb(*conn, path));
  auto format = db->readMeta();
  if (!format) return format.error();
  if (*format != kWorldDbFormatVersion)
    return makeError(path + ": world database format " + std::to_string(*format) +
                     " must be upgraded before it can be read here (open it read-write once)");
  // A connection setting, not a write: damaged pages are caught before they are read.
  if (auto r = exec(db->db_, path, "PRAGMA cell_size_check=ON"); !r) return r.error();
  return db;
}

Result<void> WorldDb::upgradeFromFormat1() {
  return inTransaction(db_, path_, [&]() -> Result<void> {
    if (auto r = exec(db_, path_, kChunksSchema); !r) return r;
    return setMeta(db_, path_, "db_format", kWorldDbFormatVersion);
  });
}

Result<void> WorldDb::readTick() {
  Stmt s(db_, "SELECT value FROM meta WHERE key = 'tick'");
  if (!s.ok()) return dbError(db_, path_, "cannot read meta tick");
  const int rc = sqlite3_step(s.get());
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return dbError(db_, path_, "cannot read meta tick");
  if (rc == SQLITE_DONE || sqlite3_column_type(s.get(), 0) != SQLITE_INTEGER)
    return makeError(path_ + ": damaged meta table (tick)");
  header_.tick = asU64(sqlite3_column_int64(s.get(), 0));
  return ok();
}

Result<std::uint32_t> WorldDb::readMeta() {
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
  if (format != 1 && format != kWorldDbFormatVersion)
    return makeError(path_ + ": world database format " + std::to_string(format) +
                     " is not supported (this build reads " + std::to_string(kWorldDbFormatVersion) + ")");
  auto u32 = [](std::int64_t v) { return v >= 0 && v <= std::numeric_limits<std::uint32_t>::max(); };
  if (!u32(saveFormat) || !u32(generator)) return makeError(path_ + ": damaged meta table (version out of range)");
  for (std::int64_t v : b)
    if (!isI32(v)) return makeError(path_ + ": damaged meta table (bounds out of range)");
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
  if (format >= 2) {
    Stmt chunks(db_, "SELECT x, y, z, term, hash FROM chunks LIMIT 0");
    if (!chunks.ok()) return makeError(path_ + ": not a Loam world database (" + sqlite3_errmsg(db_) + ")");
  }
  return static_cast<std::uint32_t>(format);
}

Result<WorldDbContents> WorldDb::load() {
  ReadTransaction txn(db_);
  if (!txn.ok()) return dbError(db_, path_, "cannot begin a read");
  if (auto r = readTick(); !r) return r.error();
  WorldDbContents out;
  out.save.header = header_;
  out.save.bounds = bounds_;
  DamageLog log(out.damaged);
  {
    Stmt s(db_, "SELECT x, y, z, content, hash FROM bricks");
    if (!s.ok()) return dbError(db_, path_, "cannot read the bricks table");
    int rc;
    SavedBrick sb;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
      RowCheck<BrickCoord> r = checkBrickRow(s.get(), bounds_, &sb);
      if (r.damage.empty()) {
        out.save.bricks.push_back(sb);
        continue;
      }
      // Kept so a caller can delete the row.
      if (r.keyed) out.damagedBricks.push_back(r.key);
      log.add(std::move(r.damage));
    }
    if (rc != SQLITE_DONE) return dbError(db_, path_, "cannot read the bricks table (damaged file?)");
  }
  if (auto r = readTerms(db_, path_, bounds_, out.terms, out.damagedTerms, log); !r) return r.error();
  out.damagedRows = log.finish();
  std::sort(out.save.bricks.begin(), out.save.bricks.end(), [&](const SavedBrick& a, const SavedBrick& b) {
    return canonicalBrickOrder(bounds_, a.coord) < canonicalBrickOrder(bounds_, b.coord);
  });
  if (auto r = readBlobs(db_, path_, out.save.blobs); !r) return r.error();
  return out;
}

Result<WorldDbIndex> WorldDb::loadIndex() {
  ReadTransaction txn(db_);
  if (!txn.ok()) return dbError(db_, path_, "cannot begin a read");
  if (auto r = readTick(); !r) return r.error();
  WorldDbIndex out;
  out.header = header_;
  out.bounds = bounds_;
  DamageLog log(out.damaged);
  // The chunks holding readable rows, compacted as they come so that memory follows
  // the changed chunks, not the rows (rows come in key order: a chunk's in short runs).
  std::vector<ChunkCoord> chunks;
  std::size_t compactAt = 1024;
  {
    Stmt s(db_, "SELECT x, y, z, content, hash FROM bricks");
    if (!s.ok()) return dbError(db_, path_, "cannot read the bricks table");
    int rc;
    while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
      RowCheck<BrickCoord> r = checkBrickRow(s.get(), bounds_, nullptr);
      if (!r.damage.empty()) {
        if (r.keyed) out.damagedBricks.push_back(r.key);
        log.add(std::move(r.damage));
        continue;
      }
      const ChunkCoord c = chunkOf(r.key);
      if (!chunks.empty() && chunks.back() == c) continue;
      chunks.push_back(c);
      if (chunks.size() >= compactAt) {
        sortUnique(chunks);
        compactAt = std::max(compactAt, 2 * chunks.size());
      }
    }
    if (rc != SQLITE_DONE) return dbError(db_, path_, "cannot read the bricks table (damaged file?)");
  }
  sortUnique(chunks);
  if (auto r = readTerms(db_, path_, bounds_, out.terms, out.damagedTerms, log); !r) return r.error();
  out.damagedRows = log.finish();
  if (auto r = readBlobs(db_, path_, out.blobs); !r) return r.error();

  out.columns.reserve(chunks.size());
  for (ChunkCoord c : chunks) out.columns.push_back({c.x, c.z});
  sortUnique(out.columns, canonicalBefore);
  // Both lists are sorted by chunk.
  std::size_t t = 0;
  for (ChunkCoord c : chunks) {
    while (t < out.terms.size() && out.terms[t].chunk < c) ++t;
    if (t == out.terms.size() || out.terms[t].chunk != c) out.missingTerms.push_back(c);
  }
  return out;
}

Result<void> WorldDb::loadColumn(ChunkColumn column, std::vector<SavedBrick>& out, std::vector<std::string>& damaged) {
  out.clear();
  // An exact seek on the bricks_by_column index (the same expressions).
  const char* const sql = "SELECT x, y, z, content, hash FROM bricks WHERE x >> 4 = ?1 AND z >> 4 = ?2";
  if (columnStmt_ == nullptr &&
      sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &columnStmt_, nullptr) != SQLITE_OK)
    return dbError(db_, path_, "cannot prepare the column read");
  sqlite3_stmt* st = columnStmt_;
  // Reset on every exit: a statement left mid-read would pin its commit (a reader
  // would never see newer ones, the writer could not checkpoint).
  struct Reset {
    sqlite3_stmt* s;
    ~Reset() { sqlite3_reset(s); }
  } reset{st};
  sqlite3_bind_int64(st, 1, column.x);
  sqlite3_bind_int64(st, 2, column.z);
  SavedBrick sb;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    RowCheck<BrickCoord> r = checkBrickRow(st, bounds_, &sb);
    if (r.damage.empty()) {
      out.push_back(sb);
    } else {
      damaged.push_back(std::move(r.damage));
    }
  }
  if (rc != SQLITE_DONE) {
    out.clear();
    return dbError(db_, path_,
                   "cannot read column (" + std::to_string(column.x) + ", " + std::to_string(column.z) + ")");
  }
  std::sort(out.begin(), out.end(), [&](const SavedBrick& a, const SavedBrick& b) {
    return canonicalBrickOrder(bounds_, a.coord) < canonicalBrickOrder(bounds_, b.coord);
  });
  return ok();
}

Result<WorldDbCommitStats> WorldDb::commit(const WorldDbCommit& c) {
  WorldDbCommitStats stats;
  std::map<std::string, std::uint64_t> newHashes;
  auto body = [&]() -> Result<void> {
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
    auto bricksDeleted = deleteRows<BrickCoord>(db_, path_, "DELETE FROM bricks WHERE x = ?1 AND y = ?2 AND z = ?3",
                                                 c.removed, brickName);
    if (!bricksDeleted) return bricksDeleted.error();
    stats.bricksDeleted = *bricksDeleted;
    {
      Stmt put(db_, "INSERT OR REPLACE INTO chunks(x, y, z, term, hash) VALUES(?1, ?2, ?3, ?4, ?5)");
      if (!put.ok()) return dbError(db_, path_, "cannot prepare the term write");
      for (const ChunkTerm& t : c.terms) {
        sqlite3_stmt* st = put.get();
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, t.chunk.x);
        sqlite3_bind_int64(st, 2, t.chunk.y);
        sqlite3_bind_int64(st, 3, t.chunk.z);
        sqlite3_bind_int64(st, 4, asI64(t.term));
        sqlite3_bind_int64(st, 5, asI64(termHash(t)));
        if (sqlite3_step(st) != SQLITE_DONE)
          return dbError(db_, path_, "cannot write the term of " + chunkName(t.chunk));
        ++stats.termsWritten;
      }
    }
    auto termsDeleted = deleteRows<ChunkCoord>(db_, path_, "DELETE FROM chunks WHERE x = ?1 AND y = ?2 AND z = ?3",
                                               c.removedTerms, chunkName);
    if (!termsDeleted) return termsDeleted.error();
    stats.termsDeleted = *termsDeleted;
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
    return setMeta(db_, path_, "tick", asI64(c.tick));
  };
  if (auto r = inTransaction(db_, path_, body); !r) return r.error();
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

Result<std::unique_ptr<WorldDb>> createWorldDbFromSave(const std::string& path, const SaveData& data,
                                                       std::span<const ChunkTerm> terms) {
  return createWorldDbFromSave(path, SaveData(data), terms);
}

Result<std::unique_ptr<WorldDb>> createWorldDbFromSave(const std::string& path, SaveData&& data,
                                                       std::span<const ChunkTerm> terms) {
  WorldDbCommit c;
  c.tick = data.header.tick;
  c.bricks = std::move(data.bricks);
  c.blobs = std::move(data.blobs);
  c.terms.assign(terms.begin(), terms.end());
  return createFromCommit(path, data.header, data.bounds, c);
}

}  // namespace loam::sim
