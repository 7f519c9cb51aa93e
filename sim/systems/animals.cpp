// Animal system (model in sim/systems/animals.h; contract in sim/systems/water.h).
#include "sim/systems/animals.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "sim/world/brick_store.h"
#include "sim/core/internal/format.h"
#include "sim/world/material.h"
#include "sim/world/material_lut.h"
#include "sim/systems/motion.h"
#include "sim/gen/scene.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/core/state_hasher.h"
#include "sim/world/voxel_collision.h"

namespace loam::sim {

namespace {

using internal::AnimalBrain;
using internal::AnimalDenInfo;

// ---- constants (units, units per tick, units per tick^2, ticks) ----------------------

constexpr std::int32_t kMaxFallSpeed = unitsPerTickFromMps(50.0);
constexpr std::int32_t kWalkerGroundAccel = accelFromMps2(20.0);
constexpr std::int32_t kWalkerAirAccel = accelFromMps2(3.0);
constexpr std::int32_t kArriveDistance = unitsFromMetres(0.4);
constexpr std::int32_t kWaterProbeBelow = 6;  // voxels under the feet checked for water (30 cm)
constexpr std::int32_t kMaxDropVoxels = 20;   // a walker will not step off a drop deeper than 1 m
constexpr std::uint16_t kStuckLimit = 30;     // ticks without progress before a new heading
constexpr std::int32_t kEscapeLookahead = unitsFromMetres(0.6);
constexpr std::uint16_t kDetourTicks = 30;
constexpr std::int32_t kUnstickSearch = 40;  // voxels searched upward for a free spot
constexpr std::int32_t kSpawnRadius = unitsFromMetres(5.0);
constexpr std::int32_t kSpawnHeightTolerance = unitsFromMetres(4.0);
constexpr std::int32_t kDogFollowFar = unitsFromMetres(12.0);
constexpr std::int32_t kDogFollowNear = unitsFromMetres(4.0);
constexpr std::uint64_t kDogGiveUpTicks = 10 * kTicksPerSecond;

constexpr std::int32_t kBirdCruise = unitsPerTickFromMps(6.0);
constexpr std::int32_t kBirdMinSpeed = unitsPerTickFromMps(0.4);
constexpr std::int32_t kBirdAccel = accelFromMps2(10.0);
constexpr std::int32_t kBirdTakeoffSpeed = unitsPerTickFromMps(2.5);
constexpr std::int32_t kBirdFleeRadius = unitsFromMetres(5.0);
constexpr std::int32_t kBirdLandDistance = unitsFromMetres(0.1);
constexpr std::int32_t kBirdArcMax = unitsFromMetres(5.0);
constexpr std::int32_t kBirdClimb = unitsFromMetres(2.0);
constexpr std::int32_t kBirdSkyMargin = unitsFromMetres(1.0);
constexpr std::uint16_t kBirdClimbTicks = 30;
constexpr std::uint16_t kBirdTakeoffClimbTicks = 8;
constexpr std::uint16_t kBirdStuckLimit = 180;
constexpr std::uint64_t kBirdFlightLimit = 40 * kTicksPerSecond;
constexpr std::uint32_t kBirdPerchMin = 5 * kTicksPerSecond;
constexpr std::uint32_t kBirdPerchSpread = 25 * kTicksPerSecond;
constexpr std::uint32_t kBirdCallPerched = 10 * kTicksPerSecond;  // mean ticks between idle calls
constexpr std::uint32_t kBirdCallFlying = 25 * kTicksPerSecond;
constexpr int kFleePerchSamples = 6;

struct WalkerParams {
  std::int32_t halfWidth;
  std::int32_t height;
  std::int32_t walkSpeed;
  std::int32_t runSpeed;
  std::int32_t fleeRadius;  // a player nearer than this starts a flight
  std::int32_t fleeExit;    // the flight ends when the nearest player is farther
  std::uint32_t callTicks;  // mean ticks between idle calls
};

constexpr WalkerParams kFoxParams{.halfWidth = kFoxHalfWidth,
                                  .height = kFoxHeight,
                                  .walkSpeed = unitsPerTickFromMps(1.4),
                                  .runSpeed = unitsPerTickFromMps(5.5),
                                  .fleeRadius = unitsFromMetres(6.0),
                                  .fleeExit = unitsFromMetres(12.0),
                                  .callTicks = 40 * kTicksPerSecond};
constexpr WalkerParams kDogParams{.halfWidth = kDogHalfWidth,
                                  .height = kDogHeight,
                                  .walkSpeed = unitsPerTickFromMps(1.3),
                                  .runSpeed = unitsPerTickFromMps(5.0),
                                  .fleeRadius = unitsFromMetres(2.0),
                                  .fleeExit = unitsFromMetres(5.0),
                                  .callTicks = 30 * kTicksPerSecond};

// Draw indices under RandomPurpose::AnimalWander / AnimalSpawn (one per use, so two
// draws for the same animal in the same tick never coincide).
enum Draw : std::uint32_t {
  kDrawIdleTicks = 0,
  kDrawHeading = 1,
  kDrawDistance = 2,
  kDrawHomeHeading = 3,
  kDrawHomeDistance = 4,
  kDrawTurn = 5,
  kDrawTurnSide = 6,
  kDrawPerchTicks = 7,
  kDrawPerch = 16,        // + sample number
  kDrawSpawn = 64,        // + 2 * candidate (+1)
  kDrawSpawnPerch = 256,  // + sample number
};

// ---- integer geometry -----------------------------------------------------------------

// atan(2^-i) in 1/256 binary-angle units (2^24 per turn), for CORDIC.
constexpr std::int64_t kAtanQ8[16] = {2097152, 1238021, 654136, 332050, 166669, 83416, 41718, 20860,
                                      10430,   5215,    2608,   1304,   652,    326,   163,   81};

// The binary angle (0 north = -z, clockwise: 16384 east = +x) of the horizontal
// direction (east, south) = (dx, dz). Integer CORDIC, bit-exact. 0 for a zero vector.
std::uint16_t headingOf(std::int64_t dx, std::int64_t dz) noexcept {
  std::int64_t x = -dz, y = dx;  // x: north component, y: east component
  if (x == 0 && y == 0) return 0;
  std::int64_t angle = 0;
  if (x < 0) {
    x = -x;
    y = -y;
    angle = std::int64_t{32768} << 8;
  }
  // Scale up so the shifts below keep precision (inputs are at most ~2^33).
  const std::uint64_t mag = static_cast<std::uint64_t>(x) | static_cast<std::uint64_t>(y < 0 ? -y : y);
  const int shift = std::countl_zero(mag) - 24;  // leaves the magnitude below 2^40
  if (shift > 0) {
    x *= std::int64_t{1} << shift;
    y *= std::int64_t{1} << shift;
  }
  for (int i = 0; i < 16; ++i) {
    const std::int64_t nx = y > 0 ? x + (y >> i) : x - (y >> i);
    const std::int64_t ny = y > 0 ? y - (x >> i) : y + (x >> i);
    angle += y > 0 ? kAtanQ8[i] : -kAtanQ8[i];
    x = nx;
    y = ny;
  }
  return static_cast<std::uint16_t>(static_cast<std::uint64_t>((angle + 128) >> 8) & 0xFFFFu);
}

struct Vec2i {
  std::int32_t x = 0, z = 0;
};

// The horizontal vector of length `length` along binary angle yaw.
Vec2i along(std::uint16_t yaw, std::int32_t length) noexcept {
  return {static_cast<std::int32_t>(std::int64_t{sinQ14(yaw)} * length / 16384),
          static_cast<std::int32_t>(-std::int64_t{cosQ14(yaw)} * length / 16384)};
}

std::int64_t horizontalDistanceSquared(Vec3i a, Vec3i b) noexcept {
  const std::int64_t dx = std::int64_t{a.x} - b.x, dz = std::int64_t{a.z} - b.z;
  return dx * dx + dz * dz;
}

std::int32_t isqrtUnits(std::int64_t v) noexcept {
  return static_cast<std::int32_t>(isqrt64(static_cast<std::uint64_t>(v)));
}

// Moves (vx, vz) toward (tx, tz) by at most accel (Euclidean), exactly (motion.cpp's rule).
void approach2(std::int32_t& vx, std::int32_t& vz, std::int32_t tx, std::int32_t tz, std::int32_t accel) noexcept {
  const std::int64_t dx = std::int64_t{tx} - vx, dz = std::int64_t{tz} - vz;
  const std::int64_t d2 = dx * dx + dz * dz;
  if (d2 <= std::int64_t{accel} * accel) {
    vx = tx;
    vz = tz;
    return;
  }
  const std::int64_t d = isqrtUnits(d2);
  if (d == 0) return;
  vx += static_cast<std::int32_t>(dx * accel / d);
  vz += static_cast<std::int32_t>(dz * accel / d);
}

void approach3(Vec3i& v, Vec3i t, std::int32_t accel) noexcept {
  const std::int64_t dx = std::int64_t{t.x} - v.x, dy = std::int64_t{t.y} - v.y, dz = std::int64_t{t.z} - v.z;
  const std::int64_t d2 = dx * dx + dy * dy + dz * dz;
  if (d2 <= std::int64_t{accel} * accel) {
    v = t;
    return;
  }
  const std::int64_t d = isqrtUnits(d2);
  if (d == 0) return;
  v.x += static_cast<std::int32_t>(dx * accel / d);
  v.y += static_cast<std::int32_t>(dy * accel / d);
  v.z += static_cast<std::int32_t>(dz * accel / d);
}

// ---- voxel queries shared by init and step --------------------------------------------

struct Body {
  std::int32_t halfWidth;
  std::int32_t height;
};

Body bodyOf(AnimalSpecies s) noexcept {
  switch (s) {
    case AnimalSpecies::Bird:
      return {kBirdHalfWidth, kBirdHeight};
    case AnimalSpecies::Fox:
      return {kFoxHalfWidth, kFoxHeight};
    case AnimalSpecies::Dog:
      return {kDogHalfWidth, kDogHeight};
  }
  return {kFoxHalfWidth, kFoxHeight};
}

// Water in or just under a box's footprint: from kWaterProbeBelow voxels below the
// feet up to the middle of the body.
bool wetAt(const BrickStore& world, const MaterialLut& lut, const UnitBox& box) noexcept {
  VoxelBox r = voxelsOfBox(box);
  const std::int32_t feet = box.lo.y >> kUnitShift;
  r.min.y = feet - kWaterProbeBelow;
  r.max.y = feet + ((box.hi.y - box.lo.y) >> (kUnitShift + 1)) + 1;
  return regionHasAny(world, lut.liquid, r);
}

// Nothing to stand on within kMaxDropVoxels under the footprint.
bool dropAt(const BrickStore& world, const MaterialLut& lut, const UnitBox& box) noexcept {
  VoxelBox r = voxelsOfBox(box);
  const std::int32_t feet = box.lo.y >> kUnitShift;
  r.min.y = feet - kMaxDropVoxels;
  r.max.y = feet;
  return !regionCollides(world, lut, r);
}

// The feet height a box of this size lands at when dropped from the sky at (x, z),
// or nullopt when the column is blocked at the top of the world.
std::optional<std::int32_t> dropToGround(const BrickStore& world, const MaterialLut& lut, std::int32_t x,
                                         std::int32_t z, Body body) noexcept {
  const WorldBounds& wb = world.bounds();
  const std::int32_t top = wb.maxBrick.y * kBrickSize * kUnitsPerVoxel;
  const std::int32_t bottom = wb.minBrick.y * kBrickSize * kUnitsPerVoxel;
  UnitBox box = boxAtFeet(Vec3i{x, top, z}, body.halfWidth, body.height);
  if (boxCollides(world, lut, box)) return std::nullopt;  // outside the sides
  bool blocked = false;
  sweepBox(world, lut, box, 1, bottom - top, blocked);
  if (!blocked) return std::nullopt;
  return box.lo.y;
}

// Lifts a body whose box overlaps a solid voxel (a block placed on it) to the first
// free voxel-aligned height within kUnstickSearch voxels above. Returns true if moved.
bool unstick(const BrickStore& world, const MaterialLut& lut, Vec3i& feet, Body body) noexcept {
  if (!boxCollides(world, lut, boxAtFeet(feet, body.halfWidth, body.height))) return false;
  const std::int32_t base = feet.y >> kUnitShift;
  for (std::int32_t k = 1; k <= kUnstickSearch; ++k) {
    const Vec3i p{feet.x, (base + k) * kUnitsPerVoxel, feet.z};
    if (!boxCollides(world, lut, boxAtFeet(p, body.halfWidth, body.height))) {
      feet = p;
      return true;
    }
  }
  return false;
}

// ---- players ---------------------------------------------------------------------------

struct Threat {
  const Player* player = nullptr;
  std::int64_t distanceSquared = std::numeric_limits<std::int64_t>::max();
};

// The nearest player (3-D distance between feet; the lower id on ties).
Threat nearestPlayer(const SimState& s, Vec3i p) noexcept {
  Threat t;
  for (const Player& pl : s.players) {
    const std::int64_t d2 = distanceSquared(pl.motion.position, p);
    if (d2 < t.distanceSquared) {
      t.player = &pl;
      t.distanceSquared = d2;
    }
  }
  return t;
}

// ---- the step --------------------------------------------------------------------------

class AnimalStepper {
 public:
  AnimalStepper(AnimalState& state, SimContext& ctx) noexcept
      : state_(state), ctx_(ctx), sim_(ctx.state()), world_(sim_.world), lut_(sim_.lut), tick_(ctx.tick()) {}

  void run() {
    for (std::size_t i = 0; i < state_.animals.size(); ++i) {
      Animal& a = state_.animals[i];
      AnimalBrain& b = state_.brains[i];
      const Animal before = a;
      if (a.species == AnimalSpecies::Bird) {
        stepBird(a, b);
      } else {
        stepWalker(a, b, a.species == AnimalSpecies::Dog ? kDogParams : kFoxParams);
      }
      if (!(a == before)) ctx_.output().animals.push_back(AnimalChange{a, false});
    }
  }

 private:
  std::uint32_t draw(const Animal& a, std::uint32_t index, std::uint32_t bound) const noexcept {
    return ctx_.randomBelow(RandomPurpose::AnimalWander, a.id.value, index, bound);
  }

  void call(const Animal& a, AnimalCallKind kind, std::int32_t height) {
    ctx_.emit(AnimalCallEvent{a.id.value, static_cast<std::uint8_t>(a.species), static_cast<std::uint8_t>(kind),
                              voxelOf(Vec3i{a.position.x, a.position.y + height, a.position.z})});
  }

  void maybeIdleCall(const Animal& a, std::uint32_t meanTicks, std::int32_t height) {
    if (ctx_.randomBelow(RandomPurpose::AnimalCall, a.id.value, 0, meanTicks) == 0) {
      call(a, AnimalCallKind::Idle, height);
    }
  }

  const AnimalDenInfo& denOf(const AnimalBrain& b) const noexcept { return state_.dens[b.den]; }

  // ---- walkers ----

  // A new wander goal: along `heading` 2-8 m away, or back toward the den when far out.
  void chooseGoal(const Animal& a, AnimalBrain& b, std::uint16_t heading) const noexcept {
    const AnimalDenInfo& den = denOf(b);
    const std::int64_t range2 = std::int64_t{den.range} * den.range;
    auto homeGoal = [&] {
      const Vec2i off =
          along(static_cast<std::uint16_t>(draw(a, kDrawHomeHeading, 65536)),
                static_cast<std::int32_t>(draw(a, kDrawHomeDistance, static_cast<std::uint32_t>(den.range / 3 + 1))));
      return Vec3i{den.home.x + off.x, den.home.y, den.home.z + off.z};
    };
    if (horizontalDistanceSquared(a.position, den.home) * 16 > range2 * 9) {
      b.goal = homeGoal();
      return;
    }
    const std::int32_t dist =
        unitsFromMetres(2.0) +
        static_cast<std::int32_t>(draw(a, kDrawDistance, static_cast<std::uint32_t>(unitsFromMetres(6.0))));
    const Vec2i off = along(heading, dist);
    b.goal = Vec3i{a.position.x + off.x, a.position.y, a.position.z + off.z};
    if (horizontalDistanceSquared(b.goal, den.home) > range2) b.goal = homeGoal();
  }

  // 0 dry, 1 water within kWaterProbeBelow voxels under the footprint, 2 water in
  // the body or in the voxel layer it stands on.
  int wetClass(const UnitBox& box) const noexcept {
    VoxelBox r = voxelsOfBox(box);
    const std::int32_t feet = r.min.y;
    r.min.y = feet - 1;
    if (regionHasAny(world_, lut_.liquid, r)) return 2;
    r.min.y = feet - kWaterProbeBelow;
    r.max.y = feet - 1;
    return regionHasAny(world_, lut_.liquid, r) ? 1 : 0;
  }

  // Water in the fall zone under a box about to drop (kMaxDropVoxels deep).
  bool fallsIntoWater(const UnitBox& box) const noexcept {
    VoxelBox r = voxelsOfBox(box);
    r.max.y = r.min.y;
    r.min.y -= kMaxDropVoxels;
    return regionHasAny(world_, lut_.liquid, r);
  }

  // True when the body can run kEscapeLookahead along heading from where it stands:
  // the sweep (from step-up height) is not blocked and ends dry with ground near below.
  bool headingClear(const Animal& a, Body body, std::uint16_t heading) const noexcept {
    const Vec2i d = along(heading, kEscapeLookahead);
    UnitBox box = boxAtFeet(a.position, body.halfWidth, body.height);
    bool blocked = false;
    const std::int32_t up = sweepBox(world_, lut_, box, 1, kStepUpHeight, blocked);
    sweepBox(world_, lut_, box, 0, d.x, blocked);
    if (blocked) return false;
    sweepBox(world_, lut_, box, 2, d.z, blocked);
    if (blocked) return false;
    sweepBox(world_, lut_, box, 1, -up, blocked);
    if (dropAt(world_, lut_, box)) return false;
    // Water anywhere along the way: the box spanning the start and the end.
    const UnitBox from = boxAtFeet(a.position, body.halfWidth, body.height);
    const UnitBox span{{std::min(from.lo.x, box.lo.x), std::min(from.lo.y, box.lo.y), std::min(from.lo.z, box.lo.z)},
                       {std::max(from.hi.x, box.hi.x), std::max(from.hi.y, box.hi.y), std::max(from.hi.z, box.hi.z)}};
    return !wetAt(world_, lut_, span);
  }

  // The flee heading: straight away when that way is clear, else the smallest turn
  // (22.5 degree steps up to 135, the remembered side first) that is.
  std::uint16_t escapeHeading(const Animal& a, AnimalBrain& b, Body body, std::uint16_t away) const noexcept {
    if (b.climbTicks > 0) {
      --b.climbTicks;  // the straight way was refused lately: turn
    } else if (headingClear(a, body, away)) {
      b.fleeSide = 0;
      return away;
    }
    if (b.fleeSide == 0) b.fleeSide = draw(a, kDrawTurnSide, 2) == 0 ? -1 : 1;
    for (std::int32_t k = 1; k <= 6; ++k) {
      for (const std::int32_t side : {std::int32_t{b.fleeSide}, std::int32_t{-b.fleeSide}}) {
        const auto h = static_cast<std::uint16_t>(away + side * k * 4096);
        if (headingClear(a, body, h)) {
          b.fleeSide = static_cast<std::int8_t>(side);
          return h;
        }
      }
    }
    return away;  // cornered
  }

  void stepWalker(Animal& a, AnimalBrain& b, const WalkerParams& p) {
    const Body body{p.halfWidth, p.height};
    const bool dog = a.species == AnimalSpecies::Dog;
    if (unstick(world_, lut_, a.position, body)) b.onGround = false;

    // Mode from the nearest player.
    const Threat t = nearestPlayer(sim_, a.position);
    WalkerMode mode = static_cast<WalkerMode>(a.mode);
    if (mode != WalkerMode::Flee) {
      if (t.player && t.distanceSquared < std::int64_t{p.fleeRadius} * p.fleeRadius) {
        mode = WalkerMode::Flee;
        b.fleeSide = 0;
        b.climbTicks = 0;
        b.stuckTicks = 0;
        call(a, AnimalCallKind::Alarm, p.height);
      }
    } else if (!t.player || t.distanceSquared > std::int64_t{p.fleeExit} * p.fleeExit) {
      mode = WalkerMode::Idle;
      b.untilTick = tick_ + 30 + draw(a, kDrawIdleTicks, 90);
    }
    if (dog && mode != WalkerMode::Flee) {
      const AnimalDenInfo& den = denOf(b);
      const std::int64_t leash = std::int64_t{den.range} * 2;
      const bool canFollow = t.player && t.distanceSquared <= std::int64_t{kDogFollowFar} * kDogFollowFar &&
                             tick_ >= b.followAfter && horizontalDistanceSquared(a.position, den.home) <= leash * leash;
      if (canFollow && mode != WalkerMode::Follow) {
        mode = WalkerMode::Follow;
        b.stuckTicks = 0;
        call(a, AnimalCallKind::Greet, p.height);
      } else if (!canFollow && mode == WalkerMode::Follow) {
        mode = WalkerMode::Idle;
        b.untilTick = tick_ + 60 + draw(a, kDrawIdleTicks, 120);
      }
    }

    // Desired horizontal velocity.
    std::int32_t tx = 0, tz = 0, want = 0;
    if (mode == WalkerMode::Idle && tick_ >= b.untilTick) {
      chooseGoal(a, b, static_cast<std::uint16_t>(draw(a, kDrawHeading, 65536)));
      mode = WalkerMode::Walk;
    }
    switch (mode) {
      case WalkerMode::Idle:
        break;
      case WalkerMode::Walk: {
        const std::int64_t dx = std::int64_t{b.goal.x} - a.position.x, dz = std::int64_t{b.goal.z} - a.position.z;
        const std::int64_t d = isqrtUnits(dx * dx + dz * dz);
        if (d <= kArriveDistance) {
          mode = WalkerMode::Idle;
          b.untilTick = tick_ + 2 * kTicksPerSecond + draw(a, kDrawIdleTicks, 6 * kTicksPerSecond);
        } else {
          want = p.walkSpeed;
          tx = static_cast<std::int32_t>(dx * want / d);
          tz = static_cast<std::int32_t>(dz * want / d);
        }
        break;
      }
      case WalkerMode::Flee: {
        const std::int64_t ax = std::int64_t{a.position.x} - t.player->motion.position.x;
        const std::int64_t az = std::int64_t{a.position.z} - t.player->motion.position.z;
        const std::uint16_t away = (ax == 0 && az == 0) ? a.yaw : headingOf(ax, az);
        const Vec2i v = along(escapeHeading(a, b, body, away), p.runSpeed);
        want = p.runSpeed;
        tx = v.x;
        tz = v.z;
        break;
      }
      case WalkerMode::Follow: {
        const std::int64_t dx = std::int64_t{t.player->motion.position.x} - a.position.x;
        const std::int64_t dz = std::int64_t{t.player->motion.position.z} - a.position.z;
        const std::int64_t d = isqrtUnits(dx * dx + dz * dz);
        if (d > kDogFollowNear) {
          want = d > kDogFollowNear + unitsFromMetres(3.0) ? p.runSpeed * 3 / 5 : p.walkSpeed;
          tx = static_cast<std::int32_t>(dx * want / d);
          tz = static_cast<std::int32_t>(dz * want / d);
        }
        break;
      }
    }

    // Motion: the player's rules with this body (sweep per axis, step-up, gravity,
    // following the ground down).
    Vec3i v = a.velocity;
    approach2(v.x, v.z, tx, tz, b.onGround ? kWalkerGroundAccel : kWalkerAirAccel);
    v.y -= kGravity;
    if (v.y < -kMaxFallSpeed) v.y = -kMaxFallSpeed;

    UnitBox box = boxAtFeet(a.position, p.halfWidth, p.height);
    const UnitBox start = box;
    bool bx = false, bz = false;
    std::int32_t mx = sweepBox(world_, lut_, box, 0, v.x, bx);
    std::int32_t mz = sweepBox(world_, lut_, box, 2, v.z, bz);
    if ((bx || bz) && b.onGround) {
      UnitBox stepped = start;
      bool bu = false, sx = false, sz = false, bd = false;
      const std::int32_t up = sweepBox(world_, lut_, stepped, 1, kStepUpHeight, bu);
      const std::int32_t smx = sweepBox(world_, lut_, stepped, 0, v.x, sx);
      const std::int32_t smz = sweepBox(world_, lut_, stepped, 2, v.z, sz);
      sweepBox(world_, lut_, stepped, 1, -up, bd);
      if (std::int64_t{smx} * smx + std::int64_t{smz} * smz > std::int64_t{mx} * mx + std::int64_t{mz} * mz) {
        box = stepped;
        mx = smx;
        mz = smz;
        bx = sx;
        bz = sz;
      }
    }
    if (bx) v.x = 0;
    if (bz) v.z = 0;

    // Vertical move from the horizontal result (or, when that is refused, from the start).
    const std::int32_t vy = v.y;
    auto vertical = [&](UnitBox& bb) {
      bool by = false;
      v.y = vy;
      sweepBox(world_, lut_, bb, 1, v.y, by);
      if (by) {
        const bool landed = v.y < 0;
        v.y = 0;
        return landed;
      }
      if (b.onGround && v.y <= 0) {
        UnitBox probe = bb;
        bool bd = false;
        sweepBox(world_, lut_, probe, 1, -kStepUpHeight, bd);
        if (bd) {
          bb = probe;
          v.y = 0;
          return true;
        }
      }
      return false;
    };
    const UnitBox horizontal = box;
    bool grounded = vertical(box);

    // A walking step may never make the animal wetter (dry -> water within 30 cm below
    // -> water in or right under the body; once wet any way out is fine), nor walk it
    // off a drop deeper than a metre or over water. Refused steps stand still.
    bool refused = false;
    if (b.onGround && (horizontal.lo.x != start.lo.x || horizontal.lo.z != start.lo.z)) {
      bool refuse = wetClass(box) > wetClass(start);
      if (!refuse && !grounded) refuse = dropAt(world_, lut_, box) || fallsIntoWater(box);
      if (refuse) {
        box = start;
        mx = mz = 0;
        v.x = v.z = 0;
        grounded = vertical(box);
        refused = true;
      }
    }
    b.onGround = grounded;

    // Progress: a quarter of the wanted speed, else count towards a new heading.
    const std::int64_t moved2 = std::int64_t{mx} * mx + std::int64_t{mz} * mz;
    if (want > 0 && moved2 * 16 < std::int64_t{want} * want) {
      ++b.stuckTicks;
    } else {
      b.stuckTicks = 0;
    }
    if (refused || b.stuckTicks >= kStuckLimit) {
      b.stuckTicks = 0;
      // Turn away by 90..270 degrees (walk), or try another escape angle (flee).
      const std::uint16_t turn = static_cast<std::uint16_t>(8192 + draw(a, kDrawTurn, 8192));
      const bool left = draw(a, kDrawTurnSide, 2) == 0;
      switch (mode) {
        case WalkerMode::Idle:
        case WalkerMode::Walk:
          chooseGoal(a, b, static_cast<std::uint16_t>(a.yaw + 32768 + (left ? -turn : turn)));
          mode = WalkerMode::Walk;
          break;
        case WalkerMode::Flee:
          // The escape probe misjudged: turn for a while, the other side first.
          b.fleeSide = static_cast<std::int8_t>(b.fleeSide < 0 ? 1 : -1);
          b.climbTicks = kDetourTicks;
          break;
        case WalkerMode::Follow:
          mode = WalkerMode::Idle;
          b.followAfter = tick_ + kDogGiveUpTicks;
          b.untilTick = tick_ + kTicksPerSecond;
          break;
      }
    }

    a.position = feetOfBox(box, p.halfWidth);
    a.velocity = v;
    if (v.x != 0 || v.z != 0) a.yaw = headingOf(v.x, v.z);
    a.mode = static_cast<std::uint8_t>(mode);
    maybeIdleCall(a, p.callTicks, p.height);
  }

  // ---- birds ----

  bool perchTaken(std::int32_t perch, const AnimalBrain& self) const noexcept {
    for (const AnimalBrain& o : state_.brains) {
      if (&o != &self && o.perch == perch) return true;
    }
    return false;
  }

  // A random perch of the den other than the current one (and not another bird's
  // when possible); -1 when the den has none.
  std::int32_t randomPerch(const Animal& a, const AnimalBrain& b) const noexcept {
    const AnimalDenInfo& den = denOf(b);
    const std::uint32_t n = den.perchEnd - den.perchBegin;
    if (n == 0) return -1;
    std::int32_t pick = -1;
    for (std::uint32_t k = 0; k < 4; ++k) {
      const auto c = static_cast<std::int32_t>(den.perchBegin + draw(a, kDrawPerch + k, n));
      if (n > 1 && c == b.perch) continue;
      pick = c;
      if (!perchTaken(c, b)) break;
    }
    return pick >= 0 ? pick : b.perch;
  }

  // The farthest (horizontally) from `from` of a few random perches.
  std::int32_t farPerch(const Animal& a, const AnimalBrain& b, Vec3i from) const noexcept {
    const AnimalDenInfo& den = denOf(b);
    const std::uint32_t n = den.perchEnd - den.perchBegin;
    if (n == 0) return -1;
    std::int32_t best = -1;
    std::int64_t bestD = -1;
    for (int k = 0; k < kFleePerchSamples; ++k) {
      const auto c = static_cast<std::int32_t>(den.perchBegin + draw(a, kDrawPerch + static_cast<std::uint32_t>(k), n));
      if (n > 1 && c == b.perch) continue;
      const std::int64_t d = horizontalDistanceSquared(state_.perches[static_cast<std::size_t>(c)], from);
      if (d > bestD) {
        bestD = d;
        best = c;
      }
    }
    return best;
  }

  void beginFlight(AnimalBrain& b, std::int32_t perch) const noexcept {
    b.perch = perch;
    b.flightStart = tick_;
    b.bestDistance = std::numeric_limits<std::int32_t>::max();
    b.stuckTicks = 0;
  }

  void stepBird(Animal& a, AnimalBrain& b) {
    const Body body{kBirdHalfWidth, kBirdHeight};
    const bool lifted = unstick(world_, lut_, a.position, body);
    const Threat t = nearestPlayer(sim_, a.position);
    const std::int64_t flee2 = std::int64_t{kBirdFleeRadius} * kBirdFleeRadius;

    if (a.mode == static_cast<std::uint8_t>(BirdMode::Perched)) {
      const bool threatened = t.player && t.distanceSquared < flee2;
      VoxelBox below = voxelsOfBox(boxAtFeet(a.position, kBirdHalfWidth, kBirdHeight));
      below.max.y = below.min.y;
      below.min.y -= 1;
      const bool supported = !lifted && regionHasAny(world_, state_.standable, below);
      if (!threatened && supported && tick_ < b.untilTick) {
        maybeIdleCall(a, kBirdCallPerched, kBirdHeight);
        return;
      }
      const std::int32_t next = threatened ? farPerch(a, b, t.player->motion.position) : randomPerch(a, b);
      if (next < 0) {
        b.untilTick = tick_ + kBirdPerchMin;
        return;
      }
      if (threatened) call(a, AnimalCallKind::Alarm, kBirdHeight);
      beginFlight(b, next);
      b.climbTicks = kBirdTakeoffClimbTicks;
      a.velocity = Vec3i{0, kBirdTakeoffSpeed, 0};
      a.mode = static_cast<std::uint8_t>(BirdMode::Flap);
    }

    if (b.perch < 0) {  // nowhere to fly to (a den without perches)
      a.velocity = Vec3i{};
      a.mode = static_cast<std::uint8_t>(BirdMode::Perched);
      return;
    }
    // Flying: a player near the target perch sends the bird elsewhere.
    Vec3i target = state_.perches[static_cast<std::size_t>(b.perch)];
    if (t.player && distanceSquared(target, t.player->motion.position) < flee2) {
      const std::int32_t next = farPerch(a, b, t.player->motion.position);
      if (next >= 0 && next != b.perch) {
        beginFlight(b, next);
        target = state_.perches[static_cast<std::size_t>(b.perch)];
      }
    }
    const std::int64_t dx = std::int64_t{target.x} - a.position.x, dy = std::int64_t{target.y} - a.position.y,
                       dz = std::int64_t{target.z} - a.position.z;
    const std::int32_t d3 = isqrtUnits(dx * dx + dy * dy + dz * dz);
    const std::int32_t speedNow =
        isqrtUnits(std::int64_t{a.velocity.x} * a.velocity.x + std::int64_t{a.velocity.y} * a.velocity.y +
                   std::int64_t{a.velocity.z} * a.velocity.z);

    // Landing: within reach this tick and the perch is still clear.
    if (d3 <= kBirdLandDistance || d3 <= speedNow) {
      if (!boxCollides(world_, lut_, boxAtFeet(target, kBirdHalfWidth, kBirdHeight))) {
        a.position = target;
        a.velocity = Vec3i{};
        a.mode = static_cast<std::uint8_t>(BirdMode::Perched);
        b.untilTick = tick_ + kBirdPerchMin + draw(a, kDrawPerchTicks, kBirdPerchSpread);
        b.stuckTicks = 0;
        b.climbTicks = 0;
        return;
      }
      beginFlight(b, randomPerch(a, b));
    }

    // Steering: an arc toward the target (higher the farther it is), climbing over
    // whatever blocked the last ticks, braking so it can stop at the perch.
    const std::int32_t hd = isqrtUnits(dx * dx + dz * dz);
    std::int64_t aimY = std::int64_t{target.y} + std::min(hd / 2, kBirdArcMax);
    if (b.climbTicks > 0) {
      --b.climbTicks;
      aimY = std::max<std::int64_t>(aimY, std::int64_t{a.position.y} + kBirdClimb);
    }
    const std::int64_t sky =
        std::int64_t{world_.bounds().maxBrick.y} * kBrickSize * kUnitsPerVoxel - kBirdSkyMargin - kBirdHeight;
    if (aimY > sky) aimY = std::max<std::int64_t>(sky, target.y);
    const std::int64_t ay = aimY - a.position.y;
    const std::int64_t dist = isqrtUnits(dx * dx + ay * ay + dz * dz);
    std::int32_t speed = std::min(kBirdCruise, isqrtUnits(2 * std::int64_t{kBirdAccel} * d3));
    if (speed < kBirdMinSpeed) speed = kBirdMinSpeed;
    Vec3i want{};
    if (dist > 0) {
      want = Vec3i{static_cast<std::int32_t>(dx * speed / dist), static_cast<std::int32_t>(ay * speed / dist),
                   static_cast<std::int32_t>(dz * speed / dist)};
    }
    Vec3i v = a.velocity;
    approach3(v, want, kBirdAccel);

    UnitBox box = boxAtFeet(a.position, kBirdHalfWidth, kBirdHeight);
    bool bx = false, bz = false, by = false;
    sweepBox(world_, lut_, box, 0, v.x, bx);
    sweepBox(world_, lut_, box, 2, v.z, bz);
    sweepBox(world_, lut_, box, 1, v.y, by);
    if (bx) v.x = 0;
    if (bz) v.z = 0;
    if (by) v.y = 0;
    if (bx || bz) b.climbTicks = kBirdClimbTicks;

    // Progress toward the target; give up on it when there is none for a while.
    if (d3 + kUnitsPerVoxel < b.bestDistance) {
      b.bestDistance = d3;
      b.stuckTicks = 0;
    } else if (++b.stuckTicks >= kBirdStuckLimit || tick_ - b.flightStart >= kBirdFlightLimit) {
      beginFlight(b, randomPerch(a, b));
      b.climbTicks = kBirdClimbTicks;
    }

    a.position = feetOfBox(box, kBirdHalfWidth);
    a.velocity = v;
    if (v.x != 0 || v.z != 0) a.yaw = headingOf(v.x, v.z);
    const std::int64_t h2 = std::int64_t{v.x} * v.x + std::int64_t{v.z} * v.z;
    const bool glide = v.y <= 0 && h2 * 4 >= std::int64_t{kBirdCruise} * kBirdCruise;
    a.mode = static_cast<std::uint8_t>(glide ? BirdMode::Glide : BirdMode::Flap);
    maybeIdleCall(a, kBirdCallFlying, kBirdHeight);
  }

  AnimalState& state_;
  SimContext& ctx_;
  const SimState& sim_;
  const BrickStore& world_;
  const MaterialLut& lut_;
  std::uint64_t tick_;
};

// ---- init ------------------------------------------------------------------------------

std::int32_t unitsFromSceneMetres(double m) {
  // One multiply and a round-half-away conversion (basic IEEE operations only).
  const double u = m * kUnitsPerMetre;
  return static_cast<std::int32_t>(u < 0 ? u - 0.5 : u + 0.5);
}

std::uint32_t spawnDraw(std::uint64_t seed, std::uint64_t id, std::uint32_t index, std::uint32_t bound) {
  return keyedBelow(RandomKey{seed, RandomPurpose::AnimalSpawn, 0, id, index}, bound);
}

// Perch spots near a den: per brick column within the den's range, looking down
// from the sky to the first brick that is not air (the canopy top where there is a
// tree, else the ground), the highest foliage voxel with air above, where a bird's
// box (and one voxel over it) is clear. Keeps at most kMaxPerchesPerDen in a keyed
// order; appends to out. Air chunks are skipped whole, so the cost is about one
// brick decode per column.
void findPerches(const BrickStore& world, const MaterialLut& lut, const std::array<std::uint8_t, 256>& foliage,
                 std::uint64_t seed, std::uint32_t denIndex, Vec3i home, std::int32_t range, std::vector<Vec3i>& out) {
  const WorldBounds& wb = world.bounds();
  constexpr std::int32_t kBrickUnits = kBrickSize * kUnitsPerVoxel;
  const std::int32_t bx0 = std::max((home.x - range) >> (kUnitShift + kBrickShift), wb.minBrick.x);
  const std::int32_t bx1 = std::min((home.x + range) >> (kUnitShift + kBrickShift), wb.maxBrick.x - 1);
  const std::int32_t bz0 = std::max((home.z - range) >> (kUnitShift + kBrickShift), wb.minBrick.z);
  const std::int32_t bz1 = std::min((home.z + range) >> (kUnitShift + kBrickShift), wb.maxBrick.z - 1);
  const std::int64_t range2 = std::int64_t{range} * range;
  std::vector<VoxelCoord> top;
  std::array<MaterialId, kBrickVoxels> vox{};
  for (std::int32_t bz = bz0; bz <= bz1; ++bz) {
    for (std::int32_t bx = bx0; bx <= bx1; ++bx) {
      const Vec3i centre{bx * kBrickUnits + kBrickUnits / 2, 0, bz * kBrickUnits + kBrickUnits / 2};
      if (horizontalDistanceSquared(centre, home) > range2) continue;
      for (std::int32_t by = wb.maxBrick.y - 1; by >= wb.minBrick.y; --by) {
        const BrickCoord b{bx, by, bz};
        if ((by & (kChunkBricks - 1)) == kChunkBricks - 1) {
          // Top brick of a chunk: skip the whole chunk when it is collapsed to air.
          const int ci = world.chunkIndex(chunkOf(b));
          if (ci >= 0 && world.chunkIsCollapsed(ci) && world.chunkUniform(ci) == kAir) {
            by -= kChunkBricks - 1;
            continue;
          }
        }
        const BrickView view = world.brick(b);
        if (view.isAir()) continue;
        VoxelCoord best{0, std::numeric_limits<std::int32_t>::min(), 0};
        if (view.isUniform()) {
          const std::int32_t y = by * kBrickSize + kBrickSize;
          if (foliage[view.uniformMaterial()] && world.get(bx * kBrickSize + 3, y, bz * kBrickSize + 3) == kAir) {
            best = VoxelCoord{bx * kBrickSize + 3, y, bz * kBrickSize + 3};
          }
        } else {
          view.decode(vox.data());
          for (int lz = 0; lz < kBrickSize; ++lz) {
            for (int lx = 0; lx < kBrickSize; ++lx) {
              for (int ly = kBrickSize - 1; ly >= 0; --ly) {
                if (ly + by * kBrickSize + 1 <= best.y) break;
                const MaterialId m = vox[static_cast<std::size_t>(voxelIndexInBrick(lx, ly, lz))];
                if (m == kAir) continue;
                if (foliage[m]) {
                  const std::int32_t x = bx * kBrickSize + lx, y = by * kBrickSize + ly, z = bz * kBrickSize + lz;
                  const MaterialId above = ly + 1 < kBrickSize
                                               ? vox[static_cast<std::size_t>(voxelIndexInBrick(lx, ly + 1, lz))]
                                               : world.get(x, y + 1, z);
                  if (above == kAir) best = VoxelCoord{x, y + 1, z};
                }
                break;
              }
            }
          }
        }
        if (best.y != std::numeric_limits<std::int32_t>::min()) top.push_back(best);
        break;  // the first non-air brick decides this column
      }
    }
  }

  std::array<std::uint8_t, 256> nonAir{};
  nonAir.fill(1);
  nonAir[kAir] = 0;
  struct Candidate {
    std::uint64_t key;
    Vec3i spot;
  };
  std::vector<Candidate> found;
  for (const VoxelCoord& c : top) {
    const Vec3i spot{c.x * kUnitsPerVoxel + kUnitsPerVoxel / 2, c.y * kUnitsPerVoxel,
                     c.z * kUnitsPerVoxel + kUnitsPerVoxel / 2};
    if (horizontalDistanceSquared(spot, home) > range2) continue;
    VoxelBox clear = voxelsOfBox(boxAtFeet(spot, kBirdHalfWidth, kBirdHeight));
    clear.max.y += 1;
    if (regionHasAny(world, nonAir, clear) || regionCollides(world, lut, clear)) continue;
    found.push_back(
        {keyedHash(RandomKey{seed, RandomPurpose::AnimalSpawn, 0, packCoordId(c.x, c.y, c.z), 0x10000u + denIndex}),
         spot});
  }
  std::sort(found.begin(), found.end(), [](const Candidate& l, const Candidate& r) {
    if (l.key != r.key) return l.key < r.key;
    if (l.spot.x != r.spot.x) return l.spot.x < r.spot.x;
    if (l.spot.y != r.spot.y) return l.spot.y < r.spot.y;
    return l.spot.z < r.spot.z;
  });
  if (found.size() > kMaxPerchesPerDen) found.resize(kMaxPerchesPerDen);
  for (const Candidate& c : found) out.push_back(c.spot);
}

}  // namespace

void initAnimals(AnimalState& state, const SimSetup& setup) {
  state = AnimalState{};
  const BrickStore& world = setup.world;
  const MaterialLut lut = makeMaterialLut(setup.materials);
  std::array<std::uint8_t, 256> foliage{};
  const std::size_t n = std::min<std::size_t>(setup.materials.size(), 256);
  for (std::size_t i = 1; i < n; ++i) {
    const Material& m = setup.materials[static_cast<MaterialId>(i)];
    foliage[i] = m.foliage ? 1 : 0;
    state.standable[i] = (lut.collides[i] || m.foliage) ? 1 : 0;
  }

  std::size_t total = 0;
  for (const AnimalDen& d : setup.scene.dens) total += static_cast<std::size_t>(std::max(d.count, 0));
  state.animals.reserve(total);
  state.brains.reserve(total);

  for (std::size_t di = 0; di < setup.scene.dens.size(); ++di) {
    const AnimalDen& den = setup.scene.dens[di];
    AnimalSpecies species = AnimalSpecies::Fox;
    switch (den.species) {
      case Species::Bird:
        species = AnimalSpecies::Bird;
        break;
      case Species::Fox:
        species = AnimalSpecies::Fox;
        break;
      case Species::Dog:
        species = AnimalSpecies::Dog;
        break;
    }
    const Body body = bodyOf(species);
    AnimalDenInfo info;
    info.species = static_cast<std::uint8_t>(species);
    info.range = unitsFromSceneMetres(den.range);
    info.home.x = unitsFromSceneMetres(den.position.x);
    info.home.z = unitsFromSceneMetres(den.position.z);
    const std::optional<std::int32_t> ground = dropToGround(world, lut, info.home.x, info.home.z, body);
    info.home.y = den.onGround || !ground ? ground.value_or(0) : unitsFromSceneMetres(den.position.y);
    if (species == AnimalSpecies::Bird) {
      info.perchBegin = static_cast<std::uint32_t>(state.perches.size());
      findPerches(world, lut, foliage, setup.seed, static_cast<std::uint32_t>(di), info.home, info.range,
                  state.perches);
      // No canopy in range: the birds sit on dry ground near the den instead.
      for (std::uint32_t k = 0; state.perches.size() - info.perchBegin < 4 && k < 32; ++k) {
        const std::uint64_t key = 0x100000000ull + di;
        const Vec2i off = along(static_cast<std::uint16_t>(spawnDraw(setup.seed, key, 2 * k, 65536)),
                                static_cast<std::int32_t>(spawnDraw(setup.seed, key, 2 * k + 1,
                                                                    static_cast<std::uint32_t>(info.range / 2 + 1))));
        const Vec3i p{info.home.x + off.x, 0, info.home.z + off.z};
        if (auto y = dropToGround(world, lut, p.x, p.z, body)) {
          const Vec3i spot{p.x, *y, p.z};
          if (!wetAt(world, lut, boxAtFeet(spot, body.halfWidth, body.height))) state.perches.push_back(spot);
        }
      }
      info.perchEnd = static_cast<std::uint32_t>(state.perches.size());
    }
    state.dens.push_back(info);

    for (int i = 0; i < den.count; ++i) {
      Animal a;
      a.id = AnimalId{state.nextId++};
      a.species = species;
      AnimalBrain b;
      b.den = static_cast<std::uint32_t>(di);
      const std::uint64_t id = a.id.value;
      a.yaw = static_cast<std::uint16_t>(spawnDraw(setup.seed, id, 0, 65536));
      if (species == AnimalSpecies::Bird) {
        a.mode = static_cast<std::uint8_t>(BirdMode::Perched);
        a.position = info.home;
        const std::uint32_t np = info.perchEnd - info.perchBegin;
        if (np > 0) {
          // Distinct perches while there are enough.
          std::int32_t pick = -1;
          for (std::uint32_t k = 0; k < 8; ++k) {
            pick = static_cast<std::int32_t>(info.perchBegin + spawnDraw(setup.seed, id, kDrawSpawnPerch + k, np));
            bool taken = false;
            for (const AnimalBrain& o : state.brains) taken = taken || o.perch == pick;
            if (!taken) break;
          }
          b.perch = pick;
          a.position = state.perches[static_cast<std::size_t>(pick)];
        }
        b.untilTick = spawnDraw(setup.seed, id, 1, kBirdPerchMin + kBirdPerchSpread);
      } else {
        a.mode = static_cast<std::uint8_t>(WalkerMode::Idle);
        a.position = info.home;
        const std::int32_t radius = std::min(info.range, kSpawnRadius);
        for (std::uint32_t k = 0; k < 32; ++k) {
          const Vec2i off = along(static_cast<std::uint16_t>(spawnDraw(setup.seed, id, kDrawSpawn + 2 * k, 65536)),
                                  static_cast<std::int32_t>(spawnDraw(setup.seed, id, kDrawSpawn + 2 * k + 1,
                                                                      static_cast<std::uint32_t>(radius))));
          const std::int32_t x = info.home.x + off.x, z = info.home.z + off.z;
          const std::optional<std::int32_t> y = dropToGround(world, lut, x, z, body);
          if (!y) continue;
          if (ground && (*y > *ground + kSpawnHeightTolerance || *y < *ground - kSpawnHeightTolerance)) continue;
          const Vec3i spot{x, *y, z};
          if (wetAt(world, lut, boxAtFeet(spot, body.halfWidth, body.height))) continue;
          a.position = spot;
          break;
        }
        b.onGround = true;
        b.untilTick = spawnDraw(setup.seed, id, 1, 3 * kTicksPerSecond);
      }
      state.animals.push_back(a);
      state.brains.push_back(b);
    }
  }
}

void stepAnimals(AnimalState& state, SimContext& ctx) {
  if (state.brains.size() != state.animals.size()) return;  // a mirror's state never steps
  AnimalStepper(state, ctx).run();
}

void applyAnimalChanges(AnimalState& state, std::span<const AnimalChange> changes) {
  // Brains stay parallel to animals (defaults for animals the mirror had not seen).
  const bool parallel = state.brains.size() == state.animals.size();
  for (const AnimalChange& c : changes) {
    auto it = std::lower_bound(state.animals.begin(), state.animals.end(), c.animal.id,
                               [](const Animal& a, AnimalId id) { return a.id < id; });
    const auto index = it - state.animals.begin();
    const bool present = it != state.animals.end() && it->id == c.animal.id;
    if (c.removed) {
      if (present) {
        state.animals.erase(it);
        if (parallel) state.brains.erase(state.brains.begin() + index);
      }
    } else if (present) {
      *it = c.animal;
    } else {
      state.animals.insert(it, c.animal);
      if (parallel) state.brains.insert(state.brains.begin() + index, AnimalBrain{});
    }
  }
}

}  // namespace loam::sim
