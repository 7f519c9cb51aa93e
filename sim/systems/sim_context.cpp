#include "sim/systems/sim_context.h"

#include "sim/systems/sim_state.h"
#include "sim/systems/water.h"

namespace loam::sim {

SimContext::SimContext(SimState& state, StepOutput& out) noexcept : state_(state), out_(out), tick_(state.tick) {}

std::uint64_t SimContext::seed() const noexcept { return state_.seed; }

const BrickStore& SimContext::world() const noexcept { return state_.world; }

const MaterialTable& SimContext::materials() const noexcept { return *state_.materials; }

bool SimContext::setVoxel(VoxelCoord v, MaterialId m) noexcept {
  if (!state_.world.bounds().containsVoxel(v)) return false;
  const MaterialId before = state_.world.get(v);
  if (before == m) return false;
  materialiseWaterForWrite(state_.water, state_.world, brickOf(v));
  state_.world.set(v, m);
  out_.edits.push_back(EditRecord{v.x, v.y, v.z, before, m, EditRecord::Kind::Voxel});
  return true;
}

bool SimContext::fillBrick(BrickCoord b, MaterialId m) noexcept {
  if (!state_.world.bounds().containsBrick(b)) return false;
  const BrickView view = state_.world.brick(b);
  if (view.isUniform() && view.uniformMaterial() == m) return false;
  const MaterialId before = view.isUniform() ? view.uniformMaterial() : kMixedBefore;
  materialiseWaterForWrite(state_.water, state_.world, b);
  state_.world.fillBrick(b, m);
  out_.edits.push_back(EditRecord{b.x, b.y, b.z, before, m, EditRecord::Kind::BrickFill});
  return true;
}

}  // namespace loam::sim
