// Events: the second of the simulation's three streams (sim/systems/streams.h). Things that
// happened this step which are not state: audio, effects and chat read them.
// Plain structs in one variant; positions are voxel coordinates, speeds mm/s.
#pragma once

#include <cstdint>
#include <variant>

#include "sim/systems/player.h"
#include "sim/core/short_text.h"
#include "sim/world/voxel.h"

namespace loam::sim {

/// Who or what an event is about: a player, an animal, or nothing in particular.
struct Actor {
  enum class Kind : std::uint8_t { None = 0, Player = 1, Animal = 2 };
  Kind kind = Kind::None;
  std::uint32_t id = 0;  ///< PlayerId::value or AnimalId::value
  friend bool operator==(const Actor&, const Actor&) = default;
};

/// Why a fire went out (audio hisses for rain and water).
enum class ExtinguishCause : std::uint8_t { BurntOut = 0, Rain = 1, Water = 2, Removed = 3 };

/// Why a command was refused.
enum class RejectReason : std::uint8_t {
  UnknownPlayer = 0,  ///< sender is not in the world
  AlreadyJoined = 1,  ///< join for an id already present
  BadPlayerId = 2,    ///< join from id 0, or a server-only command from a player
  WorldFull = 3,      ///< player cap reached
  OutOfReach = 4,     ///< target more than 5 m from the eye
  OutOfBounds = 5,    ///< target outside the world
  BadMaterial = 6,    ///< material unknown, air, liquid or not placeable
  RateLimited = 7,    ///< sender's budget exhausted
  Blocked = 8,        ///< place would overlap a player, or nothing to change
  BadArgument = 9,    ///< out-of-range field (size, amount, time, text length)
  NotFlammable = 10,  ///< ignite on something that cannot burn
  NothingToDig = 11,  ///< dig found no diggable voxel
  WaterLimit = 12,    ///< pour: the world holds as much water as players may pour
  NoLineOfSight = 13, ///< a colliding voxel lies between the eye and the target
};

/// A fire started at position (by a command or by spreading).
struct IgnitedEvent {
  VoxelCoord position;
  MaterialId material = kAir;  ///< what caught
  Actor by;                    ///< player who lit it, or None for spread
};

/// A fire went out.
struct ExtinguishedEvent {
  VoxelCoord position;
  ExtinguishCause cause = ExtinguishCause::BurntOut;
};

/// Something hit the ground after falling.
struct LandedEvent {
  Actor who;
  VoxelCoord position;
  MaterialId material = kAir;    ///< surface landed on
  std::int32_t impactSpeed = 0;  ///< mm/s, >= 0
};

/// A footstep.
struct FootstepEvent {
  Actor who;
  VoxelCoord position;
  MaterialId surface = kAir;
  std::int32_t speed = 0;  ///< horizontal speed, mm/s
};

/// A dig removed voxels (one per dig command).
struct DigEvent {
  Actor who;
  VoxelCoord position;          ///< centre
  std::uint8_t radius = 0;      ///< voxels
  MaterialId material = kAir;   ///< the material removed most
  std::uint32_t voxels = 0;     ///< voxels removed
};

/// Material broke off (one per distinct material a dig removed, in material order).
struct FractureEvent {
  VoxelCoord position;
  MaterialId material = kAir;
  std::uint32_t voxels = 0;  ///< size of what broke, in voxels
};

/// Something entered water.
struct SplashEvent {
  Actor who;
  VoxelCoord position;
  std::int32_t speed = 0;  ///< mm/s
};

/// An animal called.
struct AnimalCallEvent {
  std::uint32_t animal = 0;     ///< AnimalId::value
  std::uint8_t species = 0;     ///< AnimalSpecies
  std::uint8_t call = 0;        ///< species-specific call variant
  VoxelCoord position;
};

/// A chat line.
struct ChatEvent {
  PlayerId from;
  ChatText text;
};

/// A command was refused; nothing changed.
struct CommandRejectedEvent {
  PlayerId player;
  std::uint32_t sequence = 0;    ///< the command's sequence
  std::uint8_t commandIndex = 0; ///< CommandBody alternative index
  RejectReason reason = RejectReason::BadArgument;
};

/// A player joined or left (so clients can show it; the state stream carries the data).
struct PlayerJoinedEvent {
  PlayerId player;
  PlayerName name;
};
struct PlayerLeftEvent {
  PlayerId player;
};

/// Every kind of event. Append alternatives; never reorder.
using Event = std::variant<IgnitedEvent, ExtinguishedEvent, LandedEvent, FootstepEvent, DigEvent, FractureEvent,
                           SplashEvent, AnimalCallEvent, ChatEvent, CommandRejectedEvent, PlayerJoinedEvent,
                           PlayerLeftEvent>;

}  // namespace loam::sim
