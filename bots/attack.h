// Attackers: hostile peers for hardening tests and the hostile soak (scripts/soak-hostile).
// Each attacker is one ENet peer with a small state machine; all attackers of one
// Attack share one ENet host, bound to a chosen address (so they can come from
// 127.0.0.2 while honest bots use 127.0.0.1). What they do, by mode:
//
//   connect-only: ENet connect, then silence (holds a peer slot).
//   hello-only:   Hello as a full bot (wants the world), then never WorldReady.
//   join-spam:    Hello as a swarm bot, wait until playing (first Snapshot), leave,
//                 connect again at once: the cheapest possible join, in a loop.
//   garbage:      Hello as a swarm bot, then hostile messages every tick: random bytes,
//                 truncated and bit-flipped valid messages, wrong union types,
//                 oversized packets, too many inputs, bad inputs, out-of-range actions,
//                 messages out of phase, and floods above the message rate. Some
//                 sessions send garbage before any Hello.
//   speed:        Hello as a swarm bot, then 4 inputs per tick (240/s), walking ahead.
//
// Whatever ends a session (a Reject, a disconnect, a failed connect), the attacker
// connects again after a short pause, so the pressure lasts the whole run. Each
// attacker counts what it sent and how the server answered (rejects by code).
// Randomness comes from the seed only, so a run repeats (the server's timing aside).
//
// Thread: the owner's. Allocates per received or garbage message (scratch buffers).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "net/enet_support.h"
#include "net/own_ring.h"
#include "net/snapshot_codec.h"
#include "sim/core/result.h"


namespace flatbuffers {
class FlatBufferBuilder;
}

namespace loam::bots {

enum class AttackMode : std::uint8_t { ConnectOnly, HelloOnly, JoinSpam, Garbage, Speed };
inline constexpr std::size_t kAttackModeCount = 5;

/// "connect-only", "hello-only", "join-spam", "garbage", "speed".
const char* attackModeName(AttackMode mode) noexcept;
/// The mode named s (as attackModeName), or nothing.
std::optional<AttackMode> parseAttackMode(std::string_view s) noexcept;

/// What a garbage attacker sends (one counter each in AttackStats::garbage).
enum class GarbageKind : std::uint8_t {
  RandomBytes,     ///< 1..2048 random bytes
  Truncated,       ///< a valid message cut short
  BitFlipped,      ///< a valid message with 1..8 bytes changed
  WrongUnion,      ///< the union tag names another table than the one stored
  Oversized,       ///< a valid Chat action larger than the server's packet limit
  TooManyInputs,   ///< Inputs with more than kMaxInputsPerMessage records
  BadInputs,       ///< sequence 0 or going back, unknown buttons, pitch out of range, future ack
  BadAction,       ///< dig / place / pour / ignite / chat fields out of range
  OutOfPhase,      ///< second Hello, WorldReady with a wrong hash, repeated CellHashRequest, AuthProof, JoinProgress
  Flood,           ///< 40 valid Inputs in one tick (2,400/s, above the message rate)
};
inline constexpr std::size_t kGarbageKindCount = 10;
const char* garbageKindName(GarbageKind kind) noexcept;

/// How to attack. Plain data.
struct AttackConfig {
  AttackMode mode = AttackMode::ConnectOnly;
  std::string host = "127.0.0.1";   ///< the server
  std::uint16_t port = 7777;
  std::string bind;                 ///< local address to send from ("" = any)
  std::uint32_t count = 1;          ///< attackers (peers at once)
  std::uint64_t seed = 1;
  std::string namePrefix = "atk";   ///< names are <prefix><N>
  double reconnectMs = 250;         ///< pause after a session ends before connecting again
  std::uint32_t garbagePerTick = 2; ///< garbage messages per attacker per tick (floods add more)
};

/// What the attackers of one Attack sent and got. Counters only grow.
struct AttackStats {
  std::uint64_t connectAttempts = 0;  ///< enet_host_connect calls
  std::uint64_t connected = 0;        ///< ENet connects completed
  std::uint64_t connectFailed = 0;    ///< attempts that ended before ENet connected
  std::uint64_t hellos = 0;
  std::uint64_t welcomes = 0;
  std::uint64_t joins = 0;            ///< sessions that reached playing (first Snapshot)
  std::uint64_t leaves = 0;           ///< sessions the attacker ended itself (join-spam)
  std::uint64_t dropped = 0;          ///< sessions the server ended without a Reject message
  std::uint64_t rejected = 0;         ///< sessions ended by a Reject message or reject code
  std::map<std::uint16_t, std::uint64_t> rejectsByCode;  ///< Reject.code (or the disconnect code)
  std::uint64_t messagesSent = 0, bytesSent = 0;         ///< application payloads
  std::uint64_t messagesReceived = 0, bytesReceived = 0;
  std::uint64_t inputsSent = 0;       ///< input records (speed attackers: 4 per tick)
  std::array<std::uint64_t, kGarbageKindCount> garbage{};  ///< by GarbageKind
  double joinMsSum = 0, joinMsMax = 0;  ///< connect to playing, of the sessions that joined
  double playingSeconds = 0;            ///< speed: time spent playing, summed over attackers
  double metresMoved = 0;               ///< speed: horizontal distance in the server's snapshots
};

/// One attacker: its peer and where its session is.
struct Attacker {
  enum class State : std::uint8_t {
    Waiting,     ///< no peer; connects again at retryAtMs
    Connecting,  ///< enet_host_connect sent, no connect event yet
    Silent,      ///< connected and saying nothing (connect-only; garbage before Hello)
    HelloSent,   ///< Hello sent, no Welcome yet
    Welcomed,    ///< Welcome received (hello-only stays here; swarm-kind Hellos wait for a Snapshot)
    Playing,     ///< first Snapshot received
    Leaving,     ///< we disconnected; waiting for ENet to confirm
  };
  std::uint32_t index = 0;  ///< 1-based
  std::string name;
  ENetPeer* peer = nullptr;
  State state = State::Waiting;
  double retryAtMs = 0;
  double connectAtMs = 0;     ///< when the current attempt started
  bool rejected = false;      ///< the current session got a Reject message
  bool preHelloGarbage = false;  ///< garbage: this session sends garbage before Hello
  std::uint32_t sessionTicks = 0;
  std::uint32_t sequence = 0;     ///< last input sequence sent
  std::uint32_t snapshotAck = 0;
  net::OwnRing owns;              ///< own by snapshot (a Snapshot without own has its baseline's)
  bool havePosition = false;
  std::int32_t lastX = 0, lastZ = 0;  ///< units, from the newest Snapshot
  double lastTickMs = 0;          ///< when this attacker's previous tick ran
  std::uint32_t stuckSnapshots = 0;  ///< speed: snapshots without movement (turns then)
  std::uint16_t yaw = 0;             ///< speed: walking direction
};

class Attack {
 public:
  /// Creates the host (bound to config.bind when set) and starts every attacker
  /// connecting. Errors: ENet, resolving the server or the bind address, a host of
  /// config.count peers.
  static sim::Result<std::unique_ptr<Attack>> open(const AttackConfig& config, double nowMs);
  ~Attack();
  Attack(const Attack&) = delete;
  Attack& operator=(const Attack&) = delete;

  /// Handles everything that arrived; then, when tick, does each attacker's tick
  /// work (garbage, speed inputs, reconnects); then flushes. Call at 60 Hz.
  void service(double nowMs, bool tick);

  /// Disconnects every attacker (waits up to waitMs for acknowledgements).
  void close(int waitMs);

  const AttackConfig& config() const noexcept { return config_; }
  const AttackStats& stats() const noexcept { return stats_; }
  const std::vector<Attacker>& attackers() const noexcept { return attackers_; }
  /// Attackers in state s now.
  std::size_t countIn(Attacker::State s) const noexcept;

 private:
  Attack() = default;
  void connect(Attacker& a, double nowMs);
  void sessionEnded(Attacker& a, std::uint32_t disconnectData, double nowMs);
  void onConnect(Attacker& a, double nowMs);
  void onPacket(Attacker& a, const std::uint8_t* data, std::size_t size, std::uint8_t channel, double nowMs);
  void onSnapshot(Attacker& a, const net::SnapshotMessage& s, double nowMs);
  void tickAttacker(Attacker& a, double nowMs);
  void sendHello(Attacker& a, bool wantsWorld);
  void sendSpeedInputs(Attacker& a);
  void sendGarbage(Attacker& a);
  /// Sends the finished message in fbb_ (then clears it).
  void sendBuilt(Attacker& a, bool reliable);
  void sendBytes(Attacker& a, const std::uint8_t* data, std::size_t size, bool reliable);
  /// Builds one valid client message into fbb_ (finished): Inputs, Action or Hello.
  void buildValid(Attacker& a);

  net::EnetGuard enet_;  // first: released after the host is destroyed
  AttackConfig config_;
  ENetHost* host_ = nullptr;
  ENetAddress address_{};  ///< the server
  std::vector<Attacker> attackers_;
  std::unique_ptr<flatbuffers::FlatBufferBuilder> fbb_;
  std::vector<std::uint8_t> bytes_;     ///< garbage scratch
  std::vector<std::uint8_t> unpacked_;  ///< decompressed Compressed messages
  std::vector<std::uint32_t> gone_;     ///< a snapshot's gone lists (decodeSnapshot)
  std::mt19937_64 rng_;
  AttackStats stats_;
};

/// The stats as one JSON object: mode, count, seconds, every counter, rejects by code
/// name ("malformed messages": 12), garbage by kind, join ms mean and max, speed m/s.
std::string attackReportJson(const AttackConfig& config, const AttackStats& stats, double seconds);

}  // namespace loam::bots
