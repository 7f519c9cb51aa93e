// Edit codec: decoding an encoded edit log and applying it gives the same world as
// applying the original (hand-built order traps, random logs with repeated voxels
// and fills, a real forest fire), compression only when it helps, and hostile input
// (truncations, mutations, crafted frames) gives an error or a valid decode.
#include "net/edit_codec.h"
#include "net/protocol.h"
#include "net/wire.h"

#include <doctest/doctest.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "sim/systems/fire.h"
#include "sim/gen/generator.h"
#include "sim/step/mirror.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/step/step.h"
#include "sim/world/world_hash.h"
#include "tests/sim/sim_fixture.h"

using namespace loam;
using namespace loam::net;
using sim::EditRecord;

namespace {

using Bytes = std::vector<std::uint8_t>;

EditRecord voxel(int x, int y, int z, sim::MaterialId after) {
  EditRecord e;
  e.kind = EditRecord::Kind::Voxel;
  e.x = x;
  e.y = y;
  e.z = z;
  e.after = after;
  return e;
}

EditRecord fill(int bx, int by, int bz, sim::MaterialId after) {
  EditRecord e;
  e.kind = EditRecord::Kind::BrickFill;
  e.x = bx;
  e.y = by;
  e.z = bz;
  e.after = after;
  e.before = sim::kMixedBefore;
  return e;
}

EditRecord sweep(int bx, int by, int bz, std::uint16_t from, std::uint16_t to) {
  EditRecord e;
  e.kind = EditRecord::Kind::Sweep;
  e.x = bx;
  e.y = by;
  e.z = bz;
  e.from = from;
  e.to = to;
  return e;
}

// Each brick's edits in log order (kind, coordinates, new material, sweep
// positions): the order that must survive for the world to come out the same.
using PerBrick = std::map<std::tuple<int, int, int>, std::vector<std::tuple<int, int, int, int, int, int, int>>>;
PerBrick perBrick(const std::vector<EditRecord>& edits) {
  PerBrick m;
  for (const EditRecord& e : edits) {
    const sim::BrickCoord b = sim::editBrick(e);
    m[{b.x, b.y, b.z}].push_back({static_cast<int>(e.kind), e.x, e.y, e.z, e.after, e.from, e.to});
  }
  return m;
}

std::vector<EditRecord> roundTrip(const std::vector<EditRecord>& edits, Bytes* encoded = nullptr) {
  Bytes bytes;
  encodeEdits(edits, bytes);
  std::vector<EditRecord> decoded;
  const sim::Result<void> r = decodeEdits(bytes, decoded);
  REQUIRE_MESSAGE(r.has_value(), (r.has_value() ? "" : r.error().message));
  if (encoded) *encoded = bytes;
  return decoded;
}

// Applies both logs to copies of state and checks the worlds are equal voxel by
// voxel in every touched brick (and the one below: sweeps read it) and by world hash.
void checkSameWorld(const sim::SimState& state, const std::vector<EditRecord>& original,
                    const std::vector<EditRecord>& decoded) {
  sim::SimState a = state, b = state;
  sim::applyEdits(a, original);
  sim::applyEdits(b, decoded);
  for (const EditRecord& e : original) {
    const sim::BrickCoord brick = sim::editBrick(e);
    for (const sim::BrickCoord at : {brick, sim::BrickCoord{brick.x, brick.y - 1, brick.z}}) {
      const auto diff = sim::diffBrick(a.world, b.world, at);
      REQUIRE_MESSAGE(!diff.has_value(), *diff);
    }
  }
  CHECK(sim::worldHash(a.world) == sim::worldHash(b.world));
}

void checkSameOrder(const std::vector<EditRecord>& original, const std::vector<EditRecord>& decoded) {
  REQUIRE(decoded.size() == original.size());
  CHECK(perBrick(decoded) == perBrick(original));
  for (const EditRecord& e : decoded) CHECK(e.before == sim::kAir);
}

std::vector<EditRecord> randomLog(std::mt19937& rng, std::size_t n, int bricks, int voxelsPerBrick, int fillPercent) {
  std::vector<EditRecord> log;
  for (std::size_t i = 0; i < n; ++i) {
    // Bricks around the origin on both sides of zero (negative coordinates).
    const int bx = static_cast<int>(rng() % static_cast<unsigned>(bricks)) - bricks / 2;
    const int by = static_cast<int>(rng() % 2) - 1;
    const int bz = static_cast<int>(rng() % 2) - 1;
    const auto m = static_cast<sim::MaterialId>(rng() % 6);
    if (static_cast<int>(rng() % 100) < fillPercent) {
      log.push_back(fill(bx, by, bz, m));
    } else {
      const int v = static_cast<int>(rng() % static_cast<unsigned>(voxelsPerBrick));  // few voxels: many repeats
      log.push_back(voxel(bx * 8 + (v & 7), by * 8 + ((v >> 3) & 7), bz * 8 + (v >> 6), m));
    }
  }
  return log;
}

// A log as StepBatch.edits carries it when it lies in one cell (the cell and hash
// are the codec's business only).
Bytes stepBytes(const std::vector<EditRecord>& log, std::uint64_t hash = 0x1234) {
  Bytes groups, out;
  encodeEdits(log, groups);
  const CellEdits cell{sim::CellCoord{0, 0}, hash, groups};
  encodeStepEdits(std::span(&cell, 1), out);
  return out;
}

}  // namespace

TEST_CASE("an empty log and empty step edits are no bytes") {
  Bytes bytes{7};
  encodeEdits({}, bytes);
  CHECK(bytes.empty());
  std::vector<EditRecord> out{voxel(1, 2, 3, 4)};
  REQUIRE(decodeEdits(bytes, out).has_value());
  CHECK(out.empty());
  encodeStepEdits({}, bytes);
  CHECK(bytes.empty());
  std::vector<CellEdits> cells(2);
  REQUIRE(decodeStepEdits(bytes, cells).has_value());
  CHECK(cells.empty());
}

TEST_CASE("the same voxel edited twice around a fill of its brick keeps its order") {
  const sim::SimState world = test::flatState();
  const sim::MaterialId stone = test::mat("stone"), dirt = test::mat("soil");
  // voxel, fill, same voxel: the voxel must end as the second edit, not the fill.
  const std::vector<EditRecord> a{voxel(3, 1, 3, stone), voxel(40, 1, 40, dirt), fill(0, 0, 0, dirt),
                                  voxel(3, 1, 3, stone), voxel(41, 1, 40, stone)};
  // fill, voxel, fill: the voxel must be overwritten by the last fill.
  const std::vector<EditRecord> b{fill(0, 0, 0, stone), voxel(2, 2, 2, dirt), voxel(100, 1, 0, dirt),
                                  fill(0, 0, 0, sim::kAir), voxel(100, 1, 0, stone)};
  // the same voxel three times across other bricks' edits, no fill: one group.
  const std::vector<EditRecord> c{voxel(5, 5, 5, stone), voxel(-1, 5, 5, dirt), voxel(5, 5, 5, dirt),
                                  voxel(-9, 5, 5, dirt), voxel(5, 5, 5, sim::kAir)};
  for (const auto* log : {&a, &b, &c}) {
    const std::vector<EditRecord> decoded = roundTrip(*log);
    checkSameOrder(*log, decoded);
    checkSameWorld(world, *log, decoded);
  }
  sim::SimState w = world;
  sim::applyEdits(w, roundTrip(a));
  CHECK(w.world.get(3, 1, 3) == stone);
  CHECK(w.world.get(4, 1, 3) == dirt);
  sim::applyEdits(w, roundTrip(b));
  CHECK(w.world.get(2, 2, 2) == sim::kAir);
  CHECK(w.world.get(100, 1, 0) == stone);
  sim::applyEdits(w, roundTrip(c));
  CHECK(w.world.get(5, 5, 5) == sim::kAir);
  CHECK(w.world.get(-1, 5, 5) == dirt);

  // Grouping really groups: c has three bricks, so three group headers (kind 1,
  // brick deltas 0 / -1 / -1 on x at 1 byte each, count 1) and five entries (3
  // bytes) after the flag byte.
  Bytes bytes;
  encodeEdits(c, bytes);
  CHECK(bytes.size() == 3 * 5 + 5 * 3);
}

TEST_CASE("a sweep keeps its place among the edits of its brick and of the brick below") {
  // Grass on the stone floor of brick (0, 0, 0). A sweep burns grass to ash on
  // solid ground and to air over a hole, so it must see the stone under (3, 0, 3)
  // as the log left it at that point: dug before the sweep, put back after.
  sim::SimState state = test::flatState();
  const sim::MaterialId grass = test::mat("grass"), stone = test::mat("stone");
  for (int z = 0; z < 8; ++z)
    for (int x = 0; x < 8; ++x) state.world.set(x, 0, z, grass);
  const std::vector<EditRecord> log{voxel(3, -1, 3, sim::kAir), voxel(6, 0, 6, stone), sweep(0, 0, 0, 0, 512),
                                    voxel(3, -1, 3, stone), voxel(6, 0, 6, grass)};
  const std::vector<EditRecord> decoded = roundTrip(log);
  checkSameOrder(log, decoded);
  checkSameWorld(state, log, decoded);
  sim::SimState w = state;
  sim::applyEdits(w, decoded);
  CHECK(w.world.get(3, 0, 3) == sim::kAir);  // burnt over the hole
  CHECK(w.world.get(3, -1, 3) == stone);     // the hole filled after the sweep
  CHECK(w.world.get(4, 0, 3) == w.fire.tables.ash);
  CHECK(w.world.get(6, 0, 6) == grass);  // stone during the sweep, grass after it
  // A sweep travels in a few bytes: kind, brick (3), from (1), length (2).
  Bytes bytes;
  encodeEdits(std::vector<EditRecord>{sweep(0, 0, 0, 0, 512)}, bytes);
  CHECK(bytes.size() == 1 + 3 + 1 + 2);
}

TEST_CASE("more than 512 edits of one brick split into several groups in order") {
  std::vector<EditRecord> log;
  for (int i = 0; i < 1500; ++i) log.push_back(voxel(i % 7, (i / 7) % 8, 1, static_cast<sim::MaterialId>(i % 251)));
  log.push_back(fill(0, 0, 0, 9));
  for (int i = 0; i < 600; ++i) log.push_back(voxel(i % 3, 0, 0, static_cast<sim::MaterialId>(i % 13)));
  const std::vector<EditRecord> decoded = roundTrip(log);
  checkSameOrder(log, decoded);
  checkSameWorld(test::flatState(), log, decoded);
}

TEST_CASE("random logs with repeated voxels and fills decode to the same world") {
  const sim::SimState world = test::flatState();
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    CAPTURE(round);
    const std::size_t n = 1 + rng() % 400;
    const int bricks = 1 + static_cast<int>(rng() % 12);
    const int voxels = 1 + static_cast<int>(rng() % 40);
    const int fills = static_cast<int>(rng() % 30);
    const std::vector<EditRecord> log = randomLog(rng, n, bricks, voxels, fills);
    const std::vector<EditRecord> decoded = roundTrip(log);
    checkSameOrder(log, decoded);
    checkSameWorld(world, log, decoded);
  }
}

TEST_CASE("step edits: cells with their hashes, each header a few bytes") {
  // Cell header: x 1, z 1, hash 8, length 1; then the groups: kind, brick deltas
  // (0, 0, 0) and (112, -1, 9) (3 and 6 bytes), count, entries.
  const std::vector<EditRecord> small{voxel(1, 1, 1, 3), voxel(900, -5, 77, 4)};
  Bytes bytes = stepBytes(small);
  CHECK(bytes.size() == 2 + 8 + 1 + (1 + 3 + 1 + 3) + (1 + 4 + 1 + 3));

  // Several cells, both signs, in ascending order: each comes back with its own
  // edits and hash.
  const std::vector<sim::CellCoord> at{{-3, 7}, {-3, 9}, {0, -2}, {5, 5}};
  std::vector<Bytes> groups(at.size());
  std::vector<CellEdits> many;
  for (std::size_t k = 0; k < at.size(); ++k) {
    encodeEdits(std::vector<EditRecord>{voxel(at[k].x * 256, 0, at[k].z * 256, static_cast<sim::MaterialId>(k + 1))},
                groups[k]);
    many.push_back(CellEdits{at[k], 0xfedcba9876543210ull + k, groups[k]});
  }
  encodeStepEdits(many, bytes);
  std::vector<CellEdits> cells;
  REQUIRE(decodeStepEdits(bytes, cells).has_value());
  REQUIRE(cells.size() == at.size());
  for (std::size_t k = 0; k < at.size(); ++k) {
    CHECK(cells[k].cell == at[k]);
    CHECK(cells[k].hash == 0xfedcba9876543210ull + k);
    CHECK(Bytes(cells[k].edits.begin(), cells[k].edits.end()) == groups[k]);
  }
}

namespace {

// A flammable voxel near a marked point (as bench/fire_bench.cpp finds one).
bool findFuel(const sim::SimState& st, sim::VoxelCoord at, sim::VoxelCoord& out) {
  for (int r = 0; r <= 60; ++r)
    for (int dy = -2; dy <= 40; ++dy)
      for (int dz = -r; dz <= r; ++dz)
        for (int dx = -r; dx <= r; ++dx) {
          if (std::max(std::abs(dx), std::abs(dz)) != r) continue;
          const sim::VoxelCoord v{at.x + dx, at.y + dy, at.z + dz};
          if (st.lut.flammable[st.world.get(v)]) {
            out = v;
            return true;
          }
        }
  return false;
}

}  // namespace

TEST_CASE("a forest fire's edit logs: same world on a mirror, bytes per edit") {
  auto scene = sim::loadScene(LOAM_SOURCE_DIR "/scenes/forest-fires.toml");
  REQUIRE(scene.has_value());
  auto created = sim::createSimState(*scene, scene->defaultSeed);
  REQUIRE(created.has_value());
  sim::SimState& st = *created;
  for (const sim::IgnitionPoint& ip : scene->ignitions) {
    sim::VoxelCoord fuel;
    REQUIRE(findFuel(st, sim::placementVoxel(*scene, scene->defaultSeed, ip.position, ip.onGround), fuel));
    sim::StepOutput side;
    sim::SimContext ctx(st, side);
    CHECK(sim::igniteFire(st.fire, ctx, fuel, sim::Actor{}));
  }
  sim::SimState mirror = st;  // after ignition, before the first step

  constexpr int kSteps = 600;
  sim::StepOutput out;
  Bytes bytes;
  std::vector<EditRecord> follower, decoded, cellDecoded;
  std::vector<Bytes> groups;
  std::vector<CellEdits> cells;
  flatbuffers::FlatBufferBuilder envelope;
  Bytes envelopeScratch;
  double encodeSeconds = 0, decodeSeconds = 0;  // wall time, for the log only
  std::size_t sweeps = 0, edits = 0, encodedBytes = 0, rawBytes = 0, compressedSteps = 0, maxEdits = 0, nonEmpty = 0;
  for (int i = 0; i < kSteps; ++i) {
    sim::step(st, {}, out);
    // As the server sends them: by cell, in step order inside each, one cell's
    // groups encoded once, the step's cells compressed together in the message's
    // Compressed envelope (counted here around the edits alone).
    sim::followerEdits(out, follower);
    std::stable_sort(follower.begin(), follower.end(), [](const EditRecord& a, const EditRecord& b) {
      return sim::cellOf(sim::editBrick(a)) < sim::cellOf(sim::editBrick(b));
    });
    const auto t0 = std::chrono::steady_clock::now();
    cells.clear();
    groups.resize(std::max(groups.size(), follower.size()));
    for (std::size_t k = 0; k < follower.size();) {
      const sim::CellCoord cell = sim::cellOf(sim::editBrick(follower[k]));
      std::size_t end = k;
      while (end < follower.size() && sim::cellOf(sim::editBrick(follower[end])) == cell) ++end;
      encodeEdits(std::span(follower).subspan(k, end - k), groups[cells.size()]);
      cells.push_back(CellEdits{cell, 0, groups[cells.size()]});
      k = end;
    }
    encodeStepEdits(cells, bytes);
    const auto t1 = std::chrono::steady_clock::now();
    decoded.clear();
    REQUIRE(decodeStepEdits(bytes, cells).has_value());
    for (const CellEdits& c : cells) {
      REQUIRE(decodeEdits(c.edits, cellDecoded).has_value());
      decoded.insert(decoded.end(), cellDecoded.begin(), cellDecoded.end());
    }
    const auto t2 = std::chrono::steady_clock::now();
    encodeSeconds += std::chrono::duration<double>(t1 - t0).count();
    decodeSeconds += std::chrono::duration<double>(t2 - t1).count();
    checkSameOrder(follower, decoded);
    sweeps += out.sweeps.size();
    sim::applyEdits(mirror, decoded);
    edits += out.edits.size();
    maxEdits = std::max(maxEdits, out.edits.size());
    const bool packed = bytes.size() > kCompressAboveBytes &&
                        compressServerMessage(bytes.data(), bytes.size(), envelope, envelopeScratch);
    encodedBytes += packed ? envelope.GetSize() : bytes.size();
    nonEmpty += !out.edits.empty();
    compressedSteps += packed;
    rawBytes += out.edits.size() * sizeof(EditRecord);
    if (i % 100 == 99) REQUIRE(sim::worldHash(mirror.world) == sim::worldHash(st.world));
  }
  REQUIRE(edits > 10000);  // the fire really burned
  CHECK(sim::worldHash(mirror.world) == sim::worldHash(st.world));
  CHECK(sweeps > 1000);  // the visits went as sweeps
  const double perEdit = static_cast<double>(encodedBytes) / static_cast<double>(edits);
  MESSAGE("forest-fires, " << kSteps << " steps, 5 fires: " << edits << " edits (max " << maxEdits
                           << " in a step; " << sweeps << " sweep records), " << encodedBytes << " bytes encoded = " << perEdit
                           << " bytes per edit (in-memory EditRecord: " << sizeof(EditRecord)
                           << " bytes; " << static_cast<double>(encodedBytes) / kSteps << " bytes per step); "
                           << compressedSteps << " of " << nonEmpty << " non-empty steps compressed; encode "
                           << encodeSeconds * 1e3 / kSteps << " ms, decode " << decodeSeconds * 1e3 / kSteps
                           << " ms per step (wall)");
  CHECK(perEdit < 1.0);  // 2.65 before sweeps travelled as records (one zstd frame per step, no cells)
  CHECK(encodedBytes < rawBytes);
}

TEST_CASE("crafted bad input gives errors") {
  std::vector<EditRecord> out;
  const auto bad = [&](Bytes b, std::size_t maxRecords = 1u << 22) {
    return !decodeEdits(b, out, maxRecords).has_value();
  };
  const auto varint = [](Bytes& b, std::uint32_t v) {
    for (; v >= 0x80; v >>= 7) b.push_back(static_cast<std::uint8_t>(v | 0x80));
    b.push_back(static_cast<std::uint8_t>(v));
  };
  const auto group = [&](std::int32_t bx, std::uint8_t kind) {
    Bytes b{kind};
    varint(b, (static_cast<std::uint32_t>(bx) << 1) ^ static_cast<std::uint32_t>(bx >> 31));  // zigzag
    b.insert(b.end(), {0, 0});
    return b;
  };
  CHECK_FALSE(bad({}));  // no groups
  Bytes g = group(0, 3);  // bad kind
  g.push_back(1);
  CHECK(bad(g));
  g = group(0, 0);  // count 0
  g.push_back(0);
  CHECK(bad(g));
  g = group(0, 0);  // count 513
  varint(g, 513);
  for (int k = 0; k < 513; ++k) g.insert(g.end(), {0, 0, 1});
  CHECK(bad(g));
  g = group(0, 0);  // index 512
  g.insert(g.end(), {1, 0x00, 0x02, 5});
  CHECK(bad(g));
  g = group(0, 0);  // fine: index 511
  g.insert(g.end(), {1, 0xff, 0x01, 5});
  REQUIRE_FALSE(bad(g));
  REQUIRE(out.size() == 1);
  CHECK(out[0] == voxel(7, 7, 7, 5));
  CHECK(bad(g, 0));  // more records than allowed
  g = {0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 1, 0, 0, 5};  // a varint over 32 bits
  CHECK(bad(g));
  g = {0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 0, 1, 0, 0, 5};  // a varint over 5 bytes
  CHECK(bad(g));
  g = group(1 << 28, 0);  // voxel coordinates would overflow int32
  g.insert(g.end(), {1, 0, 0, 5});
  CHECK(bad(g));
  g = group(-(1 << 28) - 1, 0);
  g.insert(g.end(), {1, 0, 0, 5});
  CHECK(bad(g));
  g = group(1 << 30, 1);  // fills and sweeps too
  g.push_back(3);
  CHECK(bad(g));
  g = group(-3, 1);  // deltas add up: -3 then +1 is brick -2
  g.push_back(3);
  const Bytes second = group(1, 1);
  g.insert(g.end(), second.begin(), second.end());
  g.push_back(4);
  REQUIRE_FALSE(bad(g));
  REQUIRE(out.size() == 2);
  CHECK(out[1].kind == EditRecord::Kind::BrickFill);
  CHECK((out[1].x == -2 && out[1].y == 0 && out[1].z == 0 && out[1].after == 4));

  // Sweeps: positions inside the brick's 512, at least one, and counted in full
  // against maxRecords (the work of replaying them).
  g = group(0, 2);
  g.insert(g.end(), {5, 10});
  REQUIRE_FALSE(bad(g));
  REQUIRE(out.size() == 1);
  CHECK(out[0] == sweep(0, 0, 0, 5, 15));
  CHECK(bad(g, 9));
  CHECK_FALSE(bad(g, 10));
  for (const std::pair<std::uint32_t, std::uint32_t>& fl : {std::pair{512u, 1u}, {0u, 0u}, {500u, 13u}, {0u, 513u}}) {
    g = group(0, 2);
    varint(g, fl.first);
    varint(g, fl.second);
    CHECK(bad(g));
  }
  g = group(0, 2);  // truncated
  g.push_back(5);
  CHECK(bad(g));

  // The record cap counts every voxel edit.
  std::vector<EditRecord> sweep;
  for (int i = 0; i < 512; ++i) sweep.push_back(voxel(i & 7, (i >> 3) & 7, i >> 6, 2));
  encodeEdits(sweep, g);
  CHECK_FALSE(bad(g, 512));
  CHECK(bad(g, 511));

  // Step edits: cells and their framing.
  std::vector<CellEdits> cells;
  const auto badStep = [&](const Bytes& b) { return !decodeStepEdits(b, cells).has_value(); };
  const Bytes one = stepBytes(std::vector<EditRecord>{voxel(1, 2, 3, 4)});  // x 0, z 0, hash, length 8, groups
  REQUIRE(one.size() == 2 + 8 + 1 + 8);
  REQUIRE_FALSE(badStep(one));
  REQUIRE(cells.size() == 1);
  CHECK(cells[0].hash == 0x1234);
  REQUIRE(decodeEdits(cells[0].edits, out).has_value());
  CHECK(out == std::vector<EditRecord>{voxel(1, 2, 3, 4)});
  for (std::size_t n = 1; n < one.size(); ++n) CHECK(badStep(Bytes(one.begin(), one.begin() + static_cast<std::ptrdiff_t>(n))));
  Bytes twice = one;
  twice.insert(twice.end(), one.begin(), one.end());  // the same cell again (delta 0): out of order
  CHECK(badStep(twice));
  Bytes next = one;
  next.insert(next.end(), one.begin(), one.end());
  next[one.size() + 1] = 2;  // z + 1: in order
  CHECK_FALSE(badStep(next));
  CHECK(cells.size() == 2);
  Bytes empty = one;
  empty.resize(2 + 8);
  empty.push_back(0);  // a cell without edits
  CHECK(badStep(empty));
  Bytes longer = one;
  longer[10] = 9;  // the length runs past the end
  CHECK(badStep(longer));
}

TEST_CASE("every truncation and random mutation gives an error or a valid decode") {
  std::mt19937 rng(99);
  std::vector<Bytes> samples;
  for (int k = 0; k < 6; ++k) {
    samples.push_back(stepBytes(randomLog(rng, 20 + 80 * static_cast<std::size_t>(k), 4, 64, 10)));
    // Too small to compress.
    samples.push_back(stepBytes(randomLog(rng, 1 + static_cast<std::size_t>(k % 3), 4, 512, 30)));
  }
  samples.push_back(stepBytes({sweep(1, 2, 3, 0, 40), voxel(8, 16, 24, 1), sweep(1, 1, 3, 40, 90)}));
  {
    std::vector<EditRecord> sweep;
    for (int i = 0; i < 512; ++i) sweep.push_back(voxel(i & 7, (i >> 3) & 7, i >> 6, 2));
    samples.push_back(stepBytes(sweep));
  }

  std::vector<EditRecord> out;
  std::vector<CellEdits> cells;
  std::size_t errors = 0, decodes = 0;
  const auto decode = [&](const Bytes& b) -> sim::Result<void> {
    out.clear();
    if (auto r = decodeStepEdits(b, cells); !r) return r;
    std::vector<EditRecord> cellOut;
    std::size_t budget = 4096;
    for (const CellEdits& c : cells) {
      if (auto r = decodeEdits(c.edits, cellOut, budget); !r) return r;
      budget -= editWeight(cellOut);
      out.insert(out.end(), cellOut.begin(), cellOut.end());
    }
    return sim::ok();
  };
  const auto check = [&](const Bytes& b) {
    const sim::Result<void> r = decode(b);
    if (!r) {
      ++errors;
      CHECK(!r.error().message.empty());
      return;
    }
    ++decodes;
    CHECK(editWeight(out) <= 4096);
    for (const EditRecord& e : out) {
      CHECK(e.before == sim::kAir);
      const bool sweepOk = e.kind == EditRecord::Kind::Sweep && e.from < e.to && e.to <= sim::kBrickVoxels;
      CHECK((e.kind == EditRecord::Kind::Voxel || e.kind == EditRecord::Kind::BrickFill || sweepOk));
    }
  };
  for (const Bytes& s : samples) {
    // Every strict prefix, each in its own allocation so a sanitizer sees overreads.
    for (std::size_t n = 0; n < s.size(); ++n) {
      const Bytes p(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
      const std::size_t before = errors;
      check(p);
      // A cut inside the cell must be an error (no bytes at all is a valid step
      // without edits).
      if (n > 0) CHECK(errors == before + 1);
    }
    for (int m = 0; m < 3000; ++m) {
      Bytes b = s;
      const int flips = 1 + m % 5;
      for (int k = 0; k < flips; ++k) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
      if (m % 7 == 0) b.resize(rng() % (b.size() + 1));
      check(b);
    }
  }
  for (int m = 0; m < 3000; ++m) {
    Bytes b(rng() % 300);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    if (!b.empty() && m % 2) b[0] = static_cast<std::uint8_t>(m % 4 == 1 ? 0 : 1);
    check(b);
  }
  MESSAGE("hostile buffers: " << errors << " errors, " << decodes << " valid decodes");
  CHECK(errors > 0);
}
