// ClientConnection's one Impl: the ENet host, the phase machine and one handler per
// server message, all over the same state (phase, mirror, predictor, held steps).
// Over 1,000 lines and not split yet: every handler reads and writes that state, so a
// split by job (connecting and joining: Hello, AuthChallenge, Welcome, cell hashes,
// JoinChunk; playing: StepBatch, CellState, Snapshot, Rejections; streaming a big
// world: streamState, updateStream, holdAround, addArrivedWater, prepareCell, whose
// state could be a class of its own) needs Impl in an internal header
// (net/internal/client_impl.h) that the files include. That is the next change here,
// planned and not made at the end of the session that added streaming.
#include "net/client_connection.h"

#include <enet/enet.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <thread>
#include <unordered_set>

#include "net/edit_codec.h"
#include "net/enet_support.h"
#include "net/player_name.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/core/assert.h"
#include "sim/gen/generator.h"
#include "sim/gen/generator_version.h"
#include "sim/step/mirror.h"
#include "sim/save/save.h"
#include "sim/save/state_codec.h"
#include "sim/systems/water.h"
#include "sim/world/world_hash.h"
#include "sim/step/world_hash_tracker.h"

namespace loam::net {

namespace {

constexpr std::size_t kMaxDesyncsKept = 16;
constexpr std::size_t kMaxTeleportsKept = 64;
// StepBatches and CellStates that arrive while the join stream is in flight are held
// and applied after the join state, in arrival order; a server that sends more than
// this meanwhile is not one we can follow.
constexpr std::size_t kMaxHeldJoinBytes = std::size_t{64} << 20;
// Legal phase changes are at most 5 (phases only move forward); illegal ones beyond
// this are counted but not recorded.
constexpr std::size_t kMaxPhaseLog = 16;
// Events pile up when the owner never calls takeEvents (a bot that ignores them);
// beyond this they are dropped rather than growing without bound.
constexpr std::size_t kMaxQueuedEvents = 1u << 16;
// Resend pending inputs after this long without a new one (2 ticks).
constexpr double kIdleResendMs = 2000.0 / sim::kTicksPerSecond;

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string hex64(std::uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

// Scene names come from the server: only plain file names, so a hostile server
// cannot make us read outside the scene folder.
bool validSceneName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

sim::PlayerState poseState(const wire::PlayerPoseRec& r, sim::PlayerState base) {
  base.position = {r.px(), r.py(), r.pz()};
  base.velocity = {};  // not sent for others (net/schema/loam.fbs PlayerPoseRec)
  base.yaw = r.yaw();
  base.pitch = r.pitch();
  sim::unpackMotionFlags(base, r.flags());
  return base;
}


// One received snapshot rebuilt in full (baseline + delta): what the next delta may
// be relative to.
struct SnapEntry {
  std::uint32_t sequence = 0;  // 0 = empty slot
  std::uint64_t tick = 0;
  std::vector<wire::PlayerPoseRec> players;  // sorted by id
  std::vector<wire::AnimalRec> animals;      // sorted by id
};

template <class Rec>
void applyDelta(std::vector<Rec>& list, const flatbuffers::Vector<const Rec*>* changed,
                const flatbuffers::Vector<std::uint32_t>* gone) {
  auto byId = [](const Rec& r, std::uint32_t id) { return r.id() < id; };
  if (gone) {
    for (std::uint32_t id : *gone) {
      auto it = std::lower_bound(list.begin(), list.end(), id, byId);
      if (it != list.end() && it->id() == id) list.erase(it);
    }
  }
  if (changed) {
    for (const Rec* r : *changed) {
      auto it = std::lower_bound(list.begin(), list.end(), r->id(), byId);
      if (it != list.end() && it->id() == r->id())
        *it = *r;
      else
        list.insert(it, *r);
    }
  }
}

}  // namespace

const char* phaseName(ClientPhase phase) noexcept {
  switch (phase) {
    case ClientPhase::Connecting: return "connecting";
    case ClientPhase::AwaitingWelcome: return "awaiting welcome";
    case ClientPhase::Generating: return "generating";
    case ClientPhase::AwaitingSnapshot: return "awaiting snapshot";
    case ClientPhase::Playing: return "playing";
    case ClientPhase::Failed: return "failed";
    case ClientPhase::Disconnected: return "disconnected";
  }
  return "?";
}

bool legalTransition(ClientPhase from, ClientPhase to) noexcept {
  const bool live = from != ClientPhase::Failed && from != ClientPhase::Disconnected;
  switch (to) {
    case ClientPhase::Connecting: return false;  // the first phase only
    case ClientPhase::AwaitingWelcome: return from == ClientPhase::Connecting;
    case ClientPhase::Generating: return from == ClientPhase::AwaitingWelcome;
    case ClientPhase::AwaitingSnapshot: return from == ClientPhase::Generating;
    case ClientPhase::Playing: return from == ClientPhase::AwaitingSnapshot;
    case ClientPhase::Failed:
    case ClientPhase::Disconnected: return live;
  }
  return false;
}

struct ClientConnection::Impl {
  EnetGuard enet;  // first member: released after the host is destroyed
  ClientConfig config;
  std::unique_ptr<LinkSimulator> link;
  ENetHost* host = nullptr;
  ENetPeer* peer = nullptr;
  ClientPhase phase = ClientPhase::Connecting;
  std::string error;
  Clock::time_point started = Clock::now();

  // The streamed mirror's generator (null for a mirror from worldFactory): declared
  // before the states it feeds, so that it outlives them. Made on the worker thread
  // with the state, used on the owner's.
  std::unique_ptr<sim::ColumnStreamer> streamer;
  std::vector<sim::ChunkColumn> checkedColumns;  // the columns the join check hashes (the spawn columns)
  std::vector<sim::StreamCentre> centres;        // streamed: the predicted player's column
  std::unordered_set<std::uint64_t> watered;     // streamed: columns whose generated water the mirror holds
  bool readable = false;                         // worldReadable()

  // Welcome.
  sim::PlayerId playerId;
  std::string sceneName;
  std::uint64_t sceneHash = 0, seed = 0, generatedHash = 0;

  // Generation (worker thread). The worker writes `generated`, `tracker`,
  // `genError`, `worldHashValue` and `genMs`, then sets `genDone` (release); the
  // owner reads them only after seeing genDone (acquire).
  std::thread worker;
  std::atomic<double> progress{0.0};
  std::atomic<bool> genDone{false};
  std::optional<sim::SimState> generated;
  std::string genError;
  std::uint64_t worldHashValue = 0;
  double genMs = 0;
  bool awaitingCellHashes = false;

  std::optional<sim::SimState> mirror;  // from the end of generation on
  sim::WorldHashTracker tracker;
  Predictor predictor;
  InterpolationBuffer others, animals;
  std::map<std::uint32_t, std::uint8_t> animalSpecies;  // animals in view, from their records
  std::map<std::uint32_t, std::string> names;
  std::vector<sim::Event> events;
  std::uint64_t eventsDropped = 0;
  std::uint64_t lastTick = 0;
  std::uint32_t lastInputSent = 0;
  double nowMs = 0;         // the owner's clock at the last service()
  double lastInputsMs = 0;  // when Inputs were last sent

  std::array<SnapEntry, kSnapshotRing> ring;
  std::uint32_t newestSnapshot = 0;
  SnapEntry scratchSnap;

  ClientStats stats;
  flatbuffers::FlatBufferBuilder fbb{1024};
  std::vector<sim::EditRecord> edits;          // one StepBatch's, decoded
  std::vector<sim::PlayerChange> playerChanges;  // one StepBatch's joins and leaves
  sim::WeatherState weather;                     // one StepBatch's weather record
  std::vector<sim::WaterChange> water;
  std::vector<sim::FireCell> fire;
  std::vector<wire::InputRec> inputRecs;

  // Join progress and the join stream (docs/PROTOCOL.md, Joining).
  Clock::time_point lastProgressSent{};      // JoinProgress while generating
  bool joinStarted = false;                  // the first JoinChunk arrived
  std::uint64_t joinTick = 0;                // JoinChunk.tick of the stream
  std::uint32_t joinTotal = 0;               // JoinChunk.total
  std::vector<std::uint8_t> joinBytes;       // the stream so far (grows as it arrives)
  std::uint32_t joinAcked = 0;               // received_bytes last sent
  std::vector<std::vector<std::uint8_t>> held;  // reliable messages held while joining, raw
  std::size_t heldBytes = 0;

  ~Impl() {
    if (worker.joinable()) worker.join();
    if (host) enet_host_destroy(host);
  }

  // Every phase change: checks that it is legal (an illegal one is a bug here: logged
  // and counted, and fatal where asserts are on), records it and times the join.
  void transition(ClientPhase to) {
    const bool legal = legalTransition(phase, to);
    if (!legal) {
      ++stats.illegalTransitions;
      std::fprintf(stderr, "loam client '%s': illegal transition %s -> %s\n", config.name.c_str(), phaseName(phase),
                   phaseName(to));
    }
    LOAM_ASSERT(legal);
    const double atMs = msSince(started);
    if (stats.phaseLog.size() < kMaxPhaseLog) stats.phaseLog.push_back(PhaseChange{atMs, phase, to});
    phase = to;
    if (to == ClientPhase::Playing) stats.joinMs = atMs;
  }

  void fail(std::string why) {
    if (!active()) return;  // the first reason stands
    error = std::move(why);
    transition(ClientPhase::Failed);
    if (peer) enet_peer_disconnect(peer, 0);
  }

  bool active() const { return phase != ClientPhase::Failed && phase != ClientPhase::Disconnected; }

  void send(wire::ClientBody type, flatbuffers::Offset<void> body, bool reliable) {
    fbb.Finish(wire::CreateClientMessage(fbb, type, body));
    const std::size_t size = fbb.GetSize();
    if (peer) {
      ENetPacket* packet = enet_packet_create(fbb.GetBufferPointer(), size,
                                              reliable ? ENET_PACKET_FLAG_RELIABLE : 0);
      if (packet && enet_peer_send(peer, reliable ? kChannelReliable : kChannelUnreliable, packet) != 0)
        enet_packet_destroy(packet);
    }
    TrafficCounters& c = stats.sent[messageName(type)];
    ++c.messages;
    c.bytes += size;
    fbb.Clear();
  }

  // Inputs with every unacknowledged input (the newest kMaxInputsPerMessage).
  void sendInputs() {
    const auto pending = predictor.pending();
    const std::size_t n = std::min(pending.size(), kMaxInputsPerMessage);
    inputRecs.clear();
    for (std::size_t i = pending.size() - n; i < pending.size(); ++i) inputRecs.push_back(toWire(pending[i]));
    fbb.Clear();
    auto vec = fbb.CreateVectorOfStructs(inputRecs.data(), inputRecs.size());
    auto body = wire::CreateInputs(fbb, vec, newestSnapshot);
    send(wire::ClientBody::Inputs, body.Union(), false);
    lastInputsMs = nowMs;
  }

  // The newest input travels in one packet only when no input follows it (the owner
  // paused input): resend the pending ones every few ticks until acknowledged, so a
  // lost last packet cannot leave them unapplied.
  void resendIdleInputs() {
    if (phase != ClientPhase::Playing || !peer || predictor.pending().empty()) return;
    if (nowMs - lastInputsMs >= kIdleResendMs) sendInputs();
  }

  // The server asks for proof of the key Hello carried: sign its nonce and name with
  // ours (docs/PROTOCOL.md, Accounts). Once, before Welcome.
  bool challengeAnswered = false;
  void onAuthChallenge(const wire::AuthChallenge& c) {
    if (phase != ClientPhase::AwaitingWelcome || challengeAnswered) return fail("unexpected AuthChallenge");
    if (!config.accountKey) return fail("the server asks for an account key proof, but we sent no key");
    if (c.nonce() == nullptr || c.nonce()->size() != kAuthNonceBytes) return fail("AuthChallenge without a 32-byte nonce");
    challengeAnswered = true;
    AuthNonce nonce{};
    std::copy(c.nonce()->begin(), c.nonce()->end(), nonce.begin());
    const std::string_view serverName = c.server_name() ? c.server_name()->string_view() : std::string_view();
    const Signature sig = signChallenge(*config.accountKey, nonce, serverName, config.name);
    fbb.Clear();
    auto proof = wire::CreateAuthProof(fbb, fbb.CreateVector(sig.data(), sig.size()));
    send(wire::ClientBody::AuthProof, proof.Union(), true);
  }

  void sendHello() {
    fbb.Clear();
    auto name = fbb.CreateString(config.name);
    flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> key;
    if (config.accountKey) key = fbb.CreateVector(config.accountKey->publicKey.data(), kPublicKeyBytes);
    auto hello = wire::CreateHello(fbb, kProtocolVersion, name, static_cast<std::uint8_t>(config.kind), true, key);
    send(wire::ClientBody::Hello, hello.Union(), true);
  }

  // ---- generation -------------------------------------------------------------------

  // JoinProgress: while generating, about once a second (the permille stays below
  // 1000 until the world is built and hashed); while streaming, whenever more of
  // the join state arrived (the server's flow control).
  void sendJoinProgress() {
    if (!peer) return;
    std::uint16_t permille = 0;
    std::uint32_t received = 0;
    if (phase == ClientPhase::Generating) {
      if (msSince(lastProgressSent) < kJoinProgressEveryMs) return;
      permille = static_cast<std::uint16_t>(std::min(progress.load() * 1000.0, 999.0));
    } else if (phase == ClientPhase::AwaitingSnapshot) {
      received = static_cast<std::uint32_t>(joinBytes.size());
      if (received == joinAcked) return;
      permille = 1000;
      joinAcked = received;
    } else {
      return;
    }
    lastProgressSent = Clock::now();
    fbb.Clear();
    send(wire::ClientBody::JoinProgress, wire::CreateJoinProgress(fbb, permille, received).Union(), true);
  }

  // The generated world's hashes as the server computed them for Welcome: the columns
  // hash of the spawn columns.
  sim::WorldHashes generatedHashes(const sim::BrickStore& world) const {
    return sim::hashColumns(world, checkedColumns);
  }

  // The streamed mirror: only the spawn columns now, the rest as the player nears it
  // (updateStream). Runs on the worker thread.
  sim::Result<sim::SimState> streamState(const sim::Scene& scene, std::uint64_t seedValue) {
    sim::StreamOptions options;
    options.threads = std::max(config.streamThreads, 1);
    options.prefetchRadiusVoxels = static_cast<std::int32_t>(config.streamRadiusMetres * sim::kVoxelsPerMetre);
    options.maxResidentColumns = config.residentColumns;
    auto made = sim::ColumnStreamer::create(scene, seedValue, options);
    if (!made) return made.error();
    streamer = std::move(made).value();
    return sim::createMirrorState(scene, seedValue, *streamer);
  }

  // Every service() while Playing on a streamed world: generate ahead around the
  // predicted player, adopt what the workers finished, release beyond the budget, make
  // sure the ground around the player is present and see whether the readable disc is.
  void updateStream() {
    if (!streamer || phase != ClientPhase::Playing) return;
    const sim::PlayerState& own = predictor.state();
    const std::int32_t vx = own.position.x >> sim::kUnitShift, vz = own.position.z >> sim::kUnitShift;
    centres.assign(1, sim::StreamCentre{vx, vz});
    // After a teleport the ground comes first, before update() re-plans the workers
    // around the new place (they would generate the same columns again), and is no
    // hole streaming left: teleportPlayableMs times it.
    if (teleportedAt) (void)holdAround(vx, vz);
    streamer->update(mirror->world, centres);
    stats.holesMet += holdAround(vx, vz);
    addArrivedWater();
    readable = allPresent(vx, vz, kReadableRadiusMetres);
    noteTeleportPlayable();
    stats.stream = streamer->stats();
  }

  // A teleport's time to playable: the ground around the new place is present now (or,
  // on a mirror from worldFactory, at once).
  std::optional<Clock::time_point> teleportedAt;
  void noteTeleportPlayable() {
    if (!teleportedAt) return;
    if (stats.teleportPlayableMs.size() < kMaxTeleportsKept) stats.teleportPlayableMs.push_back(msSince(*teleportedAt));
    teleportedAt.reset();
  }

  static std::uint64_t columnKey(sim::ChunkColumn c) {
    return (std::uint64_t{static_cast<std::uint32_t>(c.x)} << 32) | static_cast<std::uint32_t>(c.z);
  }

  // The generated water of every column that arrived since the last call (a column
  // released and generated again is not scanned twice: its water stayed in the grid).
  void addArrivedWater() {
    for (sim::ChunkColumn c : mirror->world.presentColumns()) {
      if (watered.insert(columnKey(c)).second) sim::addColumnWater(mirror->water, mirror->world, mirror->lut, c);
    }
  }

  // Before a CellState changes a cell's water: the cell's columns present and their
  // generated water added, so a column arriving later cannot bring back water the cell
  // no longer holds, nor skip the generated water of a brick the CellState touched.
  void prepareCell(sim::CellCoord cell) {
    if (!streamer) return;
    constexpr std::int32_t kColumnsPerCell = (1 << sim::kCellShift) / sim::kChunkBricks;
    std::vector<sim::ChunkColumn> columns;
    for (std::int32_t dz = 0; dz < kColumnsPerCell; ++dz)
      for (std::int32_t dx = 0; dx < kColumnsPerCell; ++dx) {
        const sim::ChunkColumn c{cell.x * kColumnsPerCell + dx, cell.z * kColumnsPerCell + dz};
        if (streamer->generator().contains(c)) columns.push_back(c);
      }
    streamer->faultAll(columns, mirror->world);
    addArrivedWater();
  }

  // Generates on this thread the columns within kGroundRadiusMetres of (vx, vz) that
  // are not present yet (all of them at once, on the streamer's threads). Returns how
  // many.
  std::size_t holdAround(std::int32_t vx, std::int32_t vz) {
    const auto radius = static_cast<std::int32_t>(kGroundRadiusMetres * sim::kVoxelsPerMetre);
    std::vector<sim::ChunkColumn> missing;
    for (sim::ChunkColumn c : sim::columnsAround(mirror->world.bounds(), vx, vz, radius))
      if (!mirror->world.columnPresent(c)) missing.push_back(c);
    if (!missing.empty()) streamer->faultAll(missing, mirror->world);
    return missing.size();
  }

  // True when every column within radiusMetres of (vx, vz) is present.
  bool allPresent(std::int32_t vx, std::int32_t vz, double radiusMetres) const {
    const auto radius = static_cast<std::int32_t>(radiusMetres * sim::kVoxelsPerMetre);
    for (sim::ChunkColumn c : sim::columnsAround(mirror->world.bounds(), vx, vz, radius))
      if (!mirror->world.columnPresent(c)) return false;
    return true;
  }

  void startGeneration() {
    transition(ClientPhase::Generating);
    progress.store(0.0);
    lastProgressSent = Clock::now();
    const std::string path = config.sceneDir + "/" + sceneName + ".toml";
    WorldFactory factory = config.worldFactory;
    const std::uint64_t wantScene = sceneHash, wantSeed = seed;
    worker = std::thread([this, path, factory, wantScene, wantSeed] {
      const Clock::time_point t0 = Clock::now();
      auto scene = sim::loadScene(path);
      if (!scene) {
        genError = "cannot load the server's scene: " + scene.error().message;
      } else if (sim::sceneJoinHash(*scene) != wantScene) {
        genError = path + ": scene hash " + hex64(sim::sceneJoinHash(*scene)) + " differs from the server's " +
                   hex64(wantScene) + " (the scene file or its materials differ)";
      } else {
        auto report = [this](double p) { progress.store(std::clamp(p, 0.0, 1.0)); };
        checkedColumns = sim::spawnColumns(*scene);
        auto state = factory ? factory(*scene, wantSeed, report) : streamState(*scene, wantSeed);
        if (!state) {
          genError = "generating " + path + ": " + state.error().message;
        } else {
          tracker.reset(state->world);
          worldHashValue = generatedHashes(state->world).world;
          generated.emplace(std::move(*state));
        }
      }
      genMs = msSince(t0);
      progress.store(1.0);
      genDone.store(true, std::memory_order_release);
    });
  }

  void pollGeneration() {
    if (phase != ClientPhase::Generating || awaitingCellHashes || !genDone.load(std::memory_order_acquire)) return;
    worker.join();
    stats.generateMs = genMs;
    if (!generated) return fail(genError);
    mirror.emplace(std::move(*generated));
    generated.reset();
    if (worldHashValue != generatedHash) {
      // Name the differing cells before giving up: far more useful than two hashes.
      awaitingCellHashes = true;
      fbb.Clear();
      send(wire::ClientBody::CellHashRequest, wire::CreateCellHashRequest(fbb).Union(), true);
      return;
    }
    fbb.Clear();
    send(wire::ClientBody::WorldReady, wire::CreateWorldReady(fbb, worldHashValue).Union(), true);
    transition(ClientPhase::AwaitingSnapshot);
  }

  // ---- inbound ----------------------------------------------------------------------

  void onWelcome(const wire::Welcome& w) {
    if (phase != ClientPhase::AwaitingWelcome) return fail("unexpected Welcome in phase " + std::string(phaseName(phase)));
    if (w.protocol() != kProtocolVersion)
      return fail("server speaks protocol " + std::to_string(w.protocol()) + ", this client " +
                  std::to_string(kProtocolVersion));
    if (w.generator_version() != sim::kGeneratorVersion)
      return fail("server world uses generator " + std::to_string(w.generator_version()) + ", this client has " +
                  std::to_string(sim::kGeneratorVersion));
    if (w.player_id() == 0) return fail("Welcome with player id 0");
    const std::string scene = w.scene_name() ? w.scene_name()->str() : std::string();
    if (!validSceneName(scene)) return fail("Welcome names an invalid scene '" + scene + "'");
    playerId = sim::PlayerId{w.player_id()};
    sceneName = scene;
    sceneHash = w.scene_hash();
    seed = w.seed();
    generatedHash = w.generated_hash();
    startGeneration();
  }

  void onCellHashes(const wire::GeneratedCellHashes& g) {
    if (!awaitingCellHashes) return fail("unexpected GeneratedCellHashes");
    std::vector<sim::CellHash> theirs;
    if (g.cells()) {
      theirs.reserve(g.cells()->size());
      for (const wire::CellHashRec* r : *g.cells()) theirs.push_back({sim::CellCoord{r->x(), r->z()}, r->hash()});
    }
    std::sort(theirs.begin(), theirs.end(), [](const sim::CellHash& a, const sim::CellHash& b) { return a.cell < b.cell; });
    const std::vector<sim::CellCoord> diff = sim::differingCells(generatedHashes(mirror->world).cells, theirs);
    std::string msg = "world differs from the server's in " + std::to_string(diff.size()) + " cells:";
    for (std::size_t i = 0; i < diff.size() && i < 12; ++i)
      msg += " (" + std::to_string(diff[i].x) + "," + std::to_string(diff[i].z) + ")";
    if (diff.size() > 12) msg += " ...";
    msg += " (world hash " + hex64(worldHashValue) + ", server " + hex64(generatedHash) + ")";
    awaitingCellHashes = false;
    fail(msg);
  }

  // One piece of the join state. Every field is checked before it is used: the
  // total against kMaxJoinStateBytes before anything grows, each piece against what
  // has arrived (the channel is ordered, so it must continue exactly there).
  void onJoinChunk(const wire::JoinChunk& c) {
    if (phase != ClientPhase::AwaitingSnapshot) return fail("unexpected JoinChunk in phase " + std::string(phaseName(phase)));
    const std::size_t size = c.bytes() ? c.bytes()->size() : 0;
    if (!joinStarted) {
      if (c.total() == 0 || c.total() > kMaxJoinStateBytes)
        return fail("join state of " + std::to_string(c.total()) + " bytes (limit " +
                    std::to_string(kMaxJoinStateBytes) + ")");
      joinStarted = true;
      joinTick = c.tick();
      joinTotal = c.total();
    }
    if (c.tick() != joinTick || c.total() != joinTotal)
      return fail("JoinChunk for tick " + std::to_string(c.tick()) + " of " + std::to_string(c.total()) +
                  " bytes in the stream of tick " + std::to_string(joinTick) + " of " + std::to_string(joinTotal));
    if (c.offset() != joinBytes.size() || size == 0 || size > joinTotal - joinBytes.size())
      return fail("JoinChunk at " + std::to_string(c.offset()) + " of " + std::to_string(size) + " bytes, " +
                  std::to_string(joinBytes.size()) + " of " + std::to_string(joinTotal) + " received");
    joinBytes.insert(joinBytes.end(), c.bytes()->begin(), c.bytes()->end());
    if (joinBytes.size() == joinTotal) finishJoin();
  }

  // The whole join state arrived: apply it to the generated world, then what the
  // server sent meanwhile (StepBatches from joinTick + 1 on, CellStates), in order.
  void finishJoin() {
    sendJoinProgress();  // the last acknowledgement ends the stream on the server
    const Clock::time_point t0 = Clock::now();
    auto save = sim::decodeSave(joinBytes);
    if (!save) return fail("join state: " + save.error().message);
    if (auto r = sim::restoreState(*save, *mirror); !r) return fail("join state: " + r.error().message);
    if (mirror->tick != joinTick)
      return fail("join state tick " + std::to_string(joinTick) + " but its save says " + std::to_string(mirror->tick));
    const sim::Player* own = mirror->findPlayer(playerId);
    if (!own) return fail("join state does not contain player " + std::to_string(playerId.value));
    for (const sim::Player& p : mirror->players) names[p.id.value] = std::string(p.name.view());
    predictor.reset(own->motion);
    lastInputSent = own->motion.lastInput;
    stats.restoreMs = msSince(t0);
    if (streamer) {
      // Playable once the ground around the player exists, at once; the rest streams.
      stats.streamed = true;
      const Clock::time_point t1 = Clock::now();
      (void)holdAround(own->motion.position.x >> sim::kUnitShift, own->motion.position.z >> sim::kUnitShift);
      addArrivedWater();
      stats.holdMs = msSince(t1);
    }
    tracker.reset(mirror->world);
    lastTick = joinTick;
    std::vector<std::uint8_t>().swap(joinBytes);
    transition(ClientPhase::Playing);
    std::vector<std::vector<std::uint8_t>> replay;
    replay.swap(held);
    heldBytes = 0;
    std::vector<std::uint8_t> scratch;  // not `unpacked`: the JoinChunk being handled may live there
    for (const std::vector<std::uint8_t>& bytes : replay) {
      if (!active()) return;
      const wire::ServerMessage* msg = openServerMessage(bytes, kMaxServerMessageBytes, scratch);
      if (!msg) return fail("held message no longer verifies");
      handle(*msg, nowMs);
    }
  }

  // While the join stream is in flight the reliable stream goes on (StepBatches from
  // the join tick on, CellStates): keep them, raw, to apply after the join state.
  bool holdDuringJoin(const wire::ServerMessage& msg, std::span<const std::uint8_t> bytes) {
    if (phase != ClientPhase::AwaitingSnapshot) return false;
    const wire::ServerBody type = msg.body_type();
    if (type != wire::ServerBody::StepBatch && type != wire::ServerBody::CellState) return false;
    if (heldBytes + bytes.size() > kMaxHeldJoinBytes) {
      fail("over " + std::to_string(kMaxHeldJoinBytes) + " bytes of steps arrived before the join state");
      return true;
    }
    held.emplace_back(bytes.begin(), bytes.end());
    heldBytes += bytes.size();
    return true;
  }

  void onStepBatch(const wire::StepBatch& b) {
    if (phase != ClientPhase::Playing) return;
    if (b.tick() != lastTick + 1)
      return fail("StepBatch tick " + std::to_string(b.tick()) + " after " + std::to_string(lastTick) +
                  " (steps must arrive in order)");
    // Decode the batch into the mirror's step records, then follow it with
    // sim::applyStep: the code the mirror test proves against the server's state.
    sim::StepRecords step;
    step.tick = b.tick();
    edits.clear();
    if (b.edits() && b.edits()->size() > 0) {
      auto r = decodeEdits(std::span<const std::uint8_t>(b.edits()->data(), b.edits()->size()), edits);
      if (!r) return fail("StepBatch " + std::to_string(b.tick()) + ": edits: " + r.error().message);
    }
    step.edits = edits;
    if (b.weather() && b.weather()->size() > 0) {
      weather = mirror->weather;  // decodeWeather sets the replicated fields only
      auto r = sim::decodeWeather(std::span<const std::uint8_t>(b.weather()->data(), b.weather()->size()), weather);
      if (!r) return fail("StepBatch " + std::to_string(b.tick()) + ": weather: " + r.error().message);
      step.weather = &weather;
    }
    // Membership: joins carry names; the pose arrives with the next Snapshot.
    playerChanges.clear();
    if (b.joined()) {
      for (const wire::PlayerName* pn : *b.joined()) {
        const std::string name = pn->name() ? pn->name()->str() : std::string();
        names[pn->id()] = name;
        sim::PlayerChange& ch = playerChanges.emplace_back();
        ch.kind = sim::PlayerChange::Kind::Joined;
        ch.player.id = sim::PlayerId{pn->id()};
        ch.player.name = sim::PlayerName::from(name);
      }
    }
    if (b.left()) {
      for (std::uint32_t id : *b.left()) {
        if (id == playerId.value) continue;  // never drop our own record on a server's word mid-session
        sim::PlayerChange& ch = playerChanges.emplace_back();
        ch.kind = sim::PlayerChange::Kind::Left;
        ch.player.id = sim::PlayerId{id};
        others.remove(id);
      }
    }
    step.players = playerChanges;
    sim::applyStep(*mirror, step);
    if (b.events()) {
      for (const wire::EventRec* rec : *b.events()) {
        sim::Event e;
        if (!fromWire(*rec, e)) return fail("StepBatch " + std::to_string(b.tick()) + ": bad event record");
        if (auto* j = std::get_if<sim::PlayerJoinedEvent>(&e)) {
          auto it = names.find(j->player.value);
          if (it != names.end()) j->name = sim::PlayerName::from(it->second);
        }
        pushEvent(e);
      }
    }
    if (b.chat()) {
      for (const wire::ChatLine* line : *b.chat()) {
        sim::ChatEvent c;
        c.from = sim::PlayerId{line->player()};
        c.text = sim::ChatText::from(line->text() ? line->text()->string_view() : std::string_view());
        pushEvent(c);
      }
    }
    lastTick = b.tick();
    ++stats.stepsApplied;
    checkHashes(b);
  }

  void pushEvent(const sim::Event& e) {
    if (events.size() >= kMaxQueuedEvents) {
      ++eventsDropped;
      return;
    }
    events.push_back(e);
  }

  void checkHashes(const wire::StepBatch& b) {
    tracker.update(mirror->world, edits);
    ++stats.hashChecks;
    std::optional<sim::CellCoord> badCell;
    std::uint64_t ours = 0, theirs = 0;
    if (b.cells()) {
      const auto touched = tracker.touchedCells();
      for (const wire::CellHashRec* r : *b.cells()) {
        const sim::CellCoord cell{r->x(), r->z()};
        auto it = std::lower_bound(touched.begin(), touched.end(), cell,
                                   [](const sim::CellHash& h, sim::CellCoord c) { return h.cell < c; });
        const std::uint64_t h = (it != touched.end() && it->cell == cell) ? it->hash : tracker.cellHash(mirror->world, cell);
        if (h != r->hash()) {
          badCell = cell;
          ours = h;
          theirs = r->hash();
          break;
        }
      }
    }
    const bool worldBad = tracker.worldHash() != b.world_hash();
    if (!worldBad && !badCell) return;
    ++stats.desyncCount;
    if (stats.desyncs.size() >= kMaxDesyncsKept) return;
    Desync d;
    d.tick = b.tick();
    d.cell = badCell;
    if (worldBad) d.what = "world hash " + hex64(tracker.worldHash()) + " != server " + hex64(b.world_hash());
    if (badCell) {
      if (!d.what.empty()) d.what += "; ";
      d.what += "cell (" + std::to_string(badCell->x) + "," + std::to_string(badCell->z) + ") hash " + hex64(ours) +
                " != server " + hex64(theirs);
    }
    stats.desyncs.push_back(std::move(d));
  }

  void onCellState(const wire::CellState& c) {
    if (phase != ClientPhase::Playing) return;
    const sim::CellCoord cell{c.cell_x(), c.cell_z()};
    const sim::WorldBounds& bounds = mirror->world.bounds();
    auto inside = [&](sim::VoxelCoord v) { return bounds.containsBrick(sim::brickOf(v)); };
    water.clear();
    fire.clear();
    // Records are relative to the named cell, so they cannot land in another one.
    if (c.water()) {
      for (const wire::WaterRec* r : *c.water()) {
        const sim::WaterChange w = fromWire(*r, cell);
        if (inside(w.voxel) && w.amount <= sim::kWaterPerVoxel) water.push_back(w);
      }
    }
    if (c.fire()) {
      for (const wire::FireRec* r : *c.fire()) {
        const sim::FireCell f = fromWire(*r, cell);
        if (inside(f.corner)) fire.push_back(f);
      }
    }
    prepareCell(cell);
    sim::applyCellState(*mirror, cell, c.full(), water, fire);
  }

  void onSnapshot(const wire::Snapshot& s, double nowMs) {
    if (s.sequence() == 0 || s.sequence() <= newestSnapshot) return;  // sequenced channel; be safe anyway
    if (!s.own()) return fail("Snapshot without own state");
    if (s.sounds()) {
      for (const wire::EventRec* r : *s.sounds()) {
        sim::Event e;
        if (fromWire(*r, e)) pushEvent(e);
      }
    }
    // Rebuild baseline + delta into the ring slot of this sequence.
    SnapEntry& next = scratchSnap;
    next.players.clear();
    next.animals.clear();
    if (s.baseline() != 0) {
      const SnapEntry& base = ring[s.baseline() % kSnapshotRing];
      if (base.sequence != s.baseline()) return;  // baseline rolled off: wait for a later one
      next.players = base.players;
      next.animals = base.animals;
    }
    applyDelta(next.players, s.players(), s.players_gone());
    applyDelta(next.animals, s.animals(), s.animals_gone());
    std::erase_if(next.players, [this](const wire::PlayerPoseRec& r) { return r.id() == playerId.value; });
    next.sequence = s.sequence();
    next.tick = s.tick();
    std::swap(ring[s.sequence() % kSnapshotRing], next);
    newestSnapshot = s.sequence();
    ++stats.snapshotsReceived;
    if (phase != ClientPhase::Playing) return;  // kept as a baseline; the mirror is not ready

    const SnapEntry& snap = ring[s.sequence() % kSnapshotRing];
    // Others: interpolation and the mirror's records (scripts steer by them).
    for (std::uint32_t id : others.ids()) {
      if (!std::binary_search(snap.players.begin(), snap.players.end(), id,
                              [](auto a, auto b) { return idOf(a) < idOf(b); }))
        others.remove(id);
    }
    for (const wire::PlayerPoseRec& r : snap.players) {
      others.push(r.id(), PoseSample{s.tick(), {r.px(), r.py(), r.pz()}, r.yaw(), r.pitch()}, nowMs);
      if (const sim::Player* p = mirror->findPlayer(sim::PlayerId{r.id()})) setMotion(*p, poseState(r, p->motion));
    }
    for (std::uint32_t id : animals.ids()) {
      if (!std::binary_search(snap.animals.begin(), snap.animals.end(), id,
                              [](auto a, auto b) { return idOf(a) < idOf(b); }))
      {
        animals.remove(id);
        animalSpecies.erase(id);
      }
    }
    for (const wire::AnimalRec& r : snap.animals) {
      animals.push(r.id(), PoseSample{s.tick(), {r.px(), r.py(), r.pz()}, r.yaw(), 0}, nowMs);
      animalSpecies[r.id()] = r.species();
    }

    // Own: reconcile against the server's state for the input it acknowledged.
    const sim::PlayerState server = fromWire(*s.own());
    if (server.lastInput > lastInputSent) return fail("Snapshot acknowledges input " + std::to_string(server.lastInput) +
                                                      " never sent (newest " + std::to_string(lastInputSent) + ")");
    const Clock::time_point reconcileAt = Clock::now();
    const std::uint64_t teleports = predictor.stats().teleports;
    predictor.reconcile(server, mirror->world, mirror->lut);
    if (predictor.stats().teleports != teleports) teleportedAt = reconcileAt;  // timed until the ground around it is present
    syncOwn();
    if (!streamer) noteTeleportPlayable();
  }

  static std::uint32_t idOf(std::uint32_t id) { return id; }
  static std::uint32_t idOf(const wire::PlayerPoseRec& r) { return r.id(); }
  static std::uint32_t idOf(const wire::AnimalRec& r) { return r.id(); }

  void syncOwn() {
    if (!mirror) return;
    if (const sim::Player* p = mirror->findPlayer(playerId)) setMotion(*p, predictor.state());
  }

  // A player's motion from a snapshot or the prediction, as the mirror's Updated
  // record (scripts and the HUD read the mirror's players).
  void setMotion(const sim::Player& player, const sim::PlayerState& motion) {
    sim::PlayerChange ch{sim::PlayerChange::Kind::Updated, player};
    ch.player.motion = motion;
    sim::applyPlayerChanges(mirror->players, std::span<const sim::PlayerChange>(&ch, 1));
  }

  void onReject(const wire::Reject& r) {
    const auto code = static_cast<RejectCode>(r.code());
    fail(std::string("server rejected us: ") + rejectCodeName(code) + (r.text() ? ": " + r.text()->str() : std::string()));
  }

  /// Our own refused commands (the server sends them to us alone): to the events,
  /// for the HUD. Anything else in the list is a server bug or an attack.
  void onRejections(const wire::Rejections& r) {
    if (phase != ClientPhase::Playing || !r.events()) return;  // nothing sent before Playing
    for (const wire::EventRec* rec : *r.events()) {
      sim::Event e;
      const auto* rej = fromWire(*rec, e) ? std::get_if<sim::CommandRejectedEvent>(&e) : nullptr;
      if (!rej || rej->player != playerId) return fail("Rejections " + std::to_string(r.tick()) + ": not our refusal");
      pushEvent(e);
    }
  }

  std::vector<std::uint8_t> unpacked;  ///< decompressed Compressed messages

  void onPacket(const ENetPacket& packet, double nowMs) {
    const std::span<const std::uint8_t> bytes(packet.data, packet.dataLength);
    const wire::ServerMessage* msg = openServerMessage(bytes, kMaxServerMessageBytes, unpacked);
    if (!msg) return fail("malformed message from the server (" + std::to_string(bytes.size()) + " bytes)");
    TrafficCounters& c = stats.received[messageName(msg->body_type())];
    ++c.messages;
    c.bytes += bytes.size();
    if (holdDuringJoin(*msg, bytes)) return;
    handle(*msg, nowMs);
  }

  void handle(const wire::ServerMessage& msg, double nowMs) {
    switch (msg.body_type()) {
      case wire::ServerBody::Welcome: return onWelcome(*msg.body_as_Welcome());
      case wire::ServerBody::Reject: return onReject(*msg.body_as_Reject());
      case wire::ServerBody::GeneratedCellHashes: return onCellHashes(*msg.body_as_GeneratedCellHashes());
      case wire::ServerBody::JoinSnapshot: return fail("JoinSnapshot: this protocol joins through JoinChunks");
      case wire::ServerBody::StepBatch: return onStepBatch(*msg.body_as_StepBatch());
      case wire::ServerBody::CellState: return onCellState(*msg.body_as_CellState());
      case wire::ServerBody::Snapshot: return onSnapshot(*msg.body_as_Snapshot(), nowMs);
      case wire::ServerBody::Compressed: break;  // openServerMessage unwraps it
      case wire::ServerBody::AuthChallenge: return onAuthChallenge(*msg.body_as_AuthChallenge());
      case wire::ServerBody::JoinChunk: return onJoinChunk(*msg.body_as_JoinChunk());
      case wire::ServerBody::Rejections: return onRejections(*msg.body_as_Rejections());
      case wire::ServerBody::NONE: return fail("server message without a body");
    }
    fail("unknown server message type");
  }

  void service(double now, int timeoutMs) {
    if (!host) return;
    nowMs = now;
    ENetEvent ev;
    int wait = timeoutMs;
    capRetransmitBackoff(host);
    while (enet_host_service(host, &ev, static_cast<enet_uint32>(wait > 0 ? wait : 0)) > 0) {
      wait = 0;
      switch (ev.type) {
        case ENET_EVENT_TYPE_CONNECT:
          if (phase == ClientPhase::Connecting) {
            configurePeer(ev.peer);
            transition(ClientPhase::AwaitingWelcome);
            sendHello();
          }
          break;
        case ENET_EVENT_TYPE_RECEIVE:
          if (active()) onPacket(*ev.packet, nowMs);
          enet_packet_destroy(ev.packet);
          break;
        case ENET_EVENT_TYPE_DISCONNECT:
          peer = nullptr;
          if (phase == ClientPhase::Connecting) {
            fail("could not connect to " + config.host + ":" + std::to_string(config.port));
          } else if (active()) {
            error = ev.data != 0 ? std::string("disconnected by the server: ") +
                                       rejectCodeName(static_cast<RejectCode>(ev.data))
                                 : "connection lost (timed out, or closed by the server)";
            transition(ClientPhase::Disconnected);
          }
          break;
        case ENET_EVENT_TYPE_NONE:
          break;
      }
    }
    pollGeneration();
    sendJoinProgress();
    resendIdleInputs();
    updateStream();
    capRetransmitBackoff(host);
    enet_host_flush(host);
    stats.bytesIn += host->totalReceivedData;
    stats.bytesOut += host->totalSentData;
    host->totalReceivedData = 0;
    host->totalSentData = 0;
    if (peer) stats.rttMs = peer->roundTripTime;
  }
};

ClientConnection::ClientConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClientConnection::~ClientConnection() = default;

sim::Result<std::unique_ptr<ClientConnection>> ClientConnection::connect(const ClientConfig& config) {
  auto impl = std::make_unique<Impl>();
  if (!impl->enet.ok()) return sim::makeError("cannot initialise ENet");
  impl->config = config;
  // The server's rules, checked here first so a bad name fails before any packet.
  const NameCheck name = checkPlayerName(config.name);
  if (!name.ok()) return sim::makeError("name \"" + config.name + "\": " + name.why);
  impl->config.name = name.name;
  std::string host = config.host;
  std::uint16_t port = config.port;
  if (config.link.active()) {
    auto link = LinkSimulator::open(config.host, config.port, config.link);
    if (!link) return sim::makeError("link simulator: " + link.error().message);
    impl->link = std::move(*link);
    host = "127.0.0.1";
    port = impl->link->localPort();
  }
  ENetAddress address{};
  if (enet_address_set_host(&address, host.c_str()) != 0) return sim::makeError("cannot resolve host '" + host + "'");
  address.port = port;
  impl->host = enet_host_create(nullptr, 1, kChannelCount, 0, 0);
  if (!impl->host) return sim::makeError("cannot create an ENet client host (socket)");
  limitClientHost(impl->host);
  impl->peer = enet_host_connect(impl->host, &address, kChannelCount, kProtocolVersion);
  if (!impl->peer) return sim::makeError("cannot start connecting to " + host + ":" + std::to_string(port));
  enet_host_flush(impl->host);
  return std::unique_ptr<ClientConnection>(new ClientConnection(std::move(impl)));
}

void ClientConnection::service(double nowMs, int timeoutMs) { impl_->service(nowMs, timeoutMs); }

void ClientConnection::sendInput(sim::PlayerInput input) {
  Impl& m = *impl_;
  if (m.phase != ClientPhase::Playing || !m.peer) return;
  input.sequence = ++m.lastInputSent;
  m.predictor.predict(input, m.mirror->world, m.mirror->lut);
  m.syncOwn();
  m.sendInputs();
}

void ClientConnection::sendAction(const sim::CommandBody& body) {
  Impl& m = *impl_;
  if (m.phase != ClientPhase::Playing || !m.peer) return;
  m.fbb.Clear();
  const auto action = encodeAction(m.fbb, m.lastInputSent, body);
  if (action.IsNull()) return;  // not an action (inputs go through sendInput)
  m.send(wire::ClientBody::Action, action.Union(), true);
}

void ClientConnection::disconnect() {
  Impl& m = *impl_;
  if (m.host && m.peer) {
    enet_peer_disconnect(m.peer, 0);
    enet_host_flush(m.host);
    // Give the server a moment to acknowledge so it sees a clean leave.
    ENetEvent ev;
    const Clock::time_point t0 = Clock::now();
    while (m.peer && msSince(t0) < 200 && enet_host_service(m.host, &ev, 20) >= 0) {
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(ev.packet);
      if (ev.type == ENET_EVENT_TYPE_DISCONNECT) m.peer = nullptr;
    }
    if (m.peer) enet_peer_reset(m.peer);
    m.peer = nullptr;
  }
  if (m.active()) {
    m.error = "disconnected by this client";
    m.transition(ClientPhase::Disconnected);
  }
}

ClientPhase ClientConnection::phase() const noexcept { return impl_->phase; }
const std::string& ClientConnection::error() const noexcept { return impl_->error; }
double ClientConnection::progress() const noexcept { return impl_->progress.load(); }
sim::PlayerId ClientConnection::playerId() const noexcept { return impl_->playerId; }
const sim::SimState& ClientConnection::mirror() const noexcept {
  if (impl_->mirror) return *impl_->mirror;
  // Before generation ends: an empty one-chunk world, so callers never see a dangling reference.
  static const sim::SimState empty{
      0,  {}, {}, {}, {}, sim::BrickStore(sim::WorldBounds{{0, 0, 0}, {sim::kChunkBricks, sim::kChunkBricks, sim::kChunkBricks}}),
      {}, {}, {}, {}, {}, {}, {}, {}};
  return empty;
}
sim::ChangeSubscriber ClientConnection::subscribeWorldChanges() {
  LOAM_ASSERT(impl_->mirror.has_value());
  return impl_->mirror->world.subscribeChanges();
}
std::vector<sim::BrickCoord> ClientConnection::takeWorldChanges(sim::ChangeSubscriber sub) {
  return impl_->mirror->world.takeChanged(sub);
}
const Predictor& ClientConnection::predictor() const noexcept { return impl_->predictor; }
const InterpolationBuffer& ClientConnection::others() const noexcept { return impl_->others; }
const InterpolationBuffer& ClientConnection::animals() const noexcept { return impl_->animals; }

std::optional<sim::AnimalSpecies> ClientConnection::animalSpecies(std::uint32_t id) const {
  auto it = impl_->animalSpecies.find(id);
  if (it == impl_->animalSpecies.end()) return std::nullopt;
  return static_cast<sim::AnimalSpecies>(it->second);
}
void ClientConnection::advanceFrame() noexcept { impl_->predictor.advanceFrame(); }

std::string ClientConnection::playerName(std::uint32_t id) const {
  auto it = impl_->names.find(id);
  return it == impl_->names.end() ? std::string() : it->second;
}

std::uint64_t ClientConnection::serverTick() const noexcept { return impl_->lastTick; }

bool ClientConnection::worldReadable() const noexcept {
  return impl_->phase == ClientPhase::Playing && (!impl_->streamer || impl_->readable);
}

ClientStats ClientConnection::stats() const {
  ClientStats s = impl_->stats;
  s.prediction = impl_->predictor.stats();
  return s;
}

std::vector<sim::Event> ClientConnection::takeEvents() {
  std::vector<sim::Event> out;
  out.swap(impl_->events);
  return out;
}

}  // namespace loam::net
