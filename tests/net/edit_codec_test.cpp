// Edit codec: decoding an encoded edit log and applying it gives the same world as
// applying the original (hand-built order traps, random logs with repeated voxels
// and fills, a real forest fire that the mirror burns itself from the fire records),
// fire records come back as of the step's tick, compression only when it helps, and
// hostile input (truncations, mutations, crafted frames) gives an error or a valid
// decode.
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
#include <optional>
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
#include "sim/step/world_hash_tracker.h"
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

// A fire set record: the brick (bx, by, bz) caught at `start` and burns `duration`
// ticks at `peak`, to one material `result` when uniform.
sim::FireChange fireSet(int bx, int by, int bz, std::uint32_t start, std::uint32_t duration, std::uint8_t peak,
                        bool uniform = false, sim::MaterialId result = sim::kAir) {
  sim::FireChange f;
  f.corner = {bx * sim::kBrickSize, by * sim::kBrickSize, bz * sim::kBrickSize};
  f.start = start;
  f.endTick = start + duration;
  f.peak = peak;
  f.flags = uniform ? sim::kFireUniform : 0;
  f.result = uniform ? result : sim::kAir;
  return f;
}

// A fire out record: the brick stops burning after this step's sweep.
sim::FireChange fireOut(int bx, int by, int bz) {
  sim::FireChange f;
  f.corner = {bx * sim::kBrickSize, by * sim::kBrickSize, bz * sim::kBrickSize};
  return f;
}

// What the wire keeps of a fire record: an out record is its brick alone, a set
// record's result only when uniform.
sim::FireChange onWire(sim::FireChange f) {
  if (f.endTick == 0) return sim::FireChange{f.corner};
  f.flags &= sim::kFireUniform;
  if (f.flags == 0) f.result = sim::kAir;
  return f;
}

// Each brick's edits in log order (kind, coordinates, new material): the order that
// must survive for the world to come out the same.
using PerBrick = std::map<std::tuple<int, int, int>, std::vector<std::tuple<int, int, int, int, int>>>;
PerBrick perBrick(const std::vector<EditRecord>& edits) {
  PerBrick m;
  for (const EditRecord& e : edits) {
    const sim::BrickCoord b = sim::editBrick(e);
    m[{b.x, b.y, b.z}].push_back({static_cast<int>(e.kind), e.x, e.y, e.z, e.after});
  }
  return m;
}

struct Decoded {
  std::vector<EditRecord> edits;
  std::vector<sim::FireChange> fire;
};

// Encodes edits and fire records of the step that ends at `tick`, decodes them as of
// the same tick.
Decoded roundTrip(const std::vector<EditRecord>& edits, const std::vector<sim::FireChange>& fire, std::uint64_t tick,
                  Bytes* encoded = nullptr) {
  Bytes bytes;
  encodeEdits(edits, fire, tick, bytes);
  Decoded d;
  const sim::Result<void> r = decodeEdits(bytes, tick, d.edits, d.fire);
  REQUIRE_MESSAGE(r.has_value(), (r.has_value() ? "" : r.error().message));
  if (encoded) *encoded = bytes;
  return d;
}

std::vector<EditRecord> roundTrip(const std::vector<EditRecord>& edits) {
  Decoded d = roundTrip(edits, {}, 0);
  CHECK(d.fire.empty());
  return std::move(d.edits);
}

// Applies both logs to copies of state and checks the worlds are equal voxel by
// voxel in every touched brick and by world hash.
void checkSameWorld(const sim::SimState& state, const std::vector<EditRecord>& original,
                    const std::vector<EditRecord>& decoded) {
  sim::SimState a = state, b = state;
  sim::applyEdits(a, original);
  sim::applyEdits(b, decoded);
  for (const EditRecord& e : original) {
    const auto diff = sim::diffBrick(a.world, b.world, sim::editBrick(e));
    REQUIRE_MESSAGE(!diff.has_value(), *diff);
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

// Valid fire records of the step that ends at `tick` (>= 65535) in the bricks
// randomLog uses: out, or set with any age, duration, peak and result.
std::vector<sim::FireChange> randomFire(std::mt19937& rng, std::size_t n, int bricks, std::uint32_t tick) {
  std::vector<sim::FireChange> fire;
  for (std::size_t i = 0; i < n; ++i) {
    const int bx = static_cast<int>(rng() % static_cast<unsigned>(bricks)) - bricks / 2;
    const int by = static_cast<int>(rng() % 2) - 1;
    const int bz = static_cast<int>(rng() % 2) - 1;
    if (rng() % 4 == 0) {
      fire.push_back(fireOut(bx, by, bz));
      continue;
    }
    const std::uint32_t duration = 1 + rng() % (rng() % 2 ? 65535 : 600);
    const std::uint32_t age = rng() % duration;
    const bool uniform = rng() % 2;
    const auto peak = static_cast<std::uint8_t>(1 + rng() % 255);
    const auto result = static_cast<sim::MaterialId>(rng() % 256);
    fire.push_back(fireSet(bx, by, bz, tick - age, duration, peak, uniform, result));
  }
  return fire;
}

// A log (and fire records) as StepBatch.edits carries it when it lies in one cell
// (the cell and hash are the codec's business only).
Bytes stepBytes(const std::vector<EditRecord>& log, std::uint64_t hash = 0x1234,
                const std::vector<sim::FireChange>& fire = {}, std::uint64_t tick = 0) {
  Bytes groups, out;
  encodeEdits(log, fire, tick, groups);
  const CellEdits cell{sim::CellCoord{0, 0}, hash, groups};
  encodeStepEdits(std::span(&cell, 1), out);
  return out;
}

}  // namespace

TEST_CASE("an empty log and empty step edits are no bytes") {
  Bytes bytes{7};
  encodeEdits({}, {}, 100, bytes);
  CHECK(bytes.empty());
  std::vector<EditRecord> out{voxel(1, 2, 3, 4)};
  std::vector<sim::FireChange> fire{fireOut(1, 2, 3)};
  REQUIRE(decodeEdits(bytes, 100, out, fire).has_value());
  CHECK(out.empty());
  CHECK(fire.empty());
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
  encodeEdits(c, {}, 0, bytes);
  CHECK(bytes.size() == 3 * 5 + 5 * 3);
}

TEST_CASE("fire records follow the edit groups and come back as of the step's tick") {
  constexpr std::uint32_t kTick = 100000;
  const std::vector<EditRecord> log{voxel(3, 1, 3, 4), fill(100, 0, 0, 2), voxel(-20, 9, 33, 5), voxel(4, 1, 3, 6)};
  const std::vector<sim::FireChange> fire{
      fireSet(100, 0, 0, kTick, 300, 200, true, 7),     // caught this step (age 0), burns to one material
      fireSet(-3, 2, 7, kTick - 1234, 2000, 90),        // an update: its burnt result stopped being uniform
      fireOut(-3, 2, 6),                                // out after this step's sweep
      fireSet(-3, 2, 6, kTick - 65534, 65535, 1, true, sim::kAir),  // the longest, about to end; result air
      fireSet(0, 0, 0, kTick - 65000, 65535, 255),      // all 16 bits of duration
      fireOut(1 << 20, -5, -(1 << 20))};                // far away: deltas in both directions
  Bytes bytes;
  const Decoded d = roundTrip(log, fire, kTick, &bytes);
  checkSameOrder(log, d.edits);
  CHECK(d.fire == fire);  // in the step's order, every field

  // The age is relative to the step: the same bytes read as of a later tick give a
  // later ignition (and end), which is why decodeEdits takes the tick.
  std::vector<EditRecord> edits;
  std::vector<sim::FireChange> later;
  REQUIRE(decodeEdits(bytes, kTick + 10, edits, later).has_value());
  REQUIRE(later.size() == fire.size());
  for (std::size_t k = 0; k < fire.size(); ++k) {
    sim::FireChange expected = fire[k];
    if (expected.endTick != 0) {
      expected.start += 10;
      expected.endTick += 10;
    }
    CHECK(later[k] == expected);
  }

  // A set record's result travels only with the uniform flag; other flag bits stay home.
  sim::FireChange mixed = fireSet(1, 1, 1, kTick - 5, 300, 9);
  mixed.result = 7;
  mixed.flags = sim::kFireDying;
  CHECK(roundTrip({}, {mixed}, kTick).fire == std::vector<sim::FireChange>{onWire(mixed)});
  CHECK(onWire(mixed) == fireSet(1, 1, 1, kTick - 5, 300, 9));

  // The layout: kind 2, brick deltas zigzag(1, -1, 0), peak, age 5, duration 300 (2
  // bytes), uniform, result; an out record is kind 3 and the brick deltas alone.
  encodeEdits({}, std::vector{fireSet(1, -1, 0, kTick - 5, 300, 200, true, 7), fireOut(1, -1, 0)}, kTick, bytes);
  CHECK(bytes == Bytes{2, 2, 1, 0, 200, 5, 0xac, 0x02, 1, 7, 3, 0, 0, 0});
  // Deltas continue from the last edit group: a fill of brick 100 (delta 2 bytes)
  // then an out record of the same brick (deltas of 1 byte).
  encodeEdits(std::vector{fill(100, 0, 0, 2)}, std::vector{fireOut(100, 0, 0)}, kTick, bytes);
  CHECK(bytes == Bytes{1, 0xc8, 0x01, 0, 0, 2, 3, 0, 0, 0});
}

TEST_CASE("a mirror that burns the decoded fire records itself gets the server's world") {
  // Grass on the stone floor of brick (0, 0, 0), lit by the server. The fire burns
  // grass to ash on solid ground and to air over a hole, and every step the server
  // digs or fills a few holes under the grass before its fire runs: a mirror that
  // gets the step's edits and fire records through the codec (and none of the
  // fire's edits) must apply the edits first, then burn, to come out the same.
  sim::SimState server = test::flatState();
  const sim::MaterialId grass = test::mat("grass"), cobble = test::mat("cobble");
  for (int z = 0; z < 8; ++z)
    for (int x = 0; x < 8; ++x) server.world.set(x, 0, z, grass);
  sim::SimState mirror = server;
  std::mt19937 rng(3);
  sim::StepOutput out;
  std::vector<sim::Command> commands;
  std::vector<EditRecord> follower, made, swept;
  std::size_t fireRecords = 0, madeEdits = 0;
  int steps = 0;
  for (; steps < 3000 && (steps == 0 || !server.fire.cells.empty()); ++steps) {
    commands.clear();
    if (steps == 0) commands.push_back({sim::kServerPlayer, 0, sim::IgniteCommand{{2, 0, 2}}});
    for (int k = 0; k < 3; ++k) {
      // The voxel under grass (x, 0, z): dug (the smallest dig, centred one below, takes
      // it and not the grass), or filled with cobble from its neighbour.
      const int x = static_cast<int>(rng() % 8), z = static_cast<int>(rng() % 8);
      if (server.world.get(x, -1, z) == sim::kAir) {
        const sim::PlaceCommand place{{x + 1, -1, z}, sim::Face::NegX, sim::ToolSize::Cm5, cobble};
        commands.push_back({sim::kServerPlayer, 0, place});
      } else {
        commands.push_back({sim::kServerPlayer, 0, sim::DigCommand{{x, -2, z}, sim::ToolSize::Cm5}});
      }
    }
    sim::step(server, commands, out);
    if (steps == 0) REQUIRE(server.fire.cells.size() == 1);
    sim::followerEdits(out, follower);
    swept.clear();
    for (const sim::SweepRun& run : out.sweeps) {
      const auto first = out.edits.begin() + static_cast<std::ptrdiff_t>(run.firstEdit);
      swept.insert(swept.end(), first, first + static_cast<std::ptrdiff_t>(run.edits));
    }
    REQUIRE(follower.size() + swept.size() == out.edits.size());  // the fire's edits stay home
    const Decoded d = roundTrip(follower, out.fire, out.tick);
    checkSameOrder(follower, d.edits);
    REQUIRE(d.fire.size() == out.fire.size());
    for (std::size_t k = 0; k < d.fire.size(); ++k) CHECK(d.fire[k] == onWire(out.fire[k]));
    sim::StepRecords records;
    records.tick = out.tick;
    records.edits = d.edits;
    records.fire = d.fire;
    made.clear();
    sim::applyStep(mirror, records, &made);
    CHECK(made == swept);  // the mirror made the fire's edits itself, the same ones in the same order
    fireRecords += out.fire.size();
    madeEdits += made.size();
    for (const sim::BrickCoord b : {sim::BrickCoord{0, 0, 0}, sim::BrickCoord{0, -1, 0}}) {
      const auto diff = sim::diffBrick(server.world, mirror.world, b);
      REQUIRE_MESSAGE(!diff.has_value(), "step " << out.tick << ": " << *diff);
    }
    const auto fireDiff = sim::diffFire(server.fire, mirror.fire);
    REQUIRE_MESSAGE(!fireDiff.has_value(), "step " << out.tick << ": " << *fireDiff);
  }
  CHECK(server.fire.cells.empty());  // it burnt out
  CHECK(fireRecords >= 2);           // its ignition and its end travelled
  CHECK(madeEdits > 20);             // the mirror burnt the grass itself
  CHECK(sim::worldHash(server.world) == sim::worldHash(mirror.world));
  // The holes mattered: grass burnt to ash over stone, to air over a hole.
  int ash = 0, air = 0;
  for (int z = 0; z < 8; ++z)
    for (int x = 0; x < 8; ++x) {
      ash += server.world.get(x, 0, z) == server.fire.tables.ash;
      air += server.world.get(x, 0, z) == sim::kAir;
    }
  MESSAGE("grass fire: " << steps << " steps, " << madeEdits << " edits made by the mirror, " << ash << " ash, " << air
                         << " air");
  CHECK(ash + air == 64);  // every grass voxel burnt
  CHECK(ash > 0);
  CHECK(air > 0);
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
    // Fire records after the groups (none in a third of the rounds): every field back.
    const std::uint32_t tick = 65535 + rng() % 1000000;
    const std::vector<sim::FireChange> fire = randomFire(rng, round % 3 ? rng() % 40 : 0, bricks, tick);
    const Decoded decoded = roundTrip(log, fire, tick);
    checkSameOrder(log, decoded.edits);
    checkSameWorld(world, log, decoded.edits);
    CHECK(decoded.fire == fire);
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
                std::vector<sim::FireChange>{fireOut(at[k].x * 32, 0, at[k].z * 32)}, 0, groups[k]);
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

  // A cell only the fire the client burns itself changed: its hash alone (length 0).
  const CellEdits hashOnly[] = {{{4, -4}, 0x77, {}}, {{4, -3}, 0x78, groups[0]}};
  encodeStepEdits(hashOnly, bytes);
  CHECK(bytes.size() == (2 + 8 + 1) + (2 + 8 + 1 + groups[0].size()));
  REQUIRE(decodeStepEdits(bytes, cells).has_value());
  REQUIRE(cells.size() == 2);
  CHECK(cells[0].cell == sim::CellCoord{4, -4});
  CHECK(cells[0].hash == 0x77);
  CHECK(cells[0].edits.empty());
  CHECK(cells[1].cell == sim::CellCoord{4, -3});
  CHECK(Bytes(cells[1].edits.begin(), cells[1].edits.end()) == groups[0]);
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
  // The mirror starts from the generated world and learns of the fires lit before
  // the first step as a client catching up on their cells does (their ignition data).
  sim::SimState mirror = st;
  sim::StepOutput lit;
  for (const sim::IgnitionPoint& ip : scene->ignitions) {
    sim::VoxelCoord fuel;
    REQUIRE(findFuel(st, sim::placementVoxel(*scene, scene->defaultSeed, ip.position, ip.onGround), fuel));
    sim::SimContext ctx(st, lit);
    CHECK(sim::igniteFire(st.fire, ctx, fuel, sim::Actor{}));
  }
  REQUIRE(lit.fire.size() == scene->ignitions.size());
  sim::insertFireCells(mirror.fire, mirror.seed, static_cast<std::uint32_t>(st.tick), lit.fire);
  REQUIRE_FALSE(sim::diffFire(st.fire, mirror.fire).has_value());
  sim::WorldHashTracker serverHashes, mirrorHashes;
  serverHashes.reset(st.world);
  mirrorHashes.reset(mirror.world);

  constexpr int kSteps = 600;
  sim::StepOutput out;
  Bytes bytes;
  std::vector<EditRecord> follower, allFollower, decoded, cellDecoded, made, mirrorEdits;
  std::vector<sim::FireChange> sentFire, expectedFire, decodedFire, cellFire;
  StepCells stepCellGroups;
  std::vector<Bytes> groups;
  std::vector<CellEdits> cells;
  flatbuffers::FlatBufferBuilder envelope;
  Bytes envelopeScratch;
  double encodeSeconds = 0, decodeSeconds = 0;  // wall time, for the log only
  std::size_t edits = 0, sentEdits = 0, madeEdits = 0, fireRecords = 0, encodedBytes = 0, rawBytes = 0;
  std::size_t compressedSteps = 0, maxEdits = 0, nonEmpty = 0, cellsSent = 0, hashOnlyCells = 0, badHashes = 0;
  const auto cellOfEdit = [](const EditRecord& e) { return sim::cellOf(sim::editBrick(e)); };
  const auto cellOfFire = [](const sim::FireChange& f) { return sim::cellOf(sim::brickOf(f.corner)); };
  for (int i = 0; i < kSteps; ++i) {
    sim::step(st, {}, out);
    serverHashes.update(st.world, out.edits);
    // As the server routes them (StepCells, which CellSync::routeEdits uses): one
    // cell's groups are encoded once, the step's cells compressed together in the
    // message's Compressed envelope (counted here around the edits alone).
    const auto t0 = std::chrono::steady_clock::now();
    const std::span<const StepCells::Cell> stepCells = stepCellGroups.group(out);
    cells.clear();
    follower.clear();
    sentFire.clear();
    groups.resize(std::max(groups.size(), stepCells.size()));
    for (const StepCells::Cell& c : stepCells) {
      Bytes& g = groups[cells.size()];
      encodeEdits(c.edits, c.fire, out.tick, g);
      cells.push_back(CellEdits{c.cell, serverHashes.cellHash(st.world, c.cell), g});
      hashOnlyCells += g.empty();
      follower.insert(follower.end(), c.edits.begin(), c.edits.end());
      sentFire.insert(sentFire.end(), c.fire.begin(), c.fire.end());
    }
    // Every follower edit and fire record goes, each in one cell.
    sim::followerEdits(out, allFollower);
    REQUIRE(follower.size() == allFollower.size());
    REQUIRE(sentFire.size() == out.fire.size());
    for (std::size_t c = 1; c < stepCells.size(); ++c) REQUIRE(stepCells[c - 1].cell < stepCells[c].cell);
    cellsSent += cells.size();
    encodeStepEdits(cells, bytes);
    const auto t1 = std::chrono::steady_clock::now();
    decoded.clear();
    decodedFire.clear();
    REQUIRE(decodeStepEdits(bytes, cells).has_value());
    for (const CellEdits& c : cells) {
      REQUIRE(decodeEdits(c.edits, out.tick, cellDecoded, cellFire).has_value());
      for (const EditRecord& e : cellDecoded) REQUIRE(cellOfEdit(e) == c.cell);
      for (const sim::FireChange& f : cellFire) REQUIRE(cellOfFire(f) == c.cell);
      decoded.insert(decoded.end(), cellDecoded.begin(), cellDecoded.end());
      decodedFire.insert(decodedFire.end(), cellFire.begin(), cellFire.end());
    }
    const auto t2 = std::chrono::steady_clock::now();
    encodeSeconds += std::chrono::duration<double>(t1 - t0).count();
    decodeSeconds += std::chrono::duration<double>(t2 - t1).count();
    checkSameOrder(follower, decoded);
    expectedFire.clear();
    for (const sim::FireChange& f : sentFire) expectedFire.push_back(onWire(f));
    CHECK(decodedFire == expectedFire);
    // The mirror applies them as a client does (sim::applyStep): the edits, then
    // the fire it burns itself from the records, making the fire's edits.
    sim::StepRecords records;
    records.tick = out.tick;
    records.edits = decoded;
    records.fire = decodedFire;
    made.clear();
    sim::applyStep(mirror, records, &made);
    mirrorEdits.assign(decoded.begin(), decoded.end());
    mirrorEdits.insert(mirrorEdits.end(), made.begin(), made.end());
    mirrorHashes.update(mirror.world, mirrorEdits);
    for (const CellEdits& c : cells) badHashes += mirrorHashes.cellHash(mirror.world, c.cell) != c.hash;
    REQUIRE(mirrorHashes.worldHash() == serverHashes.worldHash());
    edits += out.edits.size();
    sentEdits += follower.size();
    madeEdits += made.size();
    fireRecords += out.fire.size();
    maxEdits = std::max(maxEdits, out.edits.size());
    const bool packed = bytes.size() > kCompressAboveBytes &&
                        compressServerMessage(bytes.data(), bytes.size(), envelope, envelopeScratch);
    encodedBytes += packed ? envelope.GetSize() : bytes.size();
    nonEmpty += !out.edits.empty();
    compressedSteps += packed;
    rawBytes += out.edits.size() * sizeof(EditRecord);
    if (i % 100 == 99) {
      REQUIRE(sim::worldHash(mirror.world) == sim::worldHash(st.world));
      const auto fireDiff = sim::diffFire(st.fire, mirror.fire);
      REQUIRE_MESSAGE(!fireDiff.has_value(), "step " << out.tick << ": " << *fireDiff);
    }
  }
  REQUIRE(edits > 10000);  // the fire really burned
  CHECK(sim::worldHash(mirror.world) == sim::worldHash(st.world));
  CHECK(badHashes == 0);               // every cell sent, hash-only ones included, checked out on the mirror
  CHECK(sentEdits + madeEdits == edits);  // what was not sent, the mirror made
  CHECK(madeEdits > edits / 2);        // most of a forest fire's edits never travel
  CHECK(fireRecords > 100);
  CHECK(hashOnlyCells > 0);
  const double perEdit = static_cast<double>(encodedBytes) / static_cast<double>(edits);
  MESSAGE("forest-fires, " << kSteps << " steps, 5 fires: " << edits << " edits (max " << maxEdits << " in a step; "
                           << madeEdits << " made by the mirror itself, " << sentEdits << " sent), " << fireRecords
                           << " fire records, " << cellsSent << " cells sent (" << hashOnlyCells << " hash only), "
                           << encodedBytes << " bytes encoded = " << perEdit
                           << " bytes per edit (in-memory EditRecord: " << sizeof(EditRecord) << " bytes; "
                           << static_cast<double>(encodedBytes) / kSteps << " bytes per step); " << compressedSteps
                           << " of " << nonEmpty << " non-empty steps compressed; encode "
                           << encodeSeconds * 1e3 / kSteps << " ms, decode " << decodeSeconds * 1e3 / kSteps
                           << " ms per step (wall)");
  // 2.65 before sweeps travelled as records (one zstd frame per step, no cells); under
  // 1 with them; now only fire records and the cells' hashes travel.
  CHECK(perEdit < 1.0);
  CHECK(encodedBytes < rawBytes);
}

TEST_CASE("crafted bad input gives errors") {
  std::vector<EditRecord> out;
  std::vector<sim::FireChange> fire;
  std::uint64_t tick = 1000;
  const auto bad = [&](Bytes b, std::size_t maxRecords = 1u << 22) {
    return !decodeEdits(b, tick, out, fire, maxRecords).has_value();
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
  const auto append = [](Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); };
  CHECK_FALSE(bad({}));  // no groups
  for (const std::uint8_t kind : {std::uint8_t{4}, std::uint8_t{255}}) {
    Bytes g = group(0, kind);  // bad kind (what follows would be a fine voxel group)
    g.insert(g.end(), {1, 0, 0, 5});
    CHECK(bad(g));
  }
  Bytes g = group(0, 0);  // count 0
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
  CHECK(fire.empty());
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
  g = group(1 << 30, 1);  // fills and fire records too
  g.push_back(3);
  CHECK(bad(g));
  CHECK(bad(group(1 << 30, 3)));
  CHECK(bad(group(-(1 << 28) - 1, 3)));
  CHECK_FALSE(bad(group((1 << 28) - 1, 3)));
  g = group(-3, 1);  // deltas add up: -3 then +1 is brick -2
  g.push_back(3);
  append(g, group(1, 1));
  g.push_back(4);
  REQUIRE_FALSE(bad(g));
  REQUIRE(out.size() == 2);
  CHECK(out[1].kind == EditRecord::Kind::BrickFill);
  CHECK((out[1].x == -2 && out[1].y == 0 && out[1].z == 0 && out[1].after == 4));
  append(g, group(1, 3));  // and fire records continue from the last group: brick -1
  REQUIRE_FALSE(bad(g));
  CHECK(fire == std::vector<sim::FireChange>{fireOut(-1, 0, 0)});

  // Fire records: a set record's fields each in range, as of the step's tick. Each
  // bad record below differs from the valid one in one field, so each check of the
  // decoder is needed to refuse it.
  const auto fireRec = [&](std::int32_t bx, std::uint8_t peak, std::uint32_t age, std::uint32_t duration,
                           std::uint8_t uniform, int result = -1) {
    Bytes b = group(bx, 2);
    b.push_back(peak);
    varint(b, age);
    varint(b, duration);
    b.push_back(uniform);
    if (result >= 0) b.push_back(static_cast<std::uint8_t>(result));
    return b;
  };
  REQUIRE_FALSE(bad(fireRec(2, 7, 5, 300, 1, 9)));
  CHECK(out.empty());
  CHECK(fire == std::vector<sim::FireChange>{sim::FireChange{{16, 0, 0}, 995, 1295, 7, sim::kFireUniform, 9}});
  REQUIRE_FALSE(bad(fireRec(-1, 255, 0, 1, 0)));  // the shortest: caught this step, burns one tick
  CHECK(fire == std::vector<sim::FireChange>{sim::FireChange{{-8, 0, 0}, 1000, 1001, 255, 0, sim::kAir}});
  REQUIRE_FALSE(bad(fireRec(0, 1, 1000, 65535, 0)));  // the oldest (caught at tick 0) and the longest
  CHECK(fire == std::vector<sim::FireChange>{sim::FireChange{{0, 0, 0}, 0, 65535, 1, 0, sim::kAir}});
  REQUIRE_FALSE(bad(group(-2, 3)));  // out: the brick alone
  CHECK(fire == std::vector<sim::FireChange>{fireOut(-2, 0, 0)});
  CHECK(bad(fireRec(2, 0, 5, 300, 1, 9)));      // peak 0
  CHECK(bad(fireRec(2, 7, 5, 300, 2, 9)));      // uniform 2 (with a result byte, as 1 has)
  CHECK(bad(fireRec(2, 7, 0, 0, 1, 9)));        // duration 0 (age >= duration says so too)
  CHECK(bad(fireRec(2, 7, 5, 65536, 1, 9)));    // duration over 65535
  CHECK(bad(fireRec(2, 7, 5, ~0u, 1, 9)));
  CHECK(bad(fireRec(2, 7, 300, 300, 1, 9)));    // age == duration: it burnt out already
  CHECK(bad(fireRec(2, 7, 301, 300, 1, 9)));
  CHECK(bad(fireRec(2, 7, 1001, 2000, 1, 9)));  // age > tick: it caught before tick 0
  CHECK_FALSE(bad(fireRec(2, 7, 1000, 2000, 1, 9)));
  tick = 4;
  CHECK(bad(fireRec(2, 7, 5, 300, 1, 9)));
  CHECK_FALSE(bad(fireRec(2, 7, 4, 300, 1, 9)));
  tick = 1000;
  // Truncated anywhere: a set record with and without its result, an out record,
  // each after a voxel group.
  for (const Bytes& record : {fireRec(2, 7, 5, 300, 1, 9), fireRec(2, 7, 200, 300, 0), group(-2, 3)}) {
    Bytes whole = group(0, 0);
    whole.insert(whole.end(), {1, 0, 0, 5});
    const std::size_t groupBytes = whole.size();
    append(whole, record);
    REQUIRE_FALSE(bad(whole));
    REQUIRE(fire.size() == 1);
    for (std::size_t n = groupBytes + 1; n < whole.size(); ++n)
      CHECK(bad(Bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n))));
  }
  CHECK(bad(fireRec(2, 7, 5, 300, 1)));  // uniform without its result

  // The record cap counts fire records (each is work for the follower) with voxel
  // edits and fills.
  g = fireRec(2, 7, 5, 300, 1, 9);
  append(g, group(1, 3));  // brick 3 goes out
  CHECK_FALSE(bad(g, 2));
  CHECK(fire.size() == 2);
  CHECK(bad(g, 1));
  CHECK(bad(g, 0));
  g = group(0, 0);  // two voxel edits, then an out record: three records
  g.insert(g.end(), {2, 0, 0, 5, 1, 0, 6});
  append(g, group(0, 3));
  CHECK_FALSE(bad(g, 3));
  CHECK(bad(g, 2));
  g = group(0, 3);  // an out record, then a fill: two records
  append(g, group(0, 1));
  g.push_back(4);
  CHECK_FALSE(bad(g, 2));
  CHECK(bad(g, 1));
  g = group(0, 1);  // a fill alone
  g.push_back(4);
  CHECK_FALSE(bad(g, 1));
  CHECK(bad(g, 0));

  // The record cap counts every voxel edit.
  std::vector<EditRecord> brick;  // all 512 voxels of one brick
  for (int i = 0; i < 512; ++i) brick.push_back(voxel(i & 7, (i >> 3) & 7, i >> 6, 2));
  encodeEdits(brick, {}, tick, g);
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
  REQUIRE(decodeEdits(cells[0].edits, tick, out, fire).has_value());
  CHECK(out == std::vector<EditRecord>{voxel(1, 2, 3, 4)});
  for (std::size_t n = 1; n < one.size(); ++n)
    CHECK(badStep(Bytes(one.begin(), one.begin() + static_cast<std::ptrdiff_t>(n))));
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
  empty.push_back(0);  // a cell without edits: its hash alone (the client's own fire changed it)
  REQUIRE_FALSE(badStep(empty));
  REQUIRE(cells.size() == 1);
  CHECK(cells[0].hash == 0x1234);
  CHECK(cells[0].edits.empty());
  REQUIRE(decodeEdits(cells[0].edits, tick, out, fire).has_value());
  CHECK(out.empty());
  CHECK(fire.empty());
  Bytes longer = one;
  longer[10] = 9;  // the length runs past the end
  CHECK(badStep(longer));
}

TEST_CASE("every truncation and random mutation gives an error or a valid decode") {
  constexpr std::uint32_t kTick = 70000;
  std::mt19937 rng(99);
  std::vector<Bytes> samples;
  for (int k = 0; k < 6; ++k) {
    samples.push_back(stepBytes(randomLog(rng, 20 + 80 * static_cast<std::size_t>(k), 4, 64, 10), 0x1234,
                                randomFire(rng, 1 + 5 * static_cast<std::size_t>(k), 4, kTick), kTick));
    // Too small to compress.
    samples.push_back(stepBytes(randomLog(rng, 1 + static_cast<std::size_t>(k % 3), 4, 512, 30)));
  }
  samples.push_back(stepBytes({voxel(8, 16, 24, 1)}, 0x1234,
                              {fireSet(1, 2, 3, kTick - 40, 90, 200, true, 7), fireOut(1, 1, 3),
                               fireSet(1, 1, 3, kTick, 65535, 1)},
                              kTick));
  samples.push_back(stepBytes({}, 0x1234, {fireOut(-5, 0, 9)}, kTick));  // fire records alone
  {
    std::vector<EditRecord> brick;  // all 512 voxels of one brick
    for (int i = 0; i < 512; ++i) brick.push_back(voxel(i & 7, (i >> 3) & 7, i >> 6, 2));
    samples.push_back(stepBytes(brick));
  }
  // Several cells, one of them hash only: a cut at the end of a cell is a valid step
  // of the cells before it.
  std::vector<std::size_t> cellEnds;
  {
    Bytes a, b;
    encodeEdits(std::vector{voxel(-3, 0, 5, 4)}, std::vector{fireSet(-1, 0, 0, kTick - 9, 600, 30)}, kTick, a);
    encodeEdits({}, std::vector{fireOut(32, 0, 0)}, kTick, b);
    const CellEdits three[] = {{{-1, 0}, 1, a}, {{0, 0}, 2, {}}, {{1, 0}, 3, b}};
    Bytes head;
    for (std::size_t k = 1; k < std::size(three); ++k) {
      encodeStepEdits(std::span(three, k), head);
      cellEnds.push_back(head.size());
    }
    samples.emplace_back();
    encodeStepEdits(three, samples.back());
  }

  std::vector<EditRecord> out;
  std::vector<sim::FireChange> fire;
  std::vector<CellEdits> cells;
  std::size_t errors = 0, decodes = 0, fireDecodes = 0;
  const auto decode = [&](const Bytes& b) -> sim::Result<void> {
    out.clear();
    fire.clear();
    if (auto r = decodeStepEdits(b, cells); !r) return r;
    std::vector<EditRecord> cellOut;
    std::vector<sim::FireChange> cellFire;
    std::size_t budget = 4096;
    for (const CellEdits& c : cells) {
      if (auto r = decodeEdits(c.edits, kTick, cellOut, cellFire, budget); !r) return r;
      REQUIRE(cellOut.size() + cellFire.size() <= budget);
      budget -= cellOut.size() + cellFire.size();
      out.insert(out.end(), cellOut.begin(), cellOut.end());
      fire.insert(fire.end(), cellFire.begin(), cellFire.end());
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
    fireDecodes += !fire.empty();
    CHECK(out.size() + fire.size() <= 4096);
    for (const EditRecord& e : out) {
      CHECK(e.before == sim::kAir);
      CHECK((e.kind == EditRecord::Kind::Voxel || e.kind == EditRecord::Kind::BrickFill));
    }
    // Every fire record is one a follower can take as it is: a brick corner, and
    // either out (the brick alone) or burning at this tick for 1..65535 ticks.
    for (const sim::FireChange& f : fire) {
      CHECK(f.corner == sim::fireCellOf(f.corner));
      if (f.endTick == 0) {
        CHECK(f == sim::FireChange{f.corner});
        continue;
      }
      const bool valid = f.peak != 0 && f.start <= kTick && f.endTick > kTick && f.endTick - f.start <= 65535 &&
                         (f.flags == 0 || f.flags == sim::kFireUniform) && (f.flags != 0 || f.result == sim::kAir);
      CHECK(valid);
    }
  };
  for (const Bytes& s : samples) {
    const bool multiCell = &s == &samples.back();
    // Every strict prefix, each in its own allocation so a sanitizer sees overreads.
    for (std::size_t n = 0; n < s.size(); ++n) {
      const Bytes p(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
      const std::size_t before = errors;
      check(p);
      // A cut inside a cell must be an error (no bytes at all is a valid step
      // without edits).
      const bool cellEnd = n == 0 || (multiCell && std::find(cellEnds.begin(), cellEnds.end(), n) != cellEnds.end());
      CHECK(errors == before + (cellEnd ? 0 : 1));
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
  MESSAGE("hostile buffers: " << errors << " errors, " << decodes << " valid decodes (" << fireDecodes
                              << " with fire records)");
  CHECK(errors > 0);
  CHECK(fireDecodes > 0);
}
