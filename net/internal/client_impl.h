// ClientConnection::Impl: one connection's state (the ENet host, the phase, the
// mirror, the predictor, the join stream, the held messages) and the declarations of
// its member functions, defined by job in three files:
// - net/client_connection.cpp: the phase machine, sending, the service loop and the
//   dispatch of server messages, and the public API;
// - net/client_join.cpp: Hello, AuthChallenge, Welcome, generation on the worker,
//   the cell hashes, the join stream (JoinChunk, finishJoin);
// - net/client_playing.cpp: inputs, the ordered stream (Stream: StepBatch, water,
//   ActionResults, SurfaceChanges; full CellStates at their marks), Snapshot, Reject,
//   events.
// The streamed mirror's columns are a MirrorStream (net/internal/mirror_stream.h).
// Nothing outside those files includes this.
#pragma once

#include <enet/enet.h>

#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "net/client_connection.h"
#include "net/edit_codec.h"
#include "net/enet_support.h"
#include "net/internal/client_clock.h"
#include "net/internal/mirror_stream.h"
#include "net/own_ring.h"
#include "net/protocol.h"
#include "net/snapshot_codec.h"
#include "net/stream_codec.h"
#include "net/stream_receipt.h"
#include "net/wire.h"
#include "sim/save/save.h"
#include "sim/step/mirror.h"
#include "sim/step/world_hash_tracker.h"
#include "sim/world/world_hash.h"

namespace loam::net {
namespace internal {

/// v as 16 hex digits (hashes in error messages).
inline std::string hex64(std::uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

// One received snapshot rebuilt in full (baseline + delta): what the next delta may
// be relative to.
struct SnapEntry {
  std::uint32_t sequence = 0;  // 0 = empty slot
  std::uint64_t tick = 0;
  std::vector<wire::PlayerPoseRec> players;  // sorted by id
  std::vector<wire::AnimalRec> animals;      // sorted by id
};

/// An action the server has not answered yet: it goes again in every Inputs.
struct UnansweredAction {
  std::uint32_t sequence = 0;
  std::uint32_t afterInput = 0;
  sim::CommandBody body;
  double sentMs = 0;  // first sent (dropped after kPredictionTimeoutMs)
};

/// A Stream item that arrived and waits for its turn: a server message (raw, as sent:
/// possibly Compressed), a cell's water records, or the mark of full CellState number
/// fullState.
struct HeldItem {
  StreamItemKind kind = StreamItemKind::Message;
  std::uint32_t fullState = 0;           ///< Mark
  sim::CellCoord cell;                   ///< Water
  std::vector<std::uint8_t> bytes;       ///< Message: the ServerMessage (verified)
  std::vector<sim::WaterChange> water;   ///< Water: the records (decoded when it arrived)
  /// What it holds, against kMaxHeldBytes.
  std::size_t heldBytes() const noexcept { return bytes.size() + water.size() * sizeof(sim::WaterChange); }
};

}  // namespace internal

struct ClientConnection::Impl {
  EnetGuard enet;  // first member: released after the host is destroyed
  ClientConfig config;
  std::unique_ptr<LinkSimulator> link;
  ENetHost* host = nullptr;
  ENetPeer* peer = nullptr;
  ClientPhase phase = ClientPhase::Connecting;
  std::string error;
  internal::Clock::time_point started = internal::Clock::now();

  // The streamed mirror's generator and columns (no streamer for a mirror from
  // worldFactory): declared before the states it feeds, so that it outlives them.
  internal::MirrorStream stream;
  std::vector<sim::ChunkColumn> checkedColumns;  // the columns the join check hashes (the spawn columns)

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
  std::shared_ptr<const sim::Scene> generatedScene;  ///< set with generated: what terrainSampler() samples
  std::shared_ptr<const sim::TerrainSampler> sampler;  ///< built by the first terrainSampler() (bots never ask)
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
  std::uint32_t lastActionSent = 0;  // Action.sequence of the newest action sent
  std::deque<internal::UnansweredAction> unanswered;  // sent in every Inputs until answered, oldest first
  PredictedEdits predicted;
  std::vector<sim::Event> predictEvents;  // sendAction's scratch
  double nowMs = 0;         // the owner's clock at the last service()
  double lastInputsMs = 0;  // when Inputs were last sent
  double lastDropCheckMs = 0;  // when dropFarCells last looked
  std::unordered_set<std::uint64_t> droppedCells;  // cellKey: dropped, not sent whole since
  // SurfaceChanges: the latest change of each patch (sim::surfacePatchKey), and the
  // patches changed since takeSurfaceChanges last ran.
  std::unordered_map<std::uint64_t, sim::SurfaceChange> surface;
  std::unordered_set<std::uint64_t> surfaceFresh;

  std::array<internal::SnapEntry, kSnapshotRing> ring;
  OwnRing ownRing;  // the own player by snapshot
  std::uint32_t newestSnapshot = 0;
  std::vector<std::uint32_t> snapshotGone;  // the gone lists of the snapshot being read
  std::vector<StreamItemView> streamView;   // the items of the Stream datagram being read
  internal::SnapEntry scratchSnap;
  std::vector<wire::EventRec> soundRecs;       // a Snapshot's sounds (scratch)

  ClientStats stats;
  flatbuffers::FlatBufferBuilder fbb{1024};
  std::vector<sim::EditRecord> edits;          // one StepBatch's, decoded, then the fire's the mirror made
  std::vector<sim::EditRecord> fireEdits;      // the edits the mirror's fire made (scratch)
  std::vector<sim::EditRecord> cellEdits;      // one cell's (scratch)
  std::vector<sim::FireChange> cellFire;       // one cell's fire records (scratch)
  std::vector<CellEdits> stepCells;            // one StepBatch's cells (spans into its message)
  std::vector<sim::SavedBrick> cellBricks;     // a full CellState's (scratch)
  std::vector<sim::BrickCoord> writtenBricks;  // scratch
  std::vector<sim::PlayerChange> playerChanges;  // one StepBatch's joins and leaves
  sim::WeatherState weather;                     // one StepBatch's weather record
  std::vector<sim::WaterChange> water;
  std::vector<sim::FireChange> fire;             // one StepBatch's fire records, or a full CellState's
  std::vector<wire::InputRec> inputRecs;
  std::vector<flatbuffers::Offset<wire::Action>> actionOffsets;  // sendInputs' scratch
  std::vector<sim::GeneratedColumnHash> columnHashes;  // sendColumnHashes' scratch

  // Join progress and the join stream (docs/PROTOCOL.md, Joining).
  internal::Clock::time_point lastProgressSent{};  // JoinProgress while generating
  bool joinStarted = false;                  // the first JoinChunk arrived
  std::uint64_t joinTick = 0;                // JoinChunk.tick of the stream
  std::uint32_t joinTotal = 0;               // JoinChunk.total
  std::vector<std::uint8_t> joinBytes;       // the stream so far (grows as it arrives)
  std::uint32_t joinAcked = 0;               // received_bytes last sent

  // The ordered stream (docs/PROTOCOL.md, The ordered stream): items arrive in any
  // order, more than once, from the join on; they are applied in sequence once
  // Playing. A full CellState arrives reliably and waits for its mark.
  StreamReceipt receipt;       // which items arrived (Inputs.stream_ack)
  bool streamAckDue = false;   // a Stream came since the last Inputs
  std::map<std::uint32_t, internal::HeldItem> streamItems;  // arrived, not applied, by sequence
  std::uint32_t streamApplied = 0;                        // every item up to this was applied
  std::deque<std::vector<std::uint8_t>> fullStates;        // full CellStates (raw) waiting for their marks
  std::uint32_t fullStatesApplied = 0;
  std::size_t heldBytes = 0;   // streamItems' and fullStates' bytes (at most kMaxHeldBytes)

  bool challengeAnswered = false;  // onAuthChallenge ran (once, before Welcome)
  std::vector<std::uint8_t> unpacked;  ///< decompressed Compressed messages
  std::vector<std::uint8_t> itemUnpacked;  ///< the same for the Stream item being applied

  // ---- net/client_connection.cpp: phase machine, sending, service loop, dispatch --
  ~Impl();
  void transition(ClientPhase to);
  void fail(std::string why);
  bool active() const;
  /// Generating, AwaitingSnapshot or Playing: the server may have admitted us, so
  /// the join state, the Stream and full CellStates may come (held until Playing).
  bool joined() const;
  void send(wire::ClientBody type, flatbuffers::Offset<void> body, bool reliable);
  void onPacket(const ENetPacket& packet, std::uint8_t channel, double nowMs);
  void handle(const wire::ServerMessage& msg);
  void service(double now, int timeoutMs);

  // ---- net/client_join.cpp: Hello to Playing ----------------------------------------
  void onAuthChallenge(const wire::AuthChallenge& c);
  void sendHello();
  void sendJoinProgress();
  sim::WorldHashes generatedHashes(const sim::BrickStore& world) const;
  void startGeneration();
  void pollGeneration();
  void onWelcome(const wire::Welcome& w);
  void onCellHashes(const wire::GeneratedCellHashes& g);
  void onJoinChunk(const wire::JoinChunk& c);
  void finishJoin();

  // ---- net/client_playing.cpp: inputs and the streams while Playing -----------------
  void sendInputs();
  void resendIdleInputs();
  /// Drops the modified columns far beyond the reach, cell by cell, and tells the server.
  void dropFarCells();
  void sendColumnHashes();
  bool cellDropped(sim::CellCoord c) const { return droppedCells.contains(sim::cellKey(c)); }
  /// Keeps the new items of a Stream, then applies what is due.
  void onStream(std::span<const StreamItemView> items);
  /// A full CellState from the reliable channel (raw bytes as received): waits for its mark.
  void holdFullState(const wire::CellState& c, std::span<const std::uint8_t> bytes);
  /// Applies the held items in sequence while Playing, up to the first that has not
  /// arrived (or a mark whose CellState has not).
  void drainStream();
  void applyStreamItem(const wire::ServerMessage& msg);
  void onStepBatch(const wire::StepBatch& b);
  void pushEvent(const sim::Event& e);
  void checkHashes(const wire::StepBatch& b);
  /// Counts a desync and keeps its description (the first kMaxDesyncsKept).
  void reportDesync(std::uint64_t tick, sim::CellCoord cell, std::uint64_t ours, std::uint64_t theirs);
  /// A full CellState (reliable, at its mark): the cell's bricks, water, fire and hash.
  void onCellState(const wire::CellState& c);
  /// A Stream water item: the cell's water changes since its last ones.
  void onCellWater(sim::CellCoord cell, std::vector<sim::WaterChange>& records);
  /// Decodes a cell's water records into `out`; fails the connection when they do not decode.
  bool decodeWater(sim::CellCoord cell, std::span<const std::uint8_t> records, std::vector<sim::WaterChange>& out);
  void onSnapshot(std::span<const std::uint8_t> bytes, double nowMs);
  static std::uint32_t idOf(std::uint32_t id);
  static std::uint32_t idOf(const wire::PlayerPoseRec& r);
  static std::uint32_t idOf(const wire::AnimalRec& r);
  void syncOwn();
  void setMotion(const sim::Player& player, const sim::PlayerState& motion);
  void onReject(const wire::Reject& r);
  void onActionResults(const wire::ActionResults& r);
  void onSurfaceChanges(const wire::SurfaceChanges& c);
};

}  // namespace loam::net
