// Players: their stable id, one tick of input, and the motion state that
// motionStep (sim/systems/motion.h) advances. Server and client prediction share these
// types and that function, so a predicted player is bit-identical to the server's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/fixed_point.h"
#include "sim/core/record_fields.h"
#include "sim/core/result.h"
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

/// Bits of the packed motion flags byte: PlayerState's four bools in the state codec
/// and on the wire (PlayerStateRec.flags, PlayerPoseRec.flags). Bits 4..7 are unassigned.
enum MotionFlag : std::uint8_t {
  kMotionOnGround = 1u << 0,
  kMotionCrouching = 1u << 1,
  kMotionSwimming = 1u << 2,
  kMotionRunning = 1u << 3,
};

/// A player's motion state: everything motionStep reads and writes. Plain data;
/// replicated field by field (kPlayerStateFields) in the state stream.
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

/// PlayerState's fields, in the order the state codec writes and the hashes fold them
/// (sim/core/record_fields.h). The wire's PlayerStateRec (net/wire.cpp) holds the same.
inline constexpr std::tuple kPlayerStateFields{
    field("position", &PlayerState::position),
    field("velocity", &PlayerState::velocity),
    field("yaw", &PlayerState::yaw),
    field("pitch", &PlayerState::pitch),
    flagField("onGround", &PlayerState::onGround, kMotionOnGround),
    flagField("crouching", &PlayerState::crouching, kMotionCrouching),
    flagField("swimming", &PlayerState::swimming, kMotionSwimming),
    flagField("running", &PlayerState::running, kMotionRunning),
    field("lastInput", &PlayerState::lastInput),
    field("stride", &PlayerState::stride),
    field("motionEvents", &PlayerState::motionEvents),
    field("surface", &PlayerState::surface),
    field("impactSpeed", &PlayerState::impactSpeed),
};
static_assert(std::tuple_size_v<decltype(kPlayerStateFields)> == recordFieldCount<PlayerState>(),
              "a PlayerState field is missing from kPlayerStateFields");

/// The four motion bools as MotionFlag bits.
constexpr std::uint8_t packMotionFlags(const PlayerState& s) noexcept { return packFlags(s, kPlayerStateFields); }
/// Sets the four motion bools from MotionFlag bits (unassigned bits are ignored).
constexpr void unpackMotionFlags(PlayerState& s, std::uint8_t flags) noexcept {
  unpackFlags(s, kPlayerStateFields, flags);
}

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
  std::int32_t pourTokens = 0;       ///< water units the player may still pour, at pourTick
  std::uint64_t pourTick = 0;        ///< tick pourTokens was computed for
  friend bool operator==(const RateBudget&, const RateBudget&) = default;
};

/// RateBudget's fields, in codec and hash order.
inline constexpr std::tuple kRateBudgetFields{
    field("editTokens", &RateBudget::editTokens),
    field("editTick", &RateBudget::editTick),
    field("chatTokens", &RateBudget::chatTokens),
    field("chatTick", &RateBudget::chatTick),
    field("inputTick", &RateBudget::inputTick),
    field("inputsInTick", &RateBudget::inputsInTick),
    field("pourTokens", &RateBudget::pourTokens),
    field("pourTick", &RateBudget::pourTick),
};
static_assert(std::tuple_size_v<decltype(kRateBudgetFields)> == recordFieldCount<RateBudget>(),
              "a RateBudget field is missing from kRateBudgetFields");

/// One connected player as the simulation holds it (SimState::players, sorted by id).
struct Player {
  PlayerId id;             ///< stable id
  PlayerName name;         ///< display name from the join command
  PlayerState motion;      ///< advanced by motionStep
  RateBudget budget;       ///< rate limits
  friend bool operator==(const Player&, const Player&) = default;
};
static_assert(recordFieldCount<Player>() == 4, "a new Player field: add it to the player codec, hash and diff");

/// Folds one player (id, name, motion, budget) into hasher. No allocation.
void hashPlayer(const Player& player, StateHasher& hasher) noexcept;

/// The "players" blob of the state codec (sim/save/state_codec.h): u32 count, then per
/// player (sorted by id, strictly): u32 id, u8 name length (<= kMaxNameBytes), the
/// name's bytes, kPlayerStateFields, kRateBudgetFields. Allocates as out grows.
void encodePlayers(const std::vector<Player>& players, std::vector<std::uint8_t>& out);
/// Replaces players with the blob's content (budgets as saved). Checks every length,
/// id order, name length, flag bits and impactSpeed >= 0; on error players is untouched.
Result<void> decodePlayers(std::span<const std::uint8_t> bytes, std::vector<Player>& players);

/// First difference between two sorted player lists ("player 3 position.x: expected
/// 1, actual 2"), or nullopt. Allocates the message only.
std::optional<std::string> diffPlayers(const std::vector<Player>& expected, const std::vector<Player>& actual);

}  // namespace loam::sim
