// Encodings (kStateCodecVersion 1), all little-endian, each blob starting with the
// version byte:
//   players: encodePlayers (sim/systems/player.h): u32 n, then per player (sorted by
//     id, strictly): u32 id, u8 name length (<= kMaxNameBytes), name bytes, then
//     kPlayerStateFields and kRateBudgetFields (position 3 x i32, velocity 3 x i32,
//     u16 yaw, i16 pitch, u8 MotionFlag bits, u32 lastInput, i32 stride, u8
//     motionEvents, u8 surface, i32 impactSpeed (>= 0), i32 editTokens, u64 editTick,
//     i32 chatTokens, u64 chatTick, u64 inputTick, u32 inputsInTick)
//   water: u32 n bricks (strictly increasing packCoordId, inside the world), per
//     brick: 3 x i32 coordinate, 64-byte mask of wet cells (bit i = voxel index i,
//     not all zero), then u16 amount (1..kWaterPerVoxel) per set bit in index order
//   fire: u32 n cells (strictly increasing packCoordId), per cell: 3 x i32 corner
//     (multiples of 8, inside the world), u8 intensity (> 0), u32 endTick, then the
//     server's ignition data (so a restored server continues the sweep exactly):
//     u32 start (<= endTick), u8 peak, u8 flags (bit 0: the brick burns to one
//     material; bit 7: no ignition data, as written by a mirror), u8 that material,
//     u16 exposure last measured
//   animals: encodeAnimals (sim/systems/animals.h)
//   weather: every kWeatherFields entry in table order, in (bits + 7) / 8 bytes
#include "sim/save/state_codec.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "sim/core/internal/format.h"
#include "sim/core/keyed_random.h"

namespace loam::sim {

namespace {

// ---- writing -----------------------------------------------------------------------

void putU8(std::vector<std::uint8_t>& o, std::uint8_t v) { o.push_back(v); }
void putUn(std::vector<std::uint8_t>& o, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) o.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void putU16(std::vector<std::uint8_t>& o, std::uint16_t v) { putUn(o, v, 2); }
void putU32(std::vector<std::uint8_t>& o, std::uint32_t v) { putUn(o, v, 4); }
void putU64(std::vector<std::uint8_t>& o, std::uint64_t v) { putUn(o, v, 8); }
void putI32(std::vector<std::uint8_t>& o, std::int32_t v) { putU32(o, static_cast<std::uint32_t>(v)); }
void putVec(std::vector<std::uint8_t>& o, Vec3i v) {
  putI32(o, v.x);
  putI32(o, v.y);
  putI32(o, v.z);
}

// ---- reading -----------------------------------------------------------------------

// Bounds-checked little-endian reader; the first failure sticks.
class Reader {
 public:
  Reader(std::span<const std::uint8_t> b, const char* blob) : b_(b), blob_(blob) {}
  bool ok() const noexcept { return err_.empty(); }
  std::size_t left() const noexcept { return b_.size() - pos_; }
  std::uint64_t un(int bytes) {
    if (!ok()) return 0;
    if (left() < static_cast<std::size_t>(bytes)) {
      fail(internal::format("truncated at byte %zu", pos_));
      return 0;
    }
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t{b_[pos_ + static_cast<std::size_t>(i)]} << (8 * i);
    pos_ += static_cast<std::size_t>(bytes);
    return v;
  }
  std::uint8_t u8() { return static_cast<std::uint8_t>(un(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(un(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(un(4)); }
  std::uint64_t u64() { return un(8); }
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  Vec3i vec() {
    Vec3i v;
    v.x = i32();
    v.y = i32();
    v.z = i32();
    return v;
  }
  void fail(const std::string& what) {
    if (ok()) err_ = what;
  }
  // Reads the version and a record count that the remaining bytes can hold.
  std::uint32_t header(std::size_t minRecordBytes) {
    const std::uint8_t v = u8();
    if (ok() && v != kStateCodecVersion) fail(internal::format("version %u, expected %u", unsigned{v}, unsigned{kStateCodecVersion}));
    const std::uint32_t n = u32();
    if (ok() && n > left() / minRecordBytes) fail(internal::format("count %u does not fit in %zu bytes", n, left()));
    return ok() ? n : 0;
  }
  Result<void> finish() {
    if (ok() && left() != 0) fail(internal::format("%zu trailing bytes", left()));
    if (ok()) return {};
    return makeError(std::string(blob_) + ": " + err_);
  }

 private:
  std::span<const std::uint8_t> b_;
  const char* blob_;
  std::size_t pos_ = 0;
  std::string err_;
};

std::uint64_t keyOfVoxel(VoxelCoord v) { return packCoordId(v.x, v.y, v.z); }

// packCoordId needs each coordinate in its range: only coordinates inside the world
// are packed (the world's bounds are far inside that range).
bool voxelInWorld(const BrickStore& world, VoxelCoord v) { return world.bounds().containsVoxel(v); }

constexpr std::size_t kWaterMinBytes = 12 + 64 + 2;
constexpr std::size_t kFireBytes = 12 + 1 + 4 + 4 + 1 + 1 + 1 + 2;
constexpr std::uint8_t kFireUniformBit = 1;
constexpr std::uint8_t kFireNoWorkBit = 0x80;
// FireWork::flags bit of a uniform result (sim/systems/fire.cpp kFireUniform).
constexpr std::uint8_t kWorkUniform = 8;

}  // namespace

// ---- water -------------------------------------------------------------------------

void encodeWater(const WaterState& water, std::vector<std::uint8_t>& out) {
  const internal::WaterGrid& g = water.cells;
  putU8(out, kStateCodecVersion);
  const std::size_t countAt = out.size();
  putU32(out, 0);
  std::uint32_t n = 0;
  for (const std::uint32_t slot : g.sorted()) {
    const internal::WaterBrick& b = g.brick(slot);
    if (b.wet == 0) continue;
    ++n;
    putVec(out, Vec3i{b.coord.x, b.coord.y, b.coord.z});
    std::uint64_t mask[8] = {};
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (b.amount[i] > 0) mask[i >> 6] |= std::uint64_t{1} << (i & 63u);
    }
    for (std::uint64_t w : mask) putU64(out, w);
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (b.amount[i] > 0) putU16(out, b.amount[i]);
    }
  }
  for (int i = 0; i < 4; ++i) out[countAt + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(n >> (8 * i));
}

Result<void> decodeWater(std::span<const std::uint8_t> bytes, WaterState& water, const BrickStore& world) {
  Reader r(bytes, "water");
  const std::uint32_t n = r.header(kWaterMinBytes);
  std::vector<WaterChange> cells;
  std::uint64_t lastKey = 0;
  for (std::uint32_t k = 0; k < n && r.ok(); ++k) {
    const Vec3i c = r.vec();
    const BrickCoord bc{c.x, c.y, c.z};
    if (r.ok() && !world.bounds().containsBrick(bc)) {
      r.fail(internal::format("brick (%d,%d,%d) outside the world", c.x, c.y, c.z));
    }
    if (!r.ok()) break;
    const std::uint64_t key = packCoordId(bc.x, bc.y, bc.z);
    if (k > 0 && key <= lastKey) r.fail(internal::format("brick %u: bricks not in increasing order", k));
    lastKey = key;
    std::uint64_t mask[8];
    bool any = false;
    for (std::uint64_t& w : mask) {
      w = r.u64();
      any = any || w != 0;
    }
    if (r.ok() && !any) r.fail(internal::format("brick %u: no wet cell", k));
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels) && r.ok(); ++i) {
      if (!((mask[i >> 6] >> (i & 63u)) & 1u)) continue;
      const std::uint16_t a = r.u16();
      if (r.ok() && (a == 0 || a > kWaterPerVoxel)) r.fail(internal::format("brick %u: amount %u", k, unsigned{a}));
      const VoxelCoord v{bc.x * kBrickSize + static_cast<std::int32_t>(i & 7u),
                         bc.y * kBrickSize + static_cast<std::int32_t>((i >> 3) & 7u),
                         bc.z * kBrickSize + static_cast<std::int32_t>(i >> 6)};
      cells.push_back(WaterChange{v, a});
    }
  }
  if (Result<void> e = r.finish(); !e) return e;
  if (water.cells.bounds().maxBrick == BrickCoord{} && water.cells.brickCount() == 0) {
    water.cells.reset(world.bounds());  // a default-constructed state
  }
  restoreWaterCells(water, world, cells);
  return {};
}

std::vector<WaterChange> waterInCell(const WaterState& water, CellCoord cell) {
  std::vector<WaterChange> out;
  const internal::WaterGrid& g = water.cells;
  for (const std::uint32_t slot : g.sorted()) {
    const internal::WaterBrick& b = g.brick(slot);
    if (b.wet == 0 || cellOf(b.coord) != cell) continue;
    for (unsigned i = 0; i < static_cast<unsigned>(kBrickVoxels); ++i) {
      if (b.amount[i] == 0) continue;
      out.push_back(WaterChange{{b.coord.x * kBrickSize + static_cast<std::int32_t>(i & 7u),
                                 b.coord.y * kBrickSize + static_cast<std::int32_t>((i >> 3) & 7u),
                                 b.coord.z * kBrickSize + static_cast<std::int32_t>(i >> 6)},
                                b.amount[i]});
    }
  }
  return out;
}

// ---- fire --------------------------------------------------------------------------

void encodeFire(const FireState& fire, std::vector<std::uint8_t>& out) {
  putU8(out, kStateCodecVersion);
  putU32(out, static_cast<std::uint32_t>(fire.cells.size()));
  const bool work = fire.work.size() == fire.cells.size();
  for (std::size_t i = 0; i < fire.cells.size(); ++i) {
    const FireCell& c = fire.cells[i];
    putVec(out, Vec3i{c.cell.x, c.cell.y, c.cell.z});
    putU8(out, c.intensity);
    putU32(out, c.endTick);
    if (work) {
      const FireWork& w = fire.work[i];
      putU32(out, w.start);
      putU8(out, w.peak);
      putU8(out, (w.flags & kWorkUniform) ? kFireUniformBit : 0);
      putU8(out, w.result);
      putU16(out, w.exposure);
    } else {
      putU32(out, 0);
      putU8(out, 0);
      putU8(out, kFireNoWorkBit);
      putU8(out, 0);
      putU16(out, 0);
    }
  }
}

namespace {

// Parses a fire blob into fire.cells and, parallel to them, the saved ignition data
// in fire.work (rebuildFireWork's hints).
Result<void> parseFire(std::span<const std::uint8_t> bytes, FireState& fire, const BrickStore& world) {
  Reader r(bytes, "fire");
  const std::uint32_t n = r.header(kFireBytes);
  std::vector<FireCell> cells;
  std::vector<FireWork> hints;
  cells.reserve(n);
  hints.reserve(n);
  for (std::uint32_t k = 0; k < n && r.ok(); ++k) {
    const Vec3i c = r.vec();
    FireCell f;
    f.cell = VoxelCoord{c.x, c.y, c.z};
    f.intensity = r.u8();
    f.endTick = r.u32();
    FireWork h;
    h.start = r.u32();
    h.peak = r.u8();
    const std::uint8_t flags = r.u8();
    h.result = r.u8();
    h.exposure = r.u16();
    if (!r.ok()) break;
    if (flags & kFireNoWorkBit) {
      h.peak = 0;  // no ignition data: estimated on restore
    } else if ((flags & ~kFireUniformBit) != 0 || h.start > f.endTick || h.peak == 0 ||
               h.exposure > kExposureOpen) {
      r.fail(internal::format("cell %u: bad ignition data", k));
    }
    h.flags = (flags & kFireUniformBit) ? kWorkUniform : 0;
    hints.push_back(h);
    if ((c.x | c.y | c.z) & (kBrickSize - 1)) {
      r.fail(internal::format("cell %u: (%d,%d,%d) is not a brick corner", k, c.x, c.y, c.z));
    } else if (!voxelInWorld(world, f.cell)) {
      r.fail(internal::format("cell %u: (%d,%d,%d) outside the world", k, c.x, c.y, c.z));
    } else if (f.intensity == 0) {
      r.fail(internal::format("cell %u: intensity 0", k));
    } else if (!cells.empty() && keyOfVoxel(cells.back().cell) >= keyOfVoxel(f.cell)) {
      r.fail(internal::format("cell %u: cells not in increasing order", k));
    } else if (cells.size() >= kMaxFireCells) {
      r.fail("more than kMaxFireCells cells");
    }
    cells.push_back(f);
  }
  if (Result<void> e = r.finish(); !e) return e;
  fire.cells = std::move(cells);
  fire.work = std::move(hints);
  return {};
}

}  // namespace

Result<void> decodeFire(std::span<const std::uint8_t> bytes, FireState& fire, const BrickStore& world) {
  if (Result<void> e = parseFire(bytes, fire, world); !e) return e;
  // Working data consistent with the cells, so the state is safe to step; a server's
  // restoreState rebuilds it with the world's seed and tick instead.
  std::uint32_t tick = 0;
  for (const FireWork& w : fire.work) tick = std::max(tick, w.start);
  rebuildFireWork(fire, world, 0, tick);
  return {};
}

std::vector<FireChange> fireInCell(const FireState& fire, CellCoord cell) {
  std::vector<FireChange> out;
  for (const FireCell& c : fire.cells) {
    if (cellOf(brickOf(c.cell)) == cell) out.push_back(FireChange{c.cell, c.intensity, c.endTick});
  }
  return out;
}

// ---- weather -----------------------------------------------------------------------

void encodeWeather(const WeatherState& weather, std::vector<std::uint8_t>& out) {
  putU8(out, kStateCodecVersion);
  for (const WeatherField& f : kWeatherFields) putUn(out, static_cast<std::uint64_t>(f.get(weather)), (f.bits + 7) / 8);
}

Result<void> decodeWeather(std::span<const std::uint8_t> bytes, WeatherState& weather) {
  Reader r(bytes, "weather");
  const std::uint8_t v = r.u8();
  if (r.ok() && v != kStateCodecVersion) r.fail(internal::format("version %u, expected %u", unsigned{v}, unsigned{kStateCodecVersion}));
  WeatherState w = weather;
  for (const WeatherField& f : kWeatherFields) {
    const std::uint64_t raw = r.un((f.bits + 7) / 8);
    if (!r.ok()) break;
    if (f.bits < 64 && raw >> f.bits) r.fail(internal::format("%s: %llu does not fit %u bits", f.name, static_cast<unsigned long long>(raw), unsigned{f.bits}));
    f.set(w, static_cast<std::int64_t>(raw));
  }
  if (r.ok() && (w.rain > 1000 || w.wetness > 1000)) r.fail("rain or wetness above 1000");
  if (r.ok() && w.dayLength == 0) r.fail("day length 0");
  if (r.ok() && w.timeOrigin >= w.dayLength) r.fail("time origin past the day length");
  if (Result<void> e = r.finish(); !e) return e;
  weather = w;
  return {};
}

// ---- whole state -------------------------------------------------------------------

namespace {

std::vector<SaveBlob> blobsOf(const std::vector<Player>& players, const WaterState& water, const FireState& fire,
                              const AnimalState& animals, const WeatherState& weather) {
  std::vector<SaveBlob> blobs(5);
  blobs[0].name = "players";
  encodePlayers(players, blobs[0].bytes);
  blobs[1].name = "water";
  encodeWater(water, blobs[1].bytes);
  blobs[2].name = "fire";
  encodeFire(fire, blobs[2].bytes);
  blobs[3].name = "animals";
  encodeAnimals(animals, blobs[3].bytes);
  blobs[4].name = "weather";
  encodeWeather(weather, blobs[4].bytes);
  return blobs;
}

}  // namespace

std::vector<SaveBlob> stateBlobs(const SimState& state) {
  return blobsOf(state.players, state.water, state.fire, state.animals, state.weather);
}

StateCopy copyState(const SimState& state) {
  StateCopy c;
  c.players = state.players;
  c.water.cells = state.water.cells;  // encodeWater reads only the amounts
  c.fire = state.fire;
  c.animals = state.animals;
  c.weather = state.weather;
  return c;
}

std::vector<SaveBlob> stateBlobs(const StateCopy& copy) {
  return blobsOf(copy.players, copy.water, copy.fire, copy.animals, copy.weather);
}

Result<void> restoreState(const SaveData& save, SimState& state) {
  if (Result<void> e = applySave(save, state.world); !e) return e;
  const std::uint64_t tick = save.header.tick;
  if (tick > 0xFFFFFFFFu) return makeError("save tick does not fit the fire system's 32-bit ticks");
  for (const SaveBlob& b : save.blobs) {
    Result<void> e;
    if (b.name == "players") {
      e = decodePlayers(b.bytes, state.players);
    } else if (b.name == "water") {
      e = decodeWater(b.bytes, state.water, state.world);
    } else if (b.name == "fire") {
      e = parseFire(b.bytes, state.fire, state.world);
      if (e) rebuildFireWork(state.fire, state.world, state.seed, static_cast<std::uint32_t>(tick));
    } else if (b.name == "animals") {
      e = decodeAnimals(b.bytes, state.animals, tick);
    } else if (b.name == "weather") {
      e = decodeWeather(b.bytes, state.weather);
    }
    if (!e) return makeError("save blob '" + b.name + "': " + e.error().message);
  }
  // Weather: the rain schedule boundaries up to `tick` have passed (stepWeather's loop).
  WeatherState& w = state.weather;
  w.nextBoundary = 0;
  const auto boundaries = static_cast<std::uint32_t>(w.schedule.size() * 2);
  while (w.nextBoundary < boundaries) {
    const RainSpellTicks& sp = w.schedule[w.nextBoundary / 2];
    if (((w.nextBoundary & 1u) ? sp.end : sp.start) > tick) break;
    ++w.nextBoundary;
  }
  state.tick = tick;
  return {};
}

}  // namespace loam::sim
