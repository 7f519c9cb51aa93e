// StepBatchSender: the StepBatch, what every playing peer gets after each step to
// follow the simulation: the shared streams (chat, joins and leaves, weather, events
// that happened nowhere in particular), the events that happened in a cell within
// the peer's reach, and the edits of the touched cells the peer holds, with their
// hashes (CellSync::routeEdits decides which). It goes in each peer's ordered stream
// (net/host/ordered_stream.h). Peers that get the same cells and events share one encoding (in
// a crowd, or where nothing was edited, everyone does). A step with nothing for a
// peer is not queued for it, except every kStepHeartbeatTicks. Players' movement
// sounds are left out: they go to the snapshots of peers within hearing range
// (Snapshots). So are refused commands: what became of each player's actions
// (applied, or refused and why) goes to that player alone, in an ActionResults
// message queued right after the StepBatch (what one player tried and was refused is
// nobody else's business, and a crowd of refused commands would otherwise grow
// everyone's batch); its client predicts its own edits and settles them by it.
// Internal to ServerHost (net/server_host.cpp and net/host/).
#pragma once

#include <cstdint>
#include <vector>

#include "loam_generated.h"  // flatc output of net/schema/loam.fbs (build tree)
#include "net/edit_codec.h"
#include "net/host/cell_sync.h"
#include "net/host/host_core.h"
#include "net/host/snapshots.h"
#include "sim/systems/streams.h"

namespace loam::net::host {

class StepBatchSender {
 public:
  explicit StepBatchSender(HostCore& core) noexcept : core_(core) {}

  /// Encodes the step's output and queues it for every playing peer with the edit
  /// groups `cells` routed to it; movement sounds go to `snapshots` instead, and
  /// the outcome of each action to its sender (ActionResults).
  void send(const sim::StepOutput& out, const CellSync& cells, Snapshots& snapshots);

 private:
  /// Builds the StepBatch with these edit groups and the events of these event cells
  /// (indices into eventCells_, ascending) into the core's builder.
  void build(std::span<const EditGroup> groups, std::span<const std::uint32_t> chosen,
             std::span<const std::uint32_t> heard);
  /// Queues one ActionResults message per playing session whose actions were in
  /// this step (Session::issued: applied unless the step refused it) or were refused
  /// on arrival (Session::refused: RateLimited).
  void queueActionResults();

  HostCore& core_;
  // Scratch (capacity reused).
  std::uint64_t tick_ = 0;
  std::vector<std::uint8_t> weatherBytes_;
  std::vector<wire::EventRec> eventRecs_;  ///< the step's events that happened nowhere in particular
  struct PlacedEvent {
    sim::CellCoord cell;
    std::uint32_t cellIndex = 0;  ///< into eventCells_
    wire::EventRec rec;
  };
  std::vector<PlacedEvent> placedEvents_;               ///< the others, in step order
  std::vector<sim::CellCoord> eventCells_;              ///< their cells, ascending
  std::vector<std::vector<std::uint32_t>> heardCells_;  ///< by session index: eventCells_ in its reach
  std::vector<wire::EventRec> events_;                  ///< one message's events
  std::vector<const sim::CommandRejectedEvent*> rejected_;  ///< this step's refusals
  std::vector<wire::ActionResultRec> results_;
  std::vector<const sim::ChatEvent*> chat_;
  std::vector<const sim::Player*> joined_;
  std::vector<std::uint32_t> leftIds_;
  std::vector<std::uint32_t> order_;  ///< playing session indices, by their edit groups
  std::vector<flatbuffers::Offset<wire::ChatLine>> chatOffsets_;
  std::vector<flatbuffers::Offset<wire::PlayerName>> joinedOffsets_;
  std::vector<CellEdits> cellEdits_;         // the chosen groups, for encodeStepEdits
  std::vector<std::uint8_t> editBytes_;
};

}  // namespace loam::net::host
