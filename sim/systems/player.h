// Players: their stable id, one tick of input, and the motion state that
// motionStep (sim/systems/motion.h) advances. Server and client prediction share these
// types and that function, so a predicted player is bit-identical to the server's.
#pragma once

#include <cstdint>

#include "sim/core/fixed_point.h"
#include "sim/core/short_text.h"
#include "sim/world/voxel.h"

namespace loam::sim {

/// A player's stable id, assigned by whoever admits players (the server's session
/// layer, a script). 0 is "nobody": commands from the server itself (console,
/// scene schedule) carry kServerPlayer. Sortable; the step orders commands by it.
struct PlayerId {
  std::uint32_t value = 0;
  friend bool operator==(const PlayerId&, const PlayerId&) = default;
  friend auto operator<=>(const PlayerId&, const PlayerId&) = default;
};
inline constexpr PlayerId kServerPlayer{0};

/// Binary angles: 65536 units per full turn, so yaw wraps for free in uint16.
/// Yaw 0 faces north (-z) and grows clockwise seen from above (16384 = east, +x).
/// Pitch is signed: +16384 straight up, -16384 straight down.
inline constexpr std::int32_t kAngleUnitsPerTurn = 65536;

/// Button bits of PlayerInput::buttons.
enum InputButton : std::uint8_t {
  kButtonJump = 1u << 0,    ///< jump (on ground) / swim up (in water)
  kButtonRun = 1u << 1,     ///< run speed
  kButtonCrouch = 1u << 2,  ///< crouch: lower box and speed, swim down in water
};

/// One tick of a player's input. Quantised so it is cheap on the wire and exact.
struct PlayerInput {
  std::uint32_t sequence = 0;  ///< client's input counter; the server applies each at most once
  std::int8_t moveForward = 0; ///< -127..127: back..forward, relative to yaw (-128 is treated as -127)
  std::int8_t moveRight = 0;   ///< -127..127: left..right
  std::uint16_t yaw = 0;       ///< binary angle (see kAngleUnitsPerTurn)
  std::int16_t pitch = 0;      ///< binary angle, clamped to [-16384, 16384] by motion
  std::uint8_t buttons = 0;    ///< InputButton bits
  friend bool operator==(const PlayerInput&, const PlayerInput&) = default;
};

/// Bits of PlayerState::motionEvents: what happened during the last motionStep.
/// The step turns them into Footstep / Landed events; prediction can play them locally.
enum MotionEventBit : std::uint8_t {
  kMotionFootstep = 1u << 0,  ///< a stride completed on `surface`
  kMotionLanded = 1u << 1,    ///< touched ground after falling at `impactSpeed`
  kMotionSplash = 1u << 2,    ///< entered water at `impactSpeed`
};

/// A player's motion state: everything motionStep reads and writes. Plain data;
/// replicated field by field in the state stream.
struct PlayerState {
  Vec3i position;               ///< units; x,z centre of the box, y its bottom (feet)
  Vec3i velocity;               ///< units per tick
  std::uint16_t yaw = 0;        ///< binary angle, from the last input
  std::int16_t pitch = 0;       ///< binary angle, from the last input
  bool onGround = false;        ///< standing on a collider at the end of the step
  bool crouching = false;       ///< box is the crouched height
  bool swimming = false;        ///< box middle is in a liquid
  bool running = false;         ///< run button held while moving on ground
  std::uint32_t lastInput = 0;  ///< sequence of the last input applied (reconciliation)
  std::int32_t stride = 0;      ///< units walked since the last footstep
  std::uint8_t motionEvents = 0;   ///< MotionEventBit set by the last motionStep
  MaterialId surface = kAir;       ///< material underfoot (footstep / landed)
  std::int32_t impactSpeed = 0;    ///< units per tick of the landing / splash (>= 0)
  friend bool operator==(const PlayerState&, const PlayerState&) = default;
};

/// Per-player command budget: token buckets refilled lazily from the tick they were
/// last used (so an idle player's record does not change every tick). Part of the
/// state, so rate limiting is deterministic. Rules in SimRules (sim/systems/sim_state.h).
struct RateBudget {
  std::int32_t editTokens = 0;       ///< dig / place / pour / ignite tokens at editTick
  std::uint64_t editTick = 0;        ///< tick editTokens was computed for
  std::int32_t chatTokens = 0;       ///< chat tokens at chatTick
  std::uint64_t chatTick = 0;
  std::uint64_t inputTick = 0;       ///< tick of the last applied input
  std::uint32_t inputsInTick = 0;    ///< inputs applied during inputTick
  friend bool operator==(const RateBudget&, const RateBudget&) = default;
};

/// One connected player as the simulation holds it (SimState::players, sorted by id).
struct Player {
  PlayerId id;             ///< stable id
  PlayerName name;         ///< display name from the join command
  PlayerState motion;      ///< advanced by motionStep
  RateBudget budget;       ///< rate limits
  friend bool operator==(const Player&, const Player&) = default;
};

}  // namespace loam::sim
