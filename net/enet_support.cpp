#include "net/enet_support.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include <enet/time.h>

#include "net/protocol.h"

namespace loam::net {
namespace {

std::mutex& enetMutex() noexcept {
  static std::mutex m;
  return m;
}
int enetUsers = 0;  // guarded by enetMutex()

}  // namespace

bool acquireEnet() noexcept {
  std::lock_guard lock(enetMutex());
  if (enetUsers == 0 && enet_initialize() != 0) return false;
  ++enetUsers;
  return true;
}

void releaseEnet() noexcept {
  std::lock_guard lock(enetMutex());
  if (enetUsers == 0) return;
  if (--enetUsers == 0) enet_deinitialize();
}

void configurePeer(ENetPeer* peer) noexcept {
  enet_peer_throttle_configure(peer, ENET_PEER_PACKET_THROTTLE_INTERVAL, ENET_PEER_PACKET_THROTTLE_ACCELERATION, 0);
  // timeoutLimit is effectively unreachable with capped backoff: only the 30 s
  // maximum without acknowledgements ends a peer.
  enet_peer_timeout(peer, 1024, 10000, 30000);
}

void limitClientHost(ENetHost* host) noexcept { host->maximumPacketSize = kMaxServerMessageBytes; }

void enlargeSocketBuffers(ENetHost* host) noexcept {
  constexpr int kBytes = 4 << 20;
  enet_socket_set_option(host->socket, ENET_SOCKOPT_RCVBUF, kBytes);
  enet_socket_set_option(host->socket, ENET_SOCKOPT_SNDBUF, kBytes);
}

namespace {
/// A join message in one datagram: Hello, Welcome, WorldReady, a small join state.
constexpr enet_uint32 kSmallCommandBytes = 1200;
}  // namespace

void capRetransmitTimeouts(ENetPeer& peer, bool joining) noexcept {
  enet_uint32 cap = 0, smallCap = 0;
  switch (peer.state) {
    case ENET_PEER_STATE_CONNECTING:
    case ENET_PEER_STATE_ACKNOWLEDGING_CONNECT:
    case ENET_PEER_STATE_CONNECTION_PENDING:
    case ENET_PEER_STATE_CONNECTION_SUCCEEDED: cap = 250; break;
    case ENET_PEER_STATE_CONNECTED:
    case ENET_PEER_STATE_DISCONNECT_LATER:
      cap = joining ? std::clamp<enet_uint32>(peer.roundTripTime + peer.roundTripTime / 4, 100, 2000)
                    : std::clamp<enet_uint32>(2 * peer.roundTripTime + 4 * peer.roundTripTimeVariance, 200, 2000);
      if (joining) smallCap = std::clamp<enet_uint32>(peer.roundTripTime / 2, 50, 1000);
      break;
    default: return;
  }
  bool any = false;
  enet_uint32 next = 0;
  for (ENetListIterator it = enet_list_begin(&peer.sentReliableCommands);
       it != enet_list_end(&peer.sentReliableCommands); it = enet_list_next(it)) {
    auto* command = reinterpret_cast<ENetOutgoingCommand*>(it);
    const enet_uint32 c = smallCap != 0 && command->fragmentLength <= kSmallCommandBytes ? smallCap : cap;
    if (command->roundTripTimeout > c) command->roundTripTimeout = c;
    const enet_uint32 due = command->sentTime + command->roundTripTimeout;
    if (!any || ENET_TIME_LESS(due, next)) next = due;
    any = true;
  }
  if (any && ENET_TIME_LESS(next, peer.nextTimeout)) peer.nextTimeout = next;
}

void disconnectPeers(ENetHost* host, std::span<ENetPeer*> peers, int waitMs) noexcept {
  std::size_t live = 0;
  for (ENetPeer* peer : peers) {
    if (!peer) continue;
    enet_peer_disconnect(peer, 0);
    ++live;
  }
  enet_host_flush(host);
  const auto t0 = std::chrono::steady_clock::now();
  ENetEvent ev;
  while (live > 0 && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(waitMs)) {
    if (enet_host_service(host, &ev, 10) <= 0) continue;
    if (ev.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(ev.packet);
    if (ev.type != ENET_EVENT_TYPE_DISCONNECT || !ev.peer) continue;
    const auto it = std::find(peers.begin(), peers.end(), ev.peer);
    if (it == peers.end()) continue;
    *it = nullptr;  // confirmed: ENet has reset it already
    --live;
  }
  for (ENetPeer*& peer : peers) {
    if (peer) enet_peer_reset(peer);
    peer = nullptr;
  }
}

}  // namespace loam::net
