// Session: what the server host keeps per ENet peer. Its phase (the session state
// machine of docs/PROTOCOL.md), the hostile-input counters and the message rate
// bucket, the input queue (with its rate bucket) and pending actions that become the
// step's commands, and what the downstream parts remember per peer (byte budget,
// snapshot ring, cell ticks). Internal to ServerHost (net/server_host.cpp and net/host/).
#pragma once

#include <enet/enet.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "loam_generated.h"  // flatc output of net/schema/loam.fbs (build tree)
#include "net/account_key.h"
#include "net/host/ordered_stream.h"
#include "net/protocol.h"
#include "sim/core/short_text.h"
#include "sim/step/commands.h"
#include "sim/systems/player.h"
#include "sim/world/world_hash.h"

namespace loam::net::host {

struct JoinState;  // net/host/join_stream.h

/// Session lifecycle (docs/PROTOCOL.md has the diagram). Phases change only through
/// HostCore::transition.
enum class Phase : std::uint8_t {
  Free,       ///< slot unused (no ENet peer)
  Connected,  ///< ENet connected; waiting for Hello
  Challenged, ///< Hello ok, AuthChallenge sent; waiting for AuthProof (accounts)
  Welcomed,   ///< Welcome sent; full clients wait here for room in the join worker
  Joining,    ///< JoinCommand goes into the next step
  Playing,    ///< in the simulation; receives StepBatches, CellStates, Snapshots
  Rejected,   ///< Reject sent; waiting for ENet to finish the disconnect
};

/// "free", "connected"... for logs.
const char* phaseName(Phase p) noexcept;

/// Whether the state machine allows from -> to.
bool legalTransition(Phase from, Phase to) noexcept;

/// Past Hello and not ended: Welcomed, Joining or Playing (counts against maxPlayers).
constexpr bool admitted(Phase p) noexcept {
  return p == Phase::Welcomed || p == Phase::Joining || p == Phase::Playing;
}
/// Joining or Playing: inputs and actions are accepted and fed to the step.
constexpr bool inGame(Phase p) noexcept { return p == Phase::Joining || p == Phase::Playing; }

/// One entity as a peer's snapshot knows it: the record it holds, which the next
/// snapshot's changes are computed against (net/entity_codec.h).
template <class Rec>
struct ContentEntry {
  Rec rec;                     ///< rec.id() is the entity's id
  std::uint32_t sentTick = 0;  ///< tick (truncated) when this value was sent: priority ageing
};

/// What the peer holds after applying snapshot `seq` (baseline + delta).
struct Manifest {
  std::uint32_t seq = 0;  ///< 0 = slot unused
  std::vector<ContentEntry<wire::PlayerPoseRec>> players;  ///< sorted by id
  std::vector<ContentEntry<wire::AnimalRec>> animals;      ///< sorted by id
  wire::PlayerStateRec own;  ///< the own player's record, sent or not (its last_input unused)
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

/// A decoded Action waiting for the input it follows.
struct PendingAction {
  std::uint32_t sequence = 0;  ///< the client's action sequence (Action.sequence)
  std::uint32_t afterInput = 0;
  std::uint64_t arrivalTick = 0;
  sim::CommandBody body;
};

/// An action handed to this tick's step: what its ActionResults record names. The
/// step reports a refusal by (player, after_input, command index), so a session hands
/// a step at most one action per pair (appendSessionCommands).
struct IssuedAction {
  std::uint32_t sequence = 0;
  std::uint32_t afterInput = 0;
  std::uint8_t command = 0;  ///< sim::CommandBody index
};

/// Message rate of one peer: a token bucket in microseconds of credit, refilled with
/// wall-clock time (kMaxMessagesPerSecond sustained, kMessageBurst at once), and the
/// flood it is in, if any. Driven by countMessage.
struct MessageBucket {
  std::int64_t creditUs = -1;      ///< credit at lastUs (-1: full, no message yet)
  std::int64_t lastUs = 0;         ///< steady-clock microseconds of the last message
  std::int64_t floodSinceUs = -1;  ///< first drop of the current flood (-1: not flooding)
  std::int64_t lastDropUs = 0;     ///< the flood's latest drop
  bool floodReported = false;      ///< Flooding was returned for this flood
};

/// Messages a peer may send at once (a quarter second of the rate): a tick that
/// follows a stall carries the inputs, acks and actions of several, but one tick can
/// no longer take a whole second's allowance.
inline constexpr std::int64_t kMessageBurst = kMaxMessagesPerSecond / 4;
/// Credit one message costs.
inline constexpr std::int64_t kMessageCostUs = 1'000'000 / kMaxMessagesPerSecond;
/// Drops closer than this (microseconds) belong to one flood.
inline constexpr std::int64_t kFloodGapUs = 1'000'000;

/// Burst of the input bucket, in ticks: inputs up to 7 ticks (117 ms) late still all
/// reach the step when they arrive together (network jitter, a slow client frame).
/// A client sending faster than the tick rate gains at most this plus
/// kMaxInputBacklog ticks of movement, once: over 300 ticks, under 1.05x.
inline constexpr std::int32_t kInputBurstTicks = 7;
/// Late credit, in ticks: a tick in which a player who has played stood still for lack
/// of input, while the burst was already full, banks one more token, up to this many
/// (500 ms). Its client is late, not fast (a stalled frame loop, a run of lost
/// packets): when the inputs it owes arrive together they all go in, at
/// SimRules::maxInputsPerTick a tick, instead of being dropped as over the rate. A
/// client that always has input waiting (sending faster than the tick rate) never
/// earns any; one that stands still to bank it can spend it once, then it is back
/// to one input per tick (at most 45 ticks of movement ahead over any stretch). A
/// join's first message, sent while the server had not yet counted the player in
/// game, earns what it carries beyond the burst (at most kMaxInputsPerMessage - 7 =
/// 9 ticks, once a join).
inline constexpr std::int32_t kInputLateTicks = 30;
/// Inputs left waiting after a tick beyond this (plus the late credit still banked)
/// are over the rate: the oldest are dropped (a client ahead of the server this far
/// is sending faster than it ticks; keeping them would only add latency). Room for a
/// burst of late inputs that the step takes over a few ticks
/// (SimRules::maxInputsPerTick at a time).
inline constexpr std::size_t kMaxInputBacklog = 8;
/// A session that dropped no input for this long (ticks) is no longer limited: the
/// next drop is logged again.
inline constexpr std::uint64_t kInputLimitQuietTicks = 10 * sim::kTicksPerSecond;

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
  /// Tick of the cells (bricks, water, fire) the peer started from: 0 for a full
  /// client, whose join state carries none (it starts from the generated world;
  /// CellSync sends every cell changed since in full when it comes near), else joinTick.
  std::uint64_t cellsTick = 0;
  double reachMetres = 0;  ///< cells within this of the player are sent (Hello.reach_metres, capped)
  std::chrono::steady_clock::time_point connectedAt{};  ///< ENet connect (join time)

  // Hostile-input accounting.
  std::uint32_t badMessages = 0;
  MessageBucket messages;  ///< message rate (countMessage)

  // Upstream.
  InputQueue inputs;
  std::uint32_t newestInput = 0;  ///< newest sequence received
  std::uint32_t fedInput = 0;     ///< newest sequence handed to a step (or dropped over the rate)
  std::int32_t inputTokens = kInputBurstTicks;  ///< inputs the step may still take (the burst)
  std::int32_t lateTokens = 0;     ///< late credit banked beyond the burst (kInputLateTicks)
  bool inputLimited = false;       ///< inputs were dropped over the rate lately (logged once)
  std::uint64_t inputLimitedTick = 0;  ///< tick of the last input dropped over the rate
  std::uint32_t newestAction = 0;  ///< newest Action.sequence queued from Inputs.actions
  std::vector<PendingAction> actions;
  std::vector<IssuedAction> issued;  ///< the actions in the current tick's step, in order
  std::vector<IssuedAction> refused; ///< actions refused on arrival (over kMaxQueuedActions), not yet answered

  // Downstream.
  double tokens = 0;                 ///< byte budget (may go negative: always-sent traffic)
  bool hasPos = false;               ///< pos valid (player in the sim after this step)
  sim::Vec3i pos;
  std::uint32_t snapshotSeq = 0;     ///< last sequence sent
  std::uint64_t snapshotTick = 0;    ///< tick the last one went
  std::uint64_t streamSentTick = 0;  ///< tick a Stream datagram last went (a snapshot due next joins it)
  std::uint32_t ackedSeq = 0;        ///< newest acknowledged
  std::uint32_t snapshotCount = 0;   ///< for the far-player cadence
  std::uint64_t lastSoundTick = 0;   ///< movement sounds up to this tick were offered
  std::array<Manifest, kSnapshotRing> ring;
  std::vector<std::uint32_t> animalView, animalViewNext;  ///< sorted ids (hysteresis)
  std::unordered_map<std::uint64_t, std::uint64_t> cellTicks;  ///< sim::cellKey -> tick of the cell the peer holds
  sim::Vec3i catchUpPos;             ///< where the last catch-up scan looked from
  bool catchUpDue = true;            ///< scan again even if the player did not move
  std::uint32_t cellsBehind = 0;     ///< stale cells in reach left for later at the last scan
  StreamOut stream;                  ///< the ordered stream (open while Playing)
  std::size_t surfaceSent = 0;       ///< SurfaceSync: messages of its log queued to this client
  /// Generated columns the client reported (ColumnHashes) and ColumnChecks has not
  /// looked at yet, oldest first, at most kMaxPendingColumnChecks.
  std::deque<sim::GeneratedColumnHash> columnChecks;

  // A full client's generation, which runs beside its join (docs/PROTOCOL.md, Joining):
  // the deadlines count from welcomeTick until WorldReady.
  std::uint64_t welcomeTick = 0;       ///< state tick Welcome was sent at
  std::uint64_t heardTick = 0;         ///< state tick of the last JoinProgress while generating
  std::uint64_t grewTick = 0;          ///< state tick the generated permille last grew at
  std::uint16_t generatedPermille = 0; ///< newest JoinProgress.generated_permille
  bool worldChecked = false;           ///< WorldReady came with the right hash: the client has its world

  // The join stream (net/host/join_stream.h; JoinStreams::clear resets it).
  std::uint64_t progressTick = 0;      ///< state tick the stream last progressed at
  bool joinStreaming = false;          ///< Playing, but the join state is not all acknowledged yet
  std::shared_ptr<const JoinState> joinState;  ///< the encoded state streamed; null until the worker is done
  std::uint32_t joinSent = 0, joinAcked = 0;   ///< stream bytes sent / acknowledged by the client

  // Accounts (docs/PROTOCOL.md, Accounts): set at Hello, used while Challenged.
  bool hasKey = false;          ///< Hello carried a public key
  bool claimOnJoin = false;     ///< the name is unclaimed: bind it to publicKey after the proof
  PublicKey publicKey{};        ///< Hello.public_key (when hasKey)
  AuthNonce authNonce{};        ///< the AuthChallenge sent

  /// Back to a free slot; keeps vector capacity (slots are reused, memory is bounded
  /// by the slot count).
  void reset() noexcept;
};

/// The verdict on one more message from a peer.
enum class RateVerdict : std::uint8_t {
  Within,    ///< handle it
  Dropped,   ///< the peer's message bucket is empty: drop it (flooded)
  Flooding,  ///< dropped, and the peer has now flooded for kFloodSecondsToReject: reject it (said once)
};
/// Seconds of flooding (drops never more than kFloodGapUs apart) before a peer is rejected.
inline constexpr std::uint32_t kFloodSecondsToReject = 3;

/// Counts one message arriving at steady-clock microsecond nowUs (non-decreasing per
/// session) against s's message bucket. No allocation.
RateVerdict countMessage(Session& s, std::int64_t nowUs) noexcept;

/// An action waits this long (ticks) for its input before it is applied anyway.
inline constexpr std::uint64_t kActionWaitTicks = 2 * sim::kTicksPerSecond;

/// Appends the sessions' commands for the step at `tick`, in the order the step
/// needs (sim/step/step.h): for each session in the game, its JoinCommand if none
/// was issued yet and up to perTick queued inputs (oldest first) the session's input
/// bucket pays for (one token each, one token per tick, at most kInputBurstTicks, and
/// up to kInputLateTicks more earned standing idle for lack of input), the oldest of
/// those still waiting beyond kMaxInputBacklog plus the late credit dropped; then each
/// session's due actions (its input was fed, or no input is queued and it arrived,
/// or it waited kActionWaitTicks), in the order they arrived, recorded in
/// Session::issued. An action with the same (after_input, command kind) as one
/// already issued this tick waits for the next, and those behind it with it. Logs
/// one line when a session starts being limited. Returns the inputs dropped over the
/// rate. Allocates command growth only.
std::uint64_t appendSessionCommands(std::span<Session> sessions, std::uint64_t tick, std::uint32_t perTick,
                                    std::vector<sim::Command>& commands);

/// The server's loop skipped `ticks` ticks: every session in the game that has played
/// banks them as late credit (up to kInputLateTicks), as a tick it stood idle for
/// lack of input would. Its client sent inputs for those ticks in real time.
void creditSkippedTicks(std::span<Session> sessions, std::uint64_t ticks) noexcept;

}  // namespace loam::net::host
