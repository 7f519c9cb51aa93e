// What a playing client sends is held to its share: inputs to one per tick on
// average (net/host/session.h, the input bucket), a speed hack gains nothing, and an
// honest client whose inputs arrive in bunches loses none. What the server refuses
// a player is told to that player only (Rejections). Raw ENet clients against
// a ServerHost on loopback, ticked by the test.
#include <doctest/doctest.h>
#include <enet/enet.h>
#include <flatbuffers/flatbuffers.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <variant>
#include <vector>

#include "loam_generated.h"
#include "net/enet_support.h"
#include "net/protocol.h"
#include "net/server_host.h"
#include "net/wire.h"
#include "sim/gen/scene.h"
#include "sim/core/fixed_point.h"
#include "sim/systems/motion.h"
#include "tests/support/flat_world.h"

using namespace loam;

namespace {

using test::flatWorld;

std::unique_ptr<net::ServerHost> openServer() {
  net::ServerConfig config;
  config.bindAddress = "127.0.0.1";
  config.port = 0;
  auto host = net::ServerHost::open(config, flatWorld().state, flatWorld().hosted);
  REQUIRE_MESSAGE(host.has_value(), (host ? "" : host.error().message));
  return std::move(host.value());
}

/// A swarm-style client (no world): Hello, then whatever the test sends. Keeps the
/// messages it receives, verified.
class Client {
 public:
  explicit Client(std::uint16_t port) {
    host_ = enet_host_create(nullptr, 1, net::kChannelCount, 0, 0);
    REQUIRE(host_ != nullptr);
    ENetAddress a{};
    enet_address_set_host_ip(&a, "127.0.0.1");
    a.port = port;
    peer_ = enet_host_connect(host_, &a, net::kChannelCount, net::kProtocolVersion);
    REQUIRE(peer_ != nullptr);
  }
  ~Client() { enet_host_destroy(host_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void service() {
    ENetEvent ev;
    while (enet_host_service(host_, &ev, 0) > 0) {
      if (ev.type == ENET_EVENT_TYPE_CONNECT) connected = true;
      if (ev.type == ENET_EVENT_TYPE_DISCONNECT) disconnected = true;
      if (ev.type != ENET_EVENT_TYPE_RECEIVE) continue;
      const std::span<const std::uint8_t> bytes(ev.packet->data, ev.packet->dataLength);
      std::vector<std::uint8_t> inner;  // filled only for a Compressed envelope
      if (const wire::ServerMessage* m = net::openServerMessage(bytes, std::size_t{1} << 28, inner)) {
        if (m->body_type() == wire::ServerBody::Welcome) playerId = m->body_as_Welcome()->player_id();
        if (m->body_type() == wire::ServerBody::Reject) rejected = true;
        if (inner.empty()) inner.assign(bytes.begin(), bytes.end());
        inbox.push_back(std::move(inner));
      }
      enet_packet_destroy(ev.packet);
    }
  }
  void send(flatbuffers::FlatBufferBuilder& fbb) {
    ENetPacket* p = enet_packet_create(fbb.GetBufferPointer(), fbb.GetSize(), ENET_PACKET_FLAG_RELIABLE);
    if (enet_peer_send(peer_, net::kChannelReliable, p) < 0) enet_packet_destroy(p);
  }
  void flush() { enet_host_flush(host_); }
  void hello(flatbuffers::FlatBufferBuilder& fbb, const char* name) {
    fbb.Clear();
    auto h = wire::CreateHelloDirect(fbb, net::kProtocolVersion, name, 2, /*wants_world*/ false);
    fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::Hello, h.Union()));
    send(fbb);
  }
  /// Sends inputs first..last (forward, yaw 0) in one Inputs message.
  void inputs(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t first, std::uint32_t last) {
    std::vector<wire::InputRec> recs;
    for (std::uint32_t s = first; s <= last; ++s) recs.emplace_back(s, 0, 0, 127, 0, 0);
    fbb.Clear();
    auto i = wire::CreateInputsDirect(fbb, &recs, 0);
    fbb.Finish(wire::CreateClientMessage(fbb, wire::ClientBody::Inputs, i.Union()));
    send(fbb);
  }

  /// Sends a dig at v (radius 2 voxels) to follow input afterInput.
  void dig(flatbuffers::FlatBufferBuilder& fbb, sim::VoxelCoord v, std::uint32_t afterInput) {
    fbb.Clear();
    auto d = wire::CreateDig(fbb, v.x, v.y, v.z, 2);
    fbb.Finish(wire::CreateClientMessage(
        fbb, wire::ClientBody::Action, wire::CreateAction(fbb, afterInput, wire::ActionBody::Dig, d.Union()).Union()));
    send(fbb);
  }
  /// The received messages of one type.
  std::vector<const wire::ServerMessage*> received(wire::ServerBody type) const {
    std::vector<const wire::ServerMessage*> out;
    for (const auto& m : inbox) {
      const wire::ServerMessage* msg = net::verifyServerMessage(m, std::size_t{1} << 28);
      REQUIRE(msg != nullptr);
      if (msg->body_type() == type) out.push_back(msg);
    }
    return out;
  }

  bool connected = false, disconnected = false, rejected = false;
  std::uint32_t playerId = 0;
  std::vector<std::vector<std::uint8_t>> inbox;

 private:
  ENetHost* host_ = nullptr;
  ENetPeer* peer_ = nullptr;
};

/// One server tick with every client flushed before and serviced after. ENet runs on
/// wall time: 3 ms between ticks lets loopback deliveries and acks through and keeps
/// a client's message a tick under kMaxMessagesPerSecond (the test ticks faster than
/// 60 Hz; the input bucket counts ticks, the message bucket wall time).
void tick(net::ServerHost& server, std::initializer_list<Client*> clients) {
  for (Client* c : clients) c->flush();
  server.tick();
  for (Client* c : clients) c->service();
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
}

/// Connects, says Hello and ticks until every client is in the world.
void join(net::ServerHost& server, std::initializer_list<Client*> clients) {
  flatbuffers::FlatBufferBuilder fbb;
  bool helloSent = false;
  for (int i = 0; i < 3000; ++i) {
    tick(server, clients);
    bool all = true;
    for (Client* c : clients) all = all && c->connected;
    if (all && !helloSent) {
      int n = 0;
      static constexpr const char* kNames[] = {"first", "second", "third"};
      for (Client* c : clients) c->hello(fbb, kNames[n++ % 3]);
      helloSent = true;
    }
    bool in = helloSent;
    for (Client* c : clients) in = in && c->playerId != 0 && server.state().findPlayer(sim::PlayerId{c->playerId});
    if (in) return;
  }
  FAIL("clients did not join");
}

const sim::Player& playerOf(const net::ServerHost& server, const Client& c) {
  const sim::Player* p = server.state().findPlayer(sim::PlayerId{c.playerId});
  REQUIRE(p != nullptr);
  return *p;
}

std::int64_t planarDistance(sim::Vec3i a, sim::Vec3i b) {
  const std::int64_t dx = std::int64_t{a.x} - b.x, dz = std::int64_t{a.z} - b.z;
  return static_cast<std::int64_t>(sim::isqrt64(static_cast<std::uint64_t>(dx * dx + dz * dz)));
}

}  // namespace

TEST_CASE("a client sending 4 inputs per tick moves no farther than an honest one (within 5 %)") {
  net::EnetGuard enet;
  REQUIRE(enet.ok());
  auto server = openServer();
  Client honest(server->port()), cheat(server->port());
  join(*server, {&honest, &cheat});
  const sim::Vec3i honestStart = playerOf(*server, honest).motion.position;
  const sim::Vec3i cheatStart = playerOf(*server, cheat).motion.position;

  flatbuffers::FlatBufferBuilder fbb;
  constexpr std::uint32_t kTicks = 300;
  for (std::uint32_t t = 1; t <= kTicks; ++t) {
    honest.inputs(fbb, t, t);
    cheat.inputs(fbb, 4 * t - 3, 4 * t);  // 240 inputs per second, all "forward"
    tick(*server, {&honest, &cheat});
  }
  // Then nothing: whatever the server still holds is applied now (or never).
  for (int t = 0; t < 60; ++t) tick(*server, {&honest, &cheat});

  REQUIRE(playerOf(*server, honest).motion.lastInput == kTicks);  // every honest input went in
  const std::int64_t honestWay = planarDistance(honestStart, playerOf(*server, honest).motion.position);
  const std::int64_t cheatWay = planarDistance(cheatStart, playerOf(*server, cheat).motion.position);
  MESSAGE("honest ", honestWay, " units, 4x sender ", cheatWay, " units");
  REQUIRE(honestWay > 10 * sim::kUnitsPerMetre);  // it did walk (flat scene: 300 ticks of walking)
  CHECK(cheatWay * 100 <= honestWay * 105);
  const net::ServerStats st = server->stats();
  CHECK(st.inputsOverRate >= 3 * kTicks - 30);  // the excess was dropped and counted
  CHECK_FALSE(cheat.rejected);                  // one message per tick is no flood
}

TEST_CASE("an honest client whose inputs arrive in bunches (up to 100 ms late) loses none") {
  net::EnetGuard enet;
  REQUIRE(enet.ok());
  auto server = openServer();
  Client steady(server->port()), jittery(server->port()), bursty(server->port());
  join(*server, {&steady, &jittery, &bursty});
  const auto startOf = [&](const Client& c) { return playerOf(*server, c).motion.position; };
  const sim::Vec3i start[3] = {startOf(steady), startOf(jittery), startOf(bursty)};
  flatbuffers::FlatBufferBuilder fbb;
  constexpr std::uint32_t kTicks = 300;
  std::uint32_t sentJittery = 0, sentBursty = 0;
  for (std::uint32_t t = 1; t <= kTicks; ++t) {
    steady.inputs(fbb, t, t);
    // Jitter: each tick's input arrives 0 to 3 ticks late (a fixed pattern).
    static constexpr std::uint32_t kLate[] = {0, 2, 1, 3, 0, 0, 1, 2, 0, 3, 1, 0};
    const std::uint32_t due = t >= 3 ? t - 3 : 0;  // everything up to here has been sent
    std::uint32_t upTo = sentJittery;
    for (std::uint32_t s = sentJittery + 1; s <= t; ++s) {
      if (s + kLate[s % 12] <= t || s <= due) upTo = s;
      else break;  // in order: a late input holds back the ones after it
    }
    if (upTo > sentJittery) {
      jittery.inputs(fbb, sentJittery + 1, upTo);
      sentJittery = upTo;
    }
    // A client that stalls 100 ms (6 ticks) and then sends them all at once.
    if (t % 6 == 0) {
      bursty.inputs(fbb, sentBursty + 1, t);
      sentBursty = t;
    }
    tick(*server, {&steady, &jittery, &bursty});
  }
  if (sentJittery < kTicks) jittery.inputs(fbb, sentJittery + 1, kTicks);
  for (int t = 0; t < 30; ++t) tick(*server, {&steady, &jittery, &bursty});
  // Every input was applied: on flat ground the same inputs walk the same way,
  // however they were bunched.
  const auto way = [&](const Client& c, sim::Vec3i from) {
    const sim::Vec3i p = playerOf(*server, c).motion.position;
    return sim::Vec3i{p.x - from.x, p.y - from.y, p.z - from.z};
  };
  CHECK(playerOf(*server, steady).motion.lastInput == kTicks);
  CHECK(playerOf(*server, jittery).motion.lastInput == kTicks);
  CHECK(playerOf(*server, bursty).motion.lastInput == kTicks);
  CHECK(way(jittery, start[1]) == way(steady, start[0]));
  CHECK(way(bursty, start[2]) == way(steady, start[0]));
  CHECK(server->stats().inputsOverRate == 0);
}

TEST_CASE("a refused action is told to its sender alone, not in the shared StepBatch") {
  net::EnetGuard enet;
  REQUIRE(enet.ok());
  auto server = openServer();
  Client digger(server->port()), other(server->port());
  join(*server, {&digger, &other});
  flatbuffers::FlatBufferBuilder fbb;
  digger.inbox.clear();
  other.inbox.clear();
  // 10 m away, out of reach: the step refuses it (OutOfReach).
  const sim::Vec3i at = playerOf(*server, digger).motion.position;
  const sim::VoxelCoord far = sim::voxelOf(sim::Vec3i{at.x + 10 * sim::kUnitsPerMetre, at.y - 1, at.z});
  digger.dig(fbb, far, 0);
  for (int t = 0; t < 30; ++t) tick(*server, {&digger, &other});

  const auto mine = digger.received(wire::ServerBody::Rejections);
  REQUIRE(mine.size() == 1);
  const wire::Rejections* r = mine[0]->body_as_Rejections();
  REQUIRE(r->events() != nullptr);
  REQUIRE(r->events()->size() == 1);
  sim::Event e;
  REQUIRE(net::fromWire(*r->events()->Get(0), e));
  const auto* rej = std::get_if<sim::CommandRejectedEvent>(&e);
  REQUIRE(rej != nullptr);
  CHECK(rej->player == sim::PlayerId{digger.playerId});
  CHECK(rej->reason == sim::RejectReason::OutOfReach);
  CHECK(rej->commandIndex == static_cast<std::uint8_t>(net::CommandKind::Dig));

  CHECK(other.received(wire::ServerBody::Rejections).empty());
  // No StepBatch carried it, to either of them.
  for (const Client* c : {&digger, &other}) {
    const auto batches = c->received(wire::ServerBody::StepBatch);
    CHECK(batches.size() >= 20);
    for (const wire::ServerMessage* m : batches) {
      const wire::StepBatch* b = m->body_as_StepBatch();
      if (!b->events()) continue;
      for (const wire::EventRec* rec : *b->events()) {
        sim::Event ev;
        REQUIRE(net::fromWire(*rec, ev));
        CHECK_FALSE(std::holds_alternative<sim::CommandRejectedEvent>(ev));
      }
    }
  }
}
