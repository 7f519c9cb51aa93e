// Writes the seed corpora of fuzz/corpus/<target>/ from a real run: the flat test
// world with two players who move, dig, place planks, pour water, set fire and chat
// for 240 steps of the real simulation; each message is built from those steps'
// outputs by the encoders the host and client use (encodeEdits with the fire records,
// toWire, encodeAction, captureSave + stateBlobs + encodeSave, compressServerMessage),
// plus a hand-built step with every kind of edit group and fire record; the files are
// the repository's own (scenes, the example server config, bot scripts). Run
// `fuzz_make_corpus fuzz/corpus` from the checkout after a format change; the files
// are small (a few KB each) and committed.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <zstd.h>

#include "fuzz/fuzz_support.h"
#include "net/edit_codec.h"
#include "net/entity_codec.h"
#include "sim/step/mirror.h"
#include "net/protocol.h"
#include "net/snapshot_codec.h"
#include "net/stream_codec.h"
#include "net/water_codec.h"
#include "net/wire.h"
#include "sim/save/save.h"
#include "sim/gen/generator_version.h"
#include "sim/save/state_codec.h"
#include "sim/save/world_db.h"
#include "sim/step/step.h"
#include "sim/systems/fire.h"
#include "sim/systems/water.h"

namespace {

using namespace loam;
namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

fs::path gRoot;

// Where the run's fire is lit: the plank voxel the first player placed at step 12.
constexpr sim::VoxelCoord kFireAt{8, 0, 8};

void write(const std::string& target, const std::string& name, const Bytes& bytes) {
  const fs::path dir = gRoot / target;
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                     static_cast<std::streamsize>(bytes.size()));
}

void write(const std::string& target, const std::string& name, const std::string& text) {
  write(target, name, Bytes(text.begin(), text.end()));
}

Bytes finish(flatbuffers::FlatBufferBuilder& fbb) {
  return Bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

Bytes withMode(std::uint8_t mode, const Bytes& rest) {
  Bytes out{mode};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- client messages ------------------------------------------------------------------

void clientMessages(const std::vector<sim::PlayerInput>& inputs, const std::vector<sim::CommandBody>& actions) {
  flatbuffers::FlatBufferBuilder fbb;
  const std::vector<std::uint8_t> key(32, 0x42);
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::Hello,
                                       wire::CreateHelloDirect(fbb, net::kProtocolVersion, "ann", 1, true, &key).Union()));
  write("client_message", "hello", finish(fbb));
  fbb.Clear();
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::WorldReady, wire::CreateWorldReady(fbb, 0x1234).Union()));
  write("client_message", "world_ready", finish(fbb));
  fbb.Clear();
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::CellHashRequest, wire::CreateCellHashRequest(fbb).Union()));
  write("client_message", "cell_hash_request", finish(fbb));
  fbb.Clear();
  std::vector<wire::InputRec> recs;
  for (std::size_t i = inputs.size() - 8; i < inputs.size(); ++i) recs.push_back(net::toWire(inputs[i]));
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::Inputs, wire::CreateInputsDirect(fbb, &recs, 3).Union()));
  write("client_message", "inputs", finish(fbb));
  int n = 0;
  for (const sim::CommandBody& body : actions) {
    fbb.Clear();
    auto a = net::encodeAction(fbb, 17, 3, body);
    if (a.IsNull()) continue;
    fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::Action, a.Union()));
    write("client_message", "action_" + std::to_string(n++), finish(fbb));
  }
  // Inputs carrying the first actions, unanswered (protocol 9).
  fbb.Clear();
  {
    std::vector<flatbuffers::Offset<wire::Action>> carried;
    std::uint32_t sequence = 0;
    for (const sim::CommandBody& body : actions) {
      if (carried.size() == net::kMaxActionsPerInputs) break;
      auto a = net::encodeAction(fbb, 17, sequence + 1, body);
      if (a.IsNull()) continue;
      ++sequence;
      carried.push_back(a);
    }
    const auto list = fbb.CreateVectorOfStructs(recs);
    fbb.Finish(wire::CreateClientMessage(
        fbb, wire::ClientBody::Inputs, wire::CreateInputs(fbb, list, 3, 5, fbb.CreateVector(carried)).Union()));
    write("client_message", "inputs_with_actions", finish(fbb));
  }
  fbb.Clear();
  const std::vector<std::uint8_t> sig(64, 0x17);
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::AuthProof, wire::CreateAuthProofDirect(fbb, &sig).Union()));
  write("client_message", "auth_proof", finish(fbb));
  fbb.Clear();
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::JoinProgress, wire::CreateJoinProgress(fbb, 500, 4096).Union()));
  write("client_message", "join_progress", finish(fbb));
  fbb.Clear();
  const std::vector<wire::CellRef> dropped{wire::CellRef(3, -4), wire::CellRef(-1, 0)};
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::CellsDropped,
                                       wire::CreateCellsDropped(fbb, fbb.CreateVectorOfStructs(dropped)).Union()));
  write("client_message", "cells_dropped", finish(fbb));
  fbb.Clear();
  const std::vector<wire::ColumnHashRec> columns{wire::ColumnHashRec(0, 0, 0x1234), wire::ColumnHashRec(-7, 3, 42)};
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::ColumnHashes,
                                       wire::CreateColumnHashes(fbb, fbb.CreateVectorOfStructs(columns)).Union()));
  write("client_message", "column_hashes", finish(fbb));
}

// ---- server messages ------------------------------------------------------------------

// A step's follower edits and fire records by cell, as StepBatch.edits carries them
// (net/host/cell_sync.cpp, CellSync::routeEdits): per cell, ascending, its edits in
// step order, then its fire records; a cell that only the sweeps changed (the fire's
// edits, which followers make themselves) comes with its hash alone.
Bytes stepEdits(std::span<const sim::EditRecord> edits, std::span<const sim::FireChange> fire,
                std::span<const sim::CellCoord> swept, std::uint64_t tick, std::uint64_t cellHash) {
  const auto cellOfEdit = [](const sim::EditRecord& e) { return sim::cellOf(sim::editBrick(e)); };
  const auto cellOfFire = [](const sim::FireChange& f) { return sim::cellOf(sim::brickOf(f.corner)); };
  std::vector<sim::CellCoord> order(swept.begin(), swept.end());
  for (const sim::EditRecord& e : edits) order.push_back(cellOfEdit(e));
  for (const sim::FireChange& f : fire) order.push_back(cellOfFire(f));
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  std::vector<Bytes> groups(order.size());
  std::vector<net::CellEdits> cells;
  std::vector<sim::EditRecord> cellEdits;
  std::vector<sim::FireChange> cellFire;
  for (std::size_t k = 0; k < order.size(); ++k) {
    cellEdits.clear();
    cellFire.clear();
    for (const sim::EditRecord& e : edits)
      if (cellOfEdit(e) == order[k]) cellEdits.push_back(e);
    for (const sim::FireChange& f : fire)
      if (cellOfFire(f) == order[k]) cellFire.push_back(f);
    net::encodeEdits(cellEdits, cellFire, tick, groups[k]);
    cells.push_back(net::CellEdits{order[k], cellHash + k, groups[k]});
  }
  Bytes out;
  net::encodeStepEdits(cells, out);
  return out;
}

Bytes stepEdits(const sim::StepOutput& out, std::uint64_t cellHash) {
  std::vector<sim::EditRecord> follower;
  sim::followerEdits(out, follower);
  std::vector<sim::CellCoord> swept;
  for (const sim::SweepRun& run : out.sweeps) swept.push_back(sim::cellOf(sim::editBrick(out.edits[run.firstEdit])));
  return stepEdits(follower, out.fire, swept, out.tick, cellHash);
}

// The edit_codec target's input: the step's tick (u32, little-endian), then its edits.
Bytes withTick(std::uint64_t tick, const Bytes& edits) {
  Bytes out;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(tick >> (8 * i)));
  out.insert(out.end(), edits.begin(), edits.end());
  return out;
}

Bytes stepBatch(const sim::StepOutput& out, std::uint64_t cellHash) {
  flatbuffers::FlatBufferBuilder fbb;
  const Bytes edits = stepEdits(out, cellHash);
  std::vector<wire::EventRec> events;
  std::vector<flatbuffers::Offset<wire::ChatLine>> chat;
  for (const sim::Event& e : out.events) {
    if (const auto* c = std::get_if<sim::ChatEvent>(&e)) {
      chat.push_back(wire::CreateChatLine(fbb, c->from.value, fbb.CreateString(c->text.bytes.data(), c->text.length)));
    } else if (wire::EventRec rec; net::toWire(e, rec)) {
      events.push_back(rec);
    }
  }
  std::vector<flatbuffers::Offset<wire::PlayerName>> joined;
  std::vector<std::uint32_t> left;
  for (const sim::PlayerChange& c : out.players) {
    if (c.kind == sim::PlayerChange::Kind::Joined)
      joined.push_back(wire::CreatePlayerName(fbb, c.player.id.value, fbb.CreateString(std::string(c.player.name.view()))));
    if (c.kind == sim::PlayerChange::Kind::Left) left.push_back(c.player.id.value);
  }
  Bytes weather;
  if (out.weatherChanged) sim::encodeWeather(out.weather, weather);
  auto b = wire::CreateStepBatch(fbb, out.tick, fbb.CreateVectorOfStructs(events), fbb.CreateVector(chat),
                                 fbb.CreateVector(joined), fbb.CreateVector(left), fbb.CreateVector(weather),
                                 fbb.CreateVector(edits));
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::StepBatch, b.Union()));
  return finish(fbb);
}

Bytes cellState(const sim::SimState& state, sim::CellCoord cc) {
  std::vector<std::uint8_t> water;
  net::encodeCellWater(cc, sim::waterInCell(state.water, cc), water);
  std::vector<wire::FireRec> fire;
  for (const sim::FireChange& f : sim::fireInCell(state.fire, cc))
    if (wire::FireRec r; net::toWire(f, cc, r)) fire.push_back(r);
  sim::SaveData bricks;
  bricks.header.identity = {state.sceneHash, state.seed, sim::kGeneratorVersion};
  bricks.header.tick = state.tick;
  bricks.bounds = state.world.bounds();
  sim::captureCellBricks(state.world, cc, bricks.bricks);
  Bytes brickBytes;
  if (auto encoded = sim::encodeSave(bricks)) brickBytes = std::move(*encoded);
  flatbuffers::FlatBufferBuilder fbb;
  auto cs = wire::CreateCellState(fbb, state.tick, cc.x, cc.z, true, fbb.CreateVector(water),
                                  fbb.CreateVectorOfStructs(fire), fbb.CreateVector(brickBytes), 0x77);
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::CellState, cs.Union()));
  return finish(fbb);
}

Bytes snapshot(const sim::SimState& state, const std::vector<sim::Event>& sounds) {
  std::vector<std::uint8_t> own;
  net::appendOwnChanges(own, nullptr, net::toWire(state.players[0].motion));
  // Records new to the client: changes against zeros (net/entity_codec.h).
  std::vector<std::uint8_t> poses, animals;
  std::uint32_t previous = 0;
  for (std::size_t i = 1; i < state.players.size(); ++i) {
    const wire::PlayerPoseRec rec = net::poseToWire(state.players[i].id, state.players[i].motion);
    net::appendEntityRecord<wire::PlayerPoseRec>(poses, rec.id() - previous, nullptr, rec);
    previous = rec.id();
  }
  previous = 0;
  for (const sim::Animal& a : state.animals.animals) {
    const wire::AnimalRec rec = net::toWire(a);
    net::appendEntityRecord<wire::AnimalRec>(animals, rec.id() - previous, nullptr, rec);
    previous = rec.id();
  }
  std::vector<std::uint8_t> recs;
  wire::EventRec previousSound;
  for (const sim::Event& e : sounds) {
    if (wire::EventRec r; net::toWire(e, r)) {
      net::appendEventRecord(recs, recs.empty() ? nullptr : &previousSound, r);
      previousSound = r;
    }
  }
  const std::vector<std::uint32_t> gone{9};
  net::SnapshotMessage m;
  m.sequence = 5;
  m.baseline = 4;
  m.tick = state.tick;
  m.ownInput = state.players[0].motion.lastInput;
  m.own = own;
  m.players = poses;
  m.playersGone = gone;
  m.animals = animals;
  m.animalsGone = gone;
  m.sounds = recs;
  Bytes out;
  net::appendSnapshot(out, m);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_corpus <corpus folder>\n");
    return 2;
  }
  gRoot = argv[1];
  sim::SimState state = test::flatState();
  const sim::MaterialId planks = test::mat("planks");

  // 240 steps: two players join, walk, dig, build with planks, pour, set fire, chat.
  std::vector<sim::PlayerInput> inputs;
  std::vector<sim::CommandBody> actions;
  std::vector<sim::StepOutput> outputs;
  std::vector<sim::Event> sounds;
  std::uint32_t seq[3] = {0, 0, 0};
  for (int t = 0; t < 240; ++t) {
    std::vector<sim::Command> commands;
    if (t == 0) {
      commands.push_back({sim::PlayerId{1}, ++seq[1], sim::JoinCommand{sim::PlayerName::from("ann")}});
      commands.push_back({sim::PlayerId{2}, ++seq[2], sim::JoinCommand{sim::PlayerName::from("bob")}});
    }
    for (std::uint32_t id : {1u, 2u}) {
      sim::PlayerInput in;
      in.sequence = static_cast<std::uint32_t>(t + 1);
      in.moveForward = id == 1 ? 127 : -60;
      in.moveRight = static_cast<std::int8_t>((t % 40) - 20);
      in.yaw = static_cast<std::uint16_t>(t * 300);
      in.buttons = (t % 50 == 10) ? 1 : 0;
      if (id == 1) inputs.push_back(in);
      commands.push_back({sim::PlayerId{id}, ++seq[id], sim::InputCommand{in}});
    }
    std::vector<sim::CommandBody> now;
    if (t == 5) now.push_back(sim::DigCommand{{2, -1, 2}, sim::ToolSize::Cm40});
    if (t == 9) now.push_back(sim::PlaceCommand{{-4, -1, -4}, sim::Face::PosY, sim::ToolSize::Cm40, planks});
    if (t == 12) now.push_back(sim::PlaceCommand{{8, -1, 8}, sim::Face::PosY, sim::ToolSize::Cm5, planks});
    if (t == 15) now.push_back(sim::PourCommand{{2, 2, 2}, 4000});
    if (t == 20) now.push_back(sim::IgniteCommand{kFireAt});
    if (t == 25) now.push_back(sim::ChatCommand{sim::ChatText::from("hello from the corpus")});
    for (const sim::CommandBody& b : now) {
      actions.push_back(b);
      commands.push_back({sim::PlayerId{1}, ++seq[1], b});
    }
    outputs.push_back(sim::step(state, commands));
    for (const sim::Event& e : outputs.back().events)
      if (!std::holds_alternative<sim::ChatEvent>(e)) sounds.push_back(e);
  }
  clientMessages(inputs, actions);

  // Server messages from the steps with something in them.
  int batches = 0;
  for (const sim::StepOutput& out : outputs) {
    if (out.edits.empty() && out.players.empty() && out.events.empty()) continue;
    if (batches >= 8) break;
    write("server_message", "step_batch_" + std::to_string(batches++), stepBatch(out, 0x5eed));
  }
  // The steps that lit the fire and first swept it (followers burn it themselves: its
  // cell comes with its hash alone).
  for (const sim::StepOutput& out : outputs) {
    if (!out.fire.empty()) {
      write("server_message", "step_batch_fire", stepBatch(out, 0x5eed));
      break;
    }
  }
  // The cell of the fire: its burning cell's ignition data with its bricks and water.
  write("server_message", "cell_state", cellState(state, sim::cellOf(sim::brickOf(kFireAt))));
  if (sounds.size() > 8) sounds.resize(8);
  write("server_message", "snapshot", snapshot(state, sounds));

  // The join state: a save of the world and the state blobs, as the host captures it.
  sim::SaveHeader header;
  header.identity = {state.sceneHash, state.seed, sim::kGeneratorVersion};
  header.tick = state.tick;
  auto data = sim::captureSave(header, state.world, sim::stateBlobs(state));
  if (!data) return std::fprintf(stderr, "captureSave: %s\n", data.error().message.c_str()), 1;
  auto file = sim::encodeSave(*data, 3);
  if (!file) return std::fprintf(stderr, "encodeSave: %s\n", file.error().message.c_str()), 1;
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::JoinSnapshot,
                                         wire::CreateJoinSnapshotDirect(fbb, state.tick, &*file).Union()));
    write("server_message", "join_snapshot", finish(fbb));
    fbb.Clear();
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::JoinChunk,
                                         wire::CreateJoinChunkDirect(fbb, state.tick, 0, static_cast<std::uint32_t>(file->size()), &*file).Union()));
    write("server_message", "join_chunk", finish(fbb));
    // A Compressed envelope around a StepBatch whose chat compresses well.
    sim::StepOutput chatty;
    chatty.tick = 7;
    for (int i = 0; i < 40; ++i)
      chatty.events.push_back(sim::ChatEvent{sim::PlayerId{1}, sim::ChatText::from("the same line, again and again")});
    const Bytes inner = stepBatch(chatty, 1);
    flatbuffers::FlatBufferBuilder packed;
    std::vector<std::uint8_t> scratch;
    if (net::compressServerMessage(inner.data(), inner.size(), packed, scratch))
      write("server_message", "compressed_step_batch", finish(packed));
    fbb.Clear();
    const std::vector<std::uint8_t> nonce(32, 3);
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::AuthChallenge,
                                         wire::CreateAuthChallengeDirect(fbb, &nonce, "loam").Union()));
    write("server_message", "auth_challenge", finish(fbb));
    fbb.Clear();
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Welcome,
                                         wire::CreateWelcomeDirect(fbb, net::kProtocolVersion, 1, "loam", "flat", 1, 2,
                                                                   sim::kGeneratorVersion, 3, 4).Union()));
    write("server_message", "welcome", finish(fbb));
    fbb.Clear();
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Reject, wire::CreateRejectDirect(fbb, 3, "server full").Union()));
    write("server_message", "reject", finish(fbb));
    fbb.Clear();
    const std::vector<wire::ActionResultRec> results{{1, net::kActionApplied, 0, 3}, {2, net::kActionRejected, 8, 4},
                                                     {3, net::kActionApplied, 0, 6}};
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::ActionResults,
                                         wire::CreateActionResultsDirect(fbb, 9, &results).Union()));
    write("server_message", "action_results", finish(fbb));
    // A Stream datagram: the chatty StepBatch and the ActionResults as items, the mark
    // of full CellState 1, and the water of the cell where water was poured.
    const Bytes answers = finish(fbb);
    const sim::CellCoord poured = sim::cellOf(sim::brickOf(sim::VoxelCoord{2, 2, 2}));
    Bytes water;
    net::encodeCellWater(poured, sim::waterInCell(state.water, poured), water);
    if (water.empty()) return std::fprintf(stderr, "no water where it was poured\n"), 1;
    Bytes stream;
    using Kind = net::StreamItemKind;
    Bytes packedWater;
    const std::uint32_t rawSize = net::packWater(water, packedWater);
    net::appendStreamItem(stream, 0, {1, Kind::Message, 0, {}, 0, inner});
    net::appendStreamItem(stream, 1, {2, Kind::Message, 0, {}, 0, answers});
    net::appendStreamItem(stream, 2, {3, Kind::Mark, 1, {}, 0, {}});
    net::appendStreamItem(stream, 3, {4, Kind::Water, 0, poured, rawSize, packedWater});
    write("server_message", "stream", stream);
  }
  write("save_file", "save", withMode(0, *file));
  // The raw payload of the same save, for mode 1 (sealSavePayload).
  {
    auto decoded = sim::decodeSave(*file);
    if (!decoded) return std::fprintf(stderr, "decodeSave: %s\n", decoded.error().message.c_str()), 1;
    std::vector<std::uint8_t> raw(decoded->sizes.rawBytes);
    ZSTD_decompress(raw.data(), raw.size(), file->data() + sim::kSaveHeaderBytes, file->size() - sim::kSaveHeaderBytes);
    write("save_file", "payload", withMode(1, raw));
  }
  // The same save as a world database file, and one brick row's content.
  {
    auto decoded = sim::decodeSave(*file);
    if (!decoded) return std::fprintf(stderr, "decodeSave: %s\n", decoded.error().message.c_str()), 1;
    const std::string dbPath = (fs::temp_directory_path() / "loam_make_corpus.loamdb").string();
    for (const char* ext : {"", "-wal", "-shm"}) fs::remove(dbPath + ext);
    {
      auto db = sim::createWorldDbFromSave(dbPath, *decoded);
      if (!db) return std::fprintf(stderr, "world db: %s\n", db.error().message.c_str()), 1;
    }
    auto dbBytes = sim::readFileBytes(dbPath);
    fs::remove(dbPath);
    if (!dbBytes) return std::fprintf(stderr, "world db: %s\n", dbBytes.error().message.c_str()), 1;
    write("world_db", "db", withMode(0, *dbBytes));
    if (!decoded->bricks.empty()) {
      Bytes content;
      sim::encodeBrickContent(decoded->bricks.front(), content);
      write("world_db", "brick", withMode(1, content));
    }
  }
  const char* blobNames[] = {"players", "water", "fire", "animals", "weather"};
  for (const sim::SaveBlob& b : data->blobs) {
    for (std::uint8_t k = 0; k < 5; ++k)
      if (b.name == blobNames[k]) write("save_file", "blob_" + b.name, withMode(static_cast<std::uint8_t>(2 + k), b.bytes));
  }

  // Step edits as StepBatches carry them (each prefixed by its tick): the first steps
  // with edits, the one that lit the fire (a fire set record).
  int logs = 0;
  for (const sim::StepOutput& out : outputs) {
    if (out.edits.empty() || logs >= 4) continue;
    write("edit_codec", "edits_" + std::to_string(logs++), withTick(out.tick, stepEdits(out, 0x1234)));
  }
  for (const sim::StepOutput& out : outputs) {
    if (!out.fire.empty()) {
      write("edit_codec", "edits_ignition", withTick(out.tick, stepEdits(out, 0x1234)));
      break;
    }
  }
  {
    // Every kind of group and record in three cells, one of them hash only: a voxel
    // edit, a fill, fire set records (a new uniform one, an update of an older one
    // that is no longer uniform, the longest duration), and an out record.
    constexpr std::uint32_t kTick = 5000;
    sim::EditRecord dig;
    dig.x = -4;
    dig.y = -1;
    dig.z = 3;
    sim::EditRecord fill;
    fill.kind = sim::EditRecord::Kind::BrickFill;
    fill.x = -1;
    fill.after = 3;
    const std::vector<sim::EditRecord> log{dig, fill};
    const std::vector<sim::FireChange> fire{
        {{-8, 0, 0}, kTick, kTick + 300, 200, sim::kFireUniform, 7},
        {{-8, -8, 0}, kTick - 1234, kTick + 766, 90, 0, sim::kAir},
        {{256, 8, 16}, kTick - 100, kTick - 100 + 65535, 1, 0, sim::kAir},
        {{-8, 8, 0}, 0, 0, 0, 0, sim::kAir}};
    const std::vector<sim::CellCoord> swept{{0, -1}};
    write("edit_codec", "edits_fire", withTick(kTick, stepEdits(log, fire, swept, kTick, 0x5678)));
  }

  // The fire's first sweep that burnt something (the plank burns at a keyed point of
  // its brick's sweep, after the 240 steps, and its cell goes out): the fire's edit
  // stays home (followers make it), the out record travels.
  for (int t = 0; t < 3000; ++t) {
    const sim::StepOutput out = sim::step(state, {});
    if (out.sweeps.empty()) continue;
    write("server_message", "step_batch_swept", stepBatch(out, 0x5eed));
    write("edit_codec", "edits_swept", withTick(out.tick, stepEdits(out, 0x1234)));
    break;
  }

  // The repository's files.
  const fs::path src = LOAM_SOURCE_DIR;
  for (const char* scene : {"flat", "court", "glade", "forest-fires", "riverlands"})
    write("scene", scene, readText(src / "scenes" / (std::string(scene) + ".toml")));
  write("server_config", "example", readText(src / "server" / "loam-server.example.toml"));
  for (const auto& entry : fs::directory_iterator(src / "scenes" / "scripts"))
    write("bot_script", entry.path().filename().string(), readText(entry.path()));
  const char* lines[] = {"help", "players", "kick #1 spamming", "kick ann", "ban ann griefing", "ban 10.0.0.7 spam",
                         "unban ann", "say hello everyone", "time 1200", "weather rain 500", "save", "stats",
                         "kick \"bob smith\" why"};
  int n = 0;
  for (const char* line : lines) write("admin_command", "line_" + std::to_string(n++), std::string(line));
  std::printf("corpus written to %s\n", gRoot.c_str());
  return 0;
}
