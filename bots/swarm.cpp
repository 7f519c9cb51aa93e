#include "bots/swarm.h"

#include <enet/enet.h>

#include <chrono>
#include <cstdio>
#include <utility>

#include "net/protocol.h"
#include "net/wire.h"

namespace loam::bots {

namespace {

// Server messages can be large (StepBatches with many edits); a swarm bot never
// asks for a JoinSnapshot, so this only bounds the verifier.

}  // namespace

sim::Result<std::unique_ptr<Swarm>> Swarm::open(const std::string& host, std::uint16_t port, std::uint32_t count,
                                                const std::string& namePrefix, const sim::Script& script,
                                                double startMs, std::uint64_t accountSeed,
                                                const std::string& bindAddress) {
  std::unique_ptr<Swarm> s(new Swarm());
  if (!s->enet_.ok()) return sim::makeError("cannot initialise ENet");
  s->startMs_ = startMs;
  s->fbb_ = std::make_unique<flatbuffers::FlatBufferBuilder>(1024);
  ENetAddress address{};
  if (enet_address_set_host(&address, host.c_str()) != 0) return sim::makeError("cannot resolve host '" + host + "'");
  address.port = port;
  ENetAddress local{};  // bindAddress: the bots' own address (port any), e.g. one per group of bots
  if (!bindAddress.empty() && enet_address_set_host_ip(&local, bindAddress.c_str()) != 0)
    return sim::makeError("--bind must be an IPv4 address, got '" + bindAddress + "'");
  s->host_ = enet_host_create(bindAddress.empty() ? nullptr : &local, count, net::kChannelCount, 0, 0);
  if (!s->host_) return sim::makeError("cannot create an ENet host for " + std::to_string(count) + " swarm bots");
  net::enlargeSocketBuffers(s->host_);
  s->bots_.resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    SwarmBot& b = s->bots_[i];
    b.index = i + 1;
    b.name = namePrefix + std::to_string(i + 1);
    if (accountSeed != 0) b.key = net::botAccountKey(accountSeed, b.name);
    // Swarm bots steer by server positions that lag a round trip: arrive loosely.
    b.script = std::make_unique<BotScript>(script, b.index, 1.5);
    b.peer = enet_host_connect(s->host_, &address, net::kChannelCount, net::kProtocolVersion);
    if (!b.peer) return sim::makeError("cannot start connecting swarm bot " + b.name);
    b.peer->data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(i));
  }
  enet_host_flush(s->host_);
  return s;
}

Swarm::~Swarm() {
  if (host_) enet_host_destroy(host_);
}

void Swarm::send(SwarmBot& bot, std::uint8_t type, bool reliable) {
  const std::size_t size = fbb_->GetSize();
  ENetPacket* p = enet_packet_create(fbb_->GetBufferPointer(), size, reliable ? ENET_PACKET_FLAG_RELIABLE : 0);
  if (p && enet_peer_send(bot.peer, reliable ? net::kChannelReliable : net::kChannelUnreliable, p) != 0)
    enet_packet_destroy(p);
  if (type < bot.sent.size()) {
    ++bot.sent[type].messages;
    bot.sent[type].bytes += size;
  }
  fbb_->Clear();
}

void Swarm::fail(SwarmBot& bot, std::string why) {
  bot.phase = SwarmBot::Phase::Failed;
  bot.error = std::move(why);
  std::fprintf(stderr, "%s: failed: %s\n", bot.name.c_str(), bot.error.c_str());
  enet_peer_disconnect(bot.peer, 0);
}

void Swarm::onPacket(SwarmBot& bot, const std::uint8_t* data, std::size_t size, std::uint8_t channel, double nowMs) {
  const auto count = [&](wire::ServerBody body) {
    const auto type = static_cast<std::uint8_t>(body);
    if (type < bot.received.size()) {
      ++bot.received[type].messages;
      bot.received[type].bytes += size;
    }
  };
  if (channel == net::kChannelSnapshot) {
    count(wire::ServerBody::Snapshot);
    const sim::Result<net::SnapshotMessage> s = net::decodeSnapshot({data, size}, gone_);
    if (!s) return fail(bot, s.error().message);
    return onSnapshot(bot, *s, nowMs);
  }
  if (channel == net::kChannelUnreliable) {
    // A swarm bot has no world: it acknowledges the ordered stream's items (so the
    // server stops resending them) and counts the steps among them.
    count(wire::ServerBody::Stream);
    if (auto decoded = net::decodeStream({data, size}, streamItems_); !decoded)
      return fail(bot, decoded.error().message);
    for (const net::StreamItemView& item : streamItems_) {
      if (!bot.receipt.receive(item.sequence) || item.kind != net::StreamItemKind::Message) continue;
      // Copied out: FlatBuffers reads its scalars in place, and the datagram does not align them.
      itemCopy_.assign(item.bytes.begin(), item.bytes.end());
      const auto* inner = net::openServerMessage(itemCopy_, net::kMaxServerMessageBytes, itemUnpacked_);
      if (inner && inner->body_type() == wire::ServerBody::StepBatch) ++bot.stepsApplied;
    }
    return;
  }
  const wire::ServerMessage* msg = net::openServerMessage({data, size}, net::kMaxServerMessageBytes, unpacked_);
  if (!msg) return fail(bot, "malformed message from the server (" + std::to_string(size) + " bytes)");
  count(msg->body_type());
  switch (msg->body_type()) {
    case wire::ServerBody::Welcome:
      bot.playerId = msg->body_as_Welcome()->player_id();
      if (bot.phase == SwarmBot::Phase::Connecting) bot.phase = SwarmBot::Phase::Welcomed;
      break;
    case wire::ServerBody::Reject: {
      const wire::Reject* r = msg->body_as_Reject();
      bot.phase = SwarmBot::Phase::Failed;
      bot.error = std::string("server rejected us: ") + net::rejectCodeName(static_cast<net::RejectCode>(r->code())) +
                  (r->text() ? ": " + r->text()->str() : std::string());
      std::fprintf(stderr, "%s: failed: %s\n", bot.name.c_str(), bot.error.c_str());
      break;
    }
    case wire::ServerBody::AuthChallenge:
      answerChallenge(bot, *msg->body_as_AuthChallenge());
      break;
    case wire::ServerBody::Snapshot:  // raw since protocol 17
    case wire::ServerBody::Stream:    // raw since protocol 18
    case wire::ServerBody::GeneratedCellHashes:
    case wire::ServerBody::JoinSnapshot:
    case wire::ServerBody::StepBatch:  // inside the Stream
    case wire::ServerBody::CellState:
    case wire::ServerBody::Compressed:  // openServerMessage unwraps it
    case wire::ServerBody::JoinChunk:
    case wire::ServerBody::Rejections:     // retired (protocol 7 and older)
    case wire::ServerBody::ActionResults:  // swarm bots send no actions
    case wire::ServerBody::SurfaceChanges:  // a swarm bot holds no world (and is sent none)
    case wire::ServerBody::NONE:
      break;
  }
}

void Swarm::onSnapshot(SwarmBot& bot, const net::SnapshotMessage& s, double nowMs) {
  if (s.sequence <= bot.snapshotAck) return;
  const sim::Result<sim::PlayerState> own = bot.owns.take(s);
  if (!own) return;  // its baseline rolled off (or a server's bad own)
  bot.snapshotAck = s.sequence;
  bot.own = *own;
  ++bot.snapshots;
  if (bot.phase == SwarmBot::Phase::Welcomed) {
    bot.phase = SwarmBot::Phase::Playing;
    bot.joinMs = nowMs - startMs_;
    std::fprintf(stderr, "%s: joined in %.0f ms (player %u)\n", bot.name.c_str(), bot.joinMs, bot.playerId);
  }
}

void Swarm::answerChallenge(SwarmBot& bot, const wire::AuthChallenge& c) {
  const auto fail = [&](const char* why) {
    bot.phase = SwarmBot::Phase::Failed;
    bot.error = why;
    std::fprintf(stderr, "%s: failed: %s\n", bot.name.c_str(), why);
    enet_peer_disconnect(bot.peer, 0);
  };
  if (bot.phase != SwarmBot::Phase::Connecting || bot.challengeAnswered) return fail("unexpected AuthChallenge");
  if (!bot.key) return fail("the server asks for an account key proof (run with --account-seed N, not 0)");
  if (!c.nonce() || c.nonce()->size() != net::kAuthNonceBytes) return fail("AuthChallenge without a 32-byte nonce");
  net::AuthNonce nonce{};
  std::copy(c.nonce()->begin(), c.nonce()->end(), nonce.begin());
  const std::string_view server = c.server_name() ? c.server_name()->string_view() : std::string_view();
  const net::Signature sig = net::signChallenge(*bot.key, nonce, server, bot.name);
  bot.challengeAnswered = true;
  fbb_->Clear();
  auto proof = wire::CreateAuthProof(*fbb_, fbb_->CreateVector(sig.data(), sig.size()));
  fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::AuthProof, proof.Union()));
  send(bot, static_cast<std::uint8_t>(wire::ClientBody::AuthProof), true);
}

void Swarm::sendInputs(SwarmBot& bot) {
  scratch_.actions.clear();
  bot.script->tick(bot.ticks++, bot.own, nullptr, scratch_);
  sim::PlayerInput in = scratch_.input;
  in.sequence = ++bot.sequence;
  bot.recent[in.sequence % bot.recent.size()] = in;
  // Every input the server has not acknowledged, oldest first, at most 16.
  const std::uint32_t acked = bot.own.lastInput;
  std::uint32_t first = bot.sequence - static_cast<std::uint32_t>(bot.recent.size()) + 1;
  if (bot.sequence < bot.recent.size()) first = 1;
  if (first <= acked) first = acked + 1;
  wire::InputRec recs[16];
  std::size_t n = 0;
  for (std::uint32_t s = first; s <= bot.sequence; ++s) recs[n++] = net::toWire(bot.recent[s % bot.recent.size()]);
  auto vec = fbb_->CreateVectorOfStructs(recs, n);
  auto body = wire::CreateInputs(*fbb_, vec, bot.snapshotAck, bot.receipt.ack());
  fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Inputs, body.Union()));
  send(bot, static_cast<std::uint8_t>(wire::ClientBody::Inputs), false);
}

void Swarm::service(double nowMs, bool tick) {
  ENetEvent ev;
  net::capRetransmitBackoff(host_);
  while (enet_host_service(host_, &ev, 0) > 0) {
    if (!ev.peer) continue;
    SwarmBot& bot = bots_[reinterpret_cast<std::uintptr_t>(ev.peer->data)];
    switch (ev.type) {
      case ENET_EVENT_TYPE_CONNECT: {
        net::configurePeer(ev.peer);
        fbb_->Clear();
        auto name = fbb_->CreateString(bot.name);
        flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> key;
        if (bot.key) key = fbb_->CreateVector(bot.key->publicKey.data(), bot.key->publicKey.size());
        auto hello = wire::CreateHello(*fbb_, net::kProtocolVersion, name,
                                        static_cast<std::uint8_t>(net::ClientKind::SwarmBot), false, key);
        fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Hello, hello.Union()));
        send(bot, static_cast<std::uint8_t>(wire::ClientBody::Hello), true);
        break;
      }
      case ENET_EVENT_TYPE_RECEIVE:
        if (bot.phase != SwarmBot::Phase::Failed)
          onPacket(bot, ev.packet->data, ev.packet->dataLength, ev.channelID, nowMs);
        enet_packet_destroy(ev.packet);
        break;
      case ENET_EVENT_TYPE_DISCONNECT:
        if (bot.phase != SwarmBot::Phase::Failed) {
          const bool connecting = bot.phase == SwarmBot::Phase::Connecting;
          bot.phase = connecting ? SwarmBot::Phase::Failed : SwarmBot::Phase::Disconnected;
          bot.error = connecting ? "could not connect" : "disconnected by the server";
          std::fprintf(stderr, "%s: %s: %s\n", bot.name.c_str(), connecting ? "failed" : "disconnected",
                       bot.error.c_str());
        }
        bot.bytesIn += ev.peer->incomingDataTotal;
        bot.bytesOut += ev.peer->outgoingDataTotal;
        ev.peer->incomingDataTotal = ev.peer->outgoingDataTotal = 0;
        bot.peer = nullptr;
        break;
      case ENET_EVENT_TYPE_NONE:
        break;
    }
  }
  if (tick) {
    for (SwarmBot& bot : bots_) {
      if (bot.phase == SwarmBot::Phase::Playing && bot.peer) sendInputs(bot);
    }
  }
  enet_host_flush(host_);
  for (SwarmBot& bot : bots_) {
    if (!bot.peer) continue;
    // ENet's per-peer totals are 32-bit: fold them into 64-bit counters often.
    bot.bytesIn += bot.peer->incomingDataTotal;
    bot.bytesOut += bot.peer->outgoingDataTotal;
    bot.peer->incomingDataTotal = bot.peer->outgoingDataTotal = 0;
    bot.rttMs = bot.peer->roundTripTime;
  }
}

void Swarm::waitForData(int timeoutMs) {
  enet_uint32 condition = ENET_SOCKET_WAIT_RECEIVE;
  enet_socket_wait(host_->socket, &condition, static_cast<enet_uint32>(std::max(timeoutMs, 0)));
}

void Swarm::disconnect(int waitMs) {
  std::vector<ENetPeer*> peers;
  peers.reserve(bots_.size());
  for (const SwarmBot& bot : bots_) peers.push_back(bot.peer);
  net::disconnectPeers(host_, peers, waitMs);
  for (SwarmBot& bot : bots_) bot.peer = nullptr;
}

}  // namespace loam::bots
