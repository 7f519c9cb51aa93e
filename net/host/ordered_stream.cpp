#include "net/host/ordered_stream.h"

#include <algorithm>
#include <cmath>

#include "net/host/host_core.h"
#include "net/protocol.h"
#include "net/stream_codec.h"

namespace loam::net::host {
namespace {

/// Resends after an item's first round trip back off to at most this far apart.
constexpr std::uint64_t kLateResendMaxTicks = sim::kTicksPerSecond;

/// An item's round trip in ticks, after which it is sent again (and no longer
/// early): ENet's round-trip estimate plus four deviations, plus two ticks (the
/// client acknowledges with its next Inputs).
std::uint64_t resendTicks(const ENetPeer* peer) noexcept {
  const double ms = peer ? double(peer->roundTripTime) + 4.0 * double(peer->roundTripTimeVariance) : 100.0;
  const auto ticks = static_cast<std::uint64_t>(std::ceil(ms * sim::kTicksPerSecond / 1000.0)) + 2;
  return std::max<std::uint64_t>(ticks, 3);
}

/// Ticks between the early resends of an item after its copies: a quarter of ENet's
/// round-trip estimate, at least two.
std::uint64_t earlyResendTicks(const ENetPeer* peer) noexcept {
  const double ms = peer ? double(peer->roundTripTime) / 4.0 : 25.0;
  return std::max<std::uint64_t>(static_cast<std::uint64_t>(ms * sim::kTicksPerSecond / 1000.0), 2);
}

/// The chance that every copy of an item is lost that LinkLoss::copies allows.
constexpr double kAllCopiesLost = 1e-3;

void push(StreamOut& out, StreamEntry e) {
  e.item.sequence = out.nextSequence++;
  if (e.message) e.item.bytes = *e.message;
  out.unackedBytes += e.item.bytes.size();
  out.unacked.push_back(std::move(e));
}

}  // namespace

void LinkLoss::onInputs(std::uint32_t newest) noexcept {
  if (newest > newest_) {
    // The first one counts as arrived only: what came before the stream opened is unknown.
    if (newest_ != 0) lost_ += newest - newest_ - 1;
    arrived_ += 1;
    newest_ = newest;
  } else if (newest < newest_ && lost_ >= 1) {
    lost_ -= 1;  // one counted lost came late (reordered); a repeat of the newest (an idle resend) says nothing
    arrived_ += 1;
  }
  if (arrived_ + lost_ >= 2 * kWindow) {
    arrived_ /= 2;
    lost_ /= 2;
  }
}

std::uint32_t LinkLoss::copies() const noexcept {
  const double p = rate();
  std::uint32_t n = 1;
  for (double allLost = p; allLost > kAllCopiesLost && n < kMaxCopies; allLost *= p) ++n;
  return n;
}

void queueMessage(Session& s, wire::ServerBody type, const SharedMessage& message) {
  if (!s.stream.open) return;
  StreamEntry e;
  e.type = type;
  e.message = message;
  push(s.stream, std::move(e));
}

void queueWater(Session& s, sim::CellCoord cell, std::uint32_t rawSize, const SharedMessage& packed) {
  if (!s.stream.open) return;
  StreamEntry e;
  e.item.kind = StreamItemKind::Water;
  e.item.cell = cell;
  e.item.rawSize = rawSize;
  e.type = wire::ServerBody::CellState;
  e.message = packed;
  push(s.stream, std::move(e));
}

std::uint32_t queueFullStateMark(Session& s) {
  const std::uint32_t number = ++s.stream.fullStates;
  StreamEntry e;
  e.item.kind = StreamItemKind::Mark;
  e.item.fullState = number;
  e.type = wire::ServerBody::CellState;
  push(s.stream, std::move(e));
  return number;
}

bool acknowledgeStream(Session& s, std::uint32_t ack) {
  StreamOut& out = s.stream;
  if (ack >= out.nextSequence) return false;  // acknowledges an item never sent
  if (ack <= out.acked) return true;          // older or repeated: nothing new
  out.acked = ack;
  while (!out.unacked.empty() && out.unacked.front().item.sequence <= ack) {
    out.unackedBytes -= out.unacked.front().item.bytes.size();
    out.unacked.pop_front();
  }
  return true;
}

void StreamSender::send() {
  const std::uint64_t T = core_.state.tick;
  for (Session& s : core_.sessions) {
    StreamOut& out = s.stream;
    if (s.phase != Phase::Playing || !out.open || out.unacked.empty()) continue;
    // Within their first round trip, items go again on as many consecutive ticks as
    // the link's loss asks for, then every quarter round trip, up to a datagram of
    // such early resends a tick per copy: a loss costs a tick (a quarter round trip
    // past the copies), not a round trip. The largest (a fire's edits) are past that
    // budget; everything unacknowledged goes again once a round trip.
    std::size_t redundant = 0;
    const std::uint64_t resend = resendTicks(s.peer);
    const std::uint64_t early = earlyResendTicks(s.peer);
    const std::uint32_t copies = out.loss.copies();
    const std::size_t budget = copies * kStreamDatagramBytes;
    datagram_.clear();
    itemBytes_.clear();
    itemTypes_.clear();
    std::uint32_t previous = 0;  // the sequence of the datagram's last item
    for (StreamEntry& e : out.unacked) {
      if (e.item.sequence - out.acked > kMaxStreamAhead) break;  // the client would refuse it
      const std::size_t size = e.item.bytes.size() + kMaxStreamItemHeaderBytes;
      if (e.sentTick != 0 && T - e.firstSentTick < resend) {
        // Early resends only within the item's first round trip.
        const std::uint64_t every = e.sends < copies ? 1 : early;
        if (T - e.sentTick < every || redundant + size > budget) continue;
        redundant += size;
      } else if (e.sentTick != 0) {
        // Later ones back off (a client that has not acknowledged for longer is
        // stalled or gone, not unlucky), at most kLateResendMaxTicks apart.
        const std::uint64_t wait = std::min(resend << std::min<std::uint32_t>(e.lateSends, 6),
                                            std::max(resend, kLateResendMaxTicks));
        if (T - e.sentTick < wait) continue;
        ++e.lateSends;
      }
      if (e.sentTick == 0) e.firstSentTick = T;
      if (!datagram_.empty() && datagram_.size() + size > kStreamDatagramBytes) {
        sendDatagram(s);
        previous = 0;
      }
      appendStreamItem(datagram_, previous, e.item);
      previous = e.item.sequence;
      itemBytes_.push_back(e.item.bytes.size());
      itemTypes_.push_back(e.type);
      if (e.sends > 0) core_.stats.streamResentBytes += itemBytes_.back();
      e.sentTick = T;
      ++e.sends;
    }
    if (!datagram_.empty()) sendDatagram(s);
  }
}

void StreamSender::sendDatagram(Session& s) {
  // Unsequenced: ENet drops a sequenced packet that a later one on its channel
  // overtook, and the items carry their own order. One over a datagram (an item
  // larger than kStreamDatagramBytes) goes as unreliable fragments (it must not turn
  // reliable).
  const std::uint32_t flags = datagram_.size() <= kStreamDatagramBytes ? ENET_PACKET_FLAG_UNSEQUENCED
                                                                       : ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT;
  core_.sendBytes(s, kChannelUnreliable, flags, datagram_, wire::ServerBody::Stream);
  s.streamSentTick = core_.state.tick;
  // Each item's message is counted under its own type; the Stream keeps the rest.
  for (std::size_t i = 0; i < itemBytes_.size(); ++i)
    core_.stats.moveSent(wire::ServerBody::Stream, itemTypes_[i], itemBytes_[i]);
  datagram_.clear();
  itemBytes_.clear();
  itemTypes_.clear();
}

}  // namespace loam::net::host
