#include "net/host/host_stats.h"

#include "net/wire.h"

namespace loam::net::host {

void HostStats::countSent(wire::ServerBody type, std::size_t bytes) noexcept {
  TrafficCounters& c = sent[static_cast<std::size_t>(type)];
  ++c.messages;
  c.bytes += bytes;
}

void HostStats::moveSent(wire::ServerBody from, wire::ServerBody to, std::size_t bytes) noexcept {
  sent[static_cast<std::size_t>(from)].bytes -= bytes;
  countSent(to, bytes);
}

void HostStats::countReceived(wire::ClientBody type, std::size_t bytes) noexcept {
  TrafficCounters& c = received[static_cast<std::size_t>(type)];
  ++c.messages;
  c.bytes += bytes;
}

void HostStats::countJoinTime(double seconds) noexcept {
  std::size_t b = 0;
  while (b < kJoinBucketsSeconds.size() && seconds > kJoinBucketsSeconds[b]) ++b;
  ++joinSecondsBuckets[b];
  joinSecondsSum += seconds;
  ++joinSecondsCount;
}

ServerStats HostStats::toServerStats() const {
  ServerStats st;
  static_cast<ServerCounters&>(st) = *this;
  for (std::size_t i = 1; i < kServerBodyCount; ++i) {
    if (sent[i].messages) st.sent[messageName(static_cast<wire::ServerBody>(i))] = sent[i];
  }
  for (std::size_t i = 1; i < kClientBodyCount; ++i) {
    if (received[i].messages) st.received[messageName(static_cast<wire::ClientBody>(i))] = received[i];
  }
  return st;
}

}  // namespace loam::net::host
