// SurfaceSync: what the far view needs of edits beyond a client's reach. The server
// keeps, per patch of ground (sim/world/surface_change.h: 0.8 m, the far view's finest
// cell), how far it has risen or sunk since generation, and sends every full client
// every patch that changed, anywhere in the world, in SurfaceChanges items of its
// ordered stream. Cost follows what changed, not the world's area:
//   - a step's edits make the patches they touch due, but only edits that change
//     whether a voxel collides (fire turning wood to charcoal, leaves to air: none);
//   - due patches are summed a few per tick (kPatchesPerTick, tens of microseconds
//     each), and every kFlushTicks those that differ from what was sent are appended
//     to one log of shared messages (kChangesPerMessage each), encoded once;
//   - each client has a place in the log (a joining one starts at its beginning) and
//     is sent at most kMessagesPerTick a tick;
//   - when repeats make up more than half the log, it is rewritten from the latest
//     change of each patch; clients that had all of it keep their place at its end,
//     the others start again (applying a change twice is harmless).
// A restored world's changed bricks are due at open. Reads the world, never changes
// it: the simulation is untouched. Internal to ServerHost (net/server_host.cpp).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "net/host/host_core.h"
#include "sim/systems/streams.h"
#include "sim/world/surface_change.h"

namespace loam::net::host {

class SurfaceSync {
 public:
  static constexpr std::size_t kPatchesPerTick = 32;  // about 16 us each (world_store_bench)
  static constexpr std::uint64_t kFlushTicks = 30;
  static constexpr std::size_t kChangesPerMessage = 64;
  static constexpr std::size_t kMessagesPerTick = 4;
  /// A client with more stream items than this waiting gets no SurfaceChanges that tick.
  static constexpr std::size_t kMaxUnackedItems = 256;

  explicit SurfaceSync(HostCore& core) noexcept : core_(core) {}

  /// At open: the patches of the world's changed bricks (resident, or stored in its
  /// database) become due.
  void init();
  /// The step's edits that change whether a voxel collides make their patches due.
  void noteEdits(const sim::StepOutput& out);
  /// Sums due patches, publishes on flush ticks, queues each full playing client's next
  /// messages. After the step's other stream items, before they are sent.
  void send();

  std::size_t duePatches() const noexcept { return dueOrder_.size() - dueNext_; }
  std::size_t publishedPatches() const noexcept { return published_.size(); }
  std::size_t logMessages() const noexcept { return log_.size(); }

 private:
  void makeDue(std::int32_t x, std::int32_t z);
  void publish();
  void compact();
  void appendMessages(const std::vector<sim::SurfaceChange>& changes);

  HostCore& core_;
  sim::MaterialMask treeParts_{};  ///< set by init()
  std::unordered_set<std::uint64_t> due_;
  std::vector<std::uint64_t> dueOrder_;  ///< due_ in the order they became due, from dueNext_
  std::size_t dueNext_ = 0;
  std::unordered_map<std::uint64_t, sim::SurfaceChange> published_;  ///< the latest sent of each patch
  std::unordered_map<std::uint64_t, sim::SurfaceChange> fresh_;  ///< summed since the last flush, by patch
  std::vector<SharedMessage> log_;  ///< Session::surfaceSent indexes it
};

}  // namespace loam::net::host
