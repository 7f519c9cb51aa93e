// RawClient: a bare ENet client of an in-process ServerHost on loopback, for the net
// suites that speak the wire protocol themselves instead of through ClientConnection
// (server_host_test, auth_test, upstream_limits_test). It connects, sends what the test
// builds, and keeps every server message it receives, verified and taken out of its
// Compressed envelope, for the test to read. Beside it: the flat-world server those
// suites open, the builders of the client messages they send, the tick that drives a
// server and its raw clients together, and a swarm join of several raw clients.
#pragma once

#include <doctest/doctest.h>
#include <enet/enet.h>
#include <flatbuffers/flatbuffers.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "loam_generated.h"
#include "net/enet_support.h"
#include "net/protocol.h"
#include "net/server_host.h"
#include "net/snapshot_codec.h"
#include "net/stream_codec.h"
#include "net/stream_receipt.h"
#include "net/wire.h"
#include "sim/world/voxel.h"
#include "tests/support/flat_world.h"

namespace loam::test {

/// Opens a ServerHost on the flat world (flatWorld()), bound to 127.0.0.1 on a port the
/// system picks; the rest of `config` is kept. Suites that connect more raw clients
/// than maxPeersPerAddress allows raise it (every raw client is on 127.0.0.1).
/// REQUIREs that it opened and has a port.
inline std::unique_ptr<net::ServerHost> openFlatServer(net::ServerConfig config = {}) {
  config.bindAddress = "127.0.0.1";
  config.port = 0;
  auto host = net::ServerHost::open(config, flatWorld().state, flatWorld().hosted);
  REQUIRE_MESSAGE(host.has_value(), (host ? "" : host.error().message));
  REQUIRE(host.value()->port() != 0);
  return std::move(host.value());
}

/// The server message in `bytes` (one of RawClient::inbox), verified; nullptr when the
/// bytes are not one.
/// Decodes a Snapshot datagram (REQUIREd to decode); its lists view `datagram` and `gone`.
inline net::SnapshotMessage readSnapshot(const std::vector<std::uint8_t>& datagram, std::vector<std::uint32_t>& gone) {
  sim::Result<net::SnapshotMessage> s = net::decodeSnapshot(datagram, gone);
  REQUIRE_MESSAGE(s.has_value(), (s ? "" : s.error().message));
  return *s;
}

inline const wire::ServerMessage* parseServerMessage(const std::vector<std::uint8_t>& bytes) {
  return net::verifyServerMessage(bytes, net::kMaxServerMessageBytes);
}

/// A bare ENet client: one peer to 127.0.0.1:port, no world, no protocol logic of its
/// own. Not thread-safe; use it on the test thread with ENet held (net::EnetGuard, or
/// an open ServerHost, which holds one).
class RawClient {
 public:
  /// Connects to 127.0.0.1:port; `connectData` is what the server checks as the
  /// protocol version before any message. REQUIREs the ENet host and peer.
  explicit RawClient(std::uint16_t port, std::uint32_t connectData = net::kProtocolVersion) {
    host_ = enet_host_create(nullptr, 1, net::kChannelCount, 0, 0);
    REQUIRE(host_ != nullptr);
    net::enlargeSocketBuffers(host_);  // as every real client does
    ENetAddress a{};
    enet_address_set_host_ip(&a, "127.0.0.1");
    a.port = port;
    peer_ = enet_host_connect(host_, &a, net::kChannelCount, connectData);
    REQUIRE(peer_ != nullptr);
  }
  /// Destroys the host without a goodbye: the server notices only when the peer times
  /// out. Call disconnectNow() first for a prompt leave.
  ~RawClient() {
    if (host_) enet_host_destroy(host_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  /// Handles every pending ENet event without waiting: sets connected, disconnected and
  /// disconnectData; each received message is opened (REQUIREd to verify, within
  /// kMaxServerMessageBytes; a Compressed one is unwrapped and counted) and appended to
  /// inbox; a Welcome sets playerId, a Reject sets rejected.
  void service() {
    ENetEvent ev;
    while (enet_host_service(host_, &ev, 0) > 0) {
      switch (ev.type) {
        case ENET_EVENT_TYPE_CONNECT: connected = true; break;
        case ENET_EVENT_TYPE_DISCONNECT:
          disconnected = true;
          disconnectData = ev.data;
          break;
        case ENET_EVENT_TYPE_RECEIVE: {
          const std::span<const std::uint8_t> bytes(ev.packet->data, ev.packet->dataLength);
          if (ev.channelID == net::kChannelSnapshot) {  // raw: readSnapshot decodes it
            snapshots.emplace_back(bytes.begin(), bytes.end());
            enet_packet_destroy(ev.packet);
            break;
          }
          if (ev.channelID == net::kChannelUnreliable) {  // the Stream, raw
            takeStream(bytes);
            enet_packet_destroy(ev.packet);
            break;
          }
          const wire::ServerMessage* msg = net::openServerMessage(bytes, net::kMaxServerMessageBytes, unpacked_);
          REQUIRE_MESSAGE(msg != nullptr, "a server message that does not verify (", bytes.size(), " bytes)");
          if (msg->body_type() == wire::ServerBody::Welcome) playerId = msg->body_as_Welcome()->player_id();
          if (msg->body_type() == wire::ServerBody::Reject) rejected = true;
          // openServerMessage verified the envelope: its type says where the message is.
          if (flatbuffers::GetRoot<wire::ServerMessage>(bytes.data())->body_type() == wire::ServerBody::Compressed) {
            ++compressed;
            inbox.push_back(unpacked_);
          } else {
            inbox.emplace_back(bytes.begin(), bytes.end());
          }
          enet_packet_destroy(ev.packet);
          break;
        }
        case ENET_EVENT_TYPE_NONE: break;
      }
    }
  }

  /// Queues `size` bytes as one packet on `channel` with ENet packet `flags` (any
  /// bytes: hostile tests send garbage). Goes out on the next flush() or service().
  void sendBytes(const void* data, std::size_t size, std::uint8_t channel, std::uint32_t flags) {
    ENetPacket* p = enet_packet_create(data, size, flags);
    if (enet_peer_send(peer_, channel, p) < 0) enet_packet_destroy(p);
  }
  /// Queues the finished message in `fbb`: reliable on kChannelReliable, unreliable
  /// on any other channel.
  void send(flatbuffers::FlatBufferBuilder& fbb, std::uint8_t channel = net::kChannelReliable) {
    sendBytes(fbb.GetBufferPointer(), fbb.GetSize(), channel,
              channel == net::kChannelReliable ? ENET_PACKET_FLAG_RELIABLE : 0);
  }
  /// Sends everything queued now.
  void flush() { enet_host_flush(host_); }
  /// Asks the server to end the connection; a later service() sees the disconnect.
  void disconnect() { enet_peer_disconnect(peer_, 0); }
  /// Tells the server at once and forgets the peer (no confirmation comes).
  void disconnectNow() { enet_peer_disconnect_now(peer_, 0); }

  /// Removes and returns the Snapshot datagrams received, oldest first.
  std::vector<std::vector<std::uint8_t>> takeSnapshots() { return std::exchange(snapshots, {}); }

  /// Removes and returns the inbox messages of one type, oldest first.
  std::vector<std::vector<std::uint8_t>> take(wire::ServerBody type) {
    std::vector<std::vector<std::uint8_t>> got, rest;
    for (auto& m : inbox) {
      const wire::ServerMessage* msg = parseServerMessage(m);
      REQUIRE(msg != nullptr);
      (msg->body_type() == type ? got : rest).push_back(std::move(m));
    }
    inbox = std::move(rest);
    return got;
  }
  /// The inbox messages of one type, oldest first, left in the inbox (the pointers
  /// are valid until the inbox changes).
  std::vector<const wire::ServerMessage*> received(wire::ServerBody type) const {
    std::vector<const wire::ServerMessage*> out;
    for (const auto& m : inbox) {
      const wire::ServerMessage* msg = parseServerMessage(m);
      REQUIRE(msg != nullptr);
      if (msg->body_type() == type) out.push_back(msg);
    }
    return out;
  }

  /// Every ordered-stream item up to this arrived (for Inputs.stream_ack).
  std::uint32_t streamAck() const noexcept { return receipt_.ack(); }

  bool connected = false;          ///< ENet's connect event came
  bool disconnected = false;       ///< ENet's disconnect event came (the server's or ours)
  std::uint32_t disconnectData = 0;  ///< its data: the server's RejectCode, or 0
  bool rejected = false;           ///< a Reject message came
  std::uint32_t playerId = 0;      ///< from the last Welcome; 0 before one
  int compressed = 0;              ///< messages that came in a Compressed envelope
  /// Every message received and not taken yet, oldest first: verified, never
  /// Compressed, never a Stream (its new items' messages are here instead, in the
  /// order they arrived, a water item as an incremental CellState of tick 0; marks
  /// of full CellStates are left out).
  std::vector<std::vector<std::uint8_t>> inbox;
  std::vector<std::vector<std::uint8_t>> snapshots;  ///< raw Snapshot datagrams (kChannelSnapshot), oldest first
  int streamItems = 0;             ///< new Stream items received (resends not counted)
  int streamResends = 0;           ///< Stream items received again (the server resent them)

 private:
  void takeStream(std::span<const std::uint8_t> datagram) {
    std::vector<net::StreamItemView> items;
    const sim::Result<void> decoded = net::decodeStream(datagram, items);
    REQUIRE_MESSAGE(decoded.has_value(), "a Stream that does not decode: ", decoded ? "" : decoded.error().message);
    for (const net::StreamItemView& item : items) {
      if (!receipt_.receive(item.sequence)) {
        ++streamResends;
        continue;
      }
      ++streamItems;
      if (item.kind == net::StreamItemKind::Mark) continue;  // its CellState comes reliably
      if (item.kind == net::StreamItemKind::Water) {
        // Kept as the incremental CellState it stands for (tick 0: the item has none).
        std::vector<std::uint8_t> unpacked;
        const sim::Result<std::span<const std::uint8_t>> records = net::unpackWater(item, unpacked);
        REQUIRE_MESSAGE(records.has_value(), "a water item that does not unpack");
        flatbuffers::FlatBufferBuilder fbb;
        auto water = fbb.CreateVector(records->data(), records->size());
        fbb.Finish(wire::CreateServerMessage(
            fbb, wire::ServerBody::CellState,
            wire::CreateCellState(fbb, 0, item.cell.x, item.cell.z, false, water).Union()));
        inbox.emplace_back(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
        continue;
      }
      // Copied out: FlatBuffers reads its scalars in place, and the datagram does not align them.
      std::vector<std::uint8_t> bytes(item.bytes.begin(), item.bytes.end());
      std::vector<std::uint8_t> itemUnpacked;
      const wire::ServerMessage* msg = net::openServerMessage(bytes, net::kMaxServerMessageBytes, itemUnpacked);
      REQUIRE_MESSAGE(msg != nullptr, "a Stream item that does not verify (", bytes.size(), " bytes)");
      if (flatbuffers::GetRoot<wire::ServerMessage>(bytes.data())->body_type() == wire::ServerBody::Compressed) {
        ++compressed;
        inbox.push_back(std::move(itemUnpacked));
      } else {
        inbox.push_back(std::move(bytes));
      }
    }
  }

  net::StreamReceipt receipt_;
  ENetHost* host_ = nullptr;
  ENetPeer* peer_ = nullptr;
  std::vector<std::uint8_t> unpacked_;  // openServerMessage's scratch
};

/// One server tick: every client flushes before it and services its socket after it.
inline void tickAll(net::ServerHost& server, std::initializer_list<RawClient*> clients) {
  for (RawClient* c : clients) c->flush();
  server.tick();
  for (RawClient* c : clients) c->service();
}

// ---- client message builders: each clears fbb and finishes one ClientMessage in it ----

/// A Hello as a full bot (wantsWorld) or a swarm bot, with an account public key when
/// `publicKey` is not empty.
inline void buildHello(flatbuffers::FlatBufferBuilder& fbb, const char* name, bool wantsWorld,
                       std::uint32_t protocol = net::kProtocolVersion,
                       std::span<const std::uint8_t> publicKey = {}) {
  fbb.Clear();
  const auto nameOffset = fbb.CreateString(name);
  flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> key;
  if (!publicKey.empty()) key = fbb.CreateVector(publicKey.data(), publicKey.size());
  const auto kind = wantsWorld ? net::ClientKind::FullBot : net::ClientKind::SwarmBot;
  auto h = wire::CreateHello(fbb, protocol, nameOffset, static_cast<std::uint8_t>(kind), wantsWorld, key);
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::Hello, h.Union()));
}

/// A WorldReady with the client's generated-world hash.
inline void buildWorldReady(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t hash) {
  fbb.Clear();
  auto w = wire::CreateWorldReady(fbb, hash);
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::WorldReady, w.Union()));
}

/// A JoinProgress: `received` bytes of the join stream, `permille` of the join done.
inline void buildJoinProgress(flatbuffers::FlatBufferBuilder& fbb, std::uint16_t permille, std::uint32_t received) {
  fbb.Clear();
  auto j = wire::CreateJoinProgress(fbb, permille, received);
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::JoinProgress, j.Union()));
}

/// An Inputs message with `recs`, acknowledging snapshot `ack` and the ordered stream up to `streamAck`.
inline void buildInputs(flatbuffers::FlatBufferBuilder& fbb, const std::vector<wire::InputRec>& recs,
                        std::uint32_t ack, std::uint32_t streamAck = 0) {
  fbb.Clear();
  auto i = wire::CreateInputsDirect(fbb, &recs, ack, streamAck);
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::Inputs, i.Union()));
}

/// An Action: dig at v (ToolSize::Cm10, 2 voxels) once input afterInput has been applied.
inline void buildDig(flatbuffers::FlatBufferBuilder& fbb, sim::VoxelCoord v, std::uint32_t afterInput,
                     std::uint32_t sequence = 1) {
  fbb.Clear();
  auto d = wire::CreateDig(fbb, v.x, v.y, v.z, 2);
  auto action = wire::CreateAction(fbb, afterInput, wire::ActionBody::Dig, d.Union(), sequence);
  fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::Action, action.Union()));
}

/// Input `seq`: full forward at `yaw`, no strafe, pitch 0, with `buttons`.
inline wire::InputRec forwardInput(std::uint32_t seq, std::uint16_t yaw = 0, std::uint8_t buttons = 0) {
  return wire::InputRec(seq, yaw, /*pitch*/ 0, /*forward*/ 127, /*right*/ 0, buttons);
}

/// Ticks until every client has connected, says Hello for each as a swarm bot
/// ("swarm-1", "swarm-2", ... in order), then ticks until each has a player in the
/// world; sleepMs after every tick (the suite's pacing: ENet runs on wall time). FAILs
/// after 3000 ticks.
inline void joinSwarmBots(net::ServerHost& server, std::initializer_list<RawClient*> clients, int sleepMs) {
  flatbuffers::FlatBufferBuilder fbb;
  bool helloSent = false;
  for (int i = 0; i < 3000; ++i) {
    tickAll(server, clients);
    std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
    bool all = true;
    for (RawClient* c : clients) all = all && c->connected;
    if (all && !helloSent) {
      int n = 0;
      for (RawClient* c : clients) {
        const std::string name = "swarm-" + std::to_string(++n);
        buildHello(fbb, name.c_str(), /*wantsWorld*/ false);
        c->send(fbb);
      }
      helloSent = true;
    }
    bool in = helloSent;
    for (RawClient* c : clients) in = in && c->playerId != 0 && server.state().findPlayer(sim::PlayerId{c->playerId});
    if (in) return;
  }
  FAIL("clients did not join");
}

}  // namespace loam::test
