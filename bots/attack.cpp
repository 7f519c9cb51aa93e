#include "bots/attack.h"

#include <flatbuffers/flatbuffers.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "net/protocol.h"
#include "net/wire.h"

namespace loam::bots {

namespace {

constexpr std::uint32_t kInputsPerSpeedTick = 4;  // 240 inputs/s at 60 Hz: 4x an honest client
constexpr std::uint32_t kFloodMessages = 40;      // in one tick: 2,400/s against a 400/s limit
constexpr std::uint32_t kPreHelloTicks = 30;      // garbage before Hello: then Hello anyway
// Chat text with an escape sequence, invalid UTF-8, a bidi override and a zero-width space.
constexpr char kHostileText[] = "hi\x1b[2J\xff\xfe " "\xe2\x80\xae" " evil " "\xe2\x80\x8b";

// A session the server refused, by a Reject message's code or the disconnect's.
void countRejection(AttackStats& s, std::uint16_t code) {
  ++s.rejected;
  ++s.rejectsByCode[code];
}

}  // namespace

const char* attackModeName(AttackMode mode) noexcept {
  switch (mode) {
    case AttackMode::ConnectOnly: return "connect-only";
    case AttackMode::HelloOnly: return "hello-only";
    case AttackMode::JoinSpam: return "join-spam";
    case AttackMode::Garbage: return "garbage";
    case AttackMode::Speed: return "speed";
  }
  return "?";
}

std::optional<AttackMode> parseAttackMode(std::string_view s) noexcept {
  for (std::size_t i = 0; i < kAttackModeCount; ++i) {
    const auto m = static_cast<AttackMode>(i);
    if (s == attackModeName(m)) return m;
  }
  return std::nullopt;
}

const char* garbageKindName(GarbageKind kind) noexcept {
  switch (kind) {
    case GarbageKind::RandomBytes: return "random_bytes";
    case GarbageKind::Truncated: return "truncated";
    case GarbageKind::BitFlipped: return "bit_flipped";
    case GarbageKind::WrongUnion: return "wrong_union";
    case GarbageKind::Oversized: return "oversized";
    case GarbageKind::TooManyInputs: return "too_many_inputs";
    case GarbageKind::BadInputs: return "bad_inputs";
    case GarbageKind::BadAction: return "bad_action";
    case GarbageKind::OutOfPhase: return "out_of_phase";
    case GarbageKind::Flood: return "flood";
  }
  return "?";
}

sim::Result<std::unique_ptr<Attack>> Attack::open(const AttackConfig& config, double nowMs) {
  std::unique_ptr<Attack> a(new Attack());
  if (!a->enet_.ok()) return sim::makeError("cannot initialise ENet");
  if (config.count == 0) return sim::makeError("attack: count must be at least 1");
  a->config_ = config;
  a->rng_.seed(config.seed);
  a->fbb_ = std::make_unique<flatbuffers::FlatBufferBuilder>(1024);
  if (enet_address_set_host(&a->address_, config.host.c_str()) != 0)
    return sim::makeError("cannot resolve host '" + config.host + "'");
  a->address_.port = config.port;
  ENetAddress local{};
  if (!config.bind.empty()) {
    if (enet_address_set_host_ip(&local, config.bind.c_str()) != 0)
      return sim::makeError("attack: --bind must be an IPv4 address, got '" + config.bind + "'");
    local.port = 0;  // any free port
  }
  a->host_ = enet_host_create(config.bind.empty() ? nullptr : &local, config.count, net::kChannelCount, 0, 0);
  if (!a->host_)
    return sim::makeError("cannot create an ENet host for " + std::to_string(config.count) + " attackers" +
                          (config.bind.empty() ? std::string() : " on " + config.bind));
  net::enlargeSocketBuffers(a->host_);
  a->attackers_.resize(config.count);
  for (std::uint32_t i = 0; i < config.count; ++i) {
    Attacker& at = a->attackers_[i];
    at.index = i + 1;
    at.name = config.namePrefix + std::to_string(i + 1);
    at.yaw = static_cast<std::uint16_t>(a->rng_());
    a->connect(at, nowMs);
  }
  enet_host_flush(a->host_);
  return a;
}

Attack::~Attack() {
  if (host_) enet_host_destroy(host_);
}

std::size_t Attack::countIn(Attacker::State s) const noexcept {
  std::size_t n = 0;
  for (const Attacker& a : attackers_) n += a.state == s ? 1 : 0;
  return n;
}

void Attack::connect(Attacker& a, double nowMs) {
  ++stats_.connectAttempts;
  a.rejected = false;
  a.sessionTicks = 0;
  a.sequence = 0;
  a.snapshotAck = 0;
  a.owns = {};
  a.havePosition = false;
  a.connectAtMs = nowMs;
  a.peer = enet_host_connect(host_, &address_, net::kChannelCount, net::kProtocolVersion);
  if (!a.peer) {  // every peer of the host busy (should not happen: one per attacker)
    ++stats_.connectFailed;
    a.state = Attacker::State::Waiting;
    a.retryAtMs = nowMs + config_.reconnectMs;
    return;
  }
  a.peer->data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(a.index));
  a.state = Attacker::State::Connecting;
}

void Attack::sessionEnded(Attacker& a, std::uint32_t disconnectData, double nowMs) {
  switch (a.state) {
    case Attacker::State::Connecting:  // refused with a code (AddressLimit), or no answer at all
      if (disconnectData != 0) {
        countRejection(stats_, static_cast<std::uint16_t>(disconnectData));
      } else {
        ++stats_.connectFailed;
      }
      break;
    case Attacker::State::Leaving: break;  // counted when we left
    case Attacker::State::Waiting:
    case Attacker::State::Silent:
    case Attacker::State::HelloSent:
    case Attacker::State::Welcomed:
    case Attacker::State::Playing:
      if (a.rejected) break;  // the Reject message was counted
      if (disconnectData != 0) {
        countRejection(stats_, static_cast<std::uint16_t>(disconnectData));
      } else {
        ++stats_.dropped;
      }
      break;
  }
  // Join-spam comes straight back after its own leave; everyone else pauses a little.
  const bool again = a.state == Attacker::State::Leaving && config_.mode == AttackMode::JoinSpam;
  a.peer = nullptr;
  a.state = Attacker::State::Waiting;
  a.retryAtMs = again ? nowMs : nowMs + config_.reconnectMs;
}

void Attack::onConnect(Attacker& a, double nowMs) {
  ++stats_.connected;
  net::configurePeer(a.peer);
  a.lastTickMs = nowMs;
  switch (config_.mode) {
    case AttackMode::ConnectOnly: a.state = Attacker::State::Silent; break;
    case AttackMode::HelloOnly: sendHello(a, true); break;
    case AttackMode::JoinSpam:
    case AttackMode::Speed: sendHello(a, false); break;
    case AttackMode::Garbage:
      a.preHelloGarbage = rng_() % 4 == 0;
      if (a.preHelloGarbage)
        a.state = Attacker::State::Silent;
      else
        sendHello(a, false);
      break;
  }
}

void Attack::sendHello(Attacker& a, bool wantsWorld) {
  fbb_->Clear();
  auto name = fbb_->CreateString(a.name);
  const auto kind = wantsWorld ? net::ClientKind::FullBot : net::ClientKind::SwarmBot;
  auto hello = wire::CreateHello(*fbb_, net::kProtocolVersion, name, static_cast<std::uint8_t>(kind), wantsWorld);
  fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Hello, hello.Union()));
  sendBuilt(a, true);
  ++stats_.hellos;
  a.state = Attacker::State::HelloSent;
}

void Attack::sendBytes(Attacker& a, const std::uint8_t* data, std::size_t size, bool reliable) {
  if (!a.peer) return;
  ENetPacket* p = enet_packet_create(data, size, reliable ? ENET_PACKET_FLAG_RELIABLE : 0);
  if (!p) return;
  if (enet_peer_send(a.peer, reliable ? net::kChannelReliable : net::kChannelUnreliable, p) != 0) {
    enet_packet_destroy(p);
    return;
  }
  ++stats_.messagesSent;
  stats_.bytesSent += size;
}

void Attack::sendBuilt(Attacker& a, bool reliable) {
  sendBytes(a, fbb_->GetBufferPointer(), fbb_->GetSize(), reliable);
  fbb_->Clear();
}

void Attack::onPacket(Attacker& a, const std::uint8_t* data, std::size_t size, std::uint8_t channel, double nowMs) {
  ++stats_.messagesReceived;
  stats_.bytesReceived += size;
  if (channel == net::kChannelSnapshot) {
    if (const sim::Result<net::SnapshotMessage> s = net::decodeSnapshot({data, size}, gone_)) onSnapshot(a, *s, nowMs);
    return;
  }
  if (channel == net::kChannelUnreliable) return;  // the Stream: an attacker neither reads nor acknowledges it
  const wire::ServerMessage* msg = net::openServerMessage({data, size}, net::kMaxServerMessageBytes, unpacked_);
  if (!msg) return;  // not ours to judge: the server's own tests check what it sends
  // Only these two and snapshots matter to an attacker; anything else is counted and ignored.
  const wire::ServerBody type = msg->body_type();
  if (type == wire::ServerBody::Welcome) {
    ++stats_.welcomes;
    if (a.state == Attacker::State::HelloSent) a.state = Attacker::State::Welcomed;
  } else if (type == wire::ServerBody::Reject) {
    if (a.rejected) return;
    a.rejected = true;
    countRejection(stats_, msg->body_as_Reject()->code());
  }
}

void Attack::onSnapshot(Attacker& a, const net::SnapshotMessage& s, double nowMs) {
  if (s.sequence > a.snapshotAck) a.snapshotAck = s.sequence;
  if (a.state == Attacker::State::Welcomed) {
    a.state = Attacker::State::Playing;
    ++stats_.joins;
    const double ms = nowMs - a.connectAtMs;
    stats_.joinMsSum += ms;
    if (ms > stats_.joinMsMax) stats_.joinMsMax = ms;
    if (config_.mode == AttackMode::JoinSpam) {  // joined: leave at once and come back
      enet_peer_disconnect(a.peer, 0);
      a.state = Attacker::State::Leaving;
      ++stats_.leaves;
      return;
    }
  }
  const sim::Result<sim::PlayerState> own = a.owns.take(s);
  if (a.state == Attacker::State::Playing && own) {
    const std::int32_t x = own->position.x, z = own->position.z;
    if (a.havePosition) {
      const double dx = static_cast<double>(x) - a.lastX, dz = static_cast<double>(z) - a.lastZ;
      const double metres = std::sqrt(dx * dx + dz * dz) / sim::kUnitsPerMetre;
      stats_.metresMoved += metres;
      a.stuckSnapshots = metres < 0.01 ? a.stuckSnapshots + 1 : 0;
    }
    a.havePosition = true;
    a.lastX = x;
    a.lastZ = z;
  }
}

void Attack::sendSpeedInputs(Attacker& a) {
  // Blocked (a tree, a cliff): turn somewhere else, as a cheater steering would.
  if (a.stuckSnapshots > 15) {
    a.yaw = static_cast<std::uint16_t>(a.yaw + 16384 + rng_() % 32768);
    a.stuckSnapshots = 0;
  }
  wire::InputRec recs[kInputsPerSpeedTick];
  for (std::uint32_t k = 0; k < kInputsPerSpeedTick; ++k) {
    sim::PlayerInput in;
    in.sequence = ++a.sequence;
    in.moveForward = 127;
    in.yaw = a.yaw;
    in.buttons = sim::kButtonRun | (a.sequence % 40 == 0 ? sim::kButtonJump : 0);
    recs[k] = net::toWire(in);
  }
  auto vec = fbb_->CreateVectorOfStructs(recs, kInputsPerSpeedTick);
  auto body = wire::CreateInputs(*fbb_, vec, a.snapshotAck);
  fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Inputs, body.Union()));
  sendBuilt(a, false);
  stats_.inputsSent += kInputsPerSpeedTick;
}

void Attack::buildValid(Attacker& a) {
  fbb_->Clear();
  switch (rng_() % 3) {
    case 0: {
      wire::InputRec recs[3];
      const std::size_t n = 1 + rng_() % 3;
      for (std::size_t k = 0; k < n; ++k) {
        sim::PlayerInput in;
        in.sequence = a.sequence + 1 + static_cast<std::uint32_t>(k);
        in.moveForward = static_cast<std::int8_t>(rng_() % 255 - 127);
        in.yaw = static_cast<std::uint16_t>(rng_());
        recs[k] = net::toWire(in);
      }
      auto body = wire::CreateInputs(*fbb_, fbb_->CreateVectorOfStructs(recs, n), a.snapshotAck);
      fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Inputs, body.Union()));
      break;
    }
    case 1: {
      auto dig = wire::CreateDig(*fbb_, a.lastX / sim::kUnitsPerVoxel, 10, a.lastZ / sim::kUnitsPerVoxel, 2);
      auto body = wire::CreateAction(*fbb_, a.sequence, wire::ActionBody::Dig, dig.Union());
      fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Action, body.Union()));
      break;
    }
    default: {
      auto name = fbb_->CreateString(a.name);
      auto hello = wire::CreateHello(*fbb_, net::kProtocolVersion, name,
                                     static_cast<std::uint8_t>(net::ClientKind::SwarmBot), false);
      fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Hello, hello.Union()));
      break;
    }
  }
}

void Attack::sendGarbage(Attacker& a) {
  const auto kind = static_cast<GarbageKind>(rng_() % kGarbageKindCount);
  ++stats_.garbage[static_cast<std::size_t>(kind)];
  const bool reliable = rng_() % 2 == 0;
  auto byte = [&] { return static_cast<std::uint8_t>(rng_()); };
  switch (kind) {
    case GarbageKind::RandomBytes: {
      bytes_.resize(1 + rng_() % net::kMaxClientPacketBytes);
      for (std::uint8_t& b : bytes_) b = byte();
      sendBytes(a, bytes_.data(), bytes_.size(), reliable);
      break;
    }
    case GarbageKind::Truncated: {
      buildValid(a);
      const std::size_t size = fbb_->GetSize();
      bytes_.assign(fbb_->GetBufferPointer(), fbb_->GetBufferPointer() + 1 + rng_() % (size - 1));
      fbb_->Clear();
      sendBytes(a, bytes_.data(), bytes_.size(), reliable);
      break;
    }
    case GarbageKind::BitFlipped: {
      buildValid(a);
      bytes_.assign(fbb_->GetBufferPointer(), fbb_->GetBufferPointer() + fbb_->GetSize());
      fbb_->Clear();
      const std::size_t flips = 1 + rng_() % 8;
      for (std::size_t k = 0; k < flips; ++k) bytes_[rng_() % bytes_.size()] ^= static_cast<std::uint8_t>(1 + rng_() % 255);
      sendBytes(a, bytes_.data(), bytes_.size(), reliable);
      break;
    }
    case GarbageKind::WrongUnion: {
      // A real table under another member's tag (or a tag past the union's end, which
      // the verifier lets through and the dispatcher must refuse).
      fbb_->Clear();
      flatbuffers::Offset<void> table;
      std::uint8_t actual = 0;
      switch (rng_() % 4) {
        case 0: {
          wire::InputRec rec = net::toWire(sim::PlayerInput{a.sequence + 1, 127, 0, 0, 0, 0});
          table = wire::CreateInputs(*fbb_, fbb_->CreateVectorOfStructs(&rec, 1), a.snapshotAck).Union();
          actual = static_cast<std::uint8_t>(wire::ClientBody::Inputs);
          break;
        }
        case 1:
          table = wire::CreateWorldReady(*fbb_, rng_()).Union();
          actual = static_cast<std::uint8_t>(wire::ClientBody::WorldReady);
          break;
        case 2: {
          auto chat = wire::CreateChat(*fbb_, fbb_->CreateString("hello"));
          // An Action whose body tag is wrong, inside a correctly tagged ClientMessage.
          const auto tag = static_cast<wire::ActionBody>(1 + rng_() % 8);
          table = wire::CreateAction(*fbb_, a.sequence, tag == wire::ActionBody::Chat ? wire::ActionBody::Dig : tag,
                                     chat.Union())
                      .Union();
          fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Action, table));
          sendBuilt(a, reliable);
          return;
        }
        default:
          // A Dig (an ActionBody member) as a ClientMessage body.
          table = wire::CreateDig(*fbb_, 0, 0, 0, 2).Union();
          actual = 0;
          break;
      }
      std::uint8_t tag = static_cast<std::uint8_t>(1 + rng_() % 255);
      if (tag == actual) tag = static_cast<std::uint8_t>(tag + 1);
      fbb_->Finish(wire::CreateClientMessage(*fbb_, static_cast<wire::ClientBody>(tag), table));
      sendBuilt(a, reliable);
      break;
    }
    case GarbageKind::Oversized: {
      if (rng_() % 2 == 0) {  // a well-formed Chat action, just too large
        std::string text(net::kMaxClientPacketBytes + 1 + rng_() % 6000, 'a');
        for (char& c : text) c = static_cast<char>('a' + rng_() % 26);
        fbb_->Clear();
        auto chat = wire::CreateChat(*fbb_, fbb_->CreateString(text));
        auto body = wire::CreateAction(*fbb_, a.sequence, wire::ActionBody::Chat, chat.Union());
        fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Action, body.Union()));
        sendBuilt(a, true);
      } else {
        bytes_.resize(4096 + rng_() % 16384);
        for (std::uint8_t& b : bytes_) b = byte();
        sendBytes(a, bytes_.data(), bytes_.size(), true);
      }
      break;
    }
    case GarbageKind::TooManyInputs: {
      const std::size_t n = net::kMaxInputsPerMessage + 1 + rng_() % 48;
      std::vector<wire::InputRec> recs(n);
      for (std::size_t k = 0; k < n; ++k)
        recs[k] = net::toWire(sim::PlayerInput{a.sequence + 1 + static_cast<std::uint32_t>(k), 127, 0, 0, 0, 0});
      fbb_->Clear();
      auto body = wire::CreateInputs(*fbb_, fbb_->CreateVectorOfStructs(recs.data(), n), a.snapshotAck);
      fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Inputs, body.Union()));
      sendBuilt(a, false);
      break;
    }
    case GarbageKind::BadInputs: {
      sim::PlayerInput in{a.sequence + 1, 127, 0, 0, 0, 0};
      wire::InputRec recs[2] = {net::toWire(in), net::toWire(in)};
      std::size_t n = 1;
      std::uint32_t ack = a.snapshotAck;
      switch (rng_() % 5) {
        case 0: recs[0] = net::toWire(sim::PlayerInput{0, 127, 0, 0, 0, 0}); break;  // sequence 0
        case 1:  // going back
          recs[1] = net::toWire(sim::PlayerInput{a.sequence, 0, 0, 0, 0, 0});
          n = 2;
          break;
        case 2: recs[0] = wire::InputRec(a.sequence + 1, 0, 0, 127, 0, 0xf8); break;       // unknown buttons
        case 3: recs[0] = wire::InputRec(a.sequence + 1, 0, 30000, 127, 0, 0); break;      // pitch past vertical
        default: ack = std::numeric_limits<std::uint32_t>::max(); break;                  // acks the future
      }
      fbb_->Clear();
      auto body = wire::CreateInputs(*fbb_, fbb_->CreateVectorOfStructs(recs, n), ack);
      fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Inputs, body.Union()));
      sendBuilt(a, false);
      break;
    }
    case GarbageKind::BadAction: {
      fbb_->Clear();
      constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
      constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
      wire::ActionBody tag = wire::ActionBody::NONE;
      flatbuffers::Offset<void> body;
      switch (rng_() % 9) {
        case 0:
          tag = wire::ActionBody::Dig;
          body = wire::CreateDig(*fbb_, kMax, kMin, kMax, static_cast<std::uint8_t>(rng_() % 2 ? 0 : 255)).Union();
          break;
        case 1:
          tag = wire::ActionBody::Place;
          body = wire::CreatePlace(*fbb_, 0, 10, 0, static_cast<std::uint8_t>(6 + rng_() % 250), 0, 255).Union();
          break;
        case 2:
          tag = wire::ActionBody::Pour;
          body = wire::CreatePour(*fbb_, 0, 10, 0, rng_() % 2 ? 0u : 0xffffffffu).Union();
          break;
        case 3:
          tag = wire::ActionBody::Ignite;
          body = wire::CreateIgnite(*fbb_, kMin, kMax, kMin).Union();
          break;
        case 4:  // control bytes, invalid UTF-8, a bidi override, zero-width space
          tag = wire::ActionBody::Chat;
          body = wire::CreateChat(*fbb_, fbb_->CreateString(kHostileText, sizeof kHostileText - 1)).Union();
          break;
        case 5:
          tag = wire::ActionBody::Chat;
          body = wire::CreateChat(*fbb_, fbb_->CreateString("")).Union();
          break;
        case 6:  // a Chat without its text
          tag = wire::ActionBody::Chat;
          body = wire::CreateChat(*fbb_).Union();
          break;
        case 7:  // far in the future of the player's inputs
          tag = wire::ActionBody::Dig;
          body = wire::CreateDig(*fbb_, 0, 10, 0, 2).Union();
          fbb_->Finish(wire::CreateClientMessage(
              *fbb_, wire::ClientBody::Action,
              wire::CreateAction(*fbb_, std::numeric_limits<std::uint32_t>::max(), tag, body).Union()));
          sendBuilt(a, true);
          return;
        default:  // an Action with no body
          break;
      }
      fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Action,
                                             wire::CreateAction(*fbb_, a.sequence, tag, body).Union()));
      sendBuilt(a, true);
      break;
    }
    case GarbageKind::OutOfPhase: {
      fbb_->Clear();
      switch (rng_() % 5) {
        case 0: {
          auto name = fbb_->CreateString(a.name);
          auto hello = wire::CreateHello(*fbb_, net::kProtocolVersion, name, 2, false);
          fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Hello, hello.Union()));
          break;
        }
        case 1:
          fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::WorldReady,
                                                 wire::CreateWorldReady(*fbb_, rng_()).Union()));
          break;
        case 2:
          fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::CellHashRequest,
                                                 wire::CreateCellHashRequest(*fbb_).Union()));
          break;
        case 3: {
          std::uint8_t sig[64];
          for (std::uint8_t& b : sig) b = byte();
          fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::AuthProof,
                                                 wire::CreateAuthProof(*fbb_, fbb_->CreateVector(sig, 64)).Union()));
          break;
        }
        default:
          fbb_->Finish(wire::CreateClientMessage(
              *fbb_, wire::ClientBody::JoinProgress,
              wire::CreateJoinProgress(*fbb_, static_cast<std::uint16_t>(rng_()), static_cast<std::uint32_t>(rng_()))
                  .Union()));
          break;
      }
      sendBuilt(a, true);
      break;
    }
    case GarbageKind::Flood: {
      // Valid, empty Inputs: each costs the server a verify and a rate check, nothing more.
      fbb_->Clear();
      auto body = wire::CreateInputs(*fbb_, 0, a.snapshotAck);
      fbb_->Finish(wire::CreateClientMessage(*fbb_, wire::ClientBody::Inputs, body.Union()));
      for (std::uint32_t k = 0; k < kFloodMessages; ++k) sendBytes(a, fbb_->GetBufferPointer(), fbb_->GetSize(), false);
      fbb_->Clear();
      break;
    }
  }
}

void Attack::tickAttacker(Attacker& a, double nowMs) {
  const double sinceMs = nowMs - a.lastTickMs;
  a.lastTickMs = nowMs;
  switch (a.state) {
    case Attacker::State::Waiting:
      if (nowMs >= a.retryAtMs) connect(a, nowMs);
      return;
    case Attacker::State::Connecting:
    case Attacker::State::HelloSent:
    case Attacker::State::Leaving:
      return;
    case Attacker::State::Silent:
      if (config_.mode != AttackMode::Garbage) return;  // connect-only: silence is the attack
      if (++a.sessionTicks >= kPreHelloTicks) {
        sendHello(a, false);
        return;
      }
      for (std::uint32_t k = 0; k < config_.garbagePerTick; ++k) sendGarbage(a);
      return;
    case Attacker::State::Welcomed:
    case Attacker::State::Playing:
      ++a.sessionTicks;
      if (config_.mode == AttackMode::Garbage) {
        for (std::uint32_t k = 0; k < config_.garbagePerTick; ++k) sendGarbage(a);
      } else if (config_.mode == AttackMode::Speed && a.state == Attacker::State::Playing) {
        stats_.playingSeconds += sinceMs / 1000.0;
        sendSpeedInputs(a);
      }
      return;
  }
}

void Attack::service(double nowMs, bool tick) {
  ENetEvent ev;
  net::capRetransmitBackoff(host_);
  while (enet_host_service(host_, &ev, 0) > 0) {
    const auto index = ev.peer ? reinterpret_cast<std::uintptr_t>(ev.peer->data) : 0;
    if (index == 0 || index > attackers_.size() || attackers_[index - 1].peer != ev.peer) {
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(ev.packet);
      continue;
    }
    Attacker& a = attackers_[index - 1];
    switch (ev.type) {
      case ENET_EVENT_TYPE_CONNECT: onConnect(a, nowMs); break;
      case ENET_EVENT_TYPE_RECEIVE:
        onPacket(a, ev.packet->data, ev.packet->dataLength, ev.channelID, nowMs);
        enet_packet_destroy(ev.packet);
        break;
      case ENET_EVENT_TYPE_DISCONNECT: sessionEnded(a, ev.data, nowMs); break;
      case ENET_EVENT_TYPE_NONE: break;
    }
  }
  if (tick)
    for (Attacker& a : attackers_) tickAttacker(a, nowMs);
  enet_host_flush(host_);
}

void Attack::close(int waitMs) {
  std::vector<ENetPeer*> peers;
  peers.reserve(attackers_.size());
  for (const Attacker& a : attackers_) peers.push_back(a.peer);
  net::disconnectPeers(host_, peers, waitMs);
  for (Attacker& a : attackers_) {
    a.peer = nullptr;
    a.state = Attacker::State::Waiting;
  }
}

std::string attackReportJson(const AttackConfig& config, const AttackStats& s, double seconds) {
  std::ostringstream o;
  o << "{\"attack\": \"" << attackModeName(config.mode) << "\", \"count\": " << config.count << ", \"bind\": \""
    << (config.bind.empty() ? "any" : config.bind) << "\", \"seed\": " << config.seed << ", \"seconds\": " << seconds
    << ", \"connect_attempts\": " << s.connectAttempts << ", \"connected\": " << s.connected
    << ", \"connect_failed\": " << s.connectFailed << ", \"hellos\": " << s.hellos << ", \"welcomes\": " << s.welcomes
    << ", \"joins\": " << s.joins << ", \"leaves\": " << s.leaves << ", \"dropped\": " << s.dropped
    << ", \"rejected\": " << s.rejected << ", \"rejects\": {";
  bool first = true;
  for (const auto& [code, n] : s.rejectsByCode) {
    o << (first ? "" : ", ") << "\"" << net::rejectCodeName(static_cast<net::RejectCode>(code)) << " (" << code
      << ")\": " << n;
    first = false;
  }
  o << "}, \"messages_sent\": " << s.messagesSent << ", \"bytes_sent\": " << s.bytesSent
    << ", \"messages_received\": " << s.messagesReceived << ", \"bytes_received\": " << s.bytesReceived
    << ", \"inputs_sent\": " << s.inputsSent << ", \"garbage\": {";
  for (std::size_t k = 0; k < kGarbageKindCount; ++k)
    o << (k ? ", " : "") << "\"" << garbageKindName(static_cast<GarbageKind>(k)) << "\": " << s.garbage[k];
  o << "}, \"join_ms_mean\": " << (s.joins ? s.joinMsSum / static_cast<double>(s.joins) : 0.0)
    << ", \"join_ms_max\": " << s.joinMsMax << ", \"playing_seconds\": " << s.playingSeconds
    << ", \"metres_moved\": " << s.metresMoved
    << ", \"metres_per_second\": " << (s.playingSeconds > 0 ? s.metresMoved / s.playingSeconds : 0.0) << "}";
  return o.str();
}

}  // namespace loam::bots
