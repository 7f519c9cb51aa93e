// ServerHost implementation. Layout of this file:
//   Session        per-peer state (phase, hostile-input counters, input queue,
//                  pending actions, byte budget, snapshot ring, cell sync ticks)
//   Impl           the ENet host, the state, the per-tick scratch
//     inbound      handle(): connect / disconnect / receive -> verified messages
//     commands     buildCommands(): joins, leaves, inputs, actions, server commands
//     outbound     sendStep(): StepBatch, JoinSnapshots, CellStates, Snapshots
// docs/PROTOCOL.md is the rule book; comments here say how and why.
#include "net/server_host.h"

#include <enet/enet.h>
#include <flatbuffers/flatbuffers.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "net/edit_codec.h"
#include "net/enet_support.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/core/assert.h"
#include "sim/gen/generator_version.h"
#include "sim/save/save.h"
#include "sim/save/state_codec.h"
#include "sim/step/step.h"
#include "sim/step/world_hash_tracker.h"

namespace loam::net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxPlayersInView = 256;           ///< nearest others a peer tracks (bounds ring memory)
constexpr std::size_t kMaxAnimalsInView = 256;
constexpr std::uint64_t kHelloTimeoutTicks = 10 * sim::kTicksPerSecond;    ///< connected but silent: slot squatting
constexpr std::uint64_t kRejectLingerTicks = 3 * sim::kTicksPerSecond;     ///< then the peer is reset without goodbye
constexpr std::uint64_t kActionWaitTicks = 2 * sim::kTicksPerSecond;       ///< an action waits this long for its input
constexpr std::uint32_t kFloodSecondsToReject = 3;
constexpr std::uint64_t kBacklogCheckEvery = 16;              ///< ticks between backlog checks per peer
constexpr std::size_t kMaxSnapshotRecordBytes = 16 * 1024;   ///< entity records in one snapshot, at most
constexpr std::size_t kMaxEventsPerPump = 20000;             ///< per tick: a flood cannot pin the loop
constexpr std::uint32_t kValidButtons = sim::kButtonJump | sim::kButtonRun | sim::kButtonCrouch;
constexpr std::int32_t kCellUnits = sim::kCellBricks * sim::kBrickSize * sim::kUnitsPerVoxel;
constexpr std::size_t kServerBodyCount = static_cast<std::size_t>(wire::ServerBody::MAX) + 1;
constexpr std::size_t kClientBodyCount = static_cast<std::size_t>(wire::ClientBody::MAX) + 1;

/// Session lifecycle (docs/PROTOCOL.md has the diagram).
enum class Phase : std::uint8_t {
  Free,       ///< slot unused (no ENet peer)
  Connected,  ///< ENet connected; waiting for Hello
  Welcomed,   ///< Welcome sent; waiting for WorldReady (full clients)
  Joining,    ///< world checked (or swarm): JoinCommand goes into the next step
  Playing,    ///< in the simulation; receives StepBatches, CellStates, Snapshots
  Rejected,   ///< Reject sent; waiting for ENet to finish the disconnect
};

const char* phaseName(Phase p) noexcept {
  switch (p) {
    case Phase::Free: return "free";
    case Phase::Connected: return "connected";
    case Phase::Welcomed: return "welcomed";
    case Phase::Joining: return "joining";
    case Phase::Playing: return "playing";
    case Phase::Rejected: return "rejected";
  }
  return "?";
}

bool legalTransition(Phase from, Phase to) noexcept {
  switch (to) {
    case Phase::Free: return from != Phase::Free;
    case Phase::Connected: return from == Phase::Free;
    case Phase::Welcomed: return from == Phase::Connected;
    case Phase::Joining: return from == Phase::Welcomed;
    case Phase::Playing: return from == Phase::Joining;
    case Phase::Rejected: return from != Phase::Free && from != Phase::Rejected;
  }
  return false;
}

/// One entity as a peer's snapshot knows it: the hash of the record it holds.
/// Hashes, not values: "differs from the baseline" is all the server asks.
struct ContentEntry {
  std::uint32_t id = 0;
  std::uint32_t sentTick = 0;  ///< tick (truncated) when this value was sent: priority ageing
  std::uint64_t hash = 0;
};

/// What the peer holds after applying snapshot `seq` (baseline + delta).
struct Manifest {
  std::uint32_t seq = 0;  ///< 0 = slot unused
  std::vector<ContentEntry> players, animals;  ///< sorted by id
};

/// Inputs waiting to be fed to the step: a fixed ring, oldest first.
struct InputQueue {
  std::array<sim::PlayerInput, kMaxQueuedInputs> items{};
  std::size_t head = 0, count = 0;
  bool empty() const noexcept { return count == 0; }
  const sim::PlayerInput& front() const noexcept { return items[head]; }
  void pop() noexcept {
    head = (head + 1) % items.size();
    --count;
  }
  /// Appends; returns false when the oldest had to be dropped to make room.
  bool push(const sim::PlayerInput& in) noexcept {
    bool dropped = false;
    if (count == items.size()) {
      pop();
      dropped = true;
    }
    items[(head + count) % items.size()] = in;
    ++count;
    return !dropped;
  }
  void clear() noexcept { head = count = 0; }
};

struct PendingAction {
  std::uint32_t afterInput = 0;
  std::uint64_t arrivalTick = 0;
  sim::CommandBody body;
};

struct Session {
  Phase phase = Phase::Free;
  ENetPeer* peer = nullptr;
  sim::PlayerId id;
  sim::PlayerName name;
  bool wantsWorld = true;
  bool joinIssued = false;      ///< a JoinCommand went into a step (the sim may hold the player)
  bool cellHashesSent = false;
  std::uint64_t phaseTick = 0;  ///< state tick when the phase was entered
  std::uint64_t joinTick = 0;   ///< tick of the state the peer started from (JoinSnapshot / admission)
  Clock::time_point connectedAt{};  ///< ENet connect (join time)

  // Hostile-input accounting.
  std::uint32_t badMessages = 0;
  std::int64_t rateWindow = -1;  ///< wall-clock second of the current rate window
  std::uint32_t rateCount = 0;
  std::uint32_t floodStreak = 0;  ///< consecutive flooded seconds before this window
  bool windowFlooded = false;

  // Upstream.
  InputQueue inputs;
  std::uint32_t newestInput = 0;  ///< newest sequence received
  std::uint32_t fedInput = 0;     ///< newest sequence handed to a step
  std::vector<PendingAction> actions;

  // Downstream.
  double tokens = 0;                 ///< byte budget (may go negative: always-sent traffic)
  bool hasPos = false;               ///< pos valid (player in the sim after this step)
  sim::Vec3i pos;
  std::uint32_t snapshotSeq = 0;     ///< last sequence sent
  std::uint32_t ackedSeq = 0;        ///< newest acknowledged
  std::uint32_t snapshotCount = 0;   ///< for the far-player cadence
  std::uint64_t lastSoundTick = 0;   ///< movement sounds up to this tick were offered
  std::array<Manifest, kSnapshotRing> ring;
  std::vector<std::uint32_t> animalView, animalViewNext;  ///< sorted ids (hysteresis)
  std::unordered_map<std::uint32_t, std::uint64_t> cellTicks;  ///< cell index -> tick the peer has

  /// Back to a free slot; keeps vector capacity (slots are reused, memory is bounded
  /// by the slot count).
  void reset() noexcept {
    peer = nullptr;
    id = {};
    name = {};
    wantsWorld = true;
    joinIssued = cellHashesSent = false;
    phaseTick = joinTick = 0;
    badMessages = 0;
    rateWindow = -1;
    rateCount = floodStreak = 0;
    windowFlooded = false;
    inputs.clear();
    newestInput = fedInput = 0;
    actions.clear();
    tokens = 0;
    hasPos = false;
    pos = {};
    snapshotSeq = ackedSeq = snapshotCount = 0;
    for (Manifest& m : ring) {
      m.seq = 0;
      m.players.clear();
      m.animals.clear();
    }
    animalView.clear();
    animalViewNext.clear();
    cellTicks.clear();
  }
};

/// Per-tick view of one player / animal shared by every peer's snapshot.
struct PlayerEntry {
  std::uint32_t id = 0;
  sim::Vec3i pos;
  std::uint64_t hash = 0;
  wire::PlayerPoseRec rec;
};
struct AnimalEntry {
  std::uint32_t id = 0;
  sim::Vec3i pos;
  std::uint64_t hash = 0;
  wire::AnimalRec rec;
};

/// One candidate of a peer's snapshot (scratch, reused).
struct ViewEntry {
  std::uint32_t index = 0;    ///< into players_ / animals_
  std::int32_t base = -1;     ///< index in the baseline manifest, -1 = new to the peer
  std::int64_t d2 = 0;        ///< squared distance, units^2
  bool want = false;          ///< differs from the baseline and due this snapshot
  bool send = false;          ///< fits the budget
};

struct Candidate {
  double key = 0;             ///< lower first
  std::uint32_t view = 0;     ///< index into the view scratch
  bool animal = false;
};

std::uint64_t hashBytes(const void* p, std::size_t n) noexcept { return XXH3_64bits(p, n); }

double unitsFromMetresD(double m) noexcept { return m * sim::kUnitsPerMetre; }

std::int64_t squaredUnits(double metres) noexcept {
  const double u = unitsFromMetresD(metres);
  return static_cast<std::int64_t>(u * u);
}

}  // namespace

struct ServerHost::Impl {
  // The ENet guard is declared first so it outlives the host.
  EnetGuard enet;
  ServerConfig config;
  sim::SimState state;
  HostedWorld world;
  ENetHost* host = nullptr;
  std::uint16_t boundPort = 0;

  std::vector<Session> sessions;  ///< index = peer - host->peers
  AdmissionFilter admission;      ///< bans (admin console); empty = admit all
  std::uint32_t nextPlayerId = 1;
  std::vector<sim::PlayerId> orphans;       ///< players loaded with the state: no session owns them
  std::vector<sim::PlayerId> pendingLeaves;  ///< LeaveCommands for the next step

  sim::WorldHashTracker tracker;
  sim::StepOutput out;
  std::vector<sim::Command> commands;
  flatbuffers::FlatBufferBuilder fbb{16 * 1024};

  // Interest cells: dense grid over the world's bounds.
  std::int32_t cellMinX = 0, cellMinZ = 0, cellsX = 0, cellsZ = 0;
  std::vector<std::uint64_t> cellVersion;  ///< tick of the last water / fire change per cell
  std::uint64_t maxCellVersion = 0;
  std::vector<std::uint8_t> generatedCellsMessage;  ///< GeneratedCellHashes, built once

  // Per-tick scratch (capacity reused).
  std::vector<std::uint8_t> editBytes, weatherBytes;
  std::vector<wire::EventRec> eventRecs;
  std::vector<wire::CellHashRec> cellRecs;
  std::vector<std::uint32_t> leftIds;
  std::vector<sim::WaterChange> pendingWater;  ///< changes since the last CellState flush, in order
  std::vector<sim::FireChange> pendingFire;
  /// (cell, key, record index) of the pending changes; sorted, the last record per key wins.
  struct CellRecord {
    std::uint32_t cell;
    std::uint64_t key;
    std::uint32_t index;
    auto operator<=>(const CellRecord&) const = default;
  };
  std::vector<CellRecord> waterByCell, fireByCell;
  std::vector<wire::WaterRec> waterRecs;
  std::vector<wire::FireRec> fireRecs;
  std::vector<std::pair<std::uint32_t, ENetPacket*>> fullCellPackets;  ///< built this tick
  std::vector<std::pair<std::int64_t, std::uint32_t>> staleCells;
  std::vector<PlayerEntry> players;
  std::vector<AnimalEntry> animals;
  std::vector<ViewEntry> playerView, animalView;
  std::vector<Candidate> candidates;
  std::vector<std::int64_t> distances;
  std::vector<wire::PlayerPoseRec> poseOut;
  std::vector<std::int64_t> nearDistances;  ///< scratch: distances to find the nearest few
  flatbuffers::FlatBufferBuilder compressedFbb;  ///< Compressed envelopes
  std::vector<std::uint8_t> compressScratch;
  struct TickedEvent {
    std::uint64_t tick;
    wire::EventRec rec;
  };
  std::vector<TickedEvent> sounds;           ///< players' movement sounds of the last snapshot interval
  std::vector<wire::EventRec> soundsOut;     ///< scratch: one client's sounds

  static bool isMovementSound(const sim::Event& e) noexcept {
    const auto byPlayer = [](const sim::Actor& a) { return a.kind == sim::Actor::Kind::Player; };
    if (const auto* f = std::get_if<sim::FootstepEvent>(&e)) return byPlayer(f->who);
    if (const auto* l = std::get_if<sim::LandedEvent>(&e)) return byPlayer(l->who);
    if (const auto* s = std::get_if<sim::SplashEvent>(&e)) return byPlayer(s->who);
    return false;
  }
  std::vector<wire::AnimalRec> animalOut;
  std::vector<std::uint32_t> playersGone, animalsGone;
  std::vector<std::uint32_t> joinedNow;  ///< session indices admitted by this step
  std::vector<flatbuffers::Offset<wire::ChatLine>> chat;
  std::vector<flatbuffers::Offset<wire::PlayerName>> joined;

  // Stats.
  std::array<std::uint64_t, kJoinBucketsSeconds.size() + 1> joinBuckets{};
  double joinSecondsSum = 0;
  std::uint64_t joinSecondsCount = 0;
  std::uint64_t malformed = 0, flooded = 0, rejected = 0, joins = 0, leaves = 0, inputsDropped = 0,
                budgetDeferred = 0, illegalTransitions = 0;
  std::uint64_t bytesIn = 0, bytesOut = 0;
  std::array<TrafficCounters, kServerBodyCount> sentBy{};
  std::array<TrafficCounters, kClientBodyCount> receivedBy{};
  TickTimes times;

  explicit Impl(sim::SimState initial) : state(std::move(initial)) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (host) enet_host_destroy(host);
  }

  // ---- helpers ------------------------------------------------------------------------

  Session* sessionOf(ENetPeer* peer) noexcept {
    if (!peer || !host || peer < host->peers || peer >= host->peers + host->peerCount) return nullptr;
    Session& s = sessions[static_cast<std::size_t>(peer - host->peers)];
    return s.peer == peer ? &s : nullptr;
  }

  std::size_t indexOf(const Session& s) const noexcept { return static_cast<std::size_t>(&s - sessions.data()); }

  /// The one way a session changes phase. An illegal change is a server bug, not bad
  /// input: it is logged and counted in every build (and stops debug builds); the
  /// phase changes anyway, as the caller's next steps assume.
  void transition(Session& s, Phase to) {
    const bool legal = legalTransition(s.phase, to);
    if (!legal) {
      ++illegalTransitions;
      std::fprintf(stderr, "loam-server: peer %zu (player %u): illegal transition %s -> %s\n", indexOf(s), s.id.value,
                   phaseName(s.phase), phaseName(to));
    }
    LOAM_ASSERT(legal);
    s.phase = to;
    s.phaseTick = state.tick;
    if (to == Phase::Connected) s.connectedAt = Clock::now();
    if (to == Phase::Playing) {
      const double seconds = std::chrono::duration<double>(Clock::now() - s.connectedAt).count();
      std::size_t b = 0;
      while (b < kJoinBucketsSeconds.size() && seconds > kJoinBucketsSeconds[b]) ++b;
      ++joinBuckets[b];
      joinSecondsSum += seconds;
      ++joinSecondsCount;
    }
  }

  /// The cell index of a voxel, or -1 outside the grid.
  std::int64_t cellIndexOfVoxel(sim::VoxelCoord v) const noexcept {
    const sim::CellCoord c = sim::cellOf(sim::brickOf(v));
    return cellIndex(c);
  }
  std::int64_t cellIndex(sim::CellCoord c) const noexcept {
    const std::int32_t x = c.x - cellMinX, z = c.z - cellMinZ;
    if (x < 0 || z < 0 || x >= cellsX || z >= cellsZ) return -1;
    return std::int64_t{z} * cellsX + x;
  }
  sim::CellCoord cellCoord(std::uint32_t index) const noexcept {
    return {cellMinX + static_cast<std::int32_t>(index % static_cast<std::uint32_t>(cellsX)),
            cellMinZ + static_cast<std::int32_t>(index / static_cast<std::uint32_t>(cellsX))};
  }
  /// Squared plan distance from a position to the nearest point of a cell.
  std::int64_t cellDistanceSquared(sim::Vec3i p, std::uint32_t index) const noexcept {
    const sim::CellCoord c = cellCoord(index);
    const std::int64_t x0 = std::int64_t{c.x} * kCellUnits, z0 = std::int64_t{c.z} * kCellUnits;
    const std::int64_t dx = p.x < x0 ? x0 - p.x : (p.x >= x0 + kCellUnits ? p.x - (x0 + kCellUnits - 1) : 0);
    const std::int64_t dz = p.z < z0 ? z0 - p.z : (p.z >= z0 + kCellUnits ? p.z - (z0 + kCellUnits - 1) : 0);
    return dx * dx + dz * dz;
  }
  std::uint64_t peerCellTick(const Session& s, std::uint32_t cell) const {
    auto it = s.cellTicks.find(cell);
    return it == s.cellTicks.end() ? s.joinTick : std::max(it->second, s.joinTick);
  }

  void countSent(wire::ServerBody type, std::size_t bytes) noexcept {
    TrafficCounters& c = sentBy[static_cast<std::size_t>(type)];
    ++c.messages;
    c.bytes += bytes;
  }

  /// The builder's finished message as a new ENet packet (caller sends or destroys).
  /// A packet holding the builder's message; with `compress`, as a Compressed envelope
  /// when the message is over kCompressAboveBytes and zstd makes it smaller. Shared
  /// packets (StepBatch, CellState) are compressed: once for every client. Per-client
  /// snapshots are not: 300 clients x 30 Hz of zstd cost more CPU than the bytes saved.
  ENetPacket* packetFromBuilder(std::uint32_t flags, bool compress = true) {
    if (compress && fbb.GetSize() > kCompressAboveBytes &&
        compressServerMessage(fbb.GetBufferPointer(), fbb.GetSize(), compressedFbb, compressScratch))
      return enet_packet_create(compressedFbb.GetBufferPointer(), compressedFbb.GetSize(), flags);
    return enet_packet_create(fbb.GetBufferPointer(), fbb.GetSize(), flags);
  }

  /// Sends a (possibly shared) packet to one peer, counting it and charging the
  /// peer's budget. Returns false when ENet refused (the caller owns an unsent packet).
  bool send(Session& s, std::uint8_t channel, ENetPacket* packet, wire::ServerBody type) {
    // host->maximumPacketSize bounds what peers may send us, but ENet applies it to
    // our sends too: lift it for the call (one thread; receiving happens elsewhere).
    host->maximumPacketSize = kMaxServerMessageBytes;
    const int sent = enet_peer_send(s.peer, channel, packet);
    host->maximumPacketSize = kMaxClientPacketBytes;
    if (sent < 0) return false;
    countSent(type, packet->dataLength);
    s.tokens -= static_cast<double>(packet->dataLength);
    return true;
  }

  /// Sends the builder's message to one peer (not shared).
  void sendOwn(Session& s, std::uint8_t channel, std::uint32_t flags, wire::ServerBody type) {
    ENetPacket* p = packetFromBuilder(flags, false);
    if (p && !send(s, channel, p, type)) enet_packet_destroy(p);
  }

  /// Destroys a shared packet nobody took (ENet frees it otherwise).
  static void releaseIfUnsent(ENetPacket* p) noexcept {
    if (p && p->referenceCount == 0) enet_packet_destroy(p);
  }

  // ---- session endings ------------------------------------------------------------------

  /// The player (if the sim may hold it) leaves in the next step.
  void dropPlayer(Session& s) {
    if (s.joinIssued) pendingLeaves.push_back(s.id);
    s.joinIssued = false;
    s.hasPos = false;
  }

  /// Sends Reject, disconnects once ENet has delivered it, frees per-session memory.
  void reject(Session& s, RejectCode code, const std::string& text) {
    if (s.phase == Phase::Free || s.phase == Phase::Rejected) return;
    fbb.Clear();
    auto msg = wire::CreateRejectDirect(fbb, static_cast<std::uint16_t>(code), text.c_str());
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Reject, msg.Union()));
    sendOwn(s, kChannelReliable, ENET_PACKET_FLAG_RELIABLE, wire::ServerBody::Reject);
    enet_peer_disconnect_later(s.peer, static_cast<std::uint32_t>(code));
    std::fprintf(stderr, "loam-server: peer %zu (player %u, %s) rejected: %s (%s)\n", indexOf(s), s.id.value,
                 phaseName(s.phase), rejectCodeName(code), text.c_str());
    dropPlayer(s);
    transition(s, Phase::Rejected);
    s.inputs.clear();
    s.actions.clear();
    s.cellTicks.clear();
    ++rejected;
  }

  void freeSession(Session& s) {
    dropPlayer(s);
    if (s.peer) s.peer->data = nullptr;
    transition(s, Phase::Free);
    s.reset();
  }

  void malformedMessage(Session& s) {
    ++malformed;
    if (++s.badMessages >= kMaxBadMessages) {
      reject(s, RejectCode::Malformed, std::to_string(s.badMessages) + " malformed messages");
    }
  }

  // ---- inbound --------------------------------------------------------------------------

  void handle(const ENetEvent& ev) {
    switch (ev.type) {
      case ENET_EVENT_TYPE_CONNECT: onConnect(ev.peer, ev.data); break;
      case ENET_EVENT_TYPE_DISCONNECT:
        if (Session* s = sessionOf(ev.peer)) freeSession(*s);
        break;
      case ENET_EVENT_TYPE_RECEIVE: onReceive(ev.peer, ev.channelID, ev.packet); break;
      case ENET_EVENT_TYPE_NONE: break;
    }
  }

  void onConnect(ENetPeer* peer, std::uint32_t data) {
    const std::size_t index = static_cast<std::size_t>(peer - host->peers);
    Session& s = sessions[index];
    if (s.phase != Phase::Free) freeSession(s);  // ENet reused the slot without a disconnect event
    s.peer = peer;
    peer->data = reinterpret_cast<void*>(index + 1);
    configurePeer(peer);
    transition(s, Phase::Connected);
    // The connect data word carries the protocol version; 0 (unset) is checked at Hello.
    if (data != 0 && data != kProtocolVersion) {
      reject(s, RejectCode::ProtocolMismatch,
             "protocol " + std::to_string(data) + ", server speaks " + std::to_string(kProtocolVersion));
      return;
    }
    if (admission) {
      if (std::string why = admission(addressOf(peer), ""); !why.empty()) reject(s, RejectCode::Banned, why);
    }
  }

  static std::string addressOf(const ENetPeer* peer) {
    char ip[64] = "?";
    enet_address_get_host_ip(&peer->address, ip, sizeof ip);
    return std::string(ip);
  }

  /// Counts one message against the peer's rate; false = drop it (flooding).
  bool withinRate(Session& s) {
    const std::int64_t second =
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count();
    if (second != s.rateWindow) {
      const bool consecutive = second == s.rateWindow + 1;
      s.floodStreak = (s.windowFlooded && consecutive) ? s.floodStreak + 1 : 0;
      s.rateWindow = second;
      s.rateCount = 0;
      s.windowFlooded = false;
    }
    if (++s.rateCount <= kMaxMessagesPerSecond) return true;
    ++flooded;
    if (!s.windowFlooded) {
      s.windowFlooded = true;
      if (s.floodStreak + 1 >= kFloodSecondsToReject) {
        reject(s, RejectCode::Flooding,
               "over " + std::to_string(kMaxMessagesPerSecond) + " messages per second for " +
                   std::to_string(kFloodSecondsToReject) + " s");
      }
    }
    return false;
  }

  void onReceive(ENetPeer* peer, std::uint8_t channel, ENetPacket* packet) {
    Session* s = sessionOf(peer);
    if (s && s->phase != Phase::Free && s->phase != Phase::Rejected && withinRate(*s)) {
      const std::span<const std::uint8_t> bytes(packet->data, packet->dataLength);
      const wire::ClientMessage* msg = verifyClientMessage(bytes, kMaxClientPacketBytes);
      if (msg == nullptr) {
        malformedMessage(*s);
      } else {
        const auto type = msg->body_type();
        TrafficCounters& c = receivedBy[static_cast<std::size_t>(type)];
        ++c.messages;
        c.bytes += bytes.size();
        if (!dispatch(*s, *msg, channel)) malformedMessage(*s);
      }
    }
    enet_packet_destroy(packet);
  }

  /// Handles one verified message. False = malformed (content or phase).
  bool dispatch(Session& s, const wire::ClientMessage& msg, std::uint8_t channel) {
    (void)channel;  // any channel is accepted; the client chooses delivery
    if (msg.body() == nullptr) return false;  // a union type without its table
    switch (msg.body_type()) {
      case wire::ClientBody::NONE: return false;
      case wire::ClientBody::Hello: return onHello(s, *msg.body_as_Hello());
      case wire::ClientBody::WorldReady: return onWorldReady(s, *msg.body_as_WorldReady());
      case wire::ClientBody::CellHashRequest: return onCellHashRequest(s);
      case wire::ClientBody::Inputs: return onInputs(s, *msg.body_as_Inputs());
      case wire::ClientBody::Action: return onAction(s, *msg.body_as_Action());
    }
    return false;
  }

  std::size_t playersAdmitted() const noexcept {
    std::size_t n = 0;
    for (const Session& s : sessions) {
      n += (s.phase == Phase::Welcomed || s.phase == Phase::Joining || s.phase == Phase::Playing) ? 1 : 0;
    }
    return n;
  }

  bool onHello(Session& s, const wire::Hello& hello) {
    if (s.phase != Phase::Connected) {
      reject(s, RejectCode::BadHello, "second Hello");
      return true;
    }
    if (hello.protocol() != kProtocolVersion) {
      reject(s, RejectCode::ProtocolMismatch,
             "protocol " + std::to_string(hello.protocol()) + ", server speaks " + std::to_string(kProtocolVersion));
      return true;
    }
    if (!validText(hello.name(), sim::kMaxNameBytes)) {
      reject(s, RejectCode::BadHello, "name must be 1..31 printable bytes");
      return true;
    }
    if (hello.kind() >= kClientKindCount) {
      reject(s, RejectCode::BadHello, "unknown client kind " + std::to_string(hello.kind()));
      return true;
    }
    if (admission) {
      std::string why = admission(addressOf(s.peer), std::string(hello.name()->c_str(), hello.name()->size()));
      if (!why.empty()) {
        reject(s, RejectCode::Banned, why);
        return true;
      }
    }
    if (playersAdmitted() >= config.maxPlayers) {
      reject(s, RejectCode::ServerFull, "server full (" + std::to_string(config.maxPlayers) + " players)");
      return true;
    }
    s.id = sim::PlayerId{nextPlayerId++};
    s.name = sim::PlayerName::from(std::string_view(hello.name()->c_str(), hello.name()->size()));
    s.wantsWorld = hello.wants_world();
    fbb.Clear();
    auto w = wire::CreateWelcomeDirect(fbb, kProtocolVersion, s.id.value, config.name.c_str(), world.sceneName.c_str(),
                                       state.sceneHash, state.seed, sim::kGeneratorVersion, world.generatedHash,
                                       state.tick);
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Welcome, w.Union()));
    sendOwn(s, kChannelReliable, ENET_PACKET_FLAG_RELIABLE, wire::ServerBody::Welcome);
    transition(s, Phase::Welcomed);
    if (!s.wantsWorld) transition(s, Phase::Joining);  // swarm bots: admitted at once
    return true;
  }

  bool onWorldReady(Session& s, const wire::WorldReady& ready) {
    if (s.phase != Phase::Welcomed || !s.wantsWorld) return false;
    if (ready.generated_hash() != world.generatedHash) {
      char text[96];
      std::snprintf(text, sizeof text, "world hash %016llx, server generated %016llx",
                    static_cast<unsigned long long>(ready.generated_hash()),
                    static_cast<unsigned long long>(world.generatedHash));
      reject(s, RejectCode::WorldMismatch, text);
      return true;
    }
    transition(s, Phase::Joining);
    return true;
  }

  bool onCellHashRequest(Session& s) {
    // Once per session, and only while the world check is pending (bounds amplification).
    if (s.phase != Phase::Welcomed || !s.wantsWorld || s.cellHashesSent) return false;
    s.cellHashesSent = true;
    if (generatedCellsMessage.empty()) {
      fbb.Clear();
      std::vector<wire::CellHashRec> recs;
      recs.reserve(world.generatedCells.size());
      for (const sim::CellHash& c : world.generatedCells) recs.emplace_back(c.cell.x, c.cell.z, c.hash);
      auto m = wire::CreateGeneratedCellHashesDirect(fbb, &recs);
      fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::GeneratedCellHashes, m.Union()));
      generatedCellsMessage.assign(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    }
    ENetPacket* p =
        enet_packet_create(generatedCellsMessage.data(), generatedCellsMessage.size(), ENET_PACKET_FLAG_RELIABLE);
    if (p && !send(s, kChannelReliable, p, wire::ServerBody::GeneratedCellHashes)) enet_packet_destroy(p);
    return true;
  }

  bool onInputs(Session& s, const wire::Inputs& msg) {
    if (s.phase != Phase::Joining && s.phase != Phase::Playing) return false;
    const auto* list = msg.inputs();
    if (list && list->size() > kMaxInputsPerMessage) return false;
    if (msg.snapshot_ack() > s.snapshotSeq) return false;  // acknowledges something never sent
    // Check everything before queueing anything: a message is applied whole or not at all.
    std::uint32_t prev = 0;
    if (list) {
      for (const wire::InputRec* r : *list) {
        if (r->sequence() == 0 || r->sequence() <= prev) return false;  // oldest first, from 1
        if ((r->buttons() & ~kValidButtons) != 0) return false;
        if (r->pitch() < -16384 || r->pitch() > 16384) return false;
        prev = r->sequence();
      }
    }
    if (msg.snapshot_ack() > s.ackedSeq) s.ackedSeq = msg.snapshot_ack();
    if (list) {
      for (const wire::InputRec* r : *list) {
        if (r->sequence() <= s.newestInput) continue;  // already queued or applied
        if (!s.inputs.push(fromWire(*r))) ++inputsDropped;
        s.newestInput = r->sequence();
      }
    }
    return true;
  }

  bool onAction(Session& s, const wire::Action& msg) {
    if (s.phase != Phase::Joining && s.phase != Phase::Playing) return false;
    if (s.actions.size() >= kMaxQueuedActions) return false;
    PendingAction a;
    if (!decodeAction(msg, a.body)) return false;
    a.afterInput = msg.after_input();
    a.arrivalTick = state.tick;
    s.actions.push_back(std::move(a));
    return true;
  }

  void pump(int timeoutMs) {
    // No capRetransmitBackoff here: the pacing loop pumps on every arriving input,
    // and walking every peer's commands in flight each time cost a third of the CPU
    // with 300 players. Once per tick (in tick()) bounds any timeout to 2x the cap.
    ENetEvent ev;
    std::size_t handled = 0;
    if (timeoutMs > 0) {
      if (enet_host_service(host, &ev, static_cast<enet_uint32>(timeoutMs)) <= 0) return;
      handle(ev);
      ++handled;
      while (handled < kMaxEventsPerPump && enet_host_check_events(host, &ev) > 0) {
        handle(ev);
        ++handled;
      }
      return;
    }
    while (handled < kMaxEventsPerPump && enet_host_service(host, &ev, 0) > 0) {
      handle(ev);
      ++handled;
    }
  }

  void collectHostTotals() noexcept {
    // ENet's totals are 32-bit: fold them into ours and restart them.
    bytesIn += host->totalReceivedData;
    bytesOut += host->totalSentData;
    host->totalReceivedData = host->totalSentData = 0;
    host->totalReceivedPackets = host->totalSentPackets = 0;
  }

  // ---- housekeeping ---------------------------------------------------------------------

  std::uint64_t reliableBacklog(const ENetPeer* peer) const noexcept {
    std::uint64_t bytes = peer->reliableDataInTransit;
    auto* list = const_cast<ENetList*>(&peer->outgoingCommands);
    for (ENetListIterator it = enet_list_begin(list); it != enet_list_end(list); it = enet_list_next(it)) {
      const auto* oc = reinterpret_cast<const ENetOutgoingCommand*>(it);
      if (oc->command.header.command & ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE) bytes += oc->fragmentLength;
    }
    return bytes;
  }

  void housekeeping() {
    const std::uint64_t t = state.tick;
    for (Session& s : sessions) {
      switch (s.phase) {
        case Phase::Free: break;
        case Phase::Connected:
          if (t - s.phaseTick > kHelloTimeoutTicks) reject(s, RejectCode::Timeout, "no Hello within 10 s");
          break;
        case Phase::Welcomed:
          if (s.wantsWorld && t - s.phaseTick > kWorldReadyTimeoutTicks) {
            reject(s, RejectCode::Timeout, "no WorldReady within 120 s");
          }
          break;
        case Phase::Joining:
        case Phase::Playing:
          if ((t + indexOf(s)) % kBacklogCheckEvery == 0) {
            const std::uint64_t backlog = reliableBacklog(s.peer);
            if (backlog > config.reliableBacklogCapBytes) {
              reject(s, RejectCode::TooSlow, "reliable backlog " + std::to_string(backlog) + " bytes");
            }
          }
          break;
        case Phase::Rejected:
          if (t - s.phaseTick > kRejectLingerTicks) {
            enet_peer_reset(s.peer);  // no DISCONNECT event follows a reset
            freeSession(s);
          }
          break;
      }
    }
  }

  // ---- commands -------------------------------------------------------------------------

  void buildCommands(std::span<const sim::Command> serverCommands) {
    commands.clear();
    for (sim::PlayerId id : orphans) commands.push_back({id, UINT32_MAX, sim::LeaveCommand{}});
    orphans.clear();
    for (sim::PlayerId id : pendingLeaves) commands.push_back({id, UINT32_MAX, sim::LeaveCommand{}});
    pendingLeaves.clear();
    const std::uint32_t perTick = state.rules.maxInputsPerTick;
    for (Session& s : sessions) {
      if (s.phase != Phase::Joining && s.phase != Phase::Playing) continue;
      if (!s.joinIssued) {
        commands.push_back({s.id, 0, sim::JoinCommand{s.name}});
        s.joinIssued = true;
      }
      // Inputs first in the span: an action with sequence == after_input ties with
      // that input and the span position puts it after (sim/step/step.h ordering).
      for (std::uint32_t n = 0; n < perTick && !s.inputs.empty(); ++n) {
        const sim::PlayerInput& in = s.inputs.front();
        commands.push_back({s.id, in.sequence, sim::InputCommand{in}});
        s.fedInput = std::max(s.fedInput, in.sequence);
        s.inputs.pop();
      }
    }
    for (Session& s : sessions) {
      if ((s.phase != Phase::Joining && s.phase != Phase::Playing) || s.actions.empty()) continue;
      std::size_t kept = 0;
      for (std::size_t i = 0; i < s.actions.size(); ++i) {
        PendingAction& a = s.actions[i];
        const bool due = a.afterInput <= s.fedInput || (s.inputs.empty() && a.afterInput <= s.newestInput) ||
                         state.tick - a.arrivalTick >= kActionWaitTicks;
        if (due) {
          commands.push_back({s.id, a.afterInput, a.body});
        } else {
          if (kept != i) s.actions[kept] = std::move(a);
          ++kept;
        }
      }
      s.actions.resize(kept);
    }
    commands.insert(commands.end(), serverCommands.begin(), serverCommands.end());
  }

  // ---- outbound -------------------------------------------------------------------------

  void afterStep() {
    const std::uint64_t T = state.tick;
    joinedNow.clear();
    for (const sim::PlayerChange& c : out.players) {
      if (c.kind == sim::PlayerChange::Kind::Joined) ++joins;
      if (c.kind == sim::PlayerChange::Kind::Left) ++leaves;
    }
    for (Session& s : sessions) {
      s.tokens = std::min(s.tokens + config.bandwidthCapBytesPerSecond / double(sim::kTicksPerSecond),
                          config.bandwidthCapBytesPerSecond / 2.0);
      if (s.phase != Phase::Joining && s.phase != Phase::Playing) continue;
      const sim::Player* p = s.joinIssued ? state.findPlayer(s.id) : nullptr;
      if (s.phase == Phase::Joining && s.joinIssued) {
        if (p == nullptr) {
          s.joinIssued = false;  // the step refused it: nothing to leave
          reject(s, RejectCode::ServerFull, "the world refused the join (full)");
          continue;
        }
        s.joinTick = T;
        joinedNow.push_back(static_cast<std::uint32_t>(indexOf(s)));
      }
      s.hasPos = p != nullptr;
      if (p) s.pos = p->motion.position;
    }
  }

  void sendStepBatch() {
    const std::uint64_t T = state.tick;
    encodeEdits(out.edits, editBytes);
    eventRecs.clear();
    fbb.Clear();
    chat.clear();
    joined.clear();
    for (const sim::Event& e : out.events) {
      if (const auto* c = std::get_if<sim::ChatEvent>(&e)) {
        chat.push_back(wire::CreateChatLine(fbb, c->from.value, fbb.CreateString(c->text.bytes.data(), c->text.length)));
        continue;
      }
      wire::EventRec rec;
      if (!toWire(e, rec)) continue;
      // A player's footsteps, landings and splashes are only heard nearby: they go in
      // the snapshots of clients within hearing range, not to everyone (in a crowd of
      // 300 they would be most of every StepBatch).
      if (isMovementSound(e)) {
        sounds.push_back({T, rec});
      } else {
        eventRecs.push_back(rec);
      }
    }
    // Keep one snapshot interval of sounds (every client gets a snapshot within it).
    const auto every = static_cast<std::uint64_t>(std::max(config.interest.snapshotEvery, 1));
    std::erase_if(sounds, [&](const TickedEvent& t) { return t.tick + every <= T; });
    leftIds.clear();
    for (const sim::PlayerChange& c : out.players) {
      if (c.kind == sim::PlayerChange::Kind::Joined) {
        joined.push_back(wire::CreatePlayerName(
            fbb, c.player.id.value, fbb.CreateString(c.player.name.bytes.data(), c.player.name.length)));
      } else if (c.kind == sim::PlayerChange::Kind::Left) {
        leftIds.push_back(c.player.id.value);
      }
    }
    weatherBytes.clear();
    if (out.weatherChanged) sim::encodeWeather(out.weather, weatherBytes);
    cellRecs.clear();
    for (const sim::CellHash& c : tracker.touchedCells()) cellRecs.emplace_back(c.cell.x, c.cell.z, c.hash);
    auto b = wire::CreateStepBatch(fbb, T, fbb.CreateVector(editBytes), fbb.CreateVectorOfStructs(eventRecs),
                                   fbb.CreateVector(chat), fbb.CreateVector(joined), fbb.CreateVector(leftIds),
                                   fbb.CreateVector(weatherBytes), tracker.worldHash(),
                                   fbb.CreateVectorOfStructs(cellRecs));
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::StepBatch, b.Union()));
    ENetPacket* packet = packetFromBuilder(ENET_PACKET_FLAG_RELIABLE);
    if (!packet) return;
    for (Session& s : sessions) {
      if (s.phase == Phase::Playing) send(s, kChannelReliable, packet, wire::ServerBody::StepBatch);
    }
    releaseIfUnsent(packet);
  }

  void sendJoinSnapshots() {
    if (joinedNow.empty()) return;
    const std::uint64_t T = state.tick;
    ENetPacket* packet = nullptr;
    bool anyFull = false;
    for (std::uint32_t i : joinedNow) anyFull = anyFull || sessions[i].wantsWorld;
    if (anyFull) {
      sim::SaveHeader header;
      header.identity = {state.sceneHash, state.seed, sim::kGeneratorVersion};
      header.tick = T;
      auto data = sim::captureSave(header, state.world, sim::stateBlobs(state));
      sim::Result<std::vector<std::uint8_t>> bytes =
          data ? sim::encodeSave(*data) : sim::Result<std::vector<std::uint8_t>>(data.error());
      if (!bytes) {
        std::fprintf(stderr, "loam-server: join snapshot failed: %s\n", bytes.error().message.c_str());
      } else {
        fbb.Clear();
        auto js = wire::CreateJoinSnapshot(fbb, T, fbb.CreateVector(*bytes));
        fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::JoinSnapshot, js.Union()));
        packet = packetFromBuilder(ENET_PACKET_FLAG_RELIABLE, false);  // a save: zstd inside already
      }
    }
    for (std::uint32_t i : joinedNow) {
      Session& s = sessions[i];
      if (s.phase != Phase::Joining) continue;
      if (s.wantsWorld) {
        if (!packet || !send(s, kChannelReliable, packet, wire::ServerBody::JoinSnapshot)) {
          reject(s, RejectCode::ShuttingDown, "could not build the join snapshot");
          continue;
        }
      }
      transition(s, Phase::Playing);
    }
    releaseIfUnsent(packet);
  }

  /// Builds CellState for one cell into fbb: the merged pending records (full =
  /// false; `water` / `fire` index pendingWater / pendingFire) or the cell's whole
  /// water and fire (full = true).
  void buildCellState(std::uint32_t cell, bool full, std::span<const CellRecord> water,
                      std::span<const CellRecord> fire) {
    waterRecs.clear();
    fireRecs.clear();
    const sim::CellCoord cc = cellCoord(cell);
    auto addWater = [&](const sim::WaterChange& w) {
      if (wire::WaterRec r; toWire(w, cc, r)) waterRecs.push_back(r);
    };
    auto addFire = [&](const sim::FireChange& f) {
      if (wire::FireRec r; toWire(f, cc, r)) fireRecs.push_back(r);
    };
    if (full) {
      for (const sim::WaterChange& w : sim::waterInCell(state.water, cc)) addWater(w);
      for (const sim::FireChange& f : sim::fireInCell(state.fire, cc)) addFire(f);
    } else {
      for (const CellRecord& r : water) addWater(pendingWater[r.index]);
      for (const CellRecord& r : fire) addFire(pendingFire[r.index]);
    }
    fbb.Clear();
    auto cs = wire::CreateCellState(fbb, state.tick, cc.x, cc.z, full, fbb.CreateVectorOfStructs(waterRecs),
                                    fbb.CreateVectorOfStructs(fireRecs));
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::CellState, cs.Union()));
  }

  /// Keeps, per (cell, key), only the last record: the records are absolute values,
  /// so the last one over the window is all a client needs.
  static void keepLastPerKey(std::vector<CellRecord>& records) {
    std::sort(records.begin(), records.end());
    std::size_t kept = 0;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const bool lastOfKey = i + 1 == records.size() || records[i + 1].cell != records[i].cell ||
                             records[i + 1].key != records[i].key;
      if (lastOfKey) records[kept++] = records[i];
    }
    records.resize(kept);
  }

  /// Water and fire changes are merged over interest.cellStateEvery ticks (the
  /// water near a waterfall changes every tick; 10 Hz is plenty to draw and hear
  /// it) and flushed as one incremental CellState per changed cell.
  void sendIncrementalCellStates() {
    const std::uint64_t T = state.tick;
    pendingWater.insert(pendingWater.end(), out.water.begin(), out.water.end());
    pendingFire.insert(pendingFire.end(), out.fire.begin(), out.fire.end());
    const auto every = static_cast<std::uint64_t>(std::max(config.interest.cellStateEvery, 1));
    if (T % every != 0) return;
    waterByCell.clear();
    fireByCell.clear();
    for (std::uint32_t i = 0; i < pendingWater.size(); ++i) {
      const std::int64_t c = cellIndexOfVoxel(pendingWater[i].voxel);
      if (c >= 0) waterByCell.push_back({static_cast<std::uint32_t>(c), packVoxelKey(pendingWater[i].voxel), i});
    }
    for (std::uint32_t i = 0; i < pendingFire.size(); ++i) {
      const std::int64_t c = cellIndexOfVoxel(pendingFire[i].cell);
      if (c >= 0) fireByCell.push_back({static_cast<std::uint32_t>(c), packVoxelKey(pendingFire[i].cell), i});
    }
    keepLastPerKey(waterByCell);
    keepLastPerKey(fireByCell);
    const std::int64_t reach2 = squaredUnits(config.interest.cellReachMetres);
    std::size_t wi = 0, fi = 0;
    while (wi < waterByCell.size() || fi < fireByCell.size()) {
      const std::uint32_t cell = std::min(wi < waterByCell.size() ? waterByCell[wi].cell : UINT32_MAX,
                                          fi < fireByCell.size() ? fireByCell[fi].cell : UINT32_MAX);
      std::size_t we = wi, fe = fi;
      while (we < waterByCell.size() && waterByCell[we].cell == cell) ++we;
      while (fe < fireByCell.size() && fireByCell[fe].cell == cell) ++fe;
      const std::uint64_t prev = cellVersion[cell];
      cellVersion[cell] = T;
      maxCellVersion = T;
      ENetPacket* packet = nullptr;
      for (Session& s : sessions) {
        if (s.phase != Phase::Playing || !s.hasPos || s.joinTick >= T) continue;
        if (cellDistanceSquared(s.pos, cell) > reach2) continue;
        if (peerCellTick(s, cell) < prev) continue;  // behind: gets a full CellState instead
        if (!packet) {
          buildCellState(cell, false, std::span(waterByCell).subspan(wi, we - wi),
                         std::span(fireByCell).subspan(fi, fe - fi));
          packet = packetFromBuilder(ENET_PACKET_FLAG_RELIABLE);
          if (!packet) break;
        }
        if (send(s, kChannelReliable, packet, wire::ServerBody::CellState)) s.cellTicks[cell] = T;
      }
      releaseIfUnsent(packet);
      wi = we;
      fi = fe;
    }
    pendingWater.clear();
    pendingFire.clear();
  }

  static std::uint64_t packVoxelKey(sim::VoxelCoord v) noexcept {
    const auto u = [](std::int32_t c) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(c) & 0x1fffffu); };
    return (u(v.x) << 42) | (u(v.y) << 21) | u(v.z);
  }

  /// Full CellStates for cells in reach the peer is behind on, nearest first, while
  /// its budget lasts. Each cell's packet is built once per tick and shared.
  void sendCatchUp(Session& s) {
    if (maxCellVersion <= s.joinTick || s.tokens <= 0) return;
    const double reachU = unitsFromMetresD(config.interest.cellReachMetres);
    const std::int64_t reach2 = squaredUnits(config.interest.cellReachMetres);
    const auto lo = [&](double u) { return static_cast<std::int32_t>(std::floor(u / kCellUnits)); };
    const std::int32_t x0 = std::max(lo(s.pos.x - reachU) - cellMinX, 0);
    const std::int32_t x1 = std::min(lo(s.pos.x + reachU) - cellMinX, cellsX - 1);
    const std::int32_t z0 = std::max(lo(s.pos.z - reachU) - cellMinZ, 0);
    const std::int32_t z1 = std::min(lo(s.pos.z + reachU) - cellMinZ, cellsZ - 1);
    staleCells.clear();
    for (std::int32_t z = z0; z <= z1; ++z) {
      for (std::int32_t x = x0; x <= x1; ++x) {
        const auto cell = static_cast<std::uint32_t>(z * cellsX + x);
        const std::uint64_t v = cellVersion[cell];
        if (v <= s.joinTick) continue;
        const std::int64_t d2 = cellDistanceSquared(s.pos, cell);
        if (d2 > reach2 || peerCellTick(s, cell) >= v) continue;
        staleCells.emplace_back(d2, cell);
      }
    }
    std::sort(staleCells.begin(), staleCells.end());
    for (const auto& [d2, cell] : staleCells) {
      if (s.tokens <= 0) {
        budgetDeferred += 1;
        continue;
      }
      ENetPacket* packet = nullptr;
      for (const auto& [c, p] : fullCellPackets) {
        if (c == cell) packet = p;
      }
      if (!packet) {
        buildCellState(cell, true, {}, {});
        packet = packetFromBuilder(ENET_PACKET_FLAG_RELIABLE);
        if (!packet) return;
        fullCellPackets.emplace_back(cell, packet);
      }
      if (send(s, kChannelReliable, packet, wire::ServerBody::CellState)) s.cellTicks[cell] = state.tick;
    }
  }

  void gatherEntities() {
    players.resize(state.players.size());
    for (std::size_t i = 0; i < state.players.size(); ++i) {
      const sim::Player& p = state.players[i];
      PlayerEntry& e = players[i];
      e.id = p.id.value;
      e.pos = p.motion.position;
      e.rec = poseToWire(p.id, p.motion);
      e.hash = hashBytes(&e.rec, sizeof e.rec);
    }
    const auto& list = state.animals.animals;
    animals.resize(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      AnimalEntry& e = animals[i];
      e.id = list[i].id.value;
      e.pos = list[i].position;
      e.rec = toWire(list[i]);
      e.hash = hashBytes(&e.rec, sizeof e.rec);
    }
  }

  /// Marks view entries against a baseline list (both sorted by id) and collects
  /// the ids that left the view. Entries get `base` and `want`.
  template <class Entries>
  void diffAgainstBase(std::vector<ViewEntry>& view, const Entries& entries, const std::vector<ContentEntry>* base,
                       std::vector<std::uint32_t>& gone, bool dueFar, std::int64_t near2, bool animal) {
    std::size_t b = 0;
    const std::size_t nb = base ? base->size() : 0;
    const std::uint32_t tick32 = static_cast<std::uint32_t>(state.tick);
    for (std::uint32_t vi = 0; vi < view.size(); ++vi) {
      ViewEntry& v = view[vi];
      const auto& e = entries[v.index];
      while (b < nb && (*base)[b].id < e.id) gone.push_back((*base)[b++].id);
      const bool inBase = b < nb && (*base)[b].id == e.id;
      v.base = inBase ? static_cast<std::int32_t>(b) : -1;
      const bool changed = !inBase || (*base)[b].hash != e.hash;
      const bool due = animal || dueFar || v.d2 <= near2;
      v.want = changed && due;
      v.send = false;
      if (v.want) {
        // Nearest first; entries not sent for a while and new ones move up.
        const double age = inBase ? double(tick32 - (*base)[b].sentTick) / config.interest.snapshotEvery : 8.0;
        candidates.push_back({std::sqrt(double(v.d2)) / (1.0 + std::max(age, 0.0)), vi, animal});
      }
      if (inBase) ++b;
    }
    while (b < nb) gone.push_back((*base)[b++].id);
  }

  template <class Entries>
  void buildContent(const std::vector<ViewEntry>& view, const Entries& entries,
                    const std::vector<ContentEntry>* base, std::vector<ContentEntry>& content) {
    content.clear();
    const std::uint32_t tick32 = static_cast<std::uint32_t>(state.tick);
    for (const ViewEntry& v : view) {
      if (v.send) {
        content.push_back({entries[v.index].id, tick32, entries[v.index].hash});
      } else if (v.base >= 0) {
        content.push_back((*base)[static_cast<std::size_t>(v.base)]);
      }
    }
  }

  /// Keeps the nearest `cap` entries of a view, preserving id order: the cap-th
  /// smallest distance is found on a copy, then the view is filtered (O(n), no sort).
  void keepNearest(std::vector<ViewEntry>& view, std::size_t cap) {
    if (view.size() <= cap) return;
    distances.clear();
    for (const ViewEntry& v : view) distances.push_back(v.d2);
    std::nth_element(distances.begin(), distances.begin() + static_cast<std::ptrdiff_t>(cap - 1), distances.end());
    const std::int64_t limit = distances[cap - 1];
    std::size_t below = 0;
    for (std::int64_t d : distances) below += d < limit ? 1 : 0;
    std::size_t ties = cap - below;  // entries at exactly `limit` that still fit, lowest ids first
    std::size_t kept = 0;
    for (const ViewEntry& v : view) {
      if (v.d2 < limit || (v.d2 == limit && ties > 0 && ties--)) view[kept++] = v;
    }
    view.resize(kept);
  }

  void sendSnapshot(Session& s, const sim::Player& own) {
    const InterestConfig& ic = config.interest;
    const std::uint32_t seq = ++s.snapshotSeq;
    const Manifest* base = nullptr;
    if (s.ackedSeq != 0 && seq - s.ackedSeq < kSnapshotRing) {
      const Manifest& m = s.ring[s.ackedSeq % kSnapshotRing];
      if (m.seq == s.ackedSeq) base = &m;
    }
    const bool farTurn = ic.farPlayerEvery <= 1 || s.snapshotCount % static_cast<std::uint32_t>(ic.farPlayerEvery) == 0;
    ++s.snapshotCount;
    const std::int64_t near2 = squaredUnits(ic.nearPlayerMetres);
    const std::int64_t enter2 = squaredUnits(ic.animalEnterMetres);
    const std::int64_t leave2 = squaredUnits(ic.animalLeaveMetres);

    // Players: every other player, the nearest kMaxPlayersInView of them.
    playerView.clear();
    for (std::uint32_t i = 0; i < players.size(); ++i) {
      if (players[i].id == own.id.value) continue;
      playerView.push_back({i, -1, sim::distanceSquared(own.motion.position, players[i].pos), false, false});
    }
    keepNearest(playerView, kMaxPlayersInView);
    // In a crowd only the nearest nearPlayersMax players get the full rate.
    std::int64_t nearLimit2 = near2;
    if (ic.nearPlayersMax > 0 && playerView.size() > ic.nearPlayersMax) {
      nearDistances.clear();
      for (const ViewEntry& v : playerView) nearDistances.push_back(v.d2);
      std::nth_element(nearDistances.begin(), nearDistances.begin() + (ic.nearPlayersMax - 1), nearDistances.end());
      nearLimit2 = std::min(near2, nearDistances[ic.nearPlayersMax - 1]);
    }
    // Animals: enter within animalEnterMetres, stay until beyond animalLeaveMetres.
    animalView.clear();
    s.animalViewNext.clear();
    std::size_t prev = 0;
    for (std::uint32_t i = 0; i < animals.size(); ++i) {
      const std::uint32_t id = animals[i].id;
      while (prev < s.animalView.size() && s.animalView[prev] < id) ++prev;
      const bool was = prev < s.animalView.size() && s.animalView[prev] == id;
      const std::int64_t d2 = sim::distanceSquared(own.motion.position, animals[i].pos);
      if (d2 <= enter2 || (was && d2 <= leave2)) animalView.push_back({i, -1, d2, false, false});
    }
    keepNearest(animalView, kMaxAnimalsInView);
    for (const ViewEntry& v : animalView) s.animalViewNext.push_back(animals[v.index].id);
    std::swap(s.animalView, s.animalViewNext);

    candidates.clear();
    playersGone.clear();
    animalsGone.clear();
    diffAgainstBase(playerView, players, base ? &base->players : nullptr, playersGone, farTurn, nearLimit2, false);
    diffAgainstBase(animalView, animals, base ? &base->animals : nullptr, animalsGone, true, 0, true);

    // Budget: the own player and the gone lists always go; records nearest first.
    const double fixedBytes = 96.0 + 4.0 * double(playersGone.size() + animalsGone.size());
    double room = std::min(s.tokens - fixedBytes, double(kMaxSnapshotRecordBytes));
    double wanted = 0;
    for (const Candidate& c : candidates) wanted += c.animal ? sizeof(wire::AnimalRec) : sizeof(wire::PlayerPoseRec);
    if (wanted > room) {  // only rank when something has to wait
      std::sort(candidates.begin(), candidates.end(),
                [](const Candidate& a, const Candidate& b) { return a.key < b.key; });
    }
    for (const Candidate& c : candidates) {
      const double cost = c.animal ? sizeof(wire::AnimalRec) : sizeof(wire::PlayerPoseRec);
      if (room < cost) {
        ++budgetDeferred;
        continue;
      }
      room -= cost;
      (c.animal ? animalView : playerView)[c.view].send = true;
    }

    poseOut.clear();
    animalOut.clear();
    for (const ViewEntry& v : playerView) {
      if (v.send) poseOut.push_back(players[v.index].rec);
    }
    for (const ViewEntry& v : animalView) {
      if (v.send) animalOut.push_back(animals[v.index].rec);
    }
    Manifest& cur = s.ring[seq % kSnapshotRing];
    cur.seq = seq;
    buildContent(playerView, players, base ? &base->players : nullptr, cur.players);
    buildContent(animalView, animals, base ? &base->animals : nullptr, cur.animals);

    // Movement sounds since this client's previous snapshot, within hearing range.
    soundsOut.clear();
    const std::int64_t hear2 = squaredUnits(ic.hearingMetres);
    for (const TickedEvent& t : sounds) {
      if (t.tick <= s.lastSoundTick) continue;
      const sim::Vec3i at{t.rec.x() * sim::kUnitsPerVoxel, t.rec.y() * sim::kUnitsPerVoxel, t.rec.z() * sim::kUnitsPerVoxel};
      if (sim::distanceSquared(own.motion.position, at) <= hear2) soundsOut.push_back(t.rec);
    }
    s.lastSoundTick = state.tick;
    fbb.Clear();
    const wire::PlayerStateRec ownRec = toWire(own.motion);
    auto snap = wire::CreateSnapshot(fbb, seq, base ? base->seq : 0, state.tick, &ownRec,
                                     fbb.CreateVectorOfStructs(poseOut), fbb.CreateVector(playersGone),
                                     fbb.CreateVectorOfStructs(animalOut), fbb.CreateVector(animalsGone),
                                     fbb.CreateVectorOfStructs(soundsOut));
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Snapshot, snap.Union()));
    // Unreliable fragments: a large snapshot must not turn into reliable traffic.
    sendOwn(s, kChannelUnreliable, ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT, wire::ServerBody::Snapshot);
  }

  void sendStep() {
    sendStepBatch();
    sendJoinSnapshots();
    sendIncrementalCellStates();
    gatherEntities();
    fullCellPackets.clear();
    const std::uint64_t every = static_cast<std::uint64_t>(std::max(config.interest.snapshotEvery, 1));
    for (Session& s : sessions) {
      if (s.phase != Phase::Playing || !s.hasPos) continue;
      if ((state.tick + s.id.value) % every == 0) {
        if (const sim::Player* own = state.findPlayer(s.id)) sendSnapshot(s, *own);
      }
      sendCatchUp(s);
    }
    for (const auto& [cell, packet] : fullCellPackets) releaseIfUnsent(packet);
    fullCellPackets.clear();
  }
};

// ---- ServerHost -------------------------------------------------------------------------

HostedWorld describeHostedWorld(const std::string& sceneName, const sim::BrickStore& generated) {
  sim::WorldHashes h = sim::hashWorld(generated);
  return HostedWorld{sceneName, h.world, std::move(h.cells)};
}

ServerHost::ServerHost(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ServerHost::~ServerHost() = default;

sim::Result<std::unique_ptr<ServerHost>> ServerHost::open(const ServerConfig& config, sim::SimState state,
                                                          HostedWorld world) {
  auto impl = std::make_unique<Impl>(std::move(state));
  if (!impl->enet.ok()) return sim::makeError("ENet initialisation failed");
  if (config.maxPlayers == 0) return sim::makeError("maxPlayers must be at least 1");
  if (config.maxPlayers + 32 > ENET_PROTOCOL_MAXIMUM_PEER_ID) {
    return sim::makeError("maxPlayers " + std::to_string(config.maxPlayers) + " is more than ENet can serve");
  }
  impl->config = config;
  impl->world = std::move(world);
  impl->state.rules.maxPlayers = config.maxPlayers;

  ENetAddress address{};
  if (enet_address_set_host_ip(&address, config.bindAddress.c_str()) != 0 &&
      enet_address_set_host(&address, config.bindAddress.c_str()) != 0) {
    return sim::makeError("cannot resolve bind address '" + config.bindAddress + "'");
  }
  address.port = config.port;
  const std::size_t peerCount = config.maxPlayers + 32;  // room to answer extra peers with Reject
  impl->host = enet_host_create(&address, peerCount, kChannelCount, 0, 0);
  if (impl->host == nullptr) {
    return sim::makeError("cannot bind UDP " + config.bindAddress + ":" + std::to_string(config.port) +
                          " (port in use or address not local)");
  }
  impl->host->maximumPacketSize = kMaxClientPacketBytes;  // ENet drops bigger reassemblies itself
  enlargeSocketBuffers(impl->host);
  ENetAddress bound{};
  if (enet_socket_get_address(impl->host->socket, &bound) == 0) {
    impl->boundPort = bound.port;
  } else {
    impl->boundPort = config.port;
  }
  impl->sessions.resize(peerCount);

  // Ids are never reused while the server runs; players loaded with the state have
  // no session and leave in the first step.
  std::uint32_t maxId = 0;
  for (const sim::Player& p : impl->state.players) {
    maxId = std::max(maxId, p.id.value);
    impl->orphans.push_back(p.id);
  }
  impl->nextPlayerId = maxId + 1;

  const sim::WorldBounds& b = impl->state.world.bounds();
  impl->cellMinX = b.minBrick.x >> sim::kCellShift;
  impl->cellMinZ = b.minBrick.z >> sim::kCellShift;
  impl->cellsX = ((b.maxBrick.x - 1) >> sim::kCellShift) - impl->cellMinX + 1;
  impl->cellsZ = ((b.maxBrick.z - 1) >> sim::kCellShift) - impl->cellMinZ + 1;
  impl->cellVersion.assign(static_cast<std::size_t>(impl->cellsX) * static_cast<std::size_t>(impl->cellsZ), 0);
  // Everything changed before this server started is in every JoinSnapshot.
  impl->tracker.reset(impl->state.world);
  return std::unique_ptr<ServerHost>(new ServerHost(std::move(impl)));
}

const sim::StepOutput& ServerHost::tick(std::span<const sim::Command> serverCommands) {
  Impl& im = *impl_;
  const auto t0 = Clock::now();
  im.pump(0);
  im.housekeeping();
  im.buildCommands(serverCommands);
  const auto t1 = Clock::now();
  sim::step(im.state, im.commands, im.out);
  const auto t2 = Clock::now();
  im.tracker.update(im.state.world, im.out.edits);
  im.afterStep();
  im.sendStep();
  capRetransmitBackoff(im.host);
  enet_host_flush(im.host);
  im.collectHostTotals();
  const auto t3 = Clock::now();
  const auto us = [](auto d) { return std::chrono::duration<double, std::micro>(d).count(); };
  im.times.stepUs = us(t2 - t1);
  im.times.sendUs = us(t3 - t2);
  im.times.totalUs = us(t3 - t0);
  return im.out;
}

void ServerHost::waitForInput(int timeoutMs) {
  impl_->pump(std::max(timeoutMs, 0));
  enet_host_flush(impl_->host);
  impl_->collectHostTotals();
}

std::vector<PeerInfo> ServerHost::players() const {
  std::vector<PeerInfo> out;
  for (const Session& s : impl_->sessions) {
    if (s.phase != Phase::Welcomed && s.phase != Phase::Joining && s.phase != Phase::Playing) continue;
    PeerInfo p;
    p.id = s.id;
    p.name = std::string(s.name.view());
    p.address = Impl::addressOf(s.peer) + ":" + std::to_string(s.peer->address.port);
    p.rttMs = s.peer->roundTripTime;
    out.push_back(std::move(p));
  }
  return out;
}

bool ServerHost::kick(sim::PlayerId id, const std::string& reason) {
  for (Session& s : impl_->sessions) {
    if (s.phase == Phase::Free || s.phase == Phase::Rejected || s.id.value != id.value || id.value == 0) continue;
    impl_->reject(s, RejectCode::Kicked, "kicked: " + reason);
    enet_host_flush(impl_->host);
    return true;
  }
  return false;
}

void ServerHost::setAdmissionFilter(AdmissionFilter filter) { impl_->admission = std::move(filter); }

void ServerHost::shutdown() {
  Impl& im = *impl_;
  for (Session& s : im.sessions) {
    if (s.phase != Phase::Free && s.phase != Phase::Rejected) im.reject(s, RejectCode::ShuttingDown, "server stopping");
  }
  enet_host_flush(im.host);
  im.collectHostTotals();
}

const sim::SimState& ServerHost::state() const noexcept { return impl_->state; }

std::uint16_t ServerHost::port() const noexcept { return impl_->boundPort; }

ServerStats ServerHost::stats() const {
  const Impl& im = *impl_;
  ServerStats st;
  for (const Session& s : im.sessions) {
    if (s.phase != Phase::Free) ++st.peers;
    if (s.phase == Phase::Playing) ++st.players;
  }
  st.bytesIn = im.bytesIn + im.host->totalReceivedData;
  st.bytesOut = im.bytesOut + im.host->totalSentData;
  st.malformed = im.malformed;
  st.flooded = im.flooded;
  st.rejected = im.rejected;
  st.joins = im.joins;
  st.joinSecondsBuckets = im.joinBuckets;
  st.joinSecondsSum = im.joinSecondsSum;
  st.joinSecondsCount = im.joinSecondsCount;
  st.leaves = im.leaves;
  st.inputsDropped = im.inputsDropped;
  st.budgetDeferred = im.budgetDeferred;
  st.illegalTransitions = im.illegalTransitions;
  for (std::size_t i = 1; i < kServerBodyCount; ++i) {
    if (im.sentBy[i].messages) st.sent[messageName(static_cast<wire::ServerBody>(i))] = im.sentBy[i];
  }
  for (std::size_t i = 1; i < kClientBodyCount; ++i) {
    if (im.receivedBy[i].messages) st.received[messageName(static_cast<wire::ClientBody>(i))] = im.receivedBy[i];
  }
  return st;
}

ServerHost::TickTimes ServerHost::lastTickTimes() const noexcept { return impl_->times; }

}  // namespace loam::net
