// Wire helpers: converters round-trip exactly, events flatten and come back, bad
// enum values are refused, and the verifiers accept every well-formed message type
// while refusing empty, random, truncated, oversize and bodiless buffers.
#include "net/wire.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "net/entity_codec.h"
#include "net/protocol.h"
#include "net/snapshot_codec.h"
#include "net/stream_codec.h"
#include "net/stream_receipt.h"
#include "net/water_codec.h"
#include "sim/step/commands.h"

using namespace loam;
using namespace loam::net;

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes finish(flatbuffers::FlatBufferBuilder& fbb) {
  return Bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

template <class Body>
Bytes clientMessage(wire::ClientBody type, Body build) {
  flatbuffers::FlatBufferBuilder fbb;
  const flatbuffers::Offset<void> body = build(fbb);
  fbb.Finish(wire::CreateClientMessage(fbb, type, body));
  return finish(fbb);
}

template <class Body>
Bytes serverMessage(wire::ServerBody type, Body build) {
  flatbuffers::FlatBufferBuilder fbb;
  const flatbuffers::Offset<void> body = build(fbb);
  fbb.Finish(wire::CreateServerMessage(fbb, type, body));
  return finish(fbb);
}

Bytes actionMessage(wire::ActionBody type, flatbuffers::Offset<void> (*build)(flatbuffers::FlatBufferBuilder&)) {
  return clientMessage(wire::ClientBody::Action, [&](flatbuffers::FlatBufferBuilder& fbb) {
    const flatbuffers::Offset<void> inner = build ? build(fbb) : flatbuffers::Offset<void>();
    return wire::CreateAction(fbb, 77, type, inner).Union();
  });
}

sim::PlayerState distinctState() {
  sim::PlayerState s;
  s.position = {-123456, 7890, 2147483000};
  s.velocity = {-11, 22, -33};
  s.yaw = 65001;
  s.pitch = -16000;
  s.onGround = true;
  s.crouching = false;
  s.swimming = true;
  s.running = false;
  s.lastInput = 0xdeadbeef;
  s.stride = -444;
  s.motionEvents = sim::kMotionLanded | sim::kMotionSplash;
  s.surface = 201;
  s.impactSpeed = 5555;
  return s;
}

// One value of every event alternative, every field distinct and non-default.
std::vector<sim::Event> everyEvent() {
  const sim::Actor player{sim::Actor::Kind::Player, 31};
  const sim::Actor animal{sim::Actor::Kind::Animal, 4000000000u};
  std::vector<sim::Event> v;
  v.push_back(sim::IgnitedEvent{{1, -2, 3}, 17, player});
  v.push_back(sim::IgnitedEvent{{1, -2, 3}, 17, sim::Actor{}});
  v.push_back(sim::ExtinguishedEvent{{-4, 5, -6}, sim::ExtinguishCause::Water});
  v.push_back(sim::ExtinguishedEvent{{-4, 5, -6}, sim::ExtinguishCause::Removed});
  v.push_back(sim::LandedEvent{animal, {7, 8, 9}, 42, 123456});
  v.push_back(sim::FootstepEvent{player, {-10, 11, -12}, 5, 2300});
  v.push_back(sim::DigEvent{player, {13, -14, 15}, 6, 9, 4000000000u});
  v.push_back(sim::FractureEvent{{16, 17, -18}, 250, 0xffffffffu});
  v.push_back(sim::SplashEvent{animal, {19, -20, 21}, -77});
  v.push_back(sim::AnimalCallEvent{987654, static_cast<std::uint8_t>(sim::AnimalSpecies::Dog),
                                   static_cast<std::uint8_t>(sim::AnimalCallKind::Greet), {22, 23, -24}});
  v.push_back(sim::CommandRejectedEvent{sim::PlayerId{12}, 0x80000001u, 9, sim::RejectReason::NothingToDig});
  v.push_back(sim::PlayerJoinedEvent{sim::PlayerId{13}, {}});
  v.push_back(sim::PlayerLeftEvent{sim::PlayerId{14}});
  return v;
}

wire::EventRec eventRec(std::uint8_t kind, std::uint8_t actorKind, std::uint8_t material, std::uint8_t small) {
  return wire::EventRec(1, 2, 3, 4, 5, kind, actorKind, material, small);
}

}  // namespace

TEST_CASE("input and player state round-trip exactly") {
  const sim::PlayerInput in{0xfedcba98u, -127, 126, 40000, -16384, 0x5};
  CHECK(fromWire(toWire(in)) == in);
  const sim::PlayerInput edge{0, -128, 127, 65535, 16384, 0xff};
  CHECK(fromWire(toWire(edge)) == edge);

  const sim::PlayerState s = distinctState();
  CHECK(fromWire(toWire(s)) == s);
  // Every combination of the four flags survives (bits 0..3 of PlayerStateRec.flags).
  for (int bits = 0; bits < 16; ++bits) {
    sim::PlayerState t = s;
    t.onGround = bits & 1;
    t.crouching = bits & 2;
    t.swimming = bits & 4;
    t.running = bits & 8;
    const wire::PlayerStateRec r = toWire(t);
    CHECK(r.flags() == bits);
    CHECK(fromWire(r) == t);
  }
}

TEST_CASE("pose, animal and fire records carry every field") {
  const sim::PlayerState s = distinctState();
  const wire::PlayerPoseRec p = poseToWire(sim::PlayerId{99}, s);
  CHECK(p.id() == 99);
  CHECK(p.px() == s.position.x);
  CHECK(p.py() == s.position.y);
  CHECK(p.pz() == s.position.z);
  CHECK(p.yaw() == s.yaw);
  CHECK(p.pitch() == s.pitch);
  CHECK(p.flags() == 0b0101);  // onGround, swimming

  for (auto species : {sim::AnimalSpecies::Bird, sim::AnimalSpecies::Fox, sim::AnimalSpecies::Dog}) {
    sim::Animal a;
    a.id = sim::AnimalId{0x12345678};
    a.species = species;
    a.position = {-1, 2, -3};
    a.velocity = {4, -5, 6};
    a.yaw = 54321;
    a.mode = 3;
    CHECK(fromWire(toWire(a)) == a);
  }
  // An unknown species cannot be refused by this signature; it decodes as a bird.
  const wire::AnimalRec bad(1, 0, 0, 0, 0, 0, 0, 0, 7, 0);
  CHECK(fromWire(bad).species == sim::AnimalSpecies::Bird);

  // Fire records (a burning cell's ignition data) are relative to their cell: exact
  // inside it, every field; refused outside it or when y does not fit.
  static_assert(sizeof(wire::FireRec) == 16);
  const sim::CellCoord cell{-1, -2};  // voxels x -256..-1, z -512..-257
  const sim::FireChange uniform{{-8, 16, -264}, 0x12345678u, 0xabcdef01u, 255, sim::kFireUniform, 0xfe};
  const sim::FireChange mixed{{-256, -64, -512}, 7, 65542, 1, 0, sim::kAir};
  wire::FireRec fr;
  for (const sim::FireChange& f : {uniform, mixed}) {
    REQUIRE(toWire(f, cell, fr));
    CHECK(fromWire(fr, cell) == f);
  }
  REQUIRE(toWire(uniform, cell, fr));
  CHECK(fr.start() == 0x12345678u);
  CHECK(fr.end_tick() == 0xabcdef01u);
  CHECK(fr.y() == 2);
  CHECK(fr.x() == 31);
  CHECK(fr.z() == 31);
  CHECK(fr.peak() == 255);
  CHECK(fr.flags() == sim::kFireUniform);
  CHECK(fr.result() == 0xfe);
  // Flag bits other than kFireUniform from the wire are dropped.
  const sim::FireChange other = fromWire(wire::FireRec(1, 2, 0, 0, 0, 9, 0xff & ~sim::kFireUniform, 3), cell);
  CHECK(other.flags == 0);
  CHECK(fromWire(wire::FireRec(1, 2, 0, 0, 0, 9, 0xff, 3), cell).flags == sim::kFireUniform);
  CHECK(other.corner == sim::VoxelCoord{-256, 0, -512});
  sim::FireChange outside = uniform;
  for (const sim::VoxelCoord corner : {sim::VoxelCoord{-8, 16, -256}, sim::VoxelCoord{0, 16, -264},
                                       sim::VoxelCoord{-264, 16, -264}, sim::VoxelCoord{-8, 16, -520}}) {
    outside.corner = corner;
    CHECK_FALSE(toWire(outside, cell, fr));
  }
  outside.corner = {-8, 32768 * sim::kBrickSize, -264};  // brick y beyond int16
  CHECK_FALSE(toWire(outside, cell, fr));
  outside.corner = {-8, 32767 * sim::kBrickSize, -264};
  CHECK(toWire(outside, cell, fr));
}

TEST_CASE("water records round-trip in key order, relative to their cell, one per voxel") {
  const sim::CellCoord cell{-1, -2};  // voxels x -256..-1, z -512..-257
  std::mt19937 rng(5);
  std::vector<sim::WaterChange> water;
  for (int i = 0; i < 2000; ++i) {
    const sim::VoxelCoord v{-256 + static_cast<int>(rng() % 256), static_cast<int>(rng() % 65536) - 32768,
                            -512 + static_cast<int>(rng() % 256)};
    water.push_back({v, static_cast<std::uint16_t>(rng() % (sim::kWaterPerVoxel + 1))});
  }
  water.push_back({{-256, -32768, -512}, 0});   // the smallest key
  water.push_back({{-1, 32767, -257}, 256});    // the largest, a full voxel
  water.push_back({{-100, 5, -300}, 255});      // the escape
  water.push_back({{-100, 5, -300}, 7});        // the same voxel again: the later wins
  std::vector<std::uint8_t> bytes;
  net::encodeCellWater(cell, water, bytes);
  std::vector<sim::WaterChange> back;
  REQUIRE(net::decodeCellWater(bytes, cell, back));
  // Expected: the last record per voxel, in key order (y, then z, then x).
  std::map<std::tuple<int, int, int>, std::uint16_t> last;
  for (const sim::WaterChange& w : water) last[{w.voxel.y, w.voxel.z, w.voxel.x}] = w.amount;
  REQUIRE(back.size() == last.size());
  std::size_t i = 0;
  for (const auto& [k, amount] : last) {
    CHECK(back[i] == sim::WaterChange{{std::get<2>(k), std::get<0>(k), std::get<1>(k)}, amount});
    ++i;
  }
  CHECK(back[back.size() - 1] == sim::WaterChange{{-1, 32767, -257}, 256});

  // Outside the cell, or y beyond int16: left out.
  net::encodeCellWater(cell, std::vector<sim::WaterChange>{{{0, 0, -300}, 1}, {{-100, 40000, -300}, 1}}, bytes);
  CHECK(bytes.empty());

  // A row of a pool or a fall costs two bytes a voxel.
  std::vector<sim::WaterChange> row;
  for (int x = -200; x < -100; ++x) row.push_back({{x, 12, -400}, 100});
  net::encodeCellWater(cell, row, bytes);
  CHECK(bytes.size() == 5 + 1 + 99 * 2);  // the first key (y + 32768 high) takes 5
}

TEST_CASE("hostile water bytes get an error, never a wrong record") {
  const sim::CellCoord cell{0, 0};
  std::vector<sim::WaterChange> out;
  const auto decode = [&](std::vector<std::uint8_t> b, std::size_t max = 100) {
    return net::decodeCellWater(b, cell, out, max);
  };
  CHECK(decode({}));
  CHECK(out.empty());
  CHECK(decode({0x05, 10, 0x01, 255, 1}));  // keys 5 and 6: amount 10 and 256
  CHECK(out.size() == 2);
  CHECK(out[1] == sim::WaterChange{{6, -32768, 0}, 256});
  CHECK_FALSE(decode({0x80}));                      // truncated step
  CHECK_FALSE(decode({0x05}));                      // truncated amount
  CHECK_FALSE(decode({0x05, 255}));                 // truncated escape
  CHECK_FALSE(decode({0x05, 255, 2}));              // 257 units
  CHECK_FALSE(decode({0x05, 1, 0x00, 1}));          // a step of 0: the same voxel twice
  CHECK_FALSE(decode({0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 1}));  // a step of six bytes
  CHECK_FALSE(decode({0xff, 0xff, 0xff, 0xff, 0x0f, 1, 0x01, 1}));  // past 2^32 - 1
  CHECK(decode({0xff, 0xff, 0xff, 0xff, 0x0f, 1}));  // 2^32 - 1 itself
  CHECK_FALSE(decode({0x01, 1, 0x01, 1, 0x01, 1}, 2));  // more records than allowed
  // A cell 2^24 cells away: the voxels clamp to int32, outside every world, not wrapped.
  std::vector<std::uint8_t> b;
  net::encodeCellWater({0, 0}, std::vector<sim::WaterChange>{{{5, 3, 6}, 100}}, b);
  REQUIRE(net::decodeCellWater(b, {1 << 24, -(1 << 24)}, out));
  REQUIRE(out.size() == 1);
  CHECK(out[0].voxel == sim::VoxelCoord{INT32_MAX, 3, INT32_MIN});
  REQUIRE(net::decodeCellWater(b, {-2, 1}, out));
  CHECK(out[0].voxel == sim::VoxelCoord{-507, 3, 262});
}

namespace {

/// Encodes `now` (ascending ids) against `base` as the server does: each record against
/// the base's record of its id, or zeros.
template <class Rec>
std::vector<std::uint8_t> encodeChanges(const std::vector<Rec>& base, const std::vector<Rec>& now) {
  std::vector<std::uint8_t> out;
  std::uint32_t previous = 0;
  for (const Rec& r : now) {
    const Rec* was = nullptr;
    for (const Rec& b : base) was = b.id() == r.id() ? &b : was;
    const std::size_t before = out.size();
    appendEntityRecord(out, r.id() - previous, was, r);
    CHECK(out.size() - before == entityRecordBytes(r.id() - previous, was, r));
    previous = r.id();
  }
  return out;
}

template <class Rec>
bool sameRecords(const std::vector<Rec>& a, const std::vector<Rec>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Rec)) == 0;
}

}  // namespace

TEST_CASE("entity records rebuild exactly from their changes, new ones from zeros, across every wrap") {
  std::mt19937 rng(7);
  const auto any = [&] { return static_cast<std::int32_t>(rng()); };
  for (int round = 0; round < 200; ++round) {
    // A baseline of players and the same ids moved, some gone, some new.
    std::vector<wire::PlayerPoseRec> base, now;
    std::vector<wire::AnimalRec> baseA, nowA;
    for (std::uint32_t id = 1 + rng() % 3; id < 400; id += 1 + rng() % 40) {
      const wire::PlayerPoseRec b(id, any(), any(), any(), static_cast<std::uint16_t>(rng()),
                                  static_cast<std::int16_t>(rng()), static_cast<std::uint8_t>(rng()));
      const wire::AnimalRec a(id, any(), any(), any(), any(), any(), any(), static_cast<std::uint16_t>(rng()),
                              static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng()));
      if (rng() % 4 != 0) base.push_back(b), baseA.push_back(a);
      if (rng() % 4 == 0) continue;  // gone
      // Extremes on purpose: a change of every size, the largest wrapping each field.
      const bool wrap = rng() % 3 == 0;
      now.emplace_back(id, wrap ? b.px() ^ INT32_MIN : b.px() + static_cast<std::int32_t>(rng() % 5000) - 2500,
                       b.py(), rng() % 2 ? any() : b.pz(), static_cast<std::uint16_t>(b.yaw() + (wrap ? 32768 : 3)),
                       static_cast<std::int16_t>(wrap ? b.pitch() ^ INT16_MIN : b.pitch()),
                       static_cast<std::uint8_t>(rng() % 2 ? b.flags() : b.flags() ^ 0x80));
      nowA.emplace_back(id, a.px() + 1, a.py(), wrap ? a.pz() ^ INT32_MIN : a.pz(), a.vx(), -a.vy(), a.vz(),
                        static_cast<std::uint16_t>(a.yaw() - 1), static_cast<std::uint8_t>(rng()),
                        static_cast<std::uint8_t>(wrap ? a.mode() ^ 0x80 : a.mode()));
    }
    // The client holds the baseline less what is gone, then applies the changes.
    const auto held = [](const auto& baseline, const auto& next) {
      auto list = baseline;
      std::erase_if(list, [&](const auto& r) {
        return std::none_of(next.begin(), next.end(), [&](const auto& n) { return n.id() == r.id(); });
      });
      return list;
    };
    std::vector<wire::PlayerPoseRec> client = held(base, now);
    REQUIRE(applyEntityRecords(encodeChanges(base, now), client, kMaxEntitiesInView));
    CHECK(sameRecords(client, now));
    std::vector<wire::AnimalRec> clientA = held(baseA, nowA);
    REQUIRE(applyEntityRecords(encodeChanges(baseA, nowA), clientA, kMaxEntitiesInView));
    CHECK(sameRecords(clientA, nowA));
  }
}

TEST_CASE("a walking player's change takes a third of its record") {
  // 4 m/s at 30 Hz is 0.13 m a snapshot: 2,731 units, on x and z.
  const wire::PlayerPoseRec was(1234, 100000, 20480, -400000, 1000, -20, 1);
  const wire::PlayerPoseRec now(1234, 102731, 20480, -402731, 1000, -20, 1);
  CHECK(entityRecordBytes<wire::PlayerPoseRec>(5, &was, now) == 6);  // step, mask, 2 + 2
  CHECK(entityRecordBytes<wire::PlayerPoseRec>(5, &was, was) == 2);   // unchanged: step and mask
  CHECK(entityRecordBytes<wire::PlayerPoseRec>(1234, nullptr, now) <= 21);  // new: every field in full
}

TEST_CASE("sounds rebuild exactly, each against the one before; a footstep after another takes 7 bytes") {
  std::mt19937 rng(11);
  std::vector<wire::EventRec> sent;
  std::vector<std::uint8_t> bytes;
  for (int i = 0; i < 300; ++i) {
    const auto any = [&] { return static_cast<std::int32_t>(rng()); };
    const bool near = i % 3 != 0;  // most within a few metres of the one before, some anywhere
    const wire::EventRec prev = sent.empty() ? wire::EventRec() : sent.back();
    sent.emplace_back(near ? prev.x() + any() % 300 : any(), near ? prev.y() + any() % 4 : any(),
                      near ? prev.z() + any() % 300 : any(), static_cast<std::uint32_t>(rng()), any() % 9000,
                      static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng() % 3),
                      static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng() % 2 ? 0 : rng()));
    appendEventRecord(bytes, sent.size() > 1 ? &sent[sent.size() - 2] : nullptr, sent.back());
  }
  std::vector<wire::EventRec> got;
  REQUIRE(decodeEventRecords(bytes, got, sent.size()));
  CHECK(sameRecords(got, sent));
  CHECK_FALSE(decodeEventRecords(bytes, got, sent.size() - 1));  // one more than allowed
  // Two players' footsteps 10 m apart on the same ground at similar speeds.
  const wire::EventRec a(1000, 50, -2000, 17, 3900, 2, 1, 4, 0), b(1100, 50, -1960, 18, 4100, 2, 1, 4, 0);
  std::vector<std::uint8_t> two;
  appendEventRecord(two, nullptr, a);
  const std::size_t first = two.size();
  appendEventRecord(two, &a, b);
  CHECK(two.size() - first == 7);  // mask, x 2, z 1, actor 1, value 2 (24 as a struct)
  CHECK_FALSE(decodeEventRecords(std::vector<std::uint8_t>{0x80, 0x04}, got, 8));  // a field bit past the nine
  CHECK_FALSE(decodeEventRecords(std::vector<std::uint8_t>{0x20, 0x80, 0x02}, got, 8));  // material past 8 bits
  CHECK_FALSE(decodeEventRecords(std::vector<std::uint8_t>{0x01}, got, 8));  // truncated
}

TEST_CASE("the own record rebuilds exactly from its changes; unchanged but for its input, nothing goes") {
  std::mt19937 rng(5);
  const auto any = [&] { return static_cast<std::int32_t>(rng()); };
  for (int i = 0; i < 500; ++i) {
    const wire::PlayerStateRec base(any(), any(), any(), any(), any(), any(), rng(), any(), any(),
                                    static_cast<std::uint16_t>(rng()), static_cast<std::int16_t>(rng()),
                                    static_cast<std::uint8_t>(rng()), static_cast<std::uint8_t>(rng()),
                                    static_cast<std::uint8_t>(rng()));
    const bool keep = i % 2 == 0;  // about half the fields unchanged
    const wire::PlayerStateRec now(keep ? base.px() : any(), base.py(), keep ? base.pz() + 2731 : any(),
                                   keep ? base.vx() : any(), base.vy(), base.vz() ^ (i % 3 ? 0 : INT32_MIN),
                                   rng(), any(), keep ? base.impact_speed() : any(),
                                   static_cast<std::uint16_t>(base.yaw() + i), base.pitch(),
                                   static_cast<std::uint8_t>(rng()), base.motion_events(), base.surface());
    for (const wire::PlayerStateRec* against : {&base, static_cast<const wire::PlayerStateRec*>(nullptr)}) {
      std::vector<std::uint8_t> bytes;
      REQUIRE(appendOwnChanges(bytes, against, now));
      const auto got = decodeOwnChanges(bytes, against, now.last_input());
      REQUIRE(got);
      CHECK(std::memcmp(&*got, &now, sizeof now) == 0);
    }
  }
  // Walking straight: x, z and the stride change (44 bytes as the struct did).
  const wire::PlayerStateRec was(1000, 2000, 3000, 0, 0, 81920, 7, 100, 0, 0, 0, 1, 0, 3);
  const wire::PlayerStateRec walked(1000, 2000, 5731, 0, 0, 81920, 8, 2831, 0, 0, 0, 1, 0, 3);
  std::vector<std::uint8_t> bytes;
  REQUIRE(appendOwnChanges(bytes, &was, walked));
  CHECK(bytes.size() == 5);  // mask, z 2, stride 2
  // Only last_input differs: nothing goes (own_input carries it); without a base, a mask.
  const wire::PlayerStateRec idle(1000, 2000, 3000, 0, 0, 81920, 99, 100, 0, 0, 0, 1, 0, 3);
  bytes.clear();
  CHECK_FALSE(appendOwnChanges(bytes, &was, idle));
  CHECK(bytes.empty());
  REQUIRE(appendOwnChanges(bytes, nullptr, wire::PlayerStateRec()));
  CHECK(bytes == std::vector<std::uint8_t>{0});
  // Hostile: trailing bytes, a field bit past the thirteen, a yaw change past 16 bits, truncation.
  CHECK_FALSE(decodeOwnChanges(std::vector<std::uint8_t>{0, 0}, &was, 1));
  CHECK_FALSE(decodeOwnChanges(std::vector<std::uint8_t>{0x80, 0x40}, &was, 1));
  CHECK_FALSE(decodeOwnChanges(std::vector<std::uint8_t>{0x80, 0x01, 0x80, 0x80, 0x04}, &was, 1));
  CHECK_FALSE(decodeOwnChanges(std::vector<std::uint8_t>{0x01}, &was, 1));
  CHECK_FALSE(decodeOwnChanges(std::vector<std::uint8_t>{}, &was, 1));
}

TEST_CASE("hostile entity bytes get an error, never a wrong record") {
  const std::vector<wire::PlayerPoseRec> start{wire::PlayerPoseRec(5, 10, 20, 30, 40, 50, 6)};
  std::vector<wire::PlayerPoseRec> list;
  const auto apply = [&](std::vector<std::uint8_t> b, std::size_t max = 8) {
    list = start;
    return applyEntityRecords(b, list, max);
  };
  CHECK(apply({}));
  CHECK(sameRecords(list, start));
  REQUIRE(apply({5, 0x01, 0x03}));  // id 5, px - 2
  CHECK(list[0].px() == 8);
  CHECK(list[0].py() == 20);
  REQUIRE(apply({3, 0x08, 0x02}));  // id 3 is new: yaw 1 against zeros
  REQUIRE(list.size() == 2);
  CHECK(list[0].id() == 3);
  CHECK(list[0].yaw() == 1);
  CHECK(list[1].px() == 10);
  CHECK_FALSE(apply({5}));                        // no mask
  CHECK_FALSE(apply({5, 0x01}));                  // no px change
  CHECK_FALSE(apply({5, 0x40}));                  // an unknown field bit
  CHECK_FALSE(apply({5, 0x00, 0x00, 0x00}));      // the same id twice
  CHECK_FALSE(apply({5, 0x08, 0x80, 0x80, 0x04}));  // a yaw change past 16 bits
  CHECK(apply({5, 0x08, 0xff, 0xff, 0x03}));        // 65,535: the largest
  CHECK_FALSE(apply({5, 0x20, 0x80, 0x02}));      // a flags change past 8 bits
  CHECK_FALSE(apply({5, 0x01, 0x80, 0x80, 0x80, 0x80, 0x10}));  // a varint over 32 bits
  CHECK_FALSE(apply({0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0x01, 0}));  // an id past 2^32 - 1
  CHECK_FALSE(apply({1, 0, 1, 0, 1, 0}, 3));      // four entities where three are allowed
  CHECK(apply({1, 0, 1, 0}, 3));                  // three
  CHECK(list.size() == 3);
}

TEST_CASE("every event alternative round-trips through EventRec; chat does not flatten") {
  std::set<std::size_t> kinds;
  for (const sim::Event& e : everyEvent()) {
    CAPTURE(e.index());
    kinds.insert(e.index());
    wire::EventRec r;
    REQUIRE(toWire(e, r));
    CHECK(r.kind() == e.index());
    sim::Event back;
    REQUIRE(fromWire(r, back));
    CHECK(back.index() == e.index());
    std::visit(
        [&](const auto& orig) {
          using T = std::decay_t<decltype(orig)>;
          const T& got = std::get<T>(back);
          if constexpr (std::is_same_v<T, sim::IgnitedEvent>) {
            CHECK(got.position == orig.position);
            CHECK(got.material == orig.material);
            CHECK(got.by == orig.by);
          } else if constexpr (std::is_same_v<T, sim::ExtinguishedEvent>) {
            CHECK(got.position == orig.position);
            CHECK(got.cause == orig.cause);
          } else if constexpr (std::is_same_v<T, sim::LandedEvent>) {
            CHECK(got.who == orig.who);
            CHECK(got.position == orig.position);
            CHECK(got.material == orig.material);
            CHECK(got.impactSpeed == orig.impactSpeed);
          } else if constexpr (std::is_same_v<T, sim::FootstepEvent>) {
            CHECK(got.who == orig.who);
            CHECK(got.position == orig.position);
            CHECK(got.surface == orig.surface);
            CHECK(got.speed == orig.speed);
          } else if constexpr (std::is_same_v<T, sim::DigEvent>) {
            CHECK(got.who == orig.who);
            CHECK(got.position == orig.position);
            CHECK(got.radius == orig.radius);
            CHECK(got.material == orig.material);
            CHECK(got.voxels == orig.voxels);
          } else if constexpr (std::is_same_v<T, sim::FractureEvent>) {
            CHECK(got.position == orig.position);
            CHECK(got.material == orig.material);
            CHECK(got.voxels == orig.voxels);
          } else if constexpr (std::is_same_v<T, sim::SplashEvent>) {
            CHECK(got.who == orig.who);
            CHECK(got.position == orig.position);
            CHECK(got.speed == orig.speed);
          } else if constexpr (std::is_same_v<T, sim::AnimalCallEvent>) {
            CHECK(got.animal == orig.animal);
            CHECK(got.species == orig.species);
            CHECK(got.call == orig.call);
            CHECK(got.position == orig.position);
          } else if constexpr (std::is_same_v<T, sim::ChatEvent>) {
            FAIL("chat must not flatten");
          } else if constexpr (std::is_same_v<T, sim::CommandRejectedEvent>) {
            CHECK(got.player == orig.player);
            CHECK(got.sequence == orig.sequence);
            CHECK(got.commandIndex == orig.commandIndex);
            CHECK(got.reason == orig.reason);
          } else if constexpr (std::is_same_v<T, sim::PlayerJoinedEvent>) {
            CHECK(got.player == orig.player);
            CHECK(got.name.length == 0);  // filled from StepBatch.joined by the reader
          } else {
            CHECK(got.player == orig.player);
          }
        },
        e);
  }
  // Every alternative except chat is covered.
  CHECK(kinds.size() == std::variant_size_v<sim::Event> - 1);

  sim::ChatEvent chat{sim::PlayerId{3}, sim::ChatText::from("hello")};
  wire::EventRec r;
  CHECK_FALSE(toWire(sim::Event{chat}, r));
  // A joined player's name does not travel in the EventRec.
  wire::EventRec joined;
  REQUIRE(toWire(sim::Event{sim::PlayerJoinedEvent{sim::PlayerId{5}, sim::PlayerName::from("ann")}}, joined));
  sim::Event back;
  REQUIRE(fromWire(joined, back));
  CHECK(std::get<sim::PlayerJoinedEvent>(back).player == sim::PlayerId{5});
  CHECK(std::get<sim::PlayerJoinedEvent>(back).name.view().empty());
}

TEST_CASE("fromWire refuses unknown kinds and out-of-range enum fields") {
  constexpr auto kIgnited = 0, kExtinguished = 1, kAnimalCall = 7, kChat = 8, kRejected = 9;
  sim::Event out;
  CHECK_FALSE(fromWire(eventRec(kChat, 0, 0, 0), out));
  for (int k = static_cast<int>(std::variant_size_v<sim::Event>); k < 256; ++k)
    CHECK_FALSE(fromWire(eventRec(static_cast<std::uint8_t>(k), 0, 0, 0), out));

  CHECK(fromWire(eventRec(kIgnited, 2, 0, 0), out));
  CHECK_FALSE(fromWire(eventRec(kIgnited, 3, 0, 0), out));  // actor kind
  CHECK_FALSE(fromWire(eventRec(kIgnited, 255, 0, 0), out));

  CHECK(fromWire(eventRec(kExtinguished, 0, 3, 0), out));
  CHECK_FALSE(fromWire(eventRec(kExtinguished, 0, 4, 0), out));  // cause

  CHECK(fromWire(eventRec(kAnimalCall, 2, 2, 2), out));
  CHECK_FALSE(fromWire(eventRec(kAnimalCall, 2, 3, 0), out));  // species
  CHECK_FALSE(fromWire(eventRec(kAnimalCall, 2, 0, 3), out));  // call kind

  const auto commandKinds = static_cast<std::uint8_t>(std::variant_size_v<sim::CommandBody>);
  CHECK(fromWire(eventRec(kRejected, 1, 13, commandKinds - 1), out));
  CHECK_FALSE(fromWire(eventRec(kRejected, 1, 14, 0), out));             // reason
  CHECK_FALSE(fromWire(eventRec(kRejected, 1, 0, commandKinds), out));   // command index

  // Exhaustively: every event kind with every actor kind byte only accepts 0..2.
  for (int kind = 0; kind < static_cast<int>(std::variant_size_v<sim::Event>); ++kind)
    for (int ak = 3; ak < 256; ak += 17)
      CHECK_FALSE(fromWire(eventRec(static_cast<std::uint8_t>(kind), static_cast<std::uint8_t>(ak), 0, 0), out));
}

namespace {

/// encodeAction then decodeAction through a finished, verified ClientMessage.
bool actionRoundTrip(const sim::CommandBody& in, sim::CommandBody& out, std::uint32_t afterInput = 41) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto action = encodeAction(fbb, afterInput, afterInput + 1000, in);
  REQUIRE_FALSE(action.IsNull());
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::Action, action.Union()));
  const Bytes bytes = finish(fbb);
  const wire::ClientMessage* msg = verifyClientMessage(bytes, kMaxClientPacketBytes);
  REQUIRE(msg != nullptr);
  REQUIRE(msg->body_type() == wire::ClientBody::Action);
  CHECK(msg->body_as_Action()->after_input() == afterInput);
  CHECK(msg->body_as_Action()->sequence() == afterInput + 1000);
  return decodeAction(*msg->body_as_Action(), out);
}

}  // namespace

TEST_CASE("every action round-trips through encodeAction and decodeAction; other commands are not actions") {
  sim::CommandBody out;
  REQUIRE(actionRoundTrip(sim::DigCommand{{-5, 6, -7}, sim::ToolSize::Cm40}, out));
  const auto& dig = std::get<sim::DigCommand>(out);
  CHECK(dig.target == sim::VoxelCoord{-5, 6, -7});
  CHECK(dig.radius == sim::ToolSize::Cm40);

  REQUIRE(actionRoundTrip(sim::PlaceCommand{{1, -2, 3}, sim::Face::NegZ, sim::ToolSize::Cm5, 7}, out));
  const auto& place = std::get<sim::PlaceCommand>(out);
  CHECK(place.target == sim::VoxelCoord{1, -2, 3});
  CHECK(place.face == sim::Face::NegZ);
  CHECK(place.size == sim::ToolSize::Cm5);
  CHECK(place.material == 7);

  REQUIRE(actionRoundTrip(sim::PourCommand{{8, 9, 10}, sim::kMaxPourAmount}, out));
  CHECK(std::get<sim::PourCommand>(out).position == sim::VoxelCoord{8, 9, 10});
  CHECK(std::get<sim::PourCommand>(out).amount == sim::kMaxPourAmount);

  REQUIRE(actionRoundTrip(sim::IgniteCommand{{-11, 12, -13}}, out));
  CHECK(std::get<sim::IgniteCommand>(out).position == sim::VoxelCoord{-11, 12, -13});

  REQUIRE(actionRoundTrip(sim::ChatCommand{sim::ChatText::from("hello there")}, out));
  CHECK(std::get<sim::ChatCommand>(out).text.view() == "hello there");

  flatbuffers::FlatBufferBuilder fbb;
  CHECK(encodeAction(fbb, 1, 1, sim::JoinCommand{}).IsNull());
  CHECK(encodeAction(fbb, 1, 1, sim::LeaveCommand{}).IsNull());
  CHECK(encodeAction(fbb, 1, 1, sim::InputCommand{}).IsNull());
  CHECK(encodeAction(fbb, 1, 1, sim::SetTimeCommand{}).IsNull());
  CHECK(encodeAction(fbb, 1, 1, sim::SetWeatherCommand{}).IsNull());
  CHECK(fbb.GetSize() == 0);  // nothing was built
  // isAction names exactly the commands encodeAction builds, for every alternative.
  int actions = 0;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (([&] {
       const sim::CommandBody body{std::in_place_index<I>};
       flatbuffers::FlatBufferBuilder b;
       CAPTURE(I);
       CHECK(isAction(body) == !encodeAction(b, 1, 1, body).IsNull());
       actions += isAction(body) ? 1 : 0;
     }()),
     ...);
  }(std::make_index_sequence<std::variant_size_v<sim::CommandBody>>{});
  CHECK(actions == 5);
}

TEST_CASE("decodeAction refuses out-of-range tool sizes, faces, pour amounts and chat text") {
  sim::CommandBody out;
  const auto refused = [&](wire::ActionBody type, flatbuffers::Offset<void> (*build)(flatbuffers::FlatBufferBuilder&)) {
    const Bytes bytes = actionMessage(type, build);
    const wire::ClientMessage* msg = verifyClientMessage(bytes, kMaxClientPacketBytes);
    REQUIRE(msg != nullptr);
    out = sim::LeaveCommand{};
    const bool decoded = decodeAction(*msg->body_as_Action(), out);
    CHECK(std::holds_alternative<sim::LeaveCommand>(out));  // untouched
    return !decoded;
  };
  CHECK(refused(wire::ActionBody::Dig, [](auto& fbb) { return wire::CreateDig(fbb, 0, 0, 0, 3).Union(); }));
  CHECK(refused(wire::ActionBody::Dig, [](auto& fbb) { return wire::CreateDig(fbb, 0, 0, 0, 0).Union(); }));
  CHECK(refused(wire::ActionBody::Place, [](auto& fbb) { return wire::CreatePlace(fbb, 0, 0, 0, 6, 2, 1).Union(); }));
  CHECK(refused(wire::ActionBody::Place, [](auto& fbb) { return wire::CreatePlace(fbb, 0, 0, 0, 0, 16, 1).Union(); }));
  CHECK(refused(wire::ActionBody::Pour, [](auto& fbb) { return wire::CreatePour(fbb, 0, 0, 0, 0).Union(); }));
  CHECK(refused(wire::ActionBody::Pour, [](auto& fbb) {
    return wire::CreatePour(fbb, 0, 0, 0, sim::kMaxPourAmount + 1).Union();
  }));
  CHECK(refused(wire::ActionBody::Chat, [](auto& fbb) { return wire::CreateChatDirect(fbb, "").Union(); }));
  CHECK(refused(wire::ActionBody::Chat, [](auto& fbb) { return wire::CreateChatDirect(fbb, "bell\a").Union(); }));
  CHECK(refused(wire::ActionBody::Chat, [](auto& fbb) {
    return wire::CreateChatDirect(fbb, std::string(sim::kMaxChatBytes + 1, 'x').c_str()).Union();
  }));
}

TEST_CASE("messageName names every union member and nothing else") {
  std::set<std::string> server, client;
  for (int t = 0; t <= static_cast<int>(wire::ServerBody::MAX); ++t)
    server.insert(messageName(static_cast<wire::ServerBody>(t)));
  for (int t = 0; t <= static_cast<int>(wire::ClientBody::MAX); ++t)
    client.insert(messageName(static_cast<wire::ClientBody>(t)));
  CHECK(server.size() == static_cast<std::size_t>(wire::ServerBody::MAX) + 1);
  CHECK(client.size() == static_cast<std::size_t>(wire::ClientBody::MAX) + 1);
  CHECK(server.count("Unknown") == 0);
  CHECK(client.count("Unknown") == 0);
  CHECK(std::string(messageName(wire::ServerBody::StepBatch)) == "StepBatch");
  CHECK(std::string(messageName(wire::ClientBody::Inputs)) == "Inputs");
  CHECK(std::string(messageName(static_cast<wire::ServerBody>(200))) == "Unknown");
  CHECK(std::string(messageName(static_cast<wire::ClientBody>(200))) == "Unknown");
}

namespace {

std::vector<Bytes> validClientMessages() {
  std::vector<Bytes> v;
  v.push_back(clientMessage(wire::ClientBody::Hello, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateHelloDirect(fbb, kProtocolVersion, "alice", static_cast<std::uint8_t>(ClientKind::Player), true).Union();
  }));
  v.push_back(clientMessage(wire::ClientBody::WorldReady, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateWorldReady(fbb, 0x0123456789abcdefull).Union();
  }));
  v.push_back(clientMessage(wire::ClientBody::CellHashRequest, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateCellHashRequest(fbb).Union();
  }));
  v.push_back(clientMessage(wire::ClientBody::Inputs, [](flatbuffers::FlatBufferBuilder& fbb) {
    std::vector<wire::InputRec> inputs;
    for (std::uint32_t i = 0; i < kMaxInputsPerMessage; ++i)
      inputs.push_back(toWire(sim::PlayerInput{100 + i, 1, -1, static_cast<std::uint16_t>(i * 1000), 3, 1}));
    return wire::CreateInputsDirect(fbb, &inputs, 55, 9).Union();
  }));
  v.push_back(actionMessage(wire::ActionBody::Dig, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateDig(fbb, 1, 2, 3, 4).Union();
  }));
  v.push_back(actionMessage(wire::ActionBody::Place, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreatePlace(fbb, 1, 2, 3, 4, 5, 6).Union();
  }));
  v.push_back(actionMessage(wire::ActionBody::Pour, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreatePour(fbb, 1, 2, 3, 400).Union();
  }));
  v.push_back(actionMessage(wire::ActionBody::Ignite, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateIgnite(fbb, -1, -2, -3).Union();
  }));
  v.push_back(actionMessage(wire::ActionBody::Chat, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateChatDirect(fbb, "hi there").Union();
  }));
  v.push_back(clientMessage(wire::ClientBody::AuthProof, [](flatbuffers::FlatBufferBuilder& fbb) {
    const std::vector<std::uint8_t> signature(64, 7);
    return wire::CreateAuthProofDirect(fbb, &signature).Union();
  }));
  v.push_back(clientMessage(wire::ClientBody::JoinProgress, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateJoinProgress(fbb, 1000, 65536).Union();
  }));
  v.push_back(clientMessage(wire::ClientBody::CellsDropped, [](flatbuffers::FlatBufferBuilder& fbb) {
    const std::vector<wire::CellRef> cells{wire::CellRef(1, -2)};
    return wire::CreateCellsDroppedDirect(fbb, &cells).Union();
  }));
  v.push_back(clientMessage(wire::ClientBody::ColumnHashes, [](flatbuffers::FlatBufferBuilder& fbb) {
    const std::vector<wire::ColumnHashRec> columns{wire::ColumnHashRec(3, -4, 0x0123456789abcdefULL)};
    return wire::CreateColumnHashesDirect(fbb, &columns).Union();
  }));
  return v;
}

std::vector<Bytes> validServerMessages() {
  std::vector<Bytes> v;
  v.push_back(serverMessage(wire::ServerBody::Welcome, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateWelcomeDirect(fbb, kProtocolVersion, 7, "loam", "glade", 1, 2, 3, 4, 5).Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::Reject, [](flatbuffers::FlatBufferBuilder& fbb) {
    return wire::CreateRejectDirect(fbb, static_cast<std::uint16_t>(RejectCode::ServerFull), "full").Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::GeneratedCellHashes, [](flatbuffers::FlatBufferBuilder& fbb) {
    std::vector<wire::CellHashRec> cells{wire::CellHashRec(1, 2, 3), wire::CellHashRec(-4, 5, ~0ull)};
    return wire::CreateGeneratedCellHashesDirect(fbb, &cells).Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::JoinSnapshot, [](flatbuffers::FlatBufferBuilder& fbb) {
    std::vector<std::uint8_t> state(333, 0x5a);
    return wire::CreateJoinSnapshotDirect(fbb, 99, &state).Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::StepBatch, [](flatbuffers::FlatBufferBuilder& fbb) {
    std::vector<std::uint8_t> edits{0, 1, 2, 3};
    std::vector<wire::EventRec> events;
    for (const sim::Event& e : everyEvent()) {
      wire::EventRec r;
      if (toWire(e, r)) events.push_back(r);
    }
    std::vector<flatbuffers::Offset<wire::ChatLine>> chat{wire::CreateChatLineDirect(fbb, 3, "hello")};
    std::vector<flatbuffers::Offset<wire::PlayerName>> joined{wire::CreatePlayerNameDirect(fbb, 13, "bob")};
    std::vector<std::uint32_t> left{14};
    std::vector<std::uint8_t> weather{9, 9};
    return wire::CreateStepBatchDirect(fbb, 1000, &events, &chat, &joined, &left, &weather, &edits).Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::CellState, [](flatbuffers::FlatBufferBuilder& fbb) {
    std::vector<std::uint8_t> water;
    net::encodeCellWater({-1, 2}, std::vector<sim::WaterChange>{{{-255, 2, 515}, 100}}, water);
    std::vector<wire::FireRec> fire{wire::FireRec(4000, 5000, 2, 1, 3, 200, sim::kFireUniform, 4)};
    std::vector<std::uint8_t> bricks{1, 2, 3};
    return wire::CreateCellStateDirect(fbb, 5, -1, 2, true, &water, &fire, &bricks, 99).Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::Snapshot, [](flatbuffers::FlatBufferBuilder& fbb) {  // retired
    return wire::CreateSnapshot(fbb).Union();
  }));
  // A Compressed envelope around a large StepBatch (edit bytes that compress well).
  {
    const Bytes inner = serverMessage(wire::ServerBody::StepBatch, [](flatbuffers::FlatBufferBuilder& fbb) {
      std::vector<std::uint8_t> edits(4000, 7);
      return wire::CreateStepBatchDirect(fbb, 5, nullptr, nullptr, nullptr, nullptr, nullptr, &edits).Union();
    });
    flatbuffers::FlatBufferBuilder out;
    std::vector<std::uint8_t> scratch;
    REQUIRE(compressServerMessage(inner.data(), inner.size(), out, scratch));
    v.emplace_back(out.GetBufferPointer(), out.GetBufferPointer() + out.GetSize());
  }
  v.push_back(serverMessage(wire::ServerBody::Rejections, [](flatbuffers::FlatBufferBuilder& fbb) {  // retired
    wire::EventRec r;
    REQUIRE(toWire(sim::CommandRejectedEvent{sim::PlayerId{3}, 17, 3, sim::RejectReason::WaterLimit}, r));
    std::vector<wire::EventRec> events{r};
    return wire::CreateRejectionsDirect(fbb, 42, &events).Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::ActionResults, [](flatbuffers::FlatBufferBuilder& fbb) {
    const auto waterLimit = static_cast<std::uint8_t>(sim::RejectReason::WaterLimit);
    std::vector<wire::ActionResultRec> results{{17, kActionApplied, 0, 3}, {18, kActionRejected, waterLimit, 5}};
    return wire::CreateActionResultsDirect(fbb, 42, &results).Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::AuthChallenge, [](flatbuffers::FlatBufferBuilder& fbb) {
    const std::vector<std::uint8_t> nonce(32, 9);
    return wire::CreateAuthChallengeDirect(fbb, &nonce, "loam").Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::JoinChunk, [](flatbuffers::FlatBufferBuilder& fbb) {
    const std::vector<std::uint8_t> bytes(1000, 3);
    return wire::CreateJoinChunkDirect(fbb, 99, 32768, 40000, &bytes).Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::Stream, [](flatbuffers::FlatBufferBuilder& fbb) {  // retired
    return wire::CreateStream(fbb).Union();
  }));
  v.push_back(serverMessage(wire::ServerBody::SurfaceChanges, [](flatbuffers::FlatBufferBuilder& fbb) {
    const std::vector<wire::SurfaceChangeRec> changes{{-3, 7, -256, 5}, {2147483647, -2147483647, 1000000, 0}};
    return wire::CreateSurfaceChangesDirect(fbb, &changes).Union();
  }));
  return v;
}

// A truncated copy in its own exact-size allocation, so a read past the end is a
// sanitizer error rather than a read of the original's tail.
Bytes prefix(const Bytes& b, std::size_t n) { return Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n)); }

// Builders pad leaves to their alignment, and the first leaf built lies at the end of
// the buffer; cutting only such zero padding leaves every referenced byte in place.
bool onlyPaddingCut(const Bytes& full, std::size_t n) {
  if (full.size() - n >= 8) return false;
  for (std::size_t i = n; i < full.size(); ++i)
    if (full[i] != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("verifiers accept well-formed messages of every type") {
  std::set<wire::ClientBody> clientTypes;
  for (const Bytes& m : validClientMessages()) {
    const wire::ClientMessage* root = verifyClientMessage(m, kMaxClientPacketBytes);
    REQUIRE(root != nullptr);
    clientTypes.insert(root->body_type());
    // Exactly at the cap is fine, one byte under is not.
    CHECK(verifyClientMessage(m, m.size()) != nullptr);
    CHECK(verifyClientMessage(m, m.size() - 1) == nullptr);
  }
  CHECK(clientTypes.size() == static_cast<std::size_t>(wire::ClientBody::MAX));

  std::set<wire::ServerBody> serverTypes;
  for (const Bytes& m : validServerMessages()) {
    const wire::ServerMessage* root = verifyServerMessage(m, 1u << 20);
    REQUIRE(root != nullptr);
    serverTypes.insert(root->body_type());
    CHECK(verifyServerMessage(m, m.size()) != nullptr);
    CHECK(verifyServerMessage(m, m.size() - 1) == nullptr);
  }
  CHECK(serverTypes.size() == static_cast<std::size_t>(wire::ServerBody::MAX));
}

TEST_CASE("a verified StepBatch reads back to the same events, names and snapshot state") {
  const Bytes m = validServerMessages()[4];
  const wire::ServerMessage* root = verifyServerMessage(m, m.size());
  REQUIRE(root != nullptr);
  const wire::StepBatch* batch = root->body_as_StepBatch();
  REQUIRE(batch != nullptr);
  REQUIRE(batch->events() != nullptr);
  std::vector<sim::Event> expected;
  for (const sim::Event& e : everyEvent())
    if (!std::holds_alternative<sim::ChatEvent>(e)) expected.push_back(e);
  REQUIRE(batch->events()->size() == expected.size());
  for (flatbuffers::uoffset_t i = 0; i < batch->events()->size(); ++i) {
    sim::Event e;
    REQUIRE(fromWire(*batch->events()->Get(i), e));
    CHECK(e.index() == expected[i].index());
  }
  REQUIRE(batch->joined() != nullptr);
  CHECK(batch->joined()->Get(0)->name()->str() == "bob");

}

namespace {

/// A Snapshot with every list, as the server encodes it.
struct FullSnapshot {
  std::vector<std::uint8_t> own, players, animals, sounds, bytes;
  std::vector<std::uint32_t> playersGone{3, 4}, animalsGone{9};
  SnapshotMessage m;
  FullSnapshot() {
    appendOwnChanges(own, nullptr, toWire(distinctState()));
    const wire::PlayerPoseRec pose = poseToWire(sim::PlayerId{2}, distinctState());
    appendEntityRecord<wire::PlayerPoseRec>(players, pose.id(), nullptr, pose);
    sim::Animal a;
    a.id = sim::AnimalId{8};
    appendEntityRecord<wire::AnimalRec>(animals, 8, nullptr, toWire(a));
    wire::EventRec footstep;
    REQUIRE(toWire(sim::Event{sim::FootstepEvent{{sim::Actor::Kind::Player, 2}, {1, 2, 3}, 4, 1500}}, footstep));
    appendEventRecord(sounds, nullptr, footstep);
    m.sequence = 300;
    m.baseline = 297;
    m.tick = (std::uint64_t{1} << 40) + 7;
    m.ownInput = distinctState().lastInput;
    m.own = own;
    m.players = players;
    m.playersGone = playersGone;
    m.animals = animals;
    m.animalsGone = animalsGone;
    m.sounds = sounds;
    appendSnapshot(bytes, m);
  }
};

template <class T>
bool same(std::span<const T> a, std::span<const T> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

TEST_CASE("a Snapshot reads back to the same header and lists; its own record to the same state") {
  const FullSnapshot full;
  std::vector<std::uint32_t> gone;
  const sim::Result<SnapshotMessage> back = decodeSnapshot(full.bytes, gone);
  REQUIRE_MESSAGE(back, (back ? "" : back.error().message));
  CHECK(back->sequence == 300);
  CHECK(back->baseline == 297);
  CHECK(back->tick == (std::uint64_t{1} << 40) + 7);
  CHECK(back->ownInput == distinctState().lastInput);
  CHECK(same(back->own, full.m.own));
  CHECK(same(back->players, full.m.players));
  CHECK(same(back->playersGone, full.m.playersGone));
  CHECK(same(back->animals, full.m.animals));
  CHECK(same(back->animalsGone, full.m.animalsGone));
  CHECK(same(back->sounds, full.m.sounds));
  const auto own = decodeOwnChanges(back->own, nullptr, back->ownInput);
  REQUIRE(own);
  CHECK(fromWire(*own) == distinctState());

  // An idle player's: no lists, no baseline; a handful of bytes.
  SnapshotMessage idle;
  idle.sequence = 1;
  idle.tick = 5;
  idle.ownInput = 3;
  std::vector<std::uint8_t> bytes;
  appendSnapshot(bytes, idle);
  CHECK(bytes.size() == 5);  // flags, sequence, baseline step, tick, own_input
  const auto idleBack = decodeSnapshot(bytes, gone);
  REQUIRE(idleBack);
  CHECK(idleBack->baseline == 0);
  CHECK(idleBack->own.empty());
  CHECK(idleBack->playersGone.empty());
}

TEST_CASE("a hostile Snapshot is refused with a reason, never read past its end") {
  const FullSnapshot full;
  std::vector<std::uint32_t> gone;
  // Every truncation, and every extension by a byte.
  for (std::size_t n = 0; n < full.bytes.size(); ++n) {
    const auto r = decodeSnapshot(std::span(full.bytes).first(n), gone);
    CAPTURE(n);
    CHECK_FALSE(r);
  }
  std::vector<std::uint8_t> longer = full.bytes;
  longer.push_back(0);
  CHECK(decodeSnapshot(longer, gone).error().message.find("trailing") != std::string::npos);

  const auto refused = [&](const std::vector<std::uint8_t>& bytes, const char* why) {
    const auto r = decodeSnapshot(bytes, gone);
    REQUIRE_FALSE(r);
    CAPTURE(r.error().message);
    CHECK(r.error().message.find(why) != std::string::npos);
  };
  refused({0x40, 1, 0, 1, 1}, "unknown flags");
  refused({0x00, 0, 0, 1, 1}, "sequence 0");
  refused({0x00, 5, 5, 1, 1}, "baseline 5 before sequence 5");
  refused({0x01, 5, 0, 1, 1, 0}, "own present but empty");
  refused({0x04, 5, 0, 1, 1, 0}, "players_gone of 0 ids");
  refused({0x10, 5, 0, 1, 1, 0x81, 0x02}, "animals_gone of 257 ids");  // over kMaxEntitiesInView
  refused({0x02, 5, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f}, "truncated");  // a list longer than the datagram
  refused({0x00, 0xff, 0xff, 0xff, 0xff, 0x7f, 0, 1, 1}, "varint over 32 bits");
}

TEST_CASE("a Stream datagram reads back to the same items; a hostile one is refused with a reason") {
  using Kind = StreamItemKind;
  const std::vector<std::uint8_t> first(300, 7), water{1, 2, 3};
  std::vector<std::uint8_t> bytes;
  appendStreamItem(bytes, 0, {70000, Kind::Message, 0, {}, 0, first});
  appendStreamItem(bytes, 70000, {70001, Kind::Mark, 4, {}, 0, {}});  // full CellState 4
  appendStreamItem(bytes, 70001, {70009, Kind::Water, 0, {-3, 70}, 0, water});
  // Every byte accounted for: the first item 3 (sequence) + 1 (kind) + 2 (count) bytes
  // beside its message, the mark 1 + 1 + 1, the water 1 + 1 + 1 + 2 (cell) + 1 (raw
  // size) + 1 (count).
  const std::size_t firstEnd = 3 + 1 + 2 + first.size(), markEnd = firstEnd + 3;
  CHECK(bytes.size() == markEnd + 7 + water.size());
  std::vector<StreamItemView> items;
  REQUIRE(decodeStream(bytes, items));
  REQUIRE(items.size() == 3);
  CHECK(items[0].sequence == 70000);
  CHECK(items[0].kind == Kind::Message);
  CHECK(std::ranges::equal(items[0].bytes, first));
  CHECK(items[1].sequence == 70001);
  CHECK(items[1].kind == Kind::Mark);
  CHECK(items[1].fullState == 4);
  CHECK(items[1].bytes.empty());
  CHECK(items[2].sequence == 70009);
  CHECK(items[2].kind == Kind::Water);
  CHECK(items[2].cell == sim::CellCoord{-3, 70});
  CHECK(items[2].rawSize == 0);
  CHECK(std::ranges::equal(items[2].bytes, water));
  std::vector<std::uint8_t> scratch;
  const auto unpacked = unpackWater(items[2], scratch);
  REQUIRE(unpacked);
  CHECK(std::ranges::equal(*unpacked, water));

  // Every truncation but at an item's end, and every extension by a byte.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    CHECK(decodeStream(std::span(bytes).first(n), items).has_value() == (n == firstEnd || n == markEnd));
  }
  std::vector<std::uint8_t> longer = bytes;
  longer.push_back(0);
  CHECK_FALSE(decodeStream(longer, items));
  CHECK(items.empty());  // a refused datagram leaves no items

  const auto refused = [&](const std::vector<std::uint8_t>& datagram, const char* why) {
    const auto r = decodeStream(datagram, items);
    REQUIRE_FALSE(r);
    CAPTURE(r.error().message);
    CHECK(r.error().message.find(why) != std::string::npos);
  };
  refused({}, "no item");
  refused({0, 0, 1, 9}, "sequence 0");
  refused({5, 0, 1, 9, 0, 0, 1, 9}, "an item after 5 with a gap of 0");
  refused({0xff, 0xff, 0xff, 0xff, 0x0f, 1, 1, 1, 1, 1}, "a sequence past 32 bits");
  refused({5, 3, 1, 9}, "item 5 of unknown kind 3");
  refused({5, 1, 0}, "item 5 marks full CellState 0");
  refused({5, 0, 0}, "item 5 has 0 bytes");
  refused({5, 2, 1, 1, 0, 0}, "item 5 has 0 bytes");
  refused({5, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}, "truncated");  // a message longer than the datagram
  refused({5, 1, 0xff, 0xff, 0xff, 0xff, 0x7f}, "varint over 32 bits");
}

TEST_CASE("water records pack as zstd when that pays, and a lying raw size is refused") {
  // A flood's records: full voxels in rows, one key step and 255 1 each.
  std::vector<std::uint8_t> records;
  for (int i = 0; i < 400; ++i) records.insert(records.end(), {1, 255, 1});
  std::vector<std::uint8_t> packed, scratch;
  const std::uint32_t rawSize = packWater(records, packed);
  CHECK(rawSize == records.size());
  CHECK(packed.size() + 16 <= records.size());
  std::vector<std::uint8_t> bytes;
  appendStreamItem(bytes, 0, {9, StreamItemKind::Water, 0, {1, 2}, rawSize, packed});
  std::vector<StreamItemView> items;
  REQUIRE(decodeStream(bytes, items));
  REQUIRE(items.size() == 1);
  const auto unpacked = unpackWater(items[0], scratch);
  REQUIRE(unpacked);
  CHECK(std::ranges::equal(*unpacked, records));

  // A short list stays as it is.
  const std::vector<std::uint8_t> few{1, 255, 1, 1, 200};
  CHECK(packWater(few, packed) == 0);
  CHECK(packed == few);

  // The frame must give exactly the raw size, which is bounded.
  for (const std::uint32_t lie : {rawSize - 1, rawSize + 1, std::uint32_t(kMaxServerMessageBytes + 1)}) {
    CAPTURE(lie);
    StreamItemView lying = items[0];
    lying.rawSize = lie;
    const auto r = unpackWater(lying, scratch);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("do not decompress to " + std::to_string(lie)) != std::string::npos);
  }
  StreamItemView garbage = items[0];
  const std::vector<std::uint8_t> junk(40, 0x5a);
  garbage.bytes = junk;
  CHECK_FALSE(unpackWater(garbage, scratch));
}

TEST_CASE("verifiers refuse empty, bodiless and unknown-body messages") {
  CHECK(verifyClientMessage({}, kMaxClientPacketBytes) == nullptr);
  CHECK(verifyServerMessage({}, 1u << 20) == nullptr);

  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(wire::CreateClientMessage(fbb));
    const Bytes m = finish(fbb);
    CHECK(verifyClientMessage(m, kMaxClientPacketBytes) == nullptr);
  }
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(wire::CreateServerMessage(fbb));
    const Bytes m = finish(fbb);
    CHECK(verifyServerMessage(m, 1u << 20) == nullptr);
  }
  // A known type tag whose table is missing.
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::StepBatch, 0));
    const Bytes m = finish(fbb);
    CHECK(verifyServerMessage(m, 1u << 20) == nullptr);
  }
  // A type tag from a newer protocol (the generated verifier lets it through).
  CHECK(verifyClientMessage(clientMessage(static_cast<wire::ClientBody>(static_cast<int>(wire::ClientBody::MAX) + 1),
                                          [](flatbuffers::FlatBufferBuilder& fbb) {
                                            return wire::CreateCellHashRequest(fbb).Union();
                                          }),
                            kMaxClientPacketBytes) == nullptr);
  CHECK(verifyServerMessage(serverMessage(static_cast<wire::ServerBody>(static_cast<int>(wire::ServerBody::MAX) + 1),
                                          [](flatbuffers::FlatBufferBuilder& fbb) {
                                            return wire::CreateRejectDirect(fbb, 1, "x").Union();
                                          }),
                            1u << 20) == nullptr);
  // An Action without a body, or with an unknown one.
  CHECK(verifyClientMessage(actionMessage(wire::ActionBody::NONE, nullptr), kMaxClientPacketBytes) == nullptr);
  CHECK(verifyClientMessage(actionMessage(static_cast<wire::ActionBody>(6),
                                          [](flatbuffers::FlatBufferBuilder& fbb) {
                                            return wire::CreateIgnite(fbb, 1, 2, 3).Union();
                                          }),
                            kMaxClientPacketBytes) == nullptr);
}

TEST_CASE("verifiers refuse misaligned buffers (struct vectors are read in place)") {
  const Bytes m = validServerMessages()[2];
  std::vector<std::uint64_t> storage(m.size() / 8 + 2);
  auto* base = reinterpret_cast<std::uint8_t*>(storage.data());
  std::memcpy(base + 1, m.data(), m.size());
  CHECK(verifyServerMessage(std::span<const std::uint8_t>(base + 1, m.size()), 1u << 20) == nullptr);
  std::memcpy(base, m.data(), m.size());
  CHECK(verifyServerMessage(std::span<const std::uint8_t>(base, m.size()), 1u << 20) != nullptr);
}

TEST_CASE("verifiers refuse a vector of 8-byte structs placed 4 bytes off (found by fuzz_client_message)") {
  // A ColumnHashes whose columns start 4 bytes past an 8-byte boundary: FlatBuffers'
  // verifier checks the length word, not the ColumnHashRec alignment, and reading the
  // records in place was undefined behaviour. Also a seed of fuzz/corpus/client_message.
  static const std::uint8_t kInput[] = {
      0x0c, 0x00, 0x00, 0x00, 0x08, 0x00, 0x0c, 0x00, 0x07, 0x00, 0x08, 0x00, 0x08, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x09, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x08, 0x00, 0x04, 0x00,
      0x06, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x05, 0x10, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x16, 0x00, 0x08, 0x00, 0xf0,
      0x00, 0x0c, 0x00, 0x10, 0x00, 0x0c, 0xff, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0xff, 0x00, 0x00,
      0x00, 0x10, 0x8f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x08, 0x00, 0x00, 0x00, 0x04, 0x00,
      0x15, 0x00, 0x00, 0x00, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x20, 0x66, 0x72, 0x6f, 0x6d, 0x20, 0xff,
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
      0xff, 0xff, 0xff, 0xff, 0x74, 0x68, 0x65, 0x20, 0x63, 0x6f, 0x72, 0x70, 0x75, 0x73, 0x00, 0x00,
      0x00,
  };
  std::vector<std::uint64_t> storage(sizeof(kInput) / 8 + 1);
  auto* base = reinterpret_cast<std::uint8_t*>(storage.data());
  std::memcpy(base, kInput, sizeof(kInput));
  const std::span<const std::uint8_t> bytes(base, sizeof(kInput));
  REQUIRE(flatbuffers::GetRoot<wire::ClientMessage>(base)->body_type() == wire::ClientBody::ColumnHashes);
  CHECK(verifyClientMessage(bytes, 1u << 20) == nullptr);
}

TEST_CASE("verifiers refuse every truncation of every valid message") {
  int cuts = 0, paddingCuts = 0;
  for (const Bytes& m : validClientMessages()) {
    for (std::size_t n = 0; n < m.size(); ++n) {
      const Bytes p = prefix(m, n);
      CAPTURE(n);
      CAPTURE(m.size());
      const bool accepted = verifyClientMessage(p, kMaxClientPacketBytes) != nullptr;
      ++cuts;
      paddingCuts += accepted;
      if (accepted) CHECK(onlyPaddingCut(m, n));
    }
  }
  for (const Bytes& m : validServerMessages()) {
    for (std::size_t n = 0; n < m.size(); ++n) {
      const Bytes p = prefix(m, n);
      CAPTURE(n);
      CAPTURE(m.size());
      const bool accepted = verifyServerMessage(p, 1u << 20) != nullptr;
      ++cuts;
      paddingCuts += accepted;
      if (accepted) CHECK(onlyPaddingCut(m, n));
    }
  }
  MESSAGE("truncations tried: " << cuts << ", accepted (only trailing alignment padding cut): " << paddingCuts);
  CHECK(paddingCuts * 20 < cuts);
}

TEST_CASE("verifiers refuse random bytes and survive random mutations") {
  std::mt19937 rng(12345);
  int accepted = 0;
  for (int seed = 0; seed < 2000; ++seed) {
    rng.seed(static_cast<std::uint32_t>(seed));
    Bytes b(1 + rng() % 600);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    CHECK(verifyClientMessage(b, kMaxClientPacketBytes) == nullptr);
    CHECK(verifyServerMessage(b, 1u << 20) == nullptr);
  }
  // Flipped bytes in valid messages: either refused, or a root whose body is readable.
  std::vector<Bytes> all = validClientMessages();
  for (int seed = 0; seed < 3000; ++seed) {
    rng.seed(static_cast<std::uint32_t>(seed));
    Bytes b = all[static_cast<std::size_t>(seed) % all.size()];
    for (int k = 0; k < 1 + seed % 4; ++k) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
    if (const wire::ClientMessage* root = verifyClientMessage(b, kMaxClientPacketBytes)) {
      ++accepted;
      CHECK(root->body() != nullptr);
      CHECK(std::string(messageName(root->body_type())) != "Unknown");
    }
  }
  std::vector<Bytes> server = validServerMessages();
  for (int seed = 0; seed < 3000; ++seed) {
    rng.seed(static_cast<std::uint32_t>(seed + 100000));
    Bytes b = server[static_cast<std::size_t>(seed) % server.size()];
    for (int k = 0; k < 1 + seed % 4; ++k) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
    if (const wire::ServerMessage* root = verifyServerMessage(b, 1u << 20)) {
      ++accepted;
      CHECK(root->body() != nullptr);
    }
  }
  MESSAGE("mutated messages still valid after verification: " << accepted << " of 6000");
}

TEST_CASE("oversize buffers are refused before verification") {
  Bytes big = validServerMessages()[3];
  CHECK(verifyServerMessage(big, big.size()) != nullptr);
  CHECK(verifyServerMessage(big, 64) == nullptr);
  Bytes client = validClientMessages()[3];
  client.resize(kMaxClientPacketBytes + 1, 0);  // valid prefix, trailing junk beyond the cap
  CHECK(verifyClientMessage(client, kMaxClientPacketBytes) == nullptr);
  client.resize(kMaxClientPacketBytes);
  CHECK(verifyClientMessage(client, kMaxClientPacketBytes) != nullptr);
}

TEST_CASE("Compressed envelopes open to the inner message; corrupt, oversized or nested ones are refused") {
  const Bytes inner = serverMessage(wire::ServerBody::StepBatch, [](flatbuffers::FlatBufferBuilder& fbb) {
    std::vector<std::uint8_t> edits(4000, 7);
    return wire::CreateStepBatchDirect(fbb, 42, nullptr, nullptr, nullptr, nullptr, nullptr, &edits).Union();
  });
  flatbuffers::FlatBufferBuilder out;
  std::vector<std::uint8_t> scratch, unpacked;
  REQUIRE(compressServerMessage(inner.data(), inner.size(), out, scratch));
  const Bytes packed(out.GetBufferPointer(), out.GetBufferPointer() + out.GetSize());
  CHECK(packed.size() < inner.size() / 4);
  const wire::ServerMessage* m = openServerMessage(packed, 1u << 20, unpacked);
  REQUIRE(m != nullptr);
  REQUIRE(m->body_type() == wire::ServerBody::StepBatch);
  CHECK(m->body_as_StepBatch()->tick() == 42);
  // A plain message passes through unchanged.
  CHECK(openServerMessage(inner, 1u << 20, unpacked) != nullptr);
  // raw_size above the cap: refused before decompressing.
  CHECK(openServerMessage(packed, inner.size() - 1, unpacked) == nullptr);
  // Nested envelopes are refused.
  flatbuffers::FlatBufferBuilder twice;
  std::vector<std::uint8_t> big(packed);
  big.resize(packed.size() + 3000, 0);  // padding so compressing again pays
  Bytes outer;
  {
    flatbuffers::FlatBufferBuilder fbb;
    auto payload = fbb.CreateVector(big.data(), big.size());
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Compressed,
                                         wire::CreateCompressed(fbb, static_cast<std::uint32_t>(packed.size()), payload).Union()));
    outer.assign(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  }
  CHECK(openServerMessage(outer, 1u << 20, unpacked) == nullptr);  // not zstd: refused
  REQUIRE(compressServerMessage(packed.data(), packed.size(), twice, scratch) == false);  // small: not worth it
  // Every corruption of the compressed bytes gives nullptr or a verified message, never a crash.
  for (std::size_t i = 0; i < packed.size(); ++i) {
    Bytes bad = packed;
    bad[i] ^= 0x5a;
    const wire::ServerMessage* r = openServerMessage(bad, 1u << 20, unpacked);
    if (r) CHECK(r->body_type() != wire::ServerBody::Compressed);
  }
}

TEST_CASE("validActionResult takes what a server sends and nothing else") {
  const auto rec = [](std::uint8_t outcome, std::uint8_t reason, std::uint8_t command) {
    return wire::ActionResultRec(7, outcome, reason, command);
  };
  const auto dig = static_cast<std::uint8_t>(CommandKind::Dig);
  CHECK(validActionResult(rec(kActionApplied, 0, dig)));
  CHECK(validActionResult(rec(kActionRejected, static_cast<std::uint8_t>(sim::RejectReason::NoLineOfSight), dig)));
  CHECK_FALSE(validActionResult(rec(kActionApplied, 4, dig)));  // applied carries no reason
  const auto beyond = static_cast<std::uint8_t>(static_cast<std::uint8_t>(sim::RejectReason::NoLineOfSight) + 1);
  CHECK_FALSE(validActionResult(rec(kActionRejected, beyond, dig)));
  CHECK_FALSE(validActionResult(rec(2, 0, dig)));  // no third outcome
  CHECK_FALSE(validActionResult(rec(kActionApplied, 0, kCommandKindCount)));
}

TEST_CASE("a StreamReceipt acknowledges what arrived without a gap, once each, and refuses what is too far ahead") {
  StreamReceipt r;
  CHECK(r.ack() == 0);
  CHECK_FALSE(r.receive(0));  // never sent
  CHECK(r.receive(2));        // ahead of a gap: kept, not acknowledged
  CHECK(r.ack() == 0);
  CHECK_FALSE(r.receive(2));  // a resend
  CHECK(r.receive(1));        // the gap fills: both acknowledged
  CHECK(r.ack() == 2);
  CHECK_FALSE(r.receive(1));
  CHECK(r.receive(4));
  CHECK(r.receive(5));
  CHECK(r.ack() == 2);
  CHECK(r.receive(3));
  CHECK(r.ack() == 5);
  CHECK_FALSE(r.tooFarAhead(5 + kMaxStreamAhead));
  CHECK(r.tooFarAhead(6 + kMaxStreamAhead));
  CHECK_FALSE(r.receive(6 + kMaxStreamAhead));
  CHECK(r.ack() == 5);
}
