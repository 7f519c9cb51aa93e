// The ordered stream, the server's side (docs/PROTOCOL.md, The ordered stream). What
// a playing client must apply in order (StepBatches, cells' water changes, its
// ActionResults, and marks for its full CellStates, which travel reliably) is queued
// per session with a sequence number and sent unreliably in raw Stream datagrams
// (net/stream_codec.h), again
// and again until the client acknowledges it (Inputs.stream_ack): on as many
// consecutive ticks as the link's loss asks for (LinkLoss::copies), then within its
// first round trip every quarter round trip (a datagram of such resends a tick per
// copy at most), then after one round trip, two, four..., at most a second apart (a
// stalled client is not flooded). A lost
// datagram then costs a tick, not ENet's retransmission timeout behind which every
// later reliable message waits (head-of-line). Shared messages (a StepBatch many
// clients get) are encoded once and held by every queue that has them.
// Internal to ServerHost (net/server_host.cpp and net/host/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "loam_generated.h"  // flatc output of net/schema/loam.fbs (build tree)
#include "net/stream_codec.h"

namespace loam::net::host {

struct HostCore;
struct Session;

/// One encoded ServerMessage (possibly Compressed), or a cell's water records, shared
/// by the queues that hold it.
using SharedMessage = std::shared_ptr<const std::vector<std::uint8_t>>;

/// One queued item, kept until the client acknowledges it.
struct StreamEntry {
  StreamItemView item;          ///< what goes on the wire; its bytes view *message (shared, never moved)
  wire::ServerBody type = wire::ServerBody::NONE;  ///< the message's type (byte accounting; CellState for water)
  SharedMessage message;        ///< a ServerMessage, or water records as packWater packed them; null for a mark
  std::uint64_t sentTick = 0;   ///< state tick it was last sent (0: never)
  std::uint64_t firstSentTick = 0;  ///< state tick it was first sent
  std::uint32_t sends = 0;          ///< times sent
  std::uint32_t lateSends = 0;      ///< sends after its first round trip (each waits twice as long)
};

/// The loss of a client's link, as the server sees it: gaps in the newest input
/// number of the Inputs that arrive (a client sends one a tick, each with one new
/// input), on the way up, taken for the way down too. Counts halve every
/// kWindow arrivals, so the rate follows a link that changes within seconds.
class LinkLoss {
 public:
  /// An Inputs arrived whose newest input is `newest`.
  void onInputs(std::uint32_t newest) noexcept;
  /// Datagrams lost per datagram sent, 0 until anything arrived.
  double rate() const noexcept { return arrived_ + lost_ == 0 ? 0.0 : lost_ / (arrived_ + lost_); }
  /// Copies of an item to send on consecutive ticks so that all are lost at most once in
  /// a thousand items: 1 on a clean link, 3 at 5 % loss, 5 at 20 %, at most kMaxCopies.
  std::uint32_t copies() const noexcept;

  static constexpr double kWindow = 256;
  static constexpr std::uint32_t kMaxCopies = 6;

 private:
  std::uint32_t newest_ = 0;
  double arrived_ = 0, lost_ = 0;
};

/// A session's side of the stream.
struct StreamOut {
  bool open = false;               ///< Playing: items are queued (opened when the step admits the player)
  std::uint32_t nextSequence = 1;  ///< the next item's
  std::uint32_t acked = 0;         ///< the client has every item up to this
  std::uint32_t fullStates = 0;    ///< full CellStates marked so far
  std::uint64_t lastStepTick = 0;  ///< tick of the newest StepBatch queued (kStepHeartbeatTicks)
  std::deque<StreamEntry> unacked;
  std::size_t unackedBytes = 0;    ///< their messages' bytes
  LinkLoss loss;                   ///< how many early copies an item gets

  /// Closed and empty (keeps the queue's memory, as Session::reset does).
  void reset() noexcept {
    loss = {};
    open = false;
    nextSequence = 1;
    acked = fullStates = 0;
    lastStepTick = 0;
    unacked.clear();
    unackedBytes = 0;
  }
};

/// Queues a message (a Stream item) for a session whose stream is open; nothing otherwise.
void queueMessage(Session& s, wire::ServerBody type, const SharedMessage& message);
/// The same for a cell's water changes (net/water_codec.h records as packWater packed
/// them, shared).
void queueWater(Session& s, sim::CellCoord cell, std::uint32_t rawSize, const SharedMessage& packed);
/// Queues the mark of the session's next full CellState and returns its number (the
/// caller sends that CellState on the reliable channel).
std::uint32_t queueFullStateMark(Session& s);
/// Inputs.stream_ack: drops what the client has. False when it acknowledges an item
/// never sent (malformed); an older acknowledgement than the last is ignored.
bool acknowledgeStream(Session& s, std::uint32_t ack);

/// Sends every open stream's due items, after the step's messages were queued.
class StreamSender {
 public:
  explicit StreamSender(HostCore& core) noexcept : core_(core) {}
  void send();

 private:
  void sendDatagram(Session& s);

  HostCore& core_;
  std::vector<std::uint8_t> datagram_;    // the datagram being built (net/stream_codec.h)
  std::vector<std::size_t> itemBytes_;    // its items' messages' bytes, by type
  std::vector<wire::ServerBody> itemTypes_;
};

}  // namespace loam::net::host
