// ClientConnection::Impl: one connection's state (the ENet host, the phase, the
// mirror, the predictor, the join stream, the held messages) and the declarations of
// its member functions, defined by job in three files:
// - net/client_connection.cpp: the phase machine, sending, the service loop and the
//   dispatch of server messages, and the public API;
// - net/client_join.cpp: Hello, AuthChallenge, Welcome, generation on the worker,
//   the cell hashes, the join stream (JoinChunk, finishJoin) and the messages held
//   meanwhile;
// - net/client_playing.cpp: inputs, StepBatch, CellState, Snapshot, Reject and
//   ActionResults, events.
// The streamed mirror's columns are a MirrorStream (net/internal/mirror_stream.h).
// Nothing outside those files includes this.
#pragma once

#include <enet/enet.h>

#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
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
#include "net/enet_support.h"
#include "net/internal/client_clock.h"
#include "net/internal/mirror_stream.h"
#include "net/protocol.h"
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
  PredictedEdits predicted;
  std::vector<sim::Event> predictEvents;  // sendAction's scratch
  std::set<std::uint32_t> refusalsTold;   // sequences whose refusal went to the events (the newest)
  double nowMs = 0;         // the owner's clock at the last service()
  double lastInputsMs = 0;  // when Inputs were last sent
  double lastDropCheckMs = 0;  // when dropFarCells last looked
  std::unordered_set<std::uint64_t> droppedCells;  // cellKey: dropped, not sent whole since

  std::array<internal::SnapEntry, kSnapshotRing> ring;
  std::uint32_t newestSnapshot = 0;
  internal::SnapEntry scratchSnap;

  ClientStats stats;
  flatbuffers::FlatBufferBuilder fbb{1024};
  std::vector<sim::EditRecord> edits;          // one StepBatch's, decoded
  std::vector<sim::EditRecord> cellEdits;      // one cell's (scratch)
  std::vector<sim::SavedBrick> cellBricks;     // a full CellState's (scratch)
  std::vector<sim::BrickCoord> writtenBricks;  // scratch
  std::vector<sim::PlayerChange> playerChanges;  // one StepBatch's joins and leaves
  sim::WeatherState weather;                     // one StepBatch's weather record
  std::vector<sim::WaterChange> water;
  std::vector<sim::FireCell> fire;
  std::vector<wire::InputRec> inputRecs;
  std::vector<sim::GeneratedColumnHash> columnHashes;  // sendColumnHashes' scratch

  // Join progress and the join stream (docs/PROTOCOL.md, Joining).
  internal::Clock::time_point lastProgressSent{};  // JoinProgress while generating
  bool joinStarted = false;                  // the first JoinChunk arrived
  std::uint64_t joinTick = 0;                // JoinChunk.tick of the stream
  std::uint32_t joinTotal = 0;               // JoinChunk.total
  std::vector<std::uint8_t> joinBytes;       // the stream so far (grows as it arrives)
  std::uint32_t joinAcked = 0;               // received_bytes last sent
  std::vector<std::vector<std::uint8_t>> held;  // reliable messages held while joining, raw
  std::size_t heldBytes = 0;

  bool challengeAnswered = false;  // onAuthChallenge ran (once, before Welcome)
  std::vector<std::uint8_t> unpacked;  ///< decompressed Compressed messages

  // ---- net/client_connection.cpp: phase machine, sending, service loop, dispatch --
  ~Impl();
  void transition(ClientPhase to);
  void fail(std::string why);
  bool active() const;
  void send(wire::ClientBody type, flatbuffers::Offset<void> body, bool reliable);
  void onPacket(const ENetPacket& packet, double nowMs);
  void handle(const wire::ServerMessage& msg, double nowMs);
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
  bool holdDuringJoin(const wire::ServerMessage& msg, std::span<const std::uint8_t> bytes);

  // ---- net/client_playing.cpp: inputs and the streams while Playing -----------------
  void sendInputs();
  void resendIdleInputs();
  /// Drops the modified columns far beyond the reach, cell by cell, and tells the server.
  void dropFarCells();
  void sendColumnHashes();
  bool cellDropped(sim::CellCoord c) const { return droppedCells.contains(sim::cellKey(c)); }
  void onStepBatch(const wire::StepBatch& b);
  void pushEvent(const sim::Event& e);
  void checkHashes(const wire::StepBatch& b);
  /// Counts a desync and keeps its description (the first kMaxDesyncsKept).
  void reportDesync(std::uint64_t tick, sim::CellCoord cell, std::uint64_t ours, std::uint64_t theirs);
  void onCellState(const wire::CellState& c);
  void onSnapshot(const wire::Snapshot& s, double nowMs);
  static std::uint32_t idOf(std::uint32_t id);
  static std::uint32_t idOf(const wire::PlayerPoseRec& r);
  static std::uint32_t idOf(const wire::AnimalRec& r);
  void syncOwn();
  void setMotion(const sim::Player& player, const sim::PlayerState& motion);
  void onReject(const wire::Reject& r);
  void onActionResults(const wire::ActionResults& r);
};

}  // namespace loam::net
