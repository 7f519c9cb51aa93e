#include "net/host/inbound.h"

#include <chrono>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "net/enet_support.h"
#include "net/host/join_stream.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/gen/generator_version.h"

namespace loam::net::host {
namespace {

constexpr std::size_t kMaxEventsPerPump = 20000;
constexpr std::uint32_t kValidButtons = sim::kButtonJump | sim::kButtonRun | sim::kButtonCrouch;

/// JoinProgress: generation while Welcomed (the join deadline moves only when the
/// permille grows), the join stream's acknowledgement while Playing. Other phases
/// never send it (malformed), apart from late ones after the stream ended.
bool onJoinProgress(HostCore& core, Session& s, const wire::JoinProgress& p) {
  if (p.generated_permille() > 1000) return false;
  if (s.phase == Phase::Welcomed && s.wantsWorld) {
    if (p.received_bytes() != 0) return false;
    s.heardTick = core.state.tick;
    if (p.generated_permille() > s.generatedPermille) {
      s.generatedPermille = p.generated_permille();
      s.progressTick = core.state.tick;
    }
    return true;
  }
  if (s.phase == Phase::Joining && s.wantsWorld) return p.received_bytes() == 0;  // admitted next step
  if (s.phase == Phase::Playing && s.wantsWorld) return JoinStreams::acknowledge(core, s, p.received_bytes());
  return false;
}

}  // namespace

void Inbound::pump(int timeoutMs) {
  // No capRetransmitBackoff here: the pacing loop pumps on every arriving input,
  // and walking every peer's commands in flight each time cost a third of the CPU
  // with 300 players. Once per tick period (ServerHost::tick, or waitForInput when no
  // tick has run for a period) bounds any timeout to 2x the cap.
  ENetEvent ev;
  std::size_t handled = 0;
  if (timeoutMs > 0) {
    if (enet_host_service(core_.host, &ev, static_cast<enet_uint32>(timeoutMs)) <= 0) return;
    handle(ev);
    ++handled;
    while (handled < kMaxEventsPerPump && enet_host_check_events(core_.host, &ev) > 0) {
      handle(ev);
      ++handled;
    }
    return;
  }
  while (handled < kMaxEventsPerPump && enet_host_service(core_.host, &ev, 0) > 0) {
    handle(ev);
    ++handled;
  }
}

void Inbound::handle(const ENetEvent& ev) {
  switch (ev.type) {
    case ENET_EVENT_TYPE_CONNECT: onConnect(ev.peer, ev.data); break;
    case ENET_EVENT_TYPE_DISCONNECT:
      if (Session* s = core_.sessionOf(ev.peer)) core_.freeSession(*s);
      break;
    case ENET_EVENT_TYPE_RECEIVE: onReceive(ev.peer, ev.channelID, ev.packet); break;
    case ENET_EVENT_TYPE_NONE: break;
  }
}

void Inbound::onConnect(ENetPeer* peer, std::uint32_t data) {
  const std::size_t index = static_cast<std::size_t>(peer - core_.host->peers);
  Session& s = core_.sessions[index];
  if (s.phase != Phase::Free) core_.freeSession(s);  // ENet reused the slot without a disconnect event
  // One address may hold only so many slots (else ~100 connect-only peers lock
  // everyone out). Refused without a session: disconnect_now frees the slot at once.
  std::uint32_t sameAddress = 0;
  for (const Session& other : core_.sessions) {
    if (other.phase != Phase::Free && other.peer != nullptr && other.peer->address.host == peer->address.host)
      ++sameAddress;
  }
  if (sameAddress >= core_.config.maxPeersPerAddress) {
    ++core_.stats.addressRefused;
    enet_peer_disconnect_now(peer, static_cast<std::uint32_t>(RejectCode::AddressLimit));
    return;
  }
  s.peer = peer;
  peer->data = reinterpret_cast<void*>(index + 1);
  configurePeer(peer);
  core_.transition(s, Phase::Connected);
  // The connect data word carries the protocol version; 0 (unset) is checked at Hello.
  if (data != 0 && data != kProtocolVersion) {
    core_.reject(s, RejectCode::ProtocolMismatch,
                 "protocol " + std::to_string(data) + ", server speaks " + std::to_string(kProtocolVersion));
    return;
  }
  if (admission_) {
    if (std::string why = admission_(HostCore::addressOf(peer), ""); !why.empty())
      core_.reject(s, RejectCode::Banned, why);
  }
}

bool Inbound::withinRate(Session& s) {
  const std::int64_t second =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  switch (countMessage(s, second)) {
    case RateVerdict::Within: return true;
    case RateVerdict::Dropped: ++core_.stats.flooded; return false;
    case RateVerdict::Flooding:
      ++core_.stats.flooded;
      core_.reject(s, RejectCode::Flooding,
                   "over " + std::to_string(kMaxMessagesPerSecond) + " messages per second for " +
                       std::to_string(kFloodSecondsToReject) + " s");
      return false;
  }
  return false;
}

void Inbound::onReceive(ENetPeer* peer, std::uint8_t channel, ENetPacket* packet) {
  Session* s = core_.sessionOf(peer);
  if (s && s->phase != Phase::Free && s->phase != Phase::Rejected && withinRate(*s)) {
    const std::span<const std::uint8_t> bytes(packet->data, packet->dataLength);
    const wire::ClientMessage* msg = verifyClientMessage(bytes, kMaxClientPacketBytes);
    if (msg == nullptr) {
      core_.malformedMessage(*s);
    } else {
      core_.stats.countReceived(msg->body_type(), bytes.size());
      if (!dispatch(*s, *msg, channel)) core_.malformedMessage(*s);
    }
  }
  enet_packet_destroy(packet);
}

bool Inbound::dispatch(Session& s, const wire::ClientMessage& msg, std::uint8_t channel) {
  (void)channel;  // any channel is accepted; the client chooses delivery
  if (msg.body() == nullptr) return false;  // a union type without its table
  switch (msg.body_type()) {
    case wire::ClientBody::NONE: return false;
    case wire::ClientBody::Hello: return onHello(s, *msg.body_as_Hello());
    case wire::ClientBody::WorldReady: return onWorldReady(s, *msg.body_as_WorldReady());
    case wire::ClientBody::CellHashRequest: return onCellHashRequest(s);
    case wire::ClientBody::Inputs: return onInputs(s, *msg.body_as_Inputs());
    case wire::ClientBody::Action: return onAction(s, *msg.body_as_Action());
    case wire::ClientBody::AuthProof: return false;     // accounts: not yet handled
    case wire::ClientBody::JoinProgress: return onJoinProgress(core_, s, *msg.body_as_JoinProgress());
  }
  return false;
}

std::size_t Inbound::playersAdmitted() const noexcept {
  std::size_t n = 0;
  for (const Session& s : core_.sessions) n += admitted(s.phase) ? 1 : 0;
  return n;
}

bool Inbound::onHello(Session& s, const wire::Hello& hello) {
  if (s.phase != Phase::Connected) {
    core_.reject(s, RejectCode::BadHello, "second Hello");
    return true;
  }
  if (hello.protocol() != kProtocolVersion) {
    core_.reject(s, RejectCode::ProtocolMismatch,
                 "protocol " + std::to_string(hello.protocol()) + ", server speaks " +
                     std::to_string(kProtocolVersion));
    return true;
  }
  if (!validText(hello.name(), sim::kMaxNameBytes)) {
    core_.reject(s, RejectCode::BadHello, "name must be 1..31 printable bytes");
    return true;
  }
  if (hello.kind() >= kClientKindCount) {
    core_.reject(s, RejectCode::BadHello, "unknown client kind " + std::to_string(hello.kind()));
    return true;
  }
  if (admission_) {
    std::string why =
        admission_(HostCore::addressOf(s.peer), std::string(hello.name()->c_str(), hello.name()->size()));
    if (!why.empty()) {
      core_.reject(s, RejectCode::Banned, why);
      return true;
    }
  }
  const ServerConfig& config = core_.config;
  if (playersAdmitted() >= config.maxPlayers) {
    core_.reject(s, RejectCode::ServerFull, "server full (" + std::to_string(config.maxPlayers) + " players)");
    return true;
  }
  s.id = sim::PlayerId{nextPlayerId_++};
  s.name = sim::PlayerName::from(std::string_view(hello.name()->c_str(), hello.name()->size()));
  s.wantsWorld = hello.wants_world();
  const sim::SimState& state = core_.state;
  flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
  fbb.Clear();
  auto w = wire::CreateWelcomeDirect(fbb, kProtocolVersion, s.id.value, config.name.c_str(),
                                     core_.world.sceneName.c_str(), state.sceneHash, state.seed,
                                     sim::kGeneratorVersion, core_.world.generatedHash, state.tick);
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Welcome, w.Union()));
  core_.sendOwn(s, kChannelReliable, ENET_PACKET_FLAG_RELIABLE, wire::ServerBody::Welcome);
  core_.transition(s, Phase::Welcomed);
  if (!s.wantsWorld) core_.transition(s, Phase::Joining);  // swarm bots: admitted at once
  return true;
}

bool Inbound::onWorldReady(Session& s, const wire::WorldReady& ready) {
  if (s.phase != Phase::Welcomed || !s.wantsWorld) return false;
  if (ready.generated_hash() != core_.world.generatedHash) {
    char text[96];
    std::snprintf(text, sizeof text, "world hash %016llx, server generated %016llx",
                  static_cast<unsigned long long>(ready.generated_hash()),
                  static_cast<unsigned long long>(core_.world.generatedHash));
    core_.reject(s, RejectCode::WorldMismatch, text);
    return true;
  }
  core_.transition(s, Phase::Joining);
  return true;
}

bool Inbound::onCellHashRequest(Session& s) {
  // Once per session, and only while the world check is pending (bounds amplification).
  if (s.phase != Phase::Welcomed || !s.wantsWorld || s.cellHashesSent) return false;
  s.cellHashesSent = true;
  if (generatedCellsMessage_.empty()) {
    flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
    fbb.Clear();
    std::vector<wire::CellHashRec> recs;
    recs.reserve(core_.world.generatedCells.size());
    for (const sim::CellHash& c : core_.world.generatedCells) recs.emplace_back(c.cell.x, c.cell.z, c.hash);
    auto m = wire::CreateGeneratedCellHashesDirect(fbb, &recs);
    fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::GeneratedCellHashes, m.Union()));
    generatedCellsMessage_.assign(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  }
  ENetPacket* p =
      enet_packet_create(generatedCellsMessage_.data(), generatedCellsMessage_.size(), ENET_PACKET_FLAG_RELIABLE);
  if (p && !core_.send(s, kChannelReliable, p, wire::ServerBody::GeneratedCellHashes)) enet_packet_destroy(p);
  return true;
}

bool Inbound::onInputs(Session& s, const wire::Inputs& msg) {
  if (!inGame(s.phase)) return false;
  const auto* list = msg.inputs();
  if (list && list->size() > kMaxInputsPerMessage) return false;
  if (msg.snapshot_ack() > s.snapshotSeq) return false;  // acknowledges something never sent
  // Check everything before queueing anything: a message is applied whole or not at all.
  std::uint32_t prev = 0;
  if (list) {
    for (const wire::InputRec* r : *list) {
      if (r->sequence() == 0 || r->sequence() <= prev) return false;  // oldest first, from 1
      if ((r->buttons() & ~kValidButtons) != 0) return false;
      if (r->pitch() < -16384 || r->pitch() > 16384) return false;
      prev = r->sequence();
    }
  }
  if (msg.snapshot_ack() > s.ackedSeq) s.ackedSeq = msg.snapshot_ack();
  if (list) {
    for (const wire::InputRec* r : *list) {
      if (r->sequence() <= s.newestInput) continue;  // already queued or applied
      if (!s.inputs.push(fromWire(*r))) ++core_.stats.inputsDropped;
      s.newestInput = r->sequence();
    }
  }
  return true;
}

bool Inbound::onAction(Session& s, const wire::Action& msg) {
  if (!inGame(s.phase)) return false;
  if (s.actions.size() >= kMaxQueuedActions) return false;
  PendingAction a;
  if (!decodeAction(msg, a.body)) return false;
  a.afterInput = msg.after_input();
  a.arrivalTick = core_.state.tick;
  s.actions.push_back(std::move(a));
  return true;
}

}  // namespace loam::net::host
