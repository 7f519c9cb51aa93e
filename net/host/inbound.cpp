#include "net/host/inbound.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "net/account_key.h"
#include "net/enet_support.h"
#include "net/host/column_checks.h"
#include "net/host/join_stream.h"
#include "net/player_name.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/gen/generator_version.h"

namespace loam::net::host {
namespace {

constexpr std::size_t kMaxEventsPerPump = 20000;
constexpr std::uint32_t kValidButtons = sim::kButtonJump | sim::kButtonRun | sim::kButtonCrouch;

/// JoinProgress from a full client: its generation until WorldReady (the deadlines
/// move only when the permille grows), and while Playing the join stream's
/// acknowledgement. Bytes acknowledged before the stream began are malformed; late
/// ones after it ended are not.
bool onJoinProgress(HostCore& core, Session& s, const wire::JoinProgress& p) {
  if (p.generated_permille() > 1000 || !s.wantsWorld || !admitted(s.phase)) return false;
  if (!s.worldChecked) {
    s.heardTick = core.state.tick;
    if (p.generated_permille() > s.generatedPermille) {
      s.generatedPermille = p.generated_permille();
      s.grewTick = core.state.tick;
    }
  }
  if (s.phase != Phase::Playing) return p.received_bytes() == 0;  // the stream starts after the step
  return JoinStreams::acknowledge(core, s, p.received_bytes());
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
  // Nor connect too often: each join costs a session, a join state and a snapshot
  // stream, and a join-and-leave loop is cheap for the peer (net/host/join_rate.h).
  if (!core_.joinRate.admit(peer->address.host, core_.state.tick)) {
    ++core_.stats.joinRateRefused;
    enet_peer_disconnect_now(peer, static_cast<std::uint32_t>(RejectCode::JoinRate));
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
  const std::int64_t nowUs =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  switch (countMessage(s, nowUs)) {
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
    case wire::ClientBody::AuthProof: return onAuthProof(s, *msg.body_as_AuthProof());
    case wire::ClientBody::JoinProgress: return onJoinProgress(core_, s, *msg.body_as_JoinProgress());
    case wire::ClientBody::CellsDropped: return onCellsDropped(s, *msg.body_as_CellsDropped());
    case wire::ClientBody::ColumnHashes: return onColumnHashes(s, *msg.body_as_ColumnHashes());
  }
  return false;
}

// The client no longer holds these cells: it is behind on each from now on, so the
// next time it is in reach of one that changed, it gets the cell whole.
bool Inbound::onCellsDropped(Session& s, const wire::CellsDropped& msg) {
  if (!msg.cells() || msg.cells()->size() > kMaxCellsDropped) return false;
  if (s.phase != Phase::Playing || !s.wantsWorld) return true;  // nothing held: nothing to forget
  for (const wire::CellRef* c : *msg.cells()) s.cellTicks.erase(sim::cellKey(sim::CellCoord{c->x(), c->z()}));
  s.catchUpDue = true;
  return true;
}

// Generated columns to check (ColumnChecks, after the step), oldest dropped beyond
// kMaxPendingColumnChecks.
bool Inbound::onColumnHashes(Session& s, const wire::ColumnHashes& msg) {
  if (!msg.columns() || msg.columns()->size() > kMaxColumnHashes) return false;
  if (!s.wantsWorld || !inGame(s.phase) || !s.worldChecked) return false;  // only one that built its world
  for (const wire::ColumnHashRec* r : *msg.columns()) {
    if (s.columnChecks.size() == kMaxPendingColumnChecks) {
      s.columnChecks.pop_front();
      ++core_.stats.columnsUnchecked;
    }
    s.columnChecks.push_back({sim::ChunkColumn{r->x(), r->z()}, r->hash()});
  }
  return true;
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
  if (hello.name() == nullptr || hello.name()->size() > sim::kMaxNameBytes) {
    core_.reject(s, RejectCode::BadName, "name: missing, or over " + std::to_string(sim::kMaxNameBytes) + " bytes");
    return true;
  }
  const NameCheck name = checkPlayerName(std::string_view(hello.name()->c_str(), hello.name()->size()));
  if (!name.ok()) {
    core_.reject(s, name.code, "name: " + name.why);
    return true;
  }
  if (hello.kind() >= kClientKindCount) {
    core_.reject(s, RejectCode::BadHello, "unknown client kind " + std::to_string(hello.kind()));
    return true;
  }
  const flatbuffers::Vector<std::uint8_t>* key = hello.public_key();
  if (key != nullptr && key->size() != 0 && key->size() != kPublicKeyBytes) {
    core_.reject(s, RejectCode::BadHello, "public key: " + std::to_string(kPublicKeyBytes) + " bytes or none");
    return true;
  }
  if (admission_) {
    if (std::string why = admission_(HostCore::addressOf(s.peer), name.name); !why.empty()) {
      core_.reject(s, RejectCode::Banned, why);
      return true;
    }
  }
  // One name, one player: compared folded against every session that holds a name.
  const std::string folded = foldName(name.name);
  for (const Session& other : core_.sessions) {
    if (&other != &s && (admitted(other.phase) || other.phase == Phase::Challenged) &&
        foldName(other.name.view()) == folded) {
      core_.reject(s, RejectCode::NameTaken, "a player called \"" + std::string(other.name.view()) + "\" is connected");
      return true;
    }
  }
  const ServerConfig& config = core_.config;
  if (playersAdmitted() >= config.maxPlayers) {
    core_.reject(s, RejectCode::ServerFull, "server full (" + std::to_string(config.maxPlayers) + " players)");
    return true;
  }
  s.name = sim::PlayerName::from(name.name);
  s.wantsWorld = hello.wants_world();
  // The client says how far around its player it holds the world; the server caps it
  // (a larger reach costs the server per tick).
  const double most = config.interest.cellReachMetres;
  s.reachMetres = hello.reach_metres() == 0 ? most : std::min<double>(hello.reach_metres(), most);
  s.hasKey = key != nullptr && key->size() == kPublicKeyBytes;
  if (s.hasKey) std::copy(key->begin(), key->end(), s.publicKey.begin());
  if (config.auth == AuthMode::Off) {
    admit(s);
    return true;
  }
  challengeOrAdmit(s);
  return true;
}

void Inbound::challengeOrAdmit(Session& s) {
  const ServerConfig& config = core_.config;
  const std::string_view name = s.name.view();
  const std::optional<PublicKey> bound = config.accounts ? config.accounts->keyOf(name) : std::nullopt;
  if (!s.hasKey) {
    if (config.auth == AuthMode::Required) {
      core_.reject(s, RejectCode::AuthRequired, "this server needs an account key");
    } else if (bound) {
      core_.reject(s, RejectCode::AuthRequired, "the name \"" + std::string(name) + "\" is claimed: join with its key");
    } else {
      admit(s);  // names mode: an unclaimed name without a key plays, and claims nothing
    }
    return;
  }
  const std::string address = HostCore::addressOf(s.peer);
  const auto now = AuthFailureLimiter::Clock::now();
  if (core_.authFailures.limited(address, now)) {
    core_.reject(s, RejectCode::AuthRateLimited,
                 "too many failed proofs from " + address + ": try again in " +
                     std::to_string(AuthFailureLimiter::kLock.count()) + " s");
    return;
  }
  if (bound && *bound != s.publicKey) {
    ++core_.stats.authFailures;
    core_.authFailures.fail(address, now);
    core_.reject(s, RejectCode::AuthFailed, "the name \"" + std::string(name) + "\" is claimed by another key");
    return;
  }
  s.claimOnJoin = !bound;
  s.authNonce = randomNonce();
  flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
  fbb.Clear();
  const auto nonce = fbb.CreateVector(s.authNonce.data(), s.authNonce.size());
  auto c = wire::CreateAuthChallenge(fbb, nonce, fbb.CreateString(config.name));
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::AuthChallenge, c.Union()));
  core_.sendOwn(s, kChannelReliable, ENET_PACKET_FLAG_RELIABLE, wire::ServerBody::AuthChallenge);
  core_.transition(s, Phase::Challenged);
}

bool Inbound::onAuthProof(Session& s, const wire::AuthProof& proof) {
  if (s.phase != Phase::Challenged) return false;
  const std::string address = HostCore::addressOf(s.peer);
  const flatbuffers::Vector<std::uint8_t>* sig = proof.signature();
  if (sig == nullptr || !verifyProof(s.publicKey, std::span(sig->data(), sig->size()), s.authNonce,
                                     core_.config.name, s.name.view())) {
    ++core_.stats.authFailures;
    core_.authFailures.fail(address, AuthFailureLimiter::Clock::now());
    core_.reject(s, RejectCode::AuthFailed, "the proof does not verify for the key sent");
    return true;
  }
  core_.authFailures.succeed(address);
  if (playersAdmitted() >= core_.config.maxPlayers) {  // others may have joined during the round trip
    core_.reject(s, RejectCode::ServerFull,
                 "server full (" + std::to_string(core_.config.maxPlayers) + " players)");
    return true;
  }
  if (s.claimOnJoin && core_.config.accounts) {
    // A failed write is logged by the book; the player still joins (the name stays unclaimed).
    (void)core_.config.accounts->claim(s.name.view(), s.publicKey);
  }
  admit(s);
  return true;
}

void Inbound::admit(Session& s) {
  const ServerConfig& config = core_.config;
  s.id = sim::PlayerId{nextPlayerId_++};
  const sim::SimState& state = core_.state;
  flatbuffers::FlatBufferBuilder& fbb = core_.fbb;
  fbb.Clear();
  auto w = wire::CreateWelcomeDirect(fbb, kProtocolVersion, s.id.value, config.name.c_str(),
                                     core_.world.sceneName.c_str(), state.sceneHash, state.seed,
                                     sim::kGeneratorVersion, core_.world.generatedHash, state.tick);
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Welcome, w.Union()));
  core_.sendOwn(s, kChannelReliable, ENET_PACKET_FLAG_RELIABLE, wire::ServerBody::Welcome);
  core_.transition(s, Phase::Welcomed);
  s.welcomeTick = state.tick;
  // Swarm bots join at once; full clients when the join worker has room (ServerHost's
  // housekeeping), while they generate: the join state is on its way by the time the
  // world is built, one round trip sooner than after WorldReady.
  if (!s.wantsWorld) core_.transition(s, Phase::Joining);
}

// The client built its world: the generation deadlines end. It may come before or
// after the join (the client checks the hash itself against Welcome's too).
bool Inbound::onWorldReady(Session& s, const wire::WorldReady& ready) {
  if (!admitted(s.phase) || !s.wantsWorld || s.worldChecked) return false;
  if (ready.generated_hash() != core_.world.generatedHash) {
    char text[96];
    std::snprintf(text, sizeof text, "world hash %016llx, server generated %016llx",
                  static_cast<unsigned long long>(ready.generated_hash()),
                  static_cast<unsigned long long>(core_.world.generatedHash));
    core_.reject(s, RejectCode::WorldMismatch, text);
    return true;
  }
  s.worldChecked = true;
  core_.countJoinIfDone(s);
  return true;
}

bool Inbound::onCellHashRequest(Session& s) {
  // Once per session, and only while the world check is pending (bounds amplification).
  if (!admitted(s.phase) || !s.wantsWorld || s.worldChecked || s.cellHashesSent) return false;
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
  core_.sendBytes(s, kChannelReliable, ENET_PACKET_FLAG_RELIABLE, generatedCellsMessage_,
                  wire::ServerBody::GeneratedCellHashes);
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
  if (msg.stream_ack() >= s.stream.nextSequence) return false;  // acknowledges an item never sent
  // The unanswered actions, oldest first, each again in every Inputs until answered:
  // the next in sequence is queued, those queued before are resends. Checked whole
  // first, like the inputs.
  const auto* actions = msg.actions();
  if (actions && actions->size() > kMaxActionsPerInputs) return false;
  decodedActions_.clear();
  if (actions) {
    std::uint32_t prevAction = 0;
    for (const wire::Action* a : *actions) {
      if (a->sequence() == 0 || a->sequence() <= prevAction) return false;  // oldest first, from 1
      prevAction = a->sequence();
      if (!decodeAction(*a, decodedActions_.emplace_back().body)) return false;
    }
  }
  if (msg.snapshot_ack() > s.ackedSeq) s.ackedSeq = msg.snapshot_ack();
  acknowledgeStream(s, msg.stream_ack());
  if (list && list->size() > 0) s.stream.loss.onInputs(list->Get(list->size() - 1)->sequence());
  if (list) {
    for (const wire::InputRec* r : *list) {
      if (r->sequence() <= s.newestInput) continue;  // already queued or applied
      if (!s.inputs.push(fromWire(*r))) ++core_.stats.inputsDropped;
      s.newestInput = r->sequence();
    }
  }
  if (actions) {
    for (std::uint32_t i = 0; i < actions->size(); ++i) {
      const wire::Action& a = *actions->Get(i);
      if (a.sequence() <= s.newestAction) continue;      // queued from an earlier Inputs
      if (a.sequence() != s.newestAction + 1) break;     // one before it was lost: it comes again
      queueAction(s, a, std::move(decodedActions_[i]));
      s.newestAction = a.sequence();
    }
  }
  return true;
}

bool Inbound::onAction(Session& s, const wire::Action& msg) {
  if (!inGame(s.phase)) return false;
  PendingAction a;
  if (!decodeAction(msg, a.body)) return false;
  queueAction(s, msg, std::move(a));
  return true;
}

void Inbound::queueAction(Session& s, const wire::Action& msg, PendingAction a) {
  if (s.actions.size() >= kMaxQueuedActions) {
    // Over the queue (a burst, or a reliable backlog arriving at once after a stall):
    // refused like an edit over the rate, and answered, so the client's prediction
    // rolls back instead of waiting for an answer that never comes.
    if (s.refused.size() < kMaxQueuedActions)
      s.refused.push_back({msg.sequence(), msg.after_input(), static_cast<std::uint8_t>(a.body.index())});
    return;
  }
  a.sequence = msg.sequence();
  a.afterInput = msg.after_input();
  a.arrivalTick = core_.state.tick;
  s.actions.push_back(std::move(a));
}

}  // namespace loam::net::host
