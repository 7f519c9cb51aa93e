// Animal system interface (the system contract is in sim/systems.h).
//
// Model (all integer maths in fixed-point units, keyed draws only, animals in id
// order):
// - Foxes and dogs walk with the voxel collision players use (sim/world/voxel_collision.h:
//   the same sweep and step-up over ledges up to kStepUpHeight, gravity, following
//   the ground down), each with its own box. They idle and wander to keyed goals
//   within their den's range (heading home when far out). A step that would make
//   them wetter (water in or right under the body, or within 30 cm below), walk off
//   a drop of more than a metre or fall toward water is refused; a refused step, or
//   half a second without progress, picks a new heading (turning 90-270 degrees).
//   A player within the flee radius (fox 6 m, dog 2 m) makes them run away from the
//   nearest player, probing 0.6 m ahead and turning in 22.5 degree steps around
//   walls and water, until it is well behind them. A dog follows the nearest player
//   within 12 m, stopping 4 m short, while it stays within twice its den's range.
// - Birds perch on the top surfaces of foliage near their den (found once at init:
//   the highest leaf voxel with clear air above per brick column, in a keyed order,
//   at most kMaxPerchesPerDen), stay 5-30 s, then fly to another perch: a steered
//   arc (climb, cruise at up to 6 m/s, brake and land) swept through the voxels
//   like any box, climbing when blocked. A player within 5 m makes a perched bird
//   take off to the farthest of several keyed perches. A perch whose support burns
//   away or that is built over is left.
// - Calls: AnimalCallEvent at keyed-random intervals (kind Idle) and when startled
//   (Alarm); a dog that starts following greets (Greet).
// - Replication: an AnimalChange for each animal whose Animal record changed this
//   tick; an animal at rest changes nothing and sends nothing. Everything else in
//   AnimalState is server-side working data.
// - Safety: an animal whose box overlaps a solid voxel (a block placed on it) is
//   lifted to the first free spot within 2 m above before it moves.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/fixed_point.h"
#include "sim/core/record_fields.h"
#include "sim/core/result.h"
#include "sim/systems/internal/animal_brain.h"

namespace loam::sim {

class SimContext;
class StateHasher;
struct SimSetup;

/// An animal's stable id (never reused within a world). 0 is invalid.
struct AnimalId {
  std::uint32_t value = 0;
  friend bool operator==(const AnimalId&, const AnimalId&) = default;
  friend auto operator<=>(const AnimalId&, const AnimalId&) = default;
};

/// Kinds of animal.
enum class AnimalSpecies : std::uint8_t { Bird = 0, Fox = 1, Dog = 2 };

/// Animal::mode of a bird.
enum class BirdMode : std::uint8_t {
  Perched = 0,  ///< sitting still on a perch
  Flap = 1,     ///< flying, climbing or slow (taking off, landing)
  Glide = 2,    ///< flying level or descending at speed
};

/// Animal::mode of a fox or dog.
enum class WalkerMode : std::uint8_t {
  Idle = 0,    ///< standing (or falling) without a goal
  Walk = 1,    ///< wandering toward a goal
  Flee = 2,    ///< running away from the nearest player
  Follow = 3,  ///< dogs: keeping near a player
};

/// AnimalCallEvent::call values (audio picks the sound by species and kind).
enum class AnimalCallKind : std::uint8_t {
  Idle = 0,   ///< song, bark, yip at keyed-random intervals
  Alarm = 1,  ///< startled by a player (takes off / starts fleeing)
  Greet = 2,  ///< dogs: starts following a player
};

/// Body boxes (units): half width in x and z, height; feet at the bottom centre.
inline constexpr std::int32_t kBirdHalfWidth = unitsFromMetres(0.1);
inline constexpr std::int32_t kBirdHeight = unitsFromMetres(0.15);
inline constexpr std::int32_t kFoxHalfWidth = unitsFromMetres(0.15);
inline constexpr std::int32_t kFoxHeight = unitsFromMetres(0.35);
inline constexpr std::int32_t kDogHalfWidth = unitsFromMetres(0.2);
inline constexpr std::int32_t kDogHeight = unitsFromMetres(0.5);
/// Most perches kept per bird den.
inline constexpr std::uint32_t kMaxPerchesPerDen = 96;

/// One animal. Replicated field by field (kAnimalFields).
struct Animal {
  AnimalId id;
  AnimalSpecies species = AnimalSpecies::Bird;
  Vec3i position;         ///< units (fixed_point.h); feet / body bottom
  Vec3i velocity;         ///< units per tick
  std::uint16_t yaw = 0;  ///< binary angle (0 north, clockwise), the heading
  std::uint8_t mode = 0;  ///< BirdMode or WalkerMode by species
  friend bool operator==(const Animal&, const Animal&) = default;
};

/// Animal's fields, in the order the state codec writes and hashAnimals folds them
/// (sim/core/record_fields.h). The wire's AnimalRec (net/wire.cpp) holds the same.
inline constexpr std::tuple kAnimalFields{
    field("id", &Animal::id),
    field("species", &Animal::species),
    field("position", &Animal::position),
    field("velocity", &Animal::velocity),
    field("yaw", &Animal::yaw),
    field("mode", &Animal::mode),
};
static_assert(std::tuple_size_v<decltype(kAnimalFields)> == recordFieldCount<Animal>(),
              "an Animal field is missing from kAnimalFields");

/// One record of the animal state stream: `animal` now has these values, or is gone.
struct AnimalChange {
  Animal animal;
  bool removed = false;
  friend bool operator==(const AnimalChange&, const AnimalChange&) = default;
};

/// The animal system's state. `animals` is replicated, sorted by id; the rest is
/// server-side working data (a mirror keeps what initAnimals gave it). Copyable.
struct AnimalState {
  std::vector<Animal> animals;                ///< replicated, sorted by id
  std::uint32_t nextId = 1;                   ///< server-side: next id to hand out
  std::vector<internal::AnimalBrain> brains;  ///< parallel to animals
  std::vector<internal::AnimalDenInfo> dens;  ///< scene dens, in scene order
  std::vector<Vec3i> perches;                 ///< bird perch spots (feet), by den
  std::array<std::uint8_t, 256> standable{};  ///< per material: a bird can sit on it (solid or foliage)
};

/// Spawns the scene's animals at their dens (keyed draws with tick 0): walkers on
/// dry ground within 5 m of the den, birds on their den's perches (found here once,
/// scanning each brick column within the den's range down to its first non-air
/// brick; about 50 ms of CPU for glade). Allocates.
void initAnimals(AnimalState& state, const SimSetup& setup);

/// One tick of animals (see the model above and the contract in sim/systems.h).
/// Reads players from ctx.state(). Allocates only when the output lists grow.
void stepAnimals(AnimalState& state, SimContext& ctx);

/// Mirror side: applies one step's animal changes in order.
void applyAnimalChanges(AnimalState& state, std::span<const AnimalChange> changes);

/// Folds the replicated animal state into hasher.
void hashAnimals(const AnimalState& state, StateHasher& hasher);

/// The "animals" blob of the state codec (sim/save/state_codec.h): u32 count, then the
/// animals (sorted by id, strictly, ids > 0; kAnimalFields, mode valid for the
/// species), then per animal its brain, so a restored server continues exactly: u8
/// present (0: none, as written by a mirror; the fields are then zero), u32 den, goal
/// 3 x i32, i32 perch (-1 or a perch index), u64 untilTick, u64 followAfter, u64
/// flightStart, i32 bestDistance, u16 stuckTicks, u16 climbTicks, i8 fleeSide (-1..1),
/// u8 onGround. Allocates as out grows.
void encodeAnimals(const AnimalState& animals, std::vector<std::uint8_t>& out);
/// Replaces the animals with the blob's: brains as saved, else the one of the same id
/// this state has (its den), else a fresh one at the first den of the species, with
/// decisions restarting at `tick`; nextId past the largest id. Checks every length,
/// order and range; on error the state is untouched.
Result<void> decodeAnimals(std::span<const std::uint8_t> bytes, AnimalState& animals, std::uint64_t tick);

/// First difference between two animal states, or nullopt.
std::optional<std::string> diffAnimals(const AnimalState& expected, const AnimalState& actual);

}  // namespace loam::sim
