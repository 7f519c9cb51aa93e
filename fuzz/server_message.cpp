// Server packets on the client: the bytes of one ENet packet through what
// net/client_connection.cpp (handle) and the handlers in net/client_join.cpp and
// net/client_playing.cpp do with them, in their order, on a copy of a mirror
// (ClientConnection takes packets only from its ENet peer): openServerMessage at
// kMaxServerMessageBytes (Compressed unwrapped), then per body the JoinSnapshot /
// JoinChunk state (decodeSave, restoreState), StepBatch (decodeEdits with its fire
// records, decodeWeather, names, applyStep burning the fire, events), CellState
// (a full one: water, fire records, bricks, applyCellState),
// ActionResults (records checked, predictions settled) and the small messages' fields;
// and the same bytes as a Snapshot datagram (decodeSnapshot; own, poses, animals,
// sounds) and as a Stream datagram (decodeStream; each item's message through the
// message path, water items as onCellWater applies them).
#include <span>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "net/edit_codec.h"
#include "net/entity_codec.h"
#include "net/predicted_edits.h"
#include "net/protocol.h"
#include "net/snapshot_codec.h"
#include "net/stream_codec.h"
#include "net/stream_receipt.h"
#include "net/water_codec.h"
#include "net/wire.h"
#include "sim/save/save.h"
#include "sim/save/state_codec.h"
#include "sim/step/mirror.h"
#include "sim/world/world_hash.h"

namespace {

using namespace loam;

void joinState(std::span<const std::uint8_t> bytes) {
  auto save = sim::decodeSave(bytes, net::kMaxServerMessageBytes);
  if (!save) return;
  sim::SimState mirror = fuzz::baseState();
  (void)sim::restoreState(*save, mirror);
}

void stepBatch(const wire::StepBatch& b) {
  sim::SimState mirror = fuzz::baseState();
  if (b.tick() <= mirror.tick) return;  // steps follow in order
  sim::StepRecords step;
  step.tick = b.tick();
  std::vector<sim::EditRecord> edits, cellEdits, made;
  std::vector<sim::FireChange> fire, cellFire;
  if (b.edits()) {
    std::vector<net::CellEdits> cells;
    if (!net::decodeStepEdits(std::span<const std::uint8_t>(b.edits()->data(), b.edits()->size()), cells))
      return;
    std::size_t budget = net::kMaxStepEdits;
    for (const net::CellEdits& ce : cells) {
      if (!net::decodeEdits(ce.edits, b.tick(), cellEdits, cellFire, budget)) return;
      for (const sim::EditRecord& e : cellEdits)
        if (!(sim::cellOf(sim::editBrick(e)) == ce.cell)) return;
      for (const sim::FireChange& f : cellFire) {
        const sim::BrickCoord brick = sim::brickOf(f.corner);
        if (!(sim::cellOf(brick) == ce.cell) || !mirror.world.bounds().containsBrick(brick)) return;
      }
      budget -= cellEdits.size() + cellFire.size();
      edits.insert(edits.end(), cellEdits.begin(), cellEdits.end());
      fire.insert(fire.end(), cellFire.begin(), cellFire.end());
    }
  }
  step.edits = edits;
  step.fire = fire;
  sim::WeatherState weather = mirror.weather;
  if (b.weather() && b.weather()->size() > 0) {
    if (!sim::decodeWeather(std::span<const std::uint8_t>(b.weather()->data(), b.weather()->size()), weather)) return;
    step.weather = &weather;
  }
  std::vector<sim::PlayerChange> changes;
  if (b.joined()) {
    for (const wire::PlayerName* pn : *b.joined()) {
      sim::PlayerChange& ch = changes.emplace_back();
      ch.kind = sim::PlayerChange::Kind::Joined;
      ch.player.id = sim::PlayerId{pn->id()};
      ch.player.name = sim::PlayerName::from(pn->name() ? pn->name()->string_view() : std::string_view());
    }
  }
  if (b.left()) {
    for (std::uint32_t id : *b.left()) {
      sim::PlayerChange& ch = changes.emplace_back();
      ch.kind = sim::PlayerChange::Kind::Left;
      ch.player.id = sim::PlayerId{id};
    }
  }
  step.players = changes;
  sim::applyStep(mirror, step, &made);
  if (b.events()) {
    for (const wire::EventRec* rec : *b.events()) {
      sim::Event e;
      (void)net::fromWire(*rec, e);
    }
  }
  if (b.chat()) {
    for (const wire::ChatLine* line : *b.chat())
      (void)sim::ChatText::from(line->text() ? line->text()->string_view() : std::string_view());
  }
}

// A Stream water item as the client's onCellWater applies it.
void cellWater(sim::CellCoord cell, std::span<const std::uint8_t> records) {
  sim::SimState mirror = fuzz::baseState();
  std::vector<sim::WaterChange> water;
  if (!net::decodeCellWater(records, cell, water)) return;
  const sim::WorldBounds& bounds = mirror.world.bounds();
  std::erase_if(water, [&](const sim::WaterChange& w) { return !bounds.containsBrick(sim::brickOf(w.voxel)); });
  sim::applyCellState(mirror, 1, cell, false, water, {});
}

// A full CellState (the client refuses any other) as its onCellState applies it.
void cellState(const wire::CellState& c) {
  if (!c.full()) return;
  sim::SimState mirror = fuzz::baseState();
  const sim::CellCoord cell{c.cell_x(), c.cell_z()};
  const sim::WorldBounds& bounds = mirror.world.bounds();
  auto inside = [&](sim::VoxelCoord v) { return bounds.containsBrick(sim::brickOf(v)); };
  std::vector<sim::WaterChange> water;
  std::vector<sim::FireChange> fire;
  if (c.water()) {
    if (!net::decodeCellWater(std::span<const std::uint8_t>(c.water()->data(), c.water()->size()), cell, water)) return;
    std::erase_if(water, [&](const sim::WaterChange& w) { return !inside(w.voxel); });
  }
  if (c.fire()) {
    for (const wire::FireRec* r : *c.fire()) {
      const sim::FireChange f = net::fromWire(*r, cell);
      if (inside(f.corner)) fire.push_back(f);
    }
  }
  std::vector<sim::SavedBrick> bricks;
  if (c.bricks() && c.bricks()->size() > 0) {
    auto save = sim::decodeSave(std::span<const std::uint8_t>(c.bricks()->data(), c.bricks()->size()),
                                net::kMaxCellBricksBytes);
    if (!save) return;
    bricks = std::move(save->bricks);
  }
  std::vector<sim::BrickCoord> written;
  if (!sim::applyCellBricks(mirror.world, cell, bricks, written)) return;
  sim::applyCellState(mirror, c.tick(), cell, true, water, fire);
}

// A Snapshot datagram (kChannelSnapshot, raw): decodeSnapshot, then what the client
// does with its lists.
void snapshot(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint32_t> gone;
  const sim::Result<net::SnapshotMessage> decoded = net::decodeSnapshot(bytes, gone);
  if (!decoded) return;
  const net::SnapshotMessage& s = *decoded;
  if (!s.own.empty()) {  // against a baseline's own, as the client's OwnRing does
    const wire::PlayerStateRec base = net::toWire(sim::PlayerState{});
    if (auto own = net::decodeOwnChanges(s.own, &base, s.ownInput)) (void)net::fromWire(*own);
  }
  std::vector<wire::EventRec> sounds;
  if (net::decodeEventRecords(s.sounds, sounds, net::kMaxSoundsPerSnapshot)) {
    for (const wire::EventRec& r : sounds) {
      sim::Event e;
      (void)net::fromWire(r, e);
    }
  }
  // The client's rebuild: changes against a baseline that holds a few entities.
  std::vector<wire::PlayerPoseRec> players{net::poseToWire(sim::PlayerId{2}, {}),
                                           net::poseToWire(sim::PlayerId{7}, {})};
  (void)net::applyEntityRecords(s.players, players, net::kMaxEntitiesInView);
  std::vector<wire::AnimalRec> animals{net::toWire(sim::Animal{})};
  if (net::applyEntityRecords(s.animals, animals, net::kMaxEntitiesInView)) {
    for (const wire::AnimalRec& r : animals) (void)net::fromWire(r);
  }
}

// The client's onActionResults: each record checked, then settling the predictions
// of three actions it made (a dig, a place, an ignite) on a copy of the mirror.
void actionResults(const wire::ActionResults& r) {
  if (!r.results()) return;
  const sim::SimState mirror = fuzz::baseState();
  net::PredictedEdits predicted;
  std::vector<sim::Event> events;
  const sim::VoxelCoord at{0, 0, 0};
  predicted.predict(1, sim::DigCommand{at, sim::ToolSize::Cm20}, mirror, sim::PlayerId{1}, 0, events);
  predicted.predict(2, sim::PlaceCommand{at, sim::Face::PosY, sim::ToolSize::Cm10, 1}, mirror, sim::PlayerId{1}, 0,
                    events);
  predicted.predict(3, sim::IgniteCommand{at}, mirror, sim::PlayerId{1}, 0, events);
  for (const wire::ActionResultRec* rec : *r.results()) {
    if (!net::validActionResult(*rec)) return;
    (void)predicted.settle(rec->sequence(), rec->outcome() == net::kActionApplied, mirror.world, 1);
  }
  (void)predicted.ghostVoxels(mirror.world);
}


int dispatch(const wire::ServerMessage* msg);

// A Stream datagram (kChannelUnreliable, raw) as the client's onStream takes it: each
// item's sequence through a StreamReceipt, a mark without a message, a message copied
// (aligned) and opened, then handled as its type is.
void stream(std::span<const std::uint8_t> bytes) {
  std::vector<net::StreamItemView> items;
  if (!net::decodeStream(bytes, items)) return;
  net::StreamReceipt receipt;
  for (const net::StreamItemView& item : items) {
    if (receipt.tooFarAhead(item.sequence) || !receipt.receive(item.sequence)) continue;
    if (item.kind == net::StreamItemKind::Mark) continue;
    if (item.kind == net::StreamItemKind::Water) {
      std::vector<std::uint8_t> unpacked;
      if (const auto records = net::unpackWater(item, unpacked)) cellWater(item.cell, *records);
      continue;
    }
    const std::vector<std::uint8_t> copy(item.bytes.begin(), item.bytes.end());
    std::vector<std::uint8_t> scratch;
    (void)dispatch(net::openServerMessage(copy, net::kMaxServerMessageBytes, scratch));
  }
}

}  // namespace

// Each input is tried as the three kinds of packet: a Snapshot datagram (channel 2),
// a Stream datagram (the server's channel 1) and a message (channel 0).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> scratch;
  snapshot(fuzz::bytesOf(data, size));
  stream(fuzz::bytesOf(data, size));
  return dispatch(net::openServerMessage(fuzz::bytesOf(data, size), net::kMaxServerMessageBytes, scratch));
}

namespace {

int dispatch(const wire::ServerMessage* msg) {
  if (msg == nullptr || msg->body() == nullptr) return 0;
  switch (msg->body_type()) {
    case wire::ServerBody::NONE: return 0;
    case wire::ServerBody::Welcome: {
      const wire::Welcome& w = *msg->body_as_Welcome();
      if (w.scene_name()) (void)w.scene_name()->str();
      return 0;
    }
    case wire::ServerBody::Reject: {
      const wire::Reject& r = *msg->body_as_Reject();
      if (r.text()) (void)r.text()->str();
      return 0;
    }
    case wire::ServerBody::GeneratedCellHashes: {
      std::vector<sim::CellHash> theirs;
      if (const auto* cells = msg->body_as_GeneratedCellHashes()->cells())
        for (const wire::CellHashRec* r : *cells) theirs.push_back({sim::CellCoord{r->x(), r->z()}, r->hash()});
      return 0;
    }
    case wire::ServerBody::JoinSnapshot:
      if (const auto* st = msg->body_as_JoinSnapshot()->state()) joinState({st->data(), st->size()});
      return 0;
    case wire::ServerBody::JoinChunk:
      if (const auto* b = msg->body_as_JoinChunk()->bytes()) joinState({b->data(), b->size()});
      return 0;
    case wire::ServerBody::StepBatch: stepBatch(*msg->body_as_StepBatch()); return 0;
    case wire::ServerBody::CellState: cellState(*msg->body_as_CellState()); return 0;
    case wire::ServerBody::Snapshot: return 0;  // retired: snapshots are datagrams of their own
    case wire::ServerBody::Compressed: return 0;  // openServerMessage unwraps it
    case wire::ServerBody::ActionResults: actionResults(*msg->body_as_ActionResults()); return 0;
    case wire::ServerBody::Stream: return 0;  // retired: the Stream is a datagram of its own
    case wire::ServerBody::AuthChallenge: {
      const wire::AuthChallenge& c = *msg->body_as_AuthChallenge();
      if (c.nonce()) (void)c.nonce()->size();
      return 0;
    }
    case wire::ServerBody::SurfaceChanges: {
      std::int64_t sum = 0;
      if (const auto* changes = msg->body_as_SurfaceChanges()->changes())
        for (const wire::SurfaceChangeRec* r : *changes)
          sum += std::int64_t{r->x()} + r->z() + r->rise() + r->material();
      return sum == 1 ? 0 : 0;  // read every field (ASan sees any out-of-bounds read)
    }
    default:
      // A message added to the schema since: give it its client decoders here. (No
      // -Wswitch error, so a schema change never breaks the fuzz build.)
      return 0;
  }
}

}  // namespace
