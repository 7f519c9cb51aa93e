// What every ENet user in Loam shares: process-wide initialisation (reference
// counted: ServerHost, ClientConnection, swarm bots and tests may each hold a guard,
// in any order, on any thread), the peer settings both ends use, and a cap on
// ENet's retransmission backoff.
#pragma once

#include <enet/enet.h>

#include <span>

namespace loam::net {

/// Initialises ENet if no one holds it yet. Returns false when enet_initialize
/// failed (nothing is held then). Thread-safe; no allocation.
bool acquireEnet() noexcept;

/// Releases one successful acquireEnet(); the last release deinitialises ENet.
/// Thread-safe.
void releaseEnet() noexcept;

/// RAII form: holds ENet while it lives. Check ok() after construction.
class EnetGuard {
 public:
  EnetGuard() noexcept : ok_(acquireEnet()) {}
  ~EnetGuard() {
    if (ok_) releaseEnet();
  }
  EnetGuard(const EnetGuard&) = delete;
  EnetGuard& operator=(const EnetGuard&) = delete;
  /// True when ENet is initialised and held by this guard.
  bool ok() const noexcept { return ok_; }

 private:
  bool ok_;
};

/// Settings for a newly connected peer, on either end. ENet's packet throttle shrinks
/// the reliable window when the round trip varies (jitter, loss) and starves the
/// StepBatch stream; our traffic is budgeted by the server, so the throttle stays
/// open (deceleration 0). Timeouts: a peer is dropped after 30 s without any
/// acknowledgement (see capRetransmitBackoff for why 20% loss never gets there).
void configurePeer(ENetPeer* peer) noexcept;

/// A client host accepts server messages up to kMaxServerMessageBytes, the limit the
/// protocol and the server's sends use (ENet's own default, 32 MB, is a separate
/// number: this keeps the two ends agreeing by construction). The server's host keeps
/// kMaxClientPacketBytes for what it receives.
void limitClientHost(ENetHost* host) noexcept;

/// Socket buffers of a host that carries many peers: ENet asks for 256 KB, about one
/// tick of datagrams for 300 players, so a tick spent stepping overflows it and the
/// kernel drops inputs and acknowledgements (then resends snowball). This asks for
/// 4 MB each way (the kernel clamps to net.core.rmem_max / wmem_max).
void enlargeSocketBuffers(ENetHost* host) noexcept;

/// ENet doubles a reliable command's retransmission timeout on every loss, without
/// bound: at 20% loss each way a command lost 7 times in a row (every few seconds at
/// 60 commands per second) would wait over a minute and stall the ordered channel
/// behind it. This caps the timeout of every command `peer` has in flight, so loss costs
/// resends, not stalls:
/// - while ENet's own handshake runs (round trip unknown): 250 ms; its commands are a
///   few dozen bytes, and a lost CONNECT otherwise waits 0.5, then 1, then 2 s;
/// - while the player is joining (`joining`): half a round trip (50 ms..1 s) for a
///   command of one datagram (Hello, Welcome, WorldReady, a small join state), 1.25
///   round trips (100 ms..2 s) for larger ones. ENet's first round-trip sample sets
///   the variance to half the round trip, so a lost Hello or Welcome would wait three
///   round trips; the join is a handful of small messages, each of which the player
///   waits for, so a second copy half a round trip later is cheap (ENet drops the
///   duplicate) and takes most of a loss's cost off the join;
/// - afterwards: about two round trips (200 ms..2 s).
/// It also brings forward the peer's next retransmission check, which ENet set from
/// the uncapped timeout. Call before servicing, at least once per tick (a timeout
/// doubles at most once between calls then). Cost: one pass over the commands in flight.
void capRetransmitTimeouts(ENetPeer& peer, bool joining) noexcept;

/// capRetransmitTimeouts for every peer of `host`; `joining(ENetPeer&)` says which
/// players are still joining.
template <class Joining>
void capRetransmitBackoff(ENetHost* host, Joining&& joining) noexcept {
  for (std::size_t i = 0; i < host->peerCount; ++i) capRetransmitTimeouts(host->peers[i], joining(host->peers[i]));
}

/// The same for a host whose peers are never treated as joining (the bots).
inline void capRetransmitBackoff(ENetHost* host) noexcept {
  capRetransmitBackoff(host, [](const ENetPeer&) { return false; });
}

/// Ends the connections of `peers` (one host's; null entries are skipped) as politely as
/// the wait allows: asks each to disconnect, then services `host` until every one has
/// confirmed or waitMs has passed, and resets those that have not (they send nothing
/// more). A peer still connecting is dropped at once by ENet and never confirms, so it
/// keeps the wait going to its end. What arrives meanwhile is thrown away, and events of
/// peers not in the list are ignored. Sets every entry to null. Blocks the caller for
/// up to waitMs; allocates nothing; O(peers) per event. For shutting down a client host
/// with many peers (loam-bots' swarm and attackers).
void disconnectPeers(ENetHost* host, std::span<ENetPeer*> peers, int waitMs) noexcept;

}  // namespace loam::net
