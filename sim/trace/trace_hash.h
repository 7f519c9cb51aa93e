// The trace hash: one 64-bit value folding the world and the simulation state after
// every step of a run, for the determinism goldens (`loam-tool sim --hash`).
//
// Per step it folds the tick, the three streams in full (every edit record, every
// event field, every state record) and every player's full record; every
// kFullStateInterval steps and at the end it also folds the complete water, fire,
// animal and weather states; the world hash (sim/world/world_hash.h) of the initial and
// the final world are folded too. Since the world changes only through the edit log, the
// per-step edit records plus the final world capture the world after every step.
#pragma once

#include <cstdint>

#include "sim/systems/sim_state.h"
#include "sim/core/state_hasher.h"
#include "sim/systems/streams.h"

namespace loam::sim {

inline constexpr std::uint64_t kFullStateInterval = 60;  ///< steps between full system-state folds

/// Folds a run step by step. addStep does not allocate; the constructor and finish()
/// compute world hashes (which allocate). Not thread-safe.
class TraceHasher {
 public:
  /// Starts a trace for a freshly created state (folds its world and systems).
  explicit TraceHasher(const SimState& initial) noexcept;
  /// Folds one step: call after step(state, commands, out) with the same state and out.
  void addStep(const SimState& state, const StepOutput& out) noexcept;
  /// Folds the final world and system states and returns the trace hash.
  std::uint64_t finish(const SimState& state) noexcept;

 private:
  StateHasher h_;
};

/// Folds the full system states (players, weather, water, fire, animals).
void hashSystems(const SimState& state, StateHasher& h) noexcept;

/// Folds one event, field by field.
void hashEvent(const Event& e, StateHasher& h) noexcept;

}  // namespace loam::sim
