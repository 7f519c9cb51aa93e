// Commands: everything that can ask the simulation to change. Plain structs in one
// variant; each command names who sent it and that sender's sequence number, which
// together fix the order the step applies them in (sim/step/step.h).
//
// Positions are voxel coordinates (the tool / cursor resolution); player movement is
// a PlayerInput (sim/systems/player.h). Every command is validated by the step; a rejected
// command changes nothing and produces a CommandRejected event with the reason.
// Dig, place, pour and ignite from the server itself (kServerPlayer: console,
// scenario events, fire tests) skip the reach, sight and rate checks; everything
// else is still checked. A player's need a line of sight from the eye: a segment to
// some point of the target voxel (the nearest, or a face turned toward the eye)
// that enters no colliding voxel first (RejectReason::NoLineOfSight). Set time, set weather
// and teleport are server-only.
#pragma once

#include <cstdint>
#include <variant>

#include "sim/systems/player.h"
#include "sim/core/short_text.h"
#include "sim/world/voxel.h"

namespace loam::sim {

/// Admit a player. Rejected if the id is 0 or already present, or the world is full.
/// The player appears at a scene spawn point chosen by id.
struct JoinCommand {
  PlayerName name;  ///< display name (1..31 bytes)
};

/// Remove a player. Rejected if the player is not present.
struct LeaveCommand {};

/// One tick of movement; applied with one motionStep. Inputs whose sequence is not
/// newer than the player's last applied input are ignored silently (duplicates and
/// late packets are normal on an unreliable channel), as are inputs beyond
/// SimRules::maxInputsPerTick in one tick (the client reconciles). Sequences start
/// at 1; Command::sequence orders it among the sender's commands (normally equal).
struct InputCommand {
  PlayerInput input;
};

/// Tool sizes for dig and place: radius (dig) or edge (place) in voxels.
enum class ToolSize : std::uint8_t {
  Cm5 = 1,   ///< 1 voxel
  Cm10 = 2,  ///< 2 voxels
  Cm20 = 4,  ///< 4 voxels
  Cm40 = 8,  ///< 8 voxels
};

/// The argument checks for tool sizes and faces, shared by the step (a bad value is
/// rejected with BadArgument) and the server's wire decoder (a bad byte makes the
/// message malformed). A valid tool size is one of ToolSize's values.
constexpr bool validToolSize(std::uint8_t size) noexcept {
  return size == static_cast<std::uint8_t>(ToolSize::Cm5) || size == static_cast<std::uint8_t>(ToolSize::Cm10) ||
         size == static_cast<std::uint8_t>(ToolSize::Cm20) || size == static_cast<std::uint8_t>(ToolSize::Cm40);
}
constexpr bool validToolSize(ToolSize size) noexcept { return validToolSize(static_cast<std::uint8_t>(size)); }

/// Remove every diggable (solid, non-liquid) voxel whose centre lies within the
/// tool's radius of the target voxel's centre.
struct DigCommand {
  VoxelCoord target;             ///< voxel the player aimed at
  ToolSize radius = ToolSize::Cm10;
};

/// Cube faces, as the outward normal of the face that was hit.
enum class Face : std::uint8_t { NegX = 0, PosX = 1, NegY = 2, PosY = 3, NegZ = 4, PosZ = 5 };

/// A valid face is one of Face's values (see validToolSize for who checks).
constexpr bool validFace(std::uint8_t face) noexcept { return face <= static_cast<std::uint8_t>(Face::PosZ); }
constexpr bool validFace(Face face) noexcept { return validFace(static_cast<std::uint8_t>(face)); }

/// Place a cube of `material` against `face` of the `target` voxel: the cube lies
/// on the face's outer side, `size` voxels deep along the normal and centred on the
/// target in the face plane. Only air and liquid voxels inside it are filled.
struct PlaceCommand {
  VoxelCoord target;            ///< solid voxel the player aimed at
  Face face = Face::PosY;       ///< face of target the cube sits on
  ToolSize size = ToolSize::Cm10;
  MaterialId material = kAir;   ///< must exist, be solid and placeable
};

/// Pour water: add `amount` water units at position (handed to the water system).
/// A player's pour is refused with WaterLimit once the world holds as much water as
/// players may pour (sim/systems/water.h, waterFull).
struct PourCommand {
  VoxelCoord position;
  std::uint32_t amount = 0;  ///< water units (WaterState's unit; 1..kMaxPourAmount)
};

/// Set fire to the voxel at position (handed to the fire system).
struct IgniteCommand {
  VoxelCoord position;
};

/// Set the time of day. Server only (player 0).
struct SetTimeCommand {
  std::uint32_t timeOfDay = 0;  ///< ticks since midnight, < the scene's day length in ticks
};

/// Set the weather. Server only (player 0).
struct SetWeatherCommand {
  std::uint16_t rain = 0;          ///< rain intensity, 0 (dry) .. 1000 (downpour), per mille
  std::uint16_t windDirection = 0; ///< binary angle the wind blows toward (yaw convention)
  std::uint16_t windStrength = 0;  ///< mean wind speed in cm/s
};

/// Move a player somewhere else at once (the admin's teleport). Server only (player
/// 0). Sets the target's position and zeroes its velocity; nothing else of its
/// state changes (yaw, pitch, crouching and lastInput stay). Rejected with
/// UnknownPlayer when the target is not present, OutOfBounds when the player's box
/// (standing height) would not lie inside the world, Blocked when onGround and the
/// column at x,z holds no colliding voxel (nothing to stand on).
struct TeleportCommand {
  PlayerId target;        ///< who moves
  Vec3i position;         ///< units: x,z the box centre, y the feet (ignored when onGround)
  bool onGround = false;  ///< stand on top of the highest colliding voxel of the column at x,z
};

/// Say something to everyone.
struct ChatCommand {
  ChatText text;  ///< 1..120 bytes
};

/// Every kind of command. Append alternatives; never reorder (the index is on the wire).
using CommandBody = std::variant<JoinCommand, LeaveCommand, InputCommand, DigCommand, PlaceCommand, PourCommand,
                                 IgniteCommand, SetTimeCommand, SetWeatherCommand, ChatCommand, TeleportCommand>;

/// A command from one sender. The step applies a tick's commands sorted by
/// (player, sequence, position in the input span); see sim/step/step.h.
struct Command {
  PlayerId player;             ///< sender; kServerPlayer for the server itself
  std::uint32_t sequence = 0;  ///< sender's command counter (for inputs: the input sequence)
  CommandBody body;
};

}  // namespace loam::sim
