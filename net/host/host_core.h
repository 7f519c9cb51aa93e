// HostCore: what every part of the server host shares. The settings, the simulation
// state, the ENet host and its session slots, the stats, the message builder; the
// sending helpers (packets from the builder, shared or per peer, counted and charged
// to the peer's budget); the one place a session changes phase (transition); and
// the endings of sessions (reject, free). Internal to ServerHost (net/server_host.cpp
// and net/host/); one thread, the host's.
#pragma once

#include <enet/enet.h>
#include <flatbuffers/flatbuffers.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "net/enet_support.h"
#include "net/host/host_stats.h"
#include "net/host/join_rate.h"
#include "net/host/ordered_stream.h"
#include "net/host/session.h"
#include "net/server_host.h"
#include "sim/systems/sim_state.h"

namespace loam::net::host {

/// Interest distances: metres to simulation units, and squared.
inline double unitsFromMetres(double m) noexcept { return m * sim::kUnitsPerMetre; }
inline std::int64_t squaredUnits(double metres) noexcept {
  const double u = unitsFromMetres(metres);
  return static_cast<std::int64_t>(u * u);
}

struct HostCore {
  // The ENet guard is declared first so it outlives the host.
  EnetGuard enet;
  ServerConfig config;
  sim::SimState state;
  HostedWorld world;
  ENetHost* host = nullptr;
  std::uint16_t boundPort = 0;
  std::vector<Session> sessions;             ///< index = peer - host->peers
  std::vector<sim::PlayerId> pendingLeaves;  ///< LeaveCommands for the next step
  HostStats stats;
  AuthFailureLimiter authFailures;  ///< failed account proofs per address (Inbound)
  JoinRate joinRate{1, 1};          ///< connects per address (Inbound; set from config at open)
  flatbuffers::FlatBufferBuilder fbb{16 * 1024};  ///< the message being built (one at a time)

  explicit HostCore(sim::SimState initial) : state(std::move(initial)) {}
  HostCore(const HostCore&) = delete;
  HostCore& operator=(const HostCore&) = delete;
  ~HostCore();

  /// The session of an ENet peer, or nullptr (not ours, or its slot moved on).
  Session* sessionOf(ENetPeer* peer) noexcept;
  std::size_t indexOf(const Session& s) const noexcept { return static_cast<std::size_t>(&s - sessions.data()); }

  /// The one way a session changes phase. An illegal change is a server bug, not bad
  /// input: it is logged and counted in every build (and stops debug builds); the
  /// phase changes anyway, as the caller's next steps assume.
  void transition(Session& s, Phase to);
  /// Counts s's join time once it is done: Playing, and for a full client with its
  /// join stream acknowledged and its world built (WorldReady), in either order.
  void countJoinIfDone(const Session& s);

  /// A new ENet packet holding the builder's finished message (caller sends or
  /// destroys it). With `compress`, a Compressed envelope when the message is over
  /// kCompressAboveBytes and zstd makes it smaller: shared packets (StepBatch,
  /// CellState) are compressed once for every client; per-client snapshots are not
  /// (300 clients x 30 Hz of zstd cost more CPU than the bytes saved).
  ENetPacket* packetFromBuilder(std::uint32_t flags, bool compress = true);
  /// The builder's finished message as a Stream item's bytes, compressed as
  /// packetFromBuilder does (shared by every session that queues it).
  SharedMessage messageFromBuilder();
  /// Sends a (possibly shared) packet to one peer, counting it and (with `charge`)
  /// charging the peer's budget. Returns false when ENet refused (the caller owns an
  /// unsent packet).
  bool send(Session& s, std::uint8_t channel, ENetPacket* packet, wire::ServerBody type, bool charge = true);
  /// Sends `bytes` to one peer as a packet of its own, counted as `type`.
  void sendBytes(Session& s, std::uint8_t channel, std::uint32_t flags, std::span<const std::uint8_t> bytes,
                 wire::ServerBody type);
  /// Sends the builder's message to one peer (not shared, not compressed).
  void sendOwn(Session& s, std::uint8_t channel, std::uint32_t flags, wire::ServerBody type) {
    sendBytes(s, channel, flags, builtBytes(false), type);
  }
  /// Destroys a shared packet nobody took (ENet frees it otherwise).
  static void releaseIfUnsent(ENetPacket* p) noexcept;

  /// The player (if the sim may hold it) leaves in the next step.
  void dropPlayer(Session& s);
  /// Sends Reject, disconnects once ENet has delivered it, frees per-session memory.
  /// Does nothing for a Free or Rejected session.
  void reject(Session& s, RejectCode code, const std::string& text);
  /// The peer is gone: the slot becomes Free.
  void freeSession(Session& s);
  /// Counts a malformed message; too many reject the peer.
  void malformedMessage(Session& s);

  /// The peer's IP address as text ("a.b.c.d").
  static std::string addressOf(const ENetPeer* peer);

 private:
  /// The builder's finished message, or (with `compress`) its Compressed envelope
  /// when that is worth it: the one choice both packetFromBuilder and
  /// messageFromBuilder make. Valid until the builder next changes.
  std::span<const std::uint8_t> builtBytes(bool compress);
  flatbuffers::FlatBufferBuilder compressedFbb_;  ///< Compressed envelopes
  std::vector<std::uint8_t> compressScratch_;
};

}  // namespace loam::net::host
