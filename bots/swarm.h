// Swarm bots: many lightweight players on ONE ENet host (one peer each), for load
// tests of the server's session, input and snapshot paths. They have no world: they
// say Hello{wants_world = false}, walk by their own position from Snapshots, send
// inputs at 60 Hz with snapshot acknowledgements, and only verify and count what
// comes back (bytes by type, own state, StepBatch tick). Per-bot work is a few
// hundred bytes of state and one reused FlatBufferBuilder, so one core drives
// 1000+ bots.
//
// Thread: the owner's.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bots/bot_script.h"
#include "net/account_key.h"
#include "net/enet_support.h"
#include "net/own_ring.h"
#include "net/snapshot_codec.h"
#include "net/stream_codec.h"
#include "net/stream_receipt.h"
#include "net/traffic_counters.h"
#include "sim/core/result.h"

typedef struct _ENetHost ENetHost;
typedef struct _ENetPeer ENetPeer;

namespace flatbuffers {
class FlatBufferBuilder;
}
namespace loam::wire {
struct AuthChallenge;
}

namespace loam::bots {

/// One swarm bot's state and counters.
struct SwarmBot {
  enum class Phase : std::uint8_t { Connecting, Welcomed, Playing, Failed, Disconnected };
  std::string name;
  std::uint32_t index = 0;  ///< 1-based
  ENetPeer* peer = nullptr;
  Phase phase = Phase::Connecting;
  std::string error;
  std::uint32_t playerId = 0;
  std::uint32_t sequence = 0;        ///< last input sequence sent
  std::uint32_t snapshotAck = 0;     ///< newest snapshot received
  net::StreamReceipt receipt;        ///< the ordered stream's items received (Inputs.stream_ack)
  std::uint64_t stepsApplied = 0;    ///< StepBatches received
  std::uint64_t snapshots = 0;
  std::uint64_t ticks = 0;           ///< bot ticks since playing
  sim::PlayerState own;              ///< from the newest Snapshot
  net::OwnRing owns;                 ///< own by snapshot (a Snapshot without own has its baseline's)
  std::array<sim::PlayerInput, 16> recent{};  ///< the newest inputs (ring by sequence)
  double joinMs = 0;
  double rttMs = 0;
  std::uint64_t bytesIn = 0, bytesOut = 0;  ///< ENet payload totals of the peer
  std::array<net::TrafficCounters, 11> received{};  ///< by wire::ServerBody value
  std::array<net::TrafficCounters, 8> sent{};       ///< by wire::ClientBody value
  std::optional<net::AccountKey> key;  ///< the bot's account key (botAccountKey), none with account seed 0
  bool challengeAnswered = false;      ///< an AuthProof was sent
  std::unique_ptr<BotScript> script;
};

class Swarm {
 public:
  /// Creates the host and starts connecting count bots to host:port. Each bot's
  /// account key is net::botAccountKey(accountSeed, name); accountSeed 0 = no keys
  /// (servers with --auth required refuse those). Errors: socket, resolve.
  static sim::Result<std::unique_ptr<Swarm>> open(const std::string& host, std::uint16_t port, std::uint32_t count,
                                                  const std::string& namePrefix, const sim::Script& script,
                                                  double startMs, std::uint64_t accountSeed = 0,
                                                  const std::string& bindAddress = "");
  ~Swarm();
  Swarm(const Swarm&) = delete;
  Swarm& operator=(const Swarm&) = delete;

  /// Handles everything that arrived, then (when tick) sends one input per playing
  /// bot, then flushes. Progress lines go to stderr.
  void service(double nowMs, bool tick);

  /// Blocks until a datagram arrives or timeoutMs passes (between ticks: what arrives
  /// is taken at once instead of piling up in the socket for a tick).
  void waitForData(int timeoutMs);

  /// Disconnects every bot (flushes, waits up to waitMs for acknowledgements).
  void disconnect(int waitMs);

  std::vector<SwarmBot>& bots() noexcept { return bots_; }

 private:
  Swarm() = default;
  void onPacket(SwarmBot& bot, const std::uint8_t* data, std::size_t size, std::uint8_t channel, double nowMs);
  void onSnapshot(SwarmBot& bot, const net::SnapshotMessage& s, double nowMs);
  /// Ends the bot with an error (logged), disconnecting it.
  void fail(SwarmBot& bot, std::string why);
  void sendInputs(SwarmBot& bot);
  /// Signs an AuthChallenge with the bot's key and sends the AuthProof.
  void answerChallenge(SwarmBot& bot, const wire::AuthChallenge& challenge);
  void send(SwarmBot& bot, std::uint8_t type, bool reliable);

  net::EnetGuard enet_;  // first: released after the host is destroyed
  ENetHost* host_ = nullptr;
  std::vector<SwarmBot> bots_;
  std::unique_ptr<flatbuffers::FlatBufferBuilder> fbb_;
  std::vector<std::uint8_t> unpacked_;  ///< decompressed Compressed messages
  std::vector<std::uint8_t> itemUnpacked_;  ///< the same for a Stream item
  std::vector<std::uint32_t> gone_;         ///< a snapshot's gone lists (decodeSnapshot)
  std::vector<net::StreamItemView> streamItems_;  ///< a Stream datagram's items (decodeStream)
  std::vector<std::uint8_t> itemCopy_;            ///< one of them, aligned for FlatBuffers
  double startMs_ = 0;
  BotTick scratch_;
};

}  // namespace loam::bots
