// ServerHost: the authoritative side of the protocol. It owns the simulation state
// and an ENet host, and does one whole tick per tick() call:
//
//   1. service ENet: connects, disconnects, verified messages (Hello, WorldReady,
//      CellHashRequest, Inputs, Action); malformed or oversized input is dropped and
//      counted, and a peer that keeps sending it is disconnected with a reason;
//   2. commands for this step: joins of peers whose world checked out, leaves,
//      queued inputs (at most SimRules::maxInputsPerTick per player, oldest first,
//      and on average one per tick: an input bucket per session, net/host/session.h;
//      the rest wait for the next tick, the oldest dropped beyond kMaxInputBacklog),
//      actions whose after_input has been applied, and the caller's own commands;
//   3. sim::step;
//   4. send: the StepBatch (encoded once, one ENet packet shared by every playing
//      peer), CellState packets for cells with water or fire changes (encoded once
//      per cell, shared by the peers in reach that are up to date; stale peers in
//      reach get a full CellState, nearest first, within their byte budget), each
//      peer's Snapshot (own player every time, others and animals by interest and
//      delta against the snapshot the peer acknowledged), and the join streams
//      (JoinChunks of the state encoded off the step thread, within each joining
//      peer's window: net/host/join_stream.h); then flush.
//
// Per-peer session state machine (docs/PROTOCOL.md has the diagram):
//   Connected --Hello ok--> Welcomed --join worker has room--> Joining --admitted by a step--> Playing
//   any state --bad input / timeout / too slow--> Rejected (Reject sent, disconnect later)
// A full client joins while it generates its world (WorldReady, whenever it comes,
// ends the generation deadlines); it is Playing from the step that admitted it, with
// its join stream in flight until it acknowledges every byte. Swarm bots (Hello.wants_world = false) go
// straight from Welcomed to Joining and get no join stream. The phases and their
// legal changes are in net/host/session.h.
//
// The implementation is in parts under net/host/ (net/server_host.cpp lists them).
// Thread: one (the caller's). Never throws on peer input.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "net/account_key.h"
#include "net/traffic_counters.h"
#include "sim/step/commands.h"
#include "sim/core/result.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/streams.h"
#include "sim/world/world_hash.h"

namespace loam::sim {
class ColumnStreamer;
}

namespace loam::net {

/// Interest management radii and rates.
struct InterestConfig {
  double nearPlayerMetres = 32;      ///< players within this get every snapshot (~30 Hz)...
  std::uint32_t nearPlayersMax = 32; ///< ...but at most this many, the nearest (a crowd degrades to 5 Hz)
  int farPlayerEvery = 6;            ///< other players farther away: every Nth snapshot (~5 Hz)
  double animalEnterMetres = 60;     ///< animals enter a client's view within this
  double animalLeaveMetres = 64;     ///< and leave it beyond this (hysteresis)
  double nearAnimalMetres = 16;      ///< animals within this get every snapshot, the rest every farPlayerEvery-th
  /// Cells (edits, water, fire) within a client's reach are sent; the reach is what the
  /// client holds (Hello.reach_metres: loam-client streams 112 m), at most this.
  double cellReachMetres = 128;
  int snapshotEvery = 2;             ///< ticks between snapshots (2 = 30 Hz)
  double hearingMetres = 48;         ///< players' movement sounds reach clients this close
  int cellStateEvery = 6;            ///< ticks over which water / fire changes are merged (6 = 10 Hz)
};

/// Server settings (loam-server maps its config onto this).
struct ServerConfig {
  std::string name = "loam";
  std::string bindAddress = "0.0.0.0";   ///< "127.0.0.1" for loopback only
  std::uint16_t port = 7777;             ///< 0 = ephemeral (tests); see ServerHost::port()
  std::uint32_t maxPlayers = 64;
  std::uint32_t bandwidthCapBytesPerSecond = 256 * 1024;  ///< per client, downstream budget
  std::uint32_t reliableBacklogCapBytes = 8u << 20;       ///< beyond this a peer is TooSlow (join stream excluded)
  /// ENet peers one IP address may hold at once (any phase, loopback included); more
  /// are refused at connect (AddressLimit) so one host cannot take every slot.
  std::uint32_t maxPeersPerAddress = 4;
  /// Connects one IP address may make per minute, after a burst of maxPeersPerAddress;
  /// more are refused at connect (JoinRate), so a join-and-leave loop stays cheap.
  std::uint32_t joinsPerMinutePerAddress = 30;
  InterestConfig interest;
  /// What a joining player's account key must prove (docs/PROTOCOL.md, Accounts).
  AuthMode auth = AuthMode::Off;
  /// The accounts consulted and claimed when auth is not Off (loam-server: the
  /// accounts file beside the saves). Null with auth on: every name is unclaimed and
  /// claims are refused.
  std::shared_ptr<AccountBook> accounts;
};

/// What the server has done, for the stats line, metrics and benches.
/// Upper bounds (seconds) of the join time histogram buckets (ENet connect to
/// Playing, world generation on the client and the acknowledged join stream
/// included); +Inf is implied.
inline constexpr std::array<double, 7> kJoinBucketsSeconds{0.5, 1, 2, 3, 5, 10, 30};

/// The counters the host keeps as it runs, listed once: the host counts into them
/// (net/host/host_stats.h) and ServerStats reports them.
struct ServerCounters {
  std::uint64_t bytesIn = 0, bytesOut = 0; ///< UDP payload incl. ENet headers (host totals)
  std::uint64_t malformed = 0;             ///< dropped inbound messages (bad size, verifier, content)
  std::uint64_t flooded = 0;               ///< dropped for rate
  std::uint64_t rejected = 0;              ///< sessions ended with a Reject
  std::uint64_t addressRefused = 0;        ///< connects refused: the address had maxPeersPerAddress peers
  std::uint64_t joinRateRefused = 0;       ///< connects refused: the address connected too often (JoinRate)
  std::uint64_t authFailures = 0;          ///< account proofs that failed (wrong key or bad signature)
  std::uint64_t joinTimeouts = 0;          ///< sessions dropped for no Hello or no join progress in time
  std::uint64_t joins = 0, leaves = 0;
  std::array<std::uint64_t, kJoinBucketsSeconds.size() + 1> joinSecondsBuckets{};  ///< per bucket; last = +Inf
  double joinSecondsSum = 0;               ///< connect to Playing, summed over sessions
  std::uint64_t joinSecondsCount = 0;
  std::uint64_t inputsDropped = 0;         ///< queue overflow
  std::uint64_t inputsOverRate = 0;        ///< dropped by the input bucket: sent faster than the tick rate
  std::uint64_t budgetDeferred = 0;        ///< records held back by per-client budgets
  std::uint64_t waterRecordsLeftOut = 0;   ///< water records not sent: the amount was the last flush's
  std::uint64_t streamResentBytes = 0;     ///< ordered-stream item bytes sent again (copies and resends)
  std::uint64_t illegalTransitions = 0;    ///< session phase changes the state machine forbids (server bugs)
  /// Generated columns clients reported (ColumnHashes), by what the check found:
  std::uint64_t columnsChecked = 0;        ///< equal to the server's
  std::uint64_t columnsUnchecked = 0;      ///< not checkable: the server did not hold it, or held it modified
  std::uint64_t columnMismatches = 0;      ///< different: the client was rejected (WorldMismatch)
};

/// What ServerHost::stats() reports: the counters, the population and the traffic
/// by message name.
struct ServerStats : ServerCounters {
  std::uint32_t players = 0;               ///< sessions in Playing
  /// Changed cells within playing clients' reach that they are behind on and were not
  /// sent whole yet (budget, or the per-tick cap), summed over the clients as of their
  /// last catch-up: 0 once every client holds what is near it.
  std::uint64_t cellsBehind = 0;
  /// Ordered-stream items playing clients have not acknowledged, summed: 0 once every
  /// client has everything the server queued for it.
  std::uint64_t streamUnacked = 0;
  /// Far edits (net/host/surface_sync.h): patches of ground whose change was sent, and
  /// patches waiting to be summed.
  std::uint64_t surfacePatches = 0, surfaceDue = 0;
  std::uint32_t peers = 0;                 ///< ENet peers connected
  std::map<std::string, TrafficCounters> sent;      ///< by ServerBody name
  std::map<std::string, TrafficCounters> received;  ///< by ClientBody name
};

/// What the server knows about the world it hosts (sent in Welcome).
struct HostedWorld {
  std::string sceneName;                    ///< Scene::name (clients find <name>.toml)
  /// The generated world's hash clients check theirs against: the columns hash of its
  /// spawn columns (sim::spawnColumns), the only part every client generates before it
  /// plays. Every client streams its world, whatever its size (docs/PROTOCOL.md).
  std::uint64_t generatedHash = 0;
  std::vector<sim::CellHash> generatedCells;  ///< its cell hashes (GeneratedCellHashes)
};

/// One admitted session, for the admin console.
struct PeerInfo {
  sim::PlayerId id;
  std::string name;
  std::string address;   ///< "a.b.c.d:port"
  std::uint32_t rttMs = 0;  ///< ENet's smoothed round-trip time
};

/// Decides whether an address (dotted quad, at connect) or a name (at Hello) may
/// join: returns "" to admit, else the reason sent in the Reject.
using AdmissionFilter = std::function<std::string(const std::string& address, const std::string& name)>;

/// Describes a freshly made world (generated whole or streamed, before any save is
/// applied) for Welcome: hashColumns of scene's spawn columns, which it holds.
HostedWorld describeWorld(const sim::Scene& scene, const sim::BrickStore& generated);

class ServerHost {
 public:
  /// Binds the UDP port and takes the state. state may already be advanced (a
  /// loaded save). Errors: bind failures ("port 7777 in use").
  /// A streamed world passes the streamer behind state.world: every tick updates it
  /// around the players before the step (it must outlive the host).
  static sim::Result<std::unique_ptr<ServerHost>> open(const ServerConfig& config, sim::SimState state,
                                                       HostedWorld world, sim::ColumnStreamer* streamer = nullptr);
  ~ServerHost();
  ServerHost(const ServerHost&) = delete;
  ServerHost& operator=(const ServerHost&) = delete;

  /// One tick (see the file comment). serverCommands are added to the step (console,
  /// scenario). Returns the step's output (valid until the next tick).
  const sim::StepOutput& tick(std::span<const sim::Command> serverCommands = {});

  /// Waits up to timeoutMs for network input (so an idle loop sleeps in the socket
  /// instead of spinning), handling what arrives. The next tick() handles the rest.
  void waitForInput(int timeoutMs);

  /// The caller's loop dropped `ticks` ticks to catch up (TickPacer::endBurst). The
  /// clients went on sending an input per tick of real time, so the catch-up that
  /// arrives is owed, not fast: each playing session banks the ticks as late credit
  /// (net/host/session.h, at most kInputLateTicks) instead of having it dropped.
  void skippedTicks(std::uint64_t ticks) noexcept;

  /// Sessions past Hello (welcomed, joining or playing). Allocates.
  std::vector<PeerInfo> players() const;

  /// Rejects the session of player id with reason (the player leaves in the next
  /// step). False if no such session.
  bool kick(sim::PlayerId id, const std::string& reason);

  /// Installs the admission check (called at connect with name "", at Hello with
  /// both). Replaces any previous one; an empty function admits everyone.
  void setAdmissionFilter(AdmissionFilter filter);

  /// Sends Reject{ShuttingDown} to everyone and flushes.
  void shutdown();

  const sim::SimState& state() const noexcept;
  /// The world-hash term of chunk c when it is changed, else nothing (the world
  /// database stores it with the chunk's bricks). O(1).
  std::optional<std::uint64_t> chunkTerm(sim::ChunkCoord c) const;
  /// Pages out columns whose edits the world database holds (BrickStore::dropColumns,
  /// between ticks): they load again from it when something reads them. Returns the
  /// columns released.
  int dropColumns(std::span<const sim::ChunkColumn> columns);
  std::uint16_t port() const noexcept;
  ServerStats stats() const;
  /// Microseconds the last tick spent in step, in sending and in total.
  struct TickTimes { double stepUs = 0, sendUs = 0, totalUs = 0; };
  TickTimes lastTickTimes() const noexcept;

 private:
  struct Impl;
  explicit ServerHost(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace loam::net
