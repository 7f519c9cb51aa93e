// SimContext: what a system sees during one step. It is the only way a system can
// change the world (setVoxel / fillBrick, which write the edit log in the same call,
// so nothing can change the world around the stream), emit events, record state
// changes and draw random numbers (keyed by the step's tick).
//
// SimSetup: what a system's init function sees when a world is created.
#pragma once

#include <cstdint>
#include <span>

#include "sim/systems/events.h"
#include "sim/core/keyed_random.h"
#include "sim/systems/streams.h"
#include "sim/world/voxel.h"

namespace loam::sim {

class BrickStore;
class MaterialTable;
struct Scene;
struct SimState;

/// Inputs to every system's init function (world creation, server and mirror alike).
struct SimSetup {
  const Scene& scene;               ///< the scene the world was generated from
  const BrickStore& world;          ///< the freshly generated world
  const MaterialTable& materials;   ///< the scene's material table
  std::uint64_t seed = 0;           ///< world seed
};

/// One step's view for systems and commands. Created by step() on the stack; never
/// stored. Not thread-safe: systems that split work across threads must collect
/// results per stable id and apply them here in a fixed order.
class SimContext {
 public:
  /// Binds state and out for one step. Only step() (and tests) create contexts.
  SimContext(SimState& state, StepOutput& out) noexcept;

  /// The tick being computed (SimState::tick + 1 during the step).
  std::uint64_t tick() const noexcept { return tick_; }
  /// The world seed.
  std::uint64_t seed() const noexcept;
  /// The world, read-only. Change it with setVoxel / fillBrick.
  const BrickStore& world() const noexcept;
  /// The material table.
  const MaterialTable& materials() const noexcept;
  /// The whole state, read-only (systems read each other's state through it).
  const SimState& state() const noexcept { return state_; }
  /// The output being built (systems append their state changes to their list).
  StepOutput& output() noexcept { return out_; }

  /// THE edit function: sets voxel v to m in the world and appends an edit record
  /// when the material changes. Returns true if it changed. Voxels outside the world
  /// are left alone (false). First materialises the brick's implicit water
  /// (materialiseWaterForWrite), so the water system sees the water a write
  /// displaces. No allocation beyond the edit log's and the water grid's growth.
  bool setVoxel(VoxelCoord v, MaterialId m) noexcept;

  /// Fills brick b with m as one BrickFill record (a no-op returning false when the
  /// brick is already uniformly m or outside the world). Materialises implicit water
  /// first, as setVoxel does.
  bool fillBrick(BrickCoord b, MaterialId m) noexcept;

  /// Appends an event.
  void emit(const Event& e) { out_.events.push_back(e); }

  /// 64 keyed random bits for (purpose, this tick, id, index); see keyed_random.h.
  std::uint64_t random(RandomPurpose purpose, std::uint64_t id, std::uint32_t index = 0) const noexcept {
    return keyedHash(RandomKey{seed(), purpose, tick_, id, index});
  }
  /// A keyed integer in [0, bound).
  std::uint32_t randomBelow(RandomPurpose purpose, std::uint64_t id, std::uint32_t index,
                            std::uint32_t bound) const noexcept {
    return keyedBelow(RandomKey{seed(), purpose, tick_, id, index}, bound);
  }

 private:
  SimState& state_;
  StepOutput& out_;
  std::uint64_t tick_ = 0;
};

}  // namespace loam::sim
