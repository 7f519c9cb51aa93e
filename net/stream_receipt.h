// StreamReceipt: which items of the ordered stream (docs/PROTOCOL.md, The ordered
// stream) have arrived, as the receiver acknowledges them: every item up to ack()
// arrived; items past it are remembered until the gap before them fills. The server
// resends each item until it is acknowledged, so resends and reordering are normal:
// receive() says which arrivals are new. loam-client (ClientConnection), swarm bots
// and the tests' raw client keep one.
#pragma once

#include <cstdint>
#include <set>

#include "net/protocol.h"

namespace loam::net {

class StreamReceipt {
 public:
  /// Records item `sequence`. True when it is new and within kMaxStreamAhead of
  /// ack(); false for one that already arrived, 0, or one too far ahead (a server
  /// sends none: the caller treats it as hostile).
  bool receive(std::uint32_t sequence) {
    if (sequence <= ack_ || sequence - ack_ > kMaxStreamAhead) return false;
    if (sequence != ack_ + 1) return ahead_.insert(sequence).second;
    ack_ = sequence;
    while (!ahead_.empty() && *ahead_.begin() == ack_ + 1) {
      ack_ = *ahead_.begin();
      ahead_.erase(ahead_.begin());
    }
    return true;
  }
  /// True when `sequence` lies past kMaxStreamAhead of ack() (receive refuses it).
  bool tooFarAhead(std::uint32_t sequence) const noexcept {
    return sequence > ack_ && sequence - ack_ > kMaxStreamAhead;
  }
  /// Every item up to this arrived (0: none yet): Inputs.stream_ack.
  std::uint32_t ack() const noexcept { return ack_; }

 private:
  std::uint32_t ack_ = 0;
  std::set<std::uint32_t> ahead_;  // arrived past ack_ + 1 (at most kMaxStreamAhead)
};

}  // namespace loam::net
