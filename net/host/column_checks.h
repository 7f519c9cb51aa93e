// ColumnChecks: a client's generator checked against the server's, column by column,
// beyond the spawn columns of the join check. A full client reports every chunk
// column it generates, with its hash as generated (ColumnHashes); the server
// compares each with the same hash of its own copy when it holds that column
// unmodified, and rejects the client (WorldMismatch, naming the column, its cell and
// the tick) at the first difference: a client that would build different ground
// from the server's finds out where, not through a desync later. Columns the server
// does not hold (farther from every player than its streamer keeps) or holds with
// edits are counted as unchecked; their changed cells are checked by their hashes
// when they arrive (CellSync).
//
// The cost is bounded on the step thread: at most kColumnChecksPerTick hashes a tick
// for all clients, and at most kMaxPendingColumnChecks waiting per client (beyond,
// the oldest are dropped as unchecked; Inbound queues them). Internal to ServerHost (net/server_host.cpp
// and net/host/).
#pragma once

#include <cstddef>

#include "net/host/host_core.h"
#include "net/protocol.h"

namespace loam::net::host {

/// Column hashes computed per tick for all clients (one costs tens of microseconds;
/// 16 a tick is 960 a second, more than a bot swarm running generates).
inline constexpr std::size_t kColumnChecksPerTick = 16;
/// Reported columns waiting per client.
inline constexpr std::size_t kMaxPendingColumnChecks = 1024;

class ColumnChecks {
 public:
  explicit ColumnChecks(HostCore& core) noexcept : core_(core) {}

  /// Checks up to kColumnChecksPerTick queued columns, taking the sessions in turn.
  void run();

 private:
  void check(Session& s, const sim::GeneratedColumnHash& reported);

  HostCore& core_;
  std::size_t next_ = 0;  ///< the session the next run starts with
};

}  // namespace loam::net::host
