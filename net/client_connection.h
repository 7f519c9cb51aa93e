// ClientConnection: one player's side of the protocol, used by loam-client and by
// full bots. It connects (optionally through a LinkSimulator), says Hello, builds
// the world from the scene named in Welcome (on a worker thread, reporting
// progress, which it reports to the server), checks the generated-world hash against
// the server's (a mismatch names the differing cells), receives the join state in
// JoinChunks (acknowledging them: the server's flow control; StepBatches and
// CellStates that arrive meanwhile are held), applies it, and then decodes every
// StepBatch (in order), CellState and Snapshot into records for its mirror and
// hands them to the mirror's functions (sim/step/mirror.h, the code the mirror test
// proves). After each step it checks the world hash and touched cell hashes (a
// difference is a desync, recorded with tick and cell). It predicts the own player
// (net/prediction.h) and interpolates the others (net/interpolation.h).
//
// Every world is streamed, whatever its size (ClientConfig::streamThreads ...): the
// mirror starts from the spawn columns (sim::createMirrorState), the join check hashes
// those columns, and every service() generates ahead around the predicted player,
// releases what it left behind and adds arriving columns' generated water; the
// server sends the interest cells whose water or fire changed as the player comes
// near (docs/PROTOCOL.md, Joining). An owner that already holds the generated world
// (a bot swarm, the local server) may hand over a copy instead (worldFactory).
//
// Phases (ClientPhase): Connecting -> AwaitingWelcome -> Generating ->
// AwaitingSnapshot -> Playing, and Failed or Disconnected from any of them. Every
// change goes through one transition() that checks legalTransition (counting and
// logging an illegal one), records it in ClientStats::phaseLog and times the join.
//
// Thread: one (the caller's); generation runs on a worker thread it owns.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/account_key.h"
#include "net/interpolation.h"
#include "net/link_sim.h"
#include "net/predicted_edits.h"
#include "net/prediction.h"
#include "net/protocol.h"
#include "net/traffic_counters.h"
#include "sim/step/commands.h"
#include "sim/core/result.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_state.h"
#include "sim/world/surface_change.h"

namespace loam::sim {
class TerrainSampler;
}

namespace loam::net {

/// Hands over a copy of the whole generated world for a scene and seed (progress gets
/// 0..1), for owners that hold one already (bots share one world, the local server
/// has its own); the mirror then holds it all and streams nothing.
using WorldFactory = std::function<sim::Result<sim::SimState>(const sim::Scene&, std::uint64_t seed,
                                                              const std::function<void(double)>& progress)>;

struct ClientConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7777;
  std::string name = "player";
  std::string sceneDir = "scenes";  ///< where <scene name>.toml is looked up
  LinkProfile link;                 ///< active() = connect through a LinkSimulator
  WorldFactory worldFactory;        ///< empty = stream the world
  ClientKind kind = ClientKind::Player;  ///< Hello.kind
  /// The account key Hello carries and AuthChallenges are signed with (its secret
  /// never leaves this process); null = none (docs/PROTOCOL.md, Accounts).
  std::shared_ptr<const AccountKey> accountKey;
  /// The streamed mirror holds the columns near the player (sim::createMirrorState),
  /// generated ahead on streamThreads threads within streamRadiusMetres of the
  /// predicted player; unmodified columns beyond residentColumns (at least twice the
  /// columns within streamRadiusMetres) are released (sim::StreamOptions says which).
  int streamThreads = 2;
  double streamRadiusMetres = 112.0;  ///< the renderer's 96 m plus a margin
  std::size_t residentColumns = 2048;
};

/// Around the player of a streamed mirror, every column within this is present
/// whenever service() returns while Playing (it generates, on the caller, what the
/// streamer has not finished ahead): the ground the predicted player stands and
/// moves on. A join is playable once it exists.
inline constexpr double kGroundRadiusMetres = 16.0;
/// While ClientConnection::worldReadable(), every column within this of the player is
/// present: other threads of the owner (sound's ray workers, whose rays reach 64 m)
/// may read the mirror there without generating anything. Not held by force: the
/// streamer fills it in, nearest first, within a second of a join or a teleport.
inline constexpr double kReadableRadiusMetres = 72.0;

/// A connection's lifecycle, in join order; Failed and Disconnected are final.
enum class ClientPhase : std::uint8_t {
  Connecting,        ///< ENet is connecting; nothing sent yet
  AwaitingWelcome,   ///< connected, Hello sent; waiting for Welcome (or Reject)
  Generating,        ///< building the world named in Welcome on the worker thread,
                     ///< then checking its hash (on a mismatch: asking for the cell
                     ///< hashes that name the differing cells, then Failed); the
                     ///< server admits us meanwhile, and what it sends is held: the
                     ///< join state (JoinChunks), the Stream and full CellStates
  AwaitingSnapshot,  ///< built and checked, WorldReady sent; the rest of the join state
                     ///< is on its way (held as above)
  Playing,           ///< following StepBatches, CellStates and Snapshots; sending inputs
  Failed,            ///< ended by an error here or a Reject (error() says why)
  Disconnected,      ///< ended by either side disconnecting (error() says which)
};
/// "connecting", "awaiting welcome", ... (logs, the client's status line).
const char* phaseName(ClientPhase phase) noexcept;
/// True when a connection may go from `from` to `to`: one step along the join
/// (Connecting to Playing), or from any phase but Failed and Disconnected to either.
bool legalTransition(ClientPhase from, ClientPhase to) noexcept;

/// One phase change, as transition() records it.
struct PhaseChange {
  double atMs = 0;  ///< since connect() started
  ClientPhase from = ClientPhase::Connecting;
  ClientPhase to = ClientPhase::Connecting;
};

/// A desync: the mirror's hashes differed from the server's after applying a step.
struct Desync {
  std::uint64_t tick = 0;
  std::optional<sim::CellCoord> cell;  ///< first differing cell, when a cell hash differed
  std::string what;                    ///< "world hash 1a2b.. != server 3c4d.." etc.
};

struct ClientStats {
  std::map<std::string, TrafficCounters> received;  ///< by ServerBody name
  std::map<std::string, TrafficCounters> sent;      ///< by ClientBody name
  std::uint64_t bytesIn = 0, bytesOut = 0;          ///< UDP payload incl. ENet headers
  std::uint64_t datagramsIn = 0;                    ///< UDP datagrams received (28 bytes of UDP/IPv4 header each)
  double rttMs = 0;                                 ///< ENet's round-trip estimate
  double joinMs = 0;                                ///< connect to Playing
  double generateMs = 0;                            ///< of which building the world
  double restoreMs = 0;                             ///< of which applying the join state (decode and restore)
  double holdMs = 0;                                ///< of which generating the ground around the player
  std::vector<PhaseChange> phaseLog;                ///< the phase changes, in order (5 at most when legal)
  std::uint64_t illegalTransitions = 0;             ///< phase changes legalTransition forbids (client bugs)
  std::uint64_t stepsApplied = 0;
  std::uint64_t hashChecks = 0;
  std::uint64_t cellChecks = 0;  ///< full CellStates (a cell caught up) whose hash was checked
  std::vector<Desync> desyncs;                      ///< first 16 kept
  std::uint64_t desyncCount = 0;
  std::uint64_t snapshotsReceived = 0;
  PredictionStats prediction;
  EditPredictionStats edits;  ///< the own edits shown before the server's answer (PredictedEdits)
  bool streamed = false;      ///< the mirror is streamed (no worldFactory)
  sim::StreamStats stream;    ///< the streamer's counters (streamed worlds)
  /// Columns within kGroundRadiusMetres of the player that service() had to generate on
  /// the caller while Playing because the streamer had not generated them ahead: the
  /// holes a player would have met (0 when streaming keeps up). The disc around a
  /// teleport's new place is not counted (teleportPlayableMs times it).
  std::uint64_t holesMet = 0;
  /// Interest cells whose modified columns were dropped (far beyond the reach: their
  /// edits go with them; CellsDropped told the server, which sends them whole again).
  std::uint64_t cellsDropped = 0;
  /// Generated columns reported to the server with their hashes (ColumnHashes), which
  /// it checks against its own where it holds them unmodified.
  std::uint64_t columnsReported = 0;
  /// Time to playable after each teleport (a server move, PredictionStats::teleports):
  /// from the Snapshot that moved the own player to the ground around the new place
  /// being present (kGroundRadiusMetres; 0 for a mirror from worldFactory), ms. The
  /// first 64 kept.
  std::vector<double> teleportPlayableMs;
  /// Patches of ground the server said changed (SurfaceChanges; distinct, at most
  /// kMaxSurfacePatches), and records refused beyond that cap.
  std::uint64_t surfacePatches = 0, surfaceRefused = 0;
};

class ClientConnection {
 public:
  /// Starts connecting (non-blocking). Errors: resolve / socket / link failures.
  static sim::Result<std::unique_ptr<ClientConnection>> connect(const ClientConfig& config);
  ~ClientConnection();
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  /// Handles everything that arrived (waiting up to timeoutMs for the first event)
  /// and flushes. nowMs: client steady clock in ms (interpolation, join time).
  void service(double nowMs, int timeoutMs = 0);

  /// One client tick of input (call at 60 Hz while Playing): assigns the next input
  /// sequence, predicts, and sends Inputs with every unacknowledged input.
  void sendInput(sim::PlayerInput input);

  /// Sends an edit or chat, to be applied after the newest input sent so far, and
  /// shows an edit at once (predictedEdits(); its sound's events come with the next
  /// takeEvents()). Returns the action's sequence, 0 when nothing was sent (not
  /// Playing; only Dig, Place, Pour, Ignite and Chat bodies are actions).
  std::uint32_t sendAction(const sim::CommandBody& body);

  /// Disconnects politely (flushes).
  void disconnect();

  ClientPhase phase() const noexcept;
  const std::string& error() const noexcept;        ///< why Failed / Disconnected
  double progress() const noexcept;                 ///< generation progress 0..1
  sim::PlayerId playerId() const noexcept;
  const sim::SimState& mirror() const noexcept;     ///< valid from AwaitingSnapshot
  /// The scene's terrain anywhere, from its generator (the far view draws it); valid
  /// from AwaitingSnapshot, null before. Built by the first call (a bot that never
  /// draws never pays for it); one thread. Shared: it outlives the connection's world.
  std::shared_ptr<const sim::TerrainSampler> terrainSampler() const;
  const Predictor& predictor() const noexcept;
  const InterpolationBuffer& others() const noexcept;  ///< other players, by id value
  const InterpolationBuffer& animals() const noexcept; ///< animals in view, by id value
  std::string playerName(std::uint32_t id) const;     ///< "" when unknown
  /// Species of an animal in view (from its snapshot record), nullopt when unknown.
  std::optional<sim::AnimalSpecies> animalSpecies(std::uint32_t id) const;
  /// Decays the prediction's visual correction by one rendered frame (call once per
  /// frame; predictor().visualOffset() is the remaining offset to draw).
  void advanceFrame() noexcept;
  /// Tick of the newest step applied. Steps with nothing for this client are skipped
  /// (docs/PROTOCOL.md, The ordered stream), so it trails the server's by up to
  /// kStepHeartbeatTicks when idle.
  std::uint64_t serverTick() const noexcept;
  /// True while Playing when every column within kReadableRadiusMetres of the player
  /// is present (always, for a mirror from worldFactory): until then, other threads
  /// must not read the mirror (sound waits).
  bool worldReadable() const noexcept;
  ClientStats stats() const;

  /// The own edits awaiting the server's answer: the world as the player sees it is
  /// predictedEdits().overlay() over mirror().world.
  const PredictedEdits& predictedEdits() const noexcept;
  /// The bricks whose predicted voxels changed since the last call (shown or settled;
  /// the renderer's meshes redo them). The mirror's own changes: takeWorldChanges.
  std::vector<sim::BrickCoord> takePredictedChanges();
  /// The ground changes anywhere in the world (SurfaceChanges: what the far view lays
  /// over the generator) received since the last call, the latest per patch; the first
  /// call returns every one received so far.
  std::vector<sim::SurfaceChange> takeSurfaceChanges();

  /// Events of the steps applied since the last call (for audio, HUD, chat), in order;
  /// the own predicted edits' events come when they are made, not again with the step.
  std::vector<sim::Event> takeEvents();
  /// Registers a consumer of the mirror's brick changes (the renderer's meshes, the
  /// sound's ray cache): sim::BrickStore::subscribeChanges on the mirror, whose
  /// first takeWorldChanges reports every brick changed since generation (the
  /// join state's included). Call once per consumer, from AwaitingSnapshot on (the
  /// mirror exists; LOAM_ASSERT).
  sim::ChangeSubscriber subscribeWorldChanges();
  /// The bricks of the mirror changed for `sub` since its last call, clearing them.
  /// Allocates.
  std::vector<sim::BrickCoord> takeWorldChanges(sim::ChangeSubscriber sub);

 private:
  struct Impl;
  explicit ClientConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::net
