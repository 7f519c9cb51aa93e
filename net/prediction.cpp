#include "net/prediction.h"

#include <cstdlib>

#include "sim/core/assert.h"
#include "sim/systems/motion.h"

namespace loam::net {

namespace {

// A correction larger than this on any axis is a teleport (respawn, server move):
// snapping reads better than sliding across the world.
constexpr std::int32_t kMaxEasedOffset = sim::unitsFromMetres(4.0);
// Below this on an axis the remaining offset is invisible: snap to zero.
constexpr std::int32_t kOffsetSnap = sim::unitsFromMetres(0.01);

std::int32_t decayAxis(std::int32_t v) noexcept {
  // 3/8 left per frame: 0.3% after 6 frames, so a 1 m correction is gone by then.
  const std::int32_t next = static_cast<std::int32_t>(static_cast<std::int64_t>(v) * 3 / 8);
  return std::abs(next) <= kOffsetSnap ? 0 : next;
}

}  // namespace

void Predictor::reset(const sim::PlayerState& serverState) {
  pending_.clear();
  pendingInputs_.clear();
  state_ = serverState;
  offset_ = {};
  acked_ = serverState.lastInput;
  ackedState_ = serverState;
}

const sim::PlayerState& Predictor::predict(const sim::PlayerInput& input, const sim::BrickStore& world,
                                           const sim::MaterialLut& lut) {
  const std::uint32_t previous = pending_.empty() ? state_.lastInput : pending_.back().input.sequence;
  LOAM_ASSERT(input.sequence == previous + 1);
  // Release builds: an old or repeated sequence would break the ascending order the
  // replay relies on, so it is dropped; a gap is accepted (the server skips it too).
  if (input.sequence <= previous) return state_;
  state_ = sim::motionStep(state_, input, world, lut);
  pending_.push_back(Pending{input, state_});
  pendingInputs_.push_back(input);
  ++stats_.predicted;
  return state_;
}

bool Predictor::reconcile(const sim::PlayerState& serverState, const sim::BrickStore& world,
                          const sim::MaterialLut& lut) {
  const std::uint32_t ack = serverState.lastInput;
  if (ack < acked_) return false;  // older acknowledgement
  // The same input acknowledged again with another state: only a server move (no
  // input ran in between) changes it.
  bool moved = ack == acked_;
  if (moved && serverState == ackedState_) return false;  // repeated acknowledgement
  acked_ = ack;
  ackedState_ = serverState;
  ++stats_.reconciled;

  // Compare with what was predicted for the same input; an input never predicted
  // here (after reset, or lost history) is adopted without counting a correction.
  bool correction = false;
  std::size_t drop = 0;
  while (drop < pending_.size() && pending_[drop].input.sequence <= ack) {
    if (pending_[drop].input.sequence == ack) {
      const sim::Vec3i a = pending_[drop].after.position, b = serverState.position;
      correction = !(pending_[drop].after == serverState);
      moved = moved || std::abs(std::int64_t{a.x} - b.x) >= kTeleportDistance ||
              std::abs(std::int64_t{a.y} - b.y) >= kTeleportDistance ||
              std::abs(std::int64_t{a.z} - b.z) >= kTeleportDistance;
    }
    ++drop;
  }
  if (moved) {
    correction = false;
    ++stats_.teleports;
  }
  if (correction) ++stats_.corrections;

  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(drop));
  pendingInputs_.erase(pendingInputs_.begin(), pendingInputs_.begin() + static_cast<std::ptrdiff_t>(drop));

  const sim::Vec3i before = state_.position;
  state_ = serverState;
  for (Pending& p : pending_) {
    state_ = sim::motionStep(state_, p.input, world, lut);
    p.after = state_;  // later acknowledgements compare with the replayed prediction
  }
  stats_.replayed += pending_.size();

  // Ease: draw where the player was shown and let the offset shrink. Without a
  // correction the replay reproduces the old prediction, so this adds zero (unless
  // the local world changed under the pending inputs, which is worth easing too).
  sim::Vec3i next{offset_.x + before.x - state_.position.x, offset_.y + before.y - state_.position.y,
                  offset_.z + before.z - state_.position.z};
  if (moved || std::abs(next.x) > kMaxEasedOffset || std::abs(next.y) > kMaxEasedOffset ||
      std::abs(next.z) > kMaxEasedOffset)
    next = {};
  offset_ = next;
  return correction;
}

std::span<const sim::PlayerInput> Predictor::pending() const noexcept { return pendingInputs_; }

void Predictor::advanceFrame() noexcept {
  offset_ = {decayAxis(offset_.x), decayAxis(offset_.y), decayAxis(offset_.z)};
}

}  // namespace loam::net
