// StepBatchSender: the StepBatch, what every playing peer gets after each step to
// follow the simulation (edits, events, chat, joins and leaves, weather, world and
// touched cell hashes). Encoded once per tick into one ENet packet shared by every
// playing peer. Players' movement sounds are left out: they go to the snapshots of
// peers within hearing range (Snapshots). So are refused commands: each player's go
// to that player alone, in a Rejections message right after the StepBatch (what one
// player tried and was refused is nobody else's business, and a crowd of refused
// commands would otherwise grow everyone's batch). Internal to ServerHost
// (net/server_host.cpp and net/host/).
#pragma once

#include <cstdint>
#include <vector>

#include "loam_generated.h"  // flatc output of net/schema/loam.fbs (build tree)
#include "net/host/host_core.h"
#include "net/host/snapshots.h"
#include "sim/step/world_hash_tracker.h"
#include "sim/systems/streams.h"

namespace loam::net::host {

class StepBatchSender {
 public:
  explicit StepBatchSender(HostCore& core) noexcept : core_(core) {}

  /// Encodes the step's output and sends it to every playing peer; movement sounds
  /// go to `snapshots` instead, and refused commands to their senders (Rejections).
  /// tracker holds the hashes after the step.
  void send(const sim::StepOutput& out, const sim::WorldHashTracker& tracker, Snapshots& snapshots);

 private:
  /// One Rejections message per player with refusals this step, to that player's
  /// session if it is playing (sorted by player: the step applies commands so).
  void sendRejections();

  HostCore& core_;
  // Scratch (capacity reused).
  std::vector<std::uint8_t> editBytes_, weatherBytes_;
  std::vector<wire::EventRec> eventRecs_;
  std::vector<wire::EventRec> rejected_;  ///< this step's CommandRejected records, by player
  std::vector<wire::CellHashRec> cellRecs_;
  std::vector<std::uint32_t> leftIds_;
  std::vector<flatbuffers::Offset<wire::ChatLine>> chat_;
  std::vector<flatbuffers::Offset<wire::PlayerName>> joined_;
};

}  // namespace loam::net::host
