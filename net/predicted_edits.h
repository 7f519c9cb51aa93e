// PredictedEdits: the client's own edits shown the moment they are made, before the
// server has applied them, and settled by what the server says became of them.
//
// Each dig, place, pour and ignite the client sends carries a sequence number
// (Action.sequence). predict() works out what it will change with the step's own
// footprints (sim/step/edit_footprint.h) over the world as the player sees it (the
// mirror and the predictions before it) and shows that as an overlay
// (sim::VoxelOverlay): the mirror never holds a prediction, so its hashes stay the
// server's and a desync stays a desync. The server answers every action in an
// ActionResults right after the StepBatch of the step that applied or refused it
// (docs/PROTOCOL.md, Predicted edits); by then the mirror holds the step's result.
// settle() drops the prediction either way: an applied one now shows through the
// mirror (counted confirmed when the mirror shows what was predicted, overridden
// when another edit won), a refused one is rolled back. The mirror is never written
// here, so a rollback can only uncover the server's world, never undo what the
// server confirmed. Outcomes for sequences not pending (late, duplicated, chat) are
// ignored, and a prediction with no outcome within kPredictionTimeoutMs is dropped.
//
// Pour and ignite show water in the poured voxel and a flame on the lit brick until
// their outcome arrives; the simulation's water and fire take over from there.
//
// Thread: the owner's (ClientConnection's).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "sim/step/commands.h"
#include "sim/systems/events.h"
#include "sim/systems/sim_state.h"
#include "sim/world/voxel_overlay.h"

namespace loam::net {

/// A prediction without an outcome this long is dropped. The server answers every
/// action within kActionWaitTicks (2 s) of its arrival, but a reliable channel that
/// loses a fifth of its packets delivered answers up to 9 s late in the contested
/// test (retransmissions, and everything queued behind them).
inline constexpr double kPredictionTimeoutMs = 30000;

struct EditPredictionStats {
  std::uint64_t predicted = 0;   ///< edits shown before the server's answer
  std::uint64_t confirmed = 0;   ///< applied, the server's voxels as predicted
  std::uint64_t overridden = 0;  ///< applied, but another edit won somewhere in it: the server's result shows
  std::uint64_t rolledBack = 0;  ///< refused by the server: undone
  std::uint64_t expired = 0;     ///< no answer within kPredictionTimeoutMs: undone
  std::uint64_t pending = 0;     ///< awaiting their answer now
  double answerMsTotal = 0;      ///< time from prediction to answer, summed over the answered
  double answerMsMax = 0;        ///< and the longest

  /// Adds another connection's counts (reports over several bots).
  EditPredictionStats& operator+=(const EditPredictionStats& o) noexcept {
    predicted += o.predicted;
    confirmed += o.confirmed;
    overridden += o.overridden;
    rolledBack += o.rolledBack;
    expired += o.expired;
    pending += o.pending;
    answerMsTotal += o.answerMsTotal;
    answerMsMax = answerMsMax > o.answerMsMax ? answerMsMax : o.answerMsMax;
    return *this;
  }
};

class PredictedEdits {
 public:
  /// Shows action `sequence` (a dig, place, pour or ignite; anything else shows
  /// nothing) as the step would apply it to the world as seen now, and appends to
  /// `events` what the step would emit for it (dig and fractures, ignition) so its
  /// sound plays at once. Checks nothing the server checks (reach, rate, sight):
  /// the server's answer settles it. nowMs: the owner's clock.
  void predict(std::uint32_t sequence, const sim::CommandBody& body, const sim::SimState& mirror, sim::PlayerId own,
               double nowMs, std::vector<sim::Event>& events);
  /// The server's answer for action `sequence` at nowMs, the mirror holding the
  /// step's result. False when no prediction of that sequence is pending.
  bool settle(std::uint32_t sequence, bool applied, const sim::BrickStore& world, double nowMs);
  /// Drops the predictions older than kPredictionTimeoutMs.
  void expire(double nowMs);
  /// Drops every prediction (the connection ended), counting none.
  void clear();

  /// True for an event of the server's step that a pending prediction already
  /// played (its dig, fractures or ignition): the owner skips it.
  bool echoes(const sim::Event& e, sim::PlayerId own) const;
  /// What the predictions show, over the mirror.
  const sim::VoxelOverlay& overlay() const noexcept { return overlay_; }
  /// The bricks whose shown voxels changed since the last call (meshes redo them).
  std::vector<sim::BrickCoord> takeChangedBricks();
  /// Bricks shown burning by a pending ignite (minimum voxel corners).
  std::vector<sim::VoxelCoord> flames() const;
  /// Voxels the predictions show differently from world (0 once all are settled).
  std::size_t ghostVoxels(const sim::BrickStore& world) const;
  EditPredictionStats stats() const noexcept;

 private:
  struct Shown {
    sim::VoxelCoord voxel;
    sim::MaterialId material = sim::kAir;
  };
  struct Prediction {
    std::uint32_t sequence = 0;
    double madeMs = 0;
    std::uint8_t command = 0;  ///< sim::CommandBody index
    sim::VoxelCoord target;    ///< dig target, pour and ignite position
    std::vector<Shown> voxels; ///< dig, place, pour: what it shows
    bool flame = false;        ///< ignite: a flame on target's brick
  };
  void remove(std::deque<Prediction>::iterator it);
  void rebuildOverlay();

  std::deque<Prediction> pending_;  // in sequence order
  sim::VoxelOverlay overlay_;
  std::vector<sim::BrickCoord> changed_;
  EditPredictionStats stats_;
};

}  // namespace loam::net
