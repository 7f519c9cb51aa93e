// Predictor: the own player, moved on the client the moment input is given and
// reconciled with the server exactly. Every input gets a sequence number and is
// kept until the server acknowledges it; the server's Snapshot carries the player's
// authoritative state after the last input it applied. Reconciling sets the state
// to that, drops acknowledged inputs and replays the rest with the same motionStep
// the server runs, so when the worlds agree the prediction is bit-identical.
//
// A correction (the server's state for input N differs from what this client had
// predicted for N) is counted, and the visible position is eased toward the new
// prediction over a few frames instead of jumping (visualOffset()).
//
// A server move (the admin's teleport: sim::TeleportCommand) is not a correction:
// the server changes the player's state without an input, so its state either comes
// for an input already acknowledged (no input followed the move yet) or lies
// kTeleportDistance or more from the prediction for the same input. Either way it is
// adopted at once (no easing), the pending inputs are replayed from it, and it is
// counted in PredictionStats::teleports.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>

#include "sim/world/brick_store.h"
#include "sim/world/material_lut.h"
#include "sim/systems/player.h"

namespace loam::net {

/// Counters for bots' reports and the client's HUD.
struct PredictionStats {
  std::uint64_t predicted = 0;    ///< inputs predicted
  std::uint64_t reconciled = 0;   ///< server states applied
  std::uint64_t corrections = 0;  ///< server state differed from the prediction for the same input
  std::uint64_t replayed = 0;     ///< inputs replayed during reconciliation
  std::uint64_t teleports = 0;    ///< server moves adopted (not counted as corrections)
};

/// A server state this far (units, on any axis) from the prediction for the same
/// input is a server move, not a misprediction: 32 m, more than a fall at the top
/// speed covers in a second of lag.
inline constexpr std::int32_t kTeleportDistance = sim::unitsFromMetres(32.0);

class Predictor {
 public:
  /// Starts from the server's state of the player (after joining).
  void reset(const sim::PlayerState& serverState);

  /// Applies one new input (sequence must be the previous + 1) on world and keeps it
  /// for replay. Returns the predicted state.
  const sim::PlayerState& predict(const sim::PlayerInput& input, const sim::BrickStore& world,
                                  const sim::MaterialLut& lut);

  /// The server's state after input serverState.lastInput. Older acknowledgements,
  /// and repeated ones with the same state, are ignored. Compares with the prediction
  /// recorded for that input (a mismatch counts a correction and starts easing; a
  /// server move, see above, counts a teleport and snaps), drops acknowledged inputs
  /// and replays the rest on world. Returns true when this was a correction.
  bool reconcile(const sim::PlayerState& serverState, const sim::BrickStore& world, const sim::MaterialLut& lut);

  /// The current predicted state (the newest input applied).
  const sim::PlayerState& state() const noexcept { return state_; }

  /// Inputs not yet acknowledged, oldest first (what the client resends).
  std::span<const sim::PlayerInput> pending() const noexcept;

  /// Offset (units) to add to state().position when drawing: the remaining part of
  /// the last correction, decaying to zero over about 6 frames (advanceFrame()).
  sim::Vec3i visualOffset() const noexcept { return offset_; }
  /// Decays the visual offset by one frame.
  void advanceFrame() noexcept;

  /// The last acknowledged input sequence (0 = none).
  std::uint32_t acknowledged() const noexcept { return acked_; }

  const PredictionStats& stats() const noexcept { return stats_; }

 private:
  struct Pending {
    sim::PlayerInput input;
    sim::PlayerState after;  ///< predicted state after this input
  };
  std::deque<Pending> pending_;
  mutable std::vector<sim::PlayerInput> pendingInputs_;  ///< view for pending()
  sim::PlayerState state_;
  sim::Vec3i offset_;
  std::uint32_t acked_ = 0;
  sim::PlayerState ackedState_;  ///< the server's state adopted for acked_
  PredictionStats stats_;
};

}  // namespace loam::net
