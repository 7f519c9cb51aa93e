#include "net/host/host_core.h"

#include <chrono>
#include <cstdio>

#include "net/host/join_stream.h"
#include "net/host_log.h"
#include "net/protocol.h"
#include "net/wire.h"
#include "sim/core/assert.h"

namespace loam::net::host {

HostCore::~HostCore() {
  if (host) enet_host_destroy(host);
}

Session* HostCore::sessionOf(ENetPeer* peer) noexcept {
  if (!peer || !host || peer < host->peers || peer >= host->peers + host->peerCount) return nullptr;
  Session& s = sessions[static_cast<std::size_t>(peer - host->peers)];
  return s.peer == peer ? &s : nullptr;
}

void HostCore::transition(Session& s, Phase to) {
  const bool legal = legalTransition(s.phase, to);
  if (!legal) {
    ++stats.illegalTransitions;
    hostLog("error: peer %zu (player %u): illegal transition %s -> %s", indexOf(s), s.id.value, phaseName(s.phase),
            phaseName(to));
  }
  LOAM_ASSERT(legal);
  s.phase = to;
  s.phaseTick = state.tick;
  if (to == Phase::Connected) s.connectedAt = std::chrono::steady_clock::now();
  // The ordered stream carries what a playing client applies in order; it ends with play.
  if (to == Phase::Playing) {
    s.stream.open = true;
    s.stream.lastStepTick = state.tick;
  } else {
    s.stream.reset();
  }
  countJoinIfDone(s);
}

void HostCore::countJoinIfDone(const Session& s) {
  if (s.phase != Phase::Playing || s.joinStreaming || (s.wantsWorld && !s.worldChecked)) return;
  stats.countJoinTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - s.connectedAt).count());
}

std::span<const std::uint8_t> HostCore::builtBytes(bool compress) {
  if (compress && fbb.GetSize() > kCompressAboveBytes &&
      compressServerMessage(fbb.GetBufferPointer(), fbb.GetSize(), compressedFbb_, compressScratch_))
    return {compressedFbb_.GetBufferPointer(), compressedFbb_.GetSize()};
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

ENetPacket* HostCore::packetFromBuilder(std::uint32_t flags, bool compress) {
  const std::span<const std::uint8_t> bytes = builtBytes(compress);
  return enet_packet_create(bytes.data(), bytes.size(), flags);
}

SharedMessage HostCore::messageFromBuilder() {
  const std::span<const std::uint8_t> bytes = builtBytes(true);
  return std::make_shared<const std::vector<std::uint8_t>>(bytes.begin(), bytes.end());
}

bool HostCore::send(Session& s, std::uint8_t channel, ENetPacket* packet, wire::ServerBody type, bool charge) {
  // host->maximumPacketSize bounds what peers may send us, but ENet applies it to
  // our sends too: lift it for the call (one thread; receiving happens elsewhere).
  host->maximumPacketSize = kMaxServerMessageBytes;
  const int sent = enet_peer_send(s.peer, channel, packet);
  host->maximumPacketSize = kMaxClientPacketBytes;
  if (sent < 0) return false;
  stats.countSent(type, packet->dataLength);
  if (charge) s.tokens -= static_cast<double>(packet->dataLength);
  return true;
}

void HostCore::sendBytes(Session& s, std::uint8_t channel, std::uint32_t flags, std::span<const std::uint8_t> bytes,
                         wire::ServerBody type) {
  ENetPacket* p = enet_packet_create(bytes.data(), bytes.size(), flags);
  if (p && !send(s, channel, p, type)) enet_packet_destroy(p);
}

void HostCore::releaseIfUnsent(ENetPacket* p) noexcept {
  if (p && p->referenceCount == 0) enet_packet_destroy(p);
}

void HostCore::dropPlayer(Session& s) {
  if (s.joinIssued) pendingLeaves.push_back(s.id);
  s.joinIssued = false;
  s.hasPos = false;
}

void HostCore::reject(Session& s, RejectCode code, const std::string& text) {
  if (s.phase == Phase::Free || s.phase == Phase::Rejected) return;
  fbb.Clear();
  auto msg = wire::CreateRejectDirect(fbb, static_cast<std::uint16_t>(code), text.c_str());
  fbb.Finish(wire::CreateServerMessage(fbb, wire::ServerBody::Reject, msg.Union()));
  sendOwn(s, kChannelReliable, ENET_PACKET_FLAG_RELIABLE, wire::ServerBody::Reject);
  enet_peer_disconnect_later(s.peer, static_cast<std::uint32_t>(code));
  // The reason may quote a player's name or an admin's words: printed as a LogValue.
  hostLog("peer %zu (player %u, %s) rejected: %s reason=%s", indexOf(s), s.id.value, phaseName(s.phase),
          rejectCodeName(code), LogValue(text).c_str());
  dropPlayer(s);
  transition(s, Phase::Rejected);
  s.inputs.clear();
  s.actions.clear();
  s.cellTicks.clear();
  s.columnChecks.clear();
  JoinStreams::clear(s);
  ++stats.rejected;
}

void HostCore::freeSession(Session& s) {
  dropPlayer(s);
  if (s.peer) s.peer->data = nullptr;
  transition(s, Phase::Free);
  s.reset();
  JoinStreams::clear(s);
  s.progressTick = s.welcomeTick = s.heardTick = s.grewTick = 0;
  s.generatedPermille = 0;
  s.worldChecked = false;
}

void HostCore::malformedMessage(Session& s) {
  ++stats.malformed;
  if (++s.badMessages >= kMaxBadMessages) {
    reject(s, RejectCode::Malformed, std::to_string(s.badMessages) + " malformed messages");
  }
}

std::string HostCore::addressOf(const ENetPeer* peer) {
  char ip[64] = "?";
  enet_address_get_host_ip(&peer->address, ip, sizeof ip);
  return std::string(ip);
}

}  // namespace loam::net::host
