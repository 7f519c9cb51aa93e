#include "sim/systems/motion.h"

#include <array>
#include <climits>

#include "sim/world/voxel_collision.h"

namespace loam::sim {

namespace {

// ---- constants (units, units per tick, units per tick^2) ---------------------------

constexpr std::int32_t kJumpSpeed = unitsPerTickFromMps(4.9);  // about 1.22 m high
constexpr std::int32_t kGroundAccel = accelFromMps2(40.0);
constexpr std::int32_t kAirAccel = accelFromMps2(6.0);
constexpr std::int32_t kWaterAccel = accelFromMps2(12.0);
constexpr std::int32_t kWaterGravity = accelFromMps2(2.0);     // net sink when idle in water
constexpr std::int32_t kSwimUpAccel = accelFromMps2(14.0);
constexpr std::int32_t kSwimVerticalSpeed = unitsPerTickFromMps(2.0);
constexpr std::int32_t kWaistHeight = unitsFromMetres(0.9);
constexpr std::int32_t kLandedMinSpeed = unitsPerTickFromMps(1.5);  // smaller drops are silent
constexpr std::int32_t kSplashMinSpeed = unitsPerTickFromMps(0.5);
constexpr std::int32_t kWalkStride = unitsFromMetres(0.75);
constexpr std::int32_t kRunStride = unitsFromMetres(1.05);

// ---- integer sine table --------------------------------------------------------------

// Quarter wave of sin at 1024 steps per quadrant (4096 per turn), Q14. Computed at
// compile time with integer-only Taylor series in Q30, so every compiler produces
// the same table.
constexpr int kQuarterSteps = 1024;

constexpr std::int32_t sinQuarterEntry(int i) {
  // x = i / 1024 * pi / 2 in Q30.
  constexpr std::int64_t kHalfPiQ30 = 1686629713;  // round(pi / 2 * 2^30)
  std::int64_t x = kHalfPiQ30 * i / kQuarterSteps;
  std::int64_t x2 = (x * x) >> 30;
  std::int64_t term = x, sum = x;
  for (int k = 1; k < 12; ++k) {
    term = -((term * x2) >> 30) / ((2 * k) * (2 * k + 1));
    sum += term;
  }
  // Q30 -> Q14, rounding half away from zero (sum >= 0 on the quarter).
  return static_cast<std::int32_t>((sum + (1 << 15)) >> 16);
}

constexpr std::array<std::int16_t, kQuarterSteps + 1> makeSinTable() {
  std::array<std::int16_t, kQuarterSteps + 1> t{};
  for (int i = 0; i <= kQuarterSteps; ++i) t[static_cast<std::size_t>(i)] = static_cast<std::int16_t>(sinQuarterEntry(i));
  return t;
}

constexpr auto kSinTable = makeSinTable();
static_assert(kSinTable[0] == 0 && kSinTable[kQuarterSteps] == 16384, "sine table endpoints");

// ---- probes ----------------------------------------------------------------------------

constexpr std::int32_t floorVoxel(std::int32_t u) { return u >> kUnitShift; }

UnitBox playerBox(Vec3i feet, std::int32_t height) { return boxAtFeet(feet, kPlayerHalfWidth, height); }

MaterialId voxelAt(CollisionReader& reader, std::int32_t x, std::int32_t y, std::int32_t z) noexcept {
  const BrickView v = reader.brick(x >> kBrickShift, y >> kBrickShift, z >> kBrickShift);
  return v.isUniform() ? v.uniformMaterial() : v.get(x & 7, y & 7, z & 7);
}

// The colliding material under the feet: the voxel below the centre, else below
// the box's corners (standing on an edge).
MaterialId surfaceUnder(CollisionReader& reader, const MaterialLut& lut, const UnitBox& b) noexcept {
  const std::int32_t y = floorVoxel(b.lo.y) - 1;
  const std::int32_t xs[3] = {floorVoxel((b.lo.x + b.hi.x) / 2), floorVoxel(b.lo.x), floorVoxel(b.hi.x - 1)};
  const std::int32_t zs[3] = {floorVoxel((b.lo.z + b.hi.z) / 2), floorVoxel(b.lo.z), floorVoxel(b.hi.z - 1)};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      MaterialId m = voxelAt(reader, xs[i], y, zs[j]);
      if (lut.collides[m]) return m;
    }
  }
  return kAir;
}

std::int32_t clampAbs(std::int32_t v, std::int32_t limit) { return v > limit ? limit : (v < -limit ? -limit : v); }

// Moves (vx, vz) toward (tx, tz) by at most accel (Euclidean), exactly.
void approach(std::int32_t& vx, std::int32_t& vz, std::int32_t tx, std::int32_t tz, std::int32_t accel) noexcept {
  std::int64_t dx = std::int64_t{tx} - vx, dz = std::int64_t{tz} - vz;
  std::uint64_t d2 = static_cast<std::uint64_t>(dx * dx + dz * dz);
  if (d2 <= static_cast<std::uint64_t>(accel) * static_cast<std::uint64_t>(accel)) {
    vx = tx;
    vz = tz;
    return;
  }
  std::int64_t d = isqrt64(d2);
  if (d == 0) return;
  vx += static_cast<std::int32_t>(dx * accel / d);
  vz += static_cast<std::int32_t>(dz * accel / d);
}

}  // namespace

std::int32_t sinQ14(std::uint16_t angle) noexcept {
  // 4096 steps per turn; round the 16-bit angle to the nearest step.
  unsigned step = ((static_cast<unsigned>(angle) + 8u) >> 4) & 4095u;
  unsigned quadrant = step >> 10, i = step & 1023u;
  switch (quadrant) {
    case 0:
      return kSinTable[i];
    case 1:
      return kSinTable[kQuarterSteps - i];
    case 2:
      return -kSinTable[i];
    default:
      return -kSinTable[kQuarterSteps - i];
  }
}

std::int32_t cosQ14(std::uint16_t angle) noexcept { return sinQ14(static_cast<std::uint16_t>(angle + 16384u)); }

std::uint32_t isqrt64(std::uint64_t v) noexcept {
  // Bitwise method: exact floor(sqrt(v)) with integer operations only.
  std::uint64_t res = 0, bit = 1ULL << 62;
  while (bit > v) bit >>= 2;
  while (bit != 0) {
    if (v >= res + bit) {
      v -= res + bit;
      res = (res >> 1) + bit;
    } else {
      res >>= 1;
    }
    bit >>= 2;
  }
  return static_cast<std::uint32_t>(res);
}

Vec3i eyePosition(const PlayerState& s) noexcept {
  return {s.position.x, s.position.y + (s.crouching ? kPlayerCrouchEyeHeight : kPlayerEyeHeight), s.position.z};
}

bool boxCollides(const BrickStore& world, const MaterialLut& lut, Vec3i feet, std::int32_t height) noexcept {
  return boxCollides(world, lut, playerBox(feet, height));
}

std::optional<std::int32_t> groundHeight(const BrickStore& world, const MaterialLut& lut, std::int32_t vx,
                                         std::int32_t vz) noexcept {
  const std::int32_t yLo = world.bounds().minBrick.y * kBrickSize;
  if (!world.bounds().containsVoxel({vx, yLo, vz})) return std::nullopt;
  const std::int32_t y = topVoxelY(world, lut, vx, vz, INT32_MAX, false);
  if (y < yLo) return std::nullopt;
  return (y + 1) * kUnitsPerVoxel;
}

std::int32_t topVoxelY(const BrickStore& world, const MaterialLut& lut, std::int32_t vx, std::int32_t vz,
                       std::int32_t fromY, bool flammableToo) noexcept {
  // Otherwise foliage and liquids are not ground.
  const WorldBounds& b = world.bounds();
  const std::int32_t top = b.maxBrick.y * kBrickSize - 1;
  for (std::int32_t y = fromY < top ? fromY : top; y >= b.minBrick.y * kBrickSize; --y) {
    const MaterialId m = world.get(vx, y, vz);
    if (lut.collides[m] || (flammableToo && lut.flammable[m])) return y;
  }
  return b.minBrick.y * kBrickSize - 1;
}

bool playerBoxInside(const WorldBounds& bounds, Vec3i feet) noexcept {
  // 64-bit: feet may be anything a command carries.
  constexpr std::int64_t kBrickUnits = std::int64_t{kBrickSize} * kUnitsPerVoxel;
  const auto inside = [](std::int64_t lo, std::int64_t hi, std::int32_t minBrick, std::int32_t maxBrick) {
    return lo >= minBrick * kBrickUnits && hi <= maxBrick * kBrickUnits;
  };
  return inside(std::int64_t{feet.x} - kPlayerHalfWidth, std::int64_t{feet.x} + kPlayerHalfWidth, bounds.minBrick.x,
                bounds.maxBrick.x) &&
         inside(std::int64_t{feet.z} - kPlayerHalfWidth, std::int64_t{feet.z} + kPlayerHalfWidth, bounds.minBrick.z,
                bounds.maxBrick.z) &&
         inside(feet.y, std::int64_t{feet.y} + kPlayerHeight, bounds.minBrick.y, bounds.maxBrick.y);
}

PlayerState motionStep(const PlayerState& in, const PlayerInput& input, const BrickStore& world,
                       const MaterialLut& lut, CollisionCache* masks) noexcept {
  PlayerState s = in;
  s.motionEvents = 0;
  s.impactSpeed = 0;
  s.yaw = input.yaw;
  s.pitch = input.pitch > 16384 ? std::int16_t{16384} : (input.pitch < -16384 ? std::int16_t{-16384} : input.pitch);
  s.lastInput = input.sequence;
  const bool jump = (input.buttons & kButtonJump) != 0;
  const bool wantRun = (input.buttons & kButtonRun) != 0;
  const bool wantCrouch = (input.buttons & kButtonCrouch) != 0;

  // The brick window: the box's bricks plus one brick of margin sideways and two
  // below (step-down probes, falls); a fast fall reaches past it and reads directly.
  CollisionReader reader(world, lut, masks,
                         BrickCoord{((s.position.x - kPlayerHalfWidth) >> (kUnitShift + kBrickShift)) - 1,
                                    (s.position.y >> (kUnitShift + kBrickShift)) - 2,
                                    ((s.position.z - kPlayerHalfWidth) >> (kUnitShift + kBrickShift)) - 1});

  // Crouch: standing up needs room for the full box.
  if (wantCrouch) {
    s.crouching = true;
  } else if (s.crouching) {
    if (!regionCollides(reader, voxelsOfBox(playerBox(s.position, kPlayerHeight)))) {
      s.crouching = false;
    }
  }
  const std::int32_t height = s.crouching ? kPlayerCrouchHeight : kPlayerHeight;

  // Swimming: is the waist in a liquid?
  const bool wasSwimming = in.swimming;
  s.swimming = lut.liquid[voxelAt(reader, floorVoxel(s.position.x), floorVoxel(s.position.y + kWaistHeight),
                                  floorVoxel(s.position.z))] != 0;

  // Horizontal intent: input rotated by yaw, normalised so diagonals are not faster.
  std::int32_t f = input.moveForward < -127 ? -127 : input.moveForward;
  std::int32_t r = input.moveRight < -127 ? -127 : input.moveRight;
  std::int32_t mag = static_cast<std::int32_t>(isqrt64(static_cast<std::uint64_t>(f * f + r * r)));
  std::int32_t speed = s.swimming ? kSwimSpeed : (s.crouching ? kCrouchSpeed : (wantRun ? kRunSpeed : kWalkSpeed));
  s.running = wantRun && !s.crouching && !s.swimming && mag > 0;
  std::int32_t tx = 0, tz = 0;
  if (mag > 0) {
    const std::int64_t sn = sinQ14(input.yaw), cs = cosQ14(input.yaw);
    // forward = (sin, -cos), right = (cos, sin); Q14.
    std::int64_t wx = f * sn + r * cs, wz = -f * cs + r * sn;
    std::int64_t denom = (mag > 127 ? mag : 127) * std::int64_t{16384};
    tx = static_cast<std::int32_t>(wx * speed / denom);
    tz = static_cast<std::int32_t>(wz * speed / denom);
  }
  const std::int32_t accel = s.swimming ? kWaterAccel : (in.onGround ? kGroundAccel : kAirAccel);
  if (!in.onGround && !s.swimming && mag == 0) {
    // No air braking: keep momentum while falling without input.
  } else {
    approach(s.velocity.x, s.velocity.z, tx, tz, accel);
  }

  // Vertical intent.
  bool jumped = false;
  if (s.swimming) {
    std::int32_t vy = s.velocity.y;
    if (jump) {
      vy += kSwimUpAccel;
    } else if (wantCrouch) {
      vy -= kSwimUpAccel;
    } else {
      vy -= kWaterGravity;
    }
    vy -= vy / 8;  // drag
    s.velocity.y = clampAbs(vy, kSwimVerticalSpeed);
  } else if (in.onGround && jump) {
    s.velocity.y = kJumpSpeed;
    jumped = true;
  } else {
    s.velocity.y -= kGravity;
    if (s.velocity.y < -kMaxFallSpeed) s.velocity.y = -kMaxFallSpeed;
  }

  // Horizontal move, with a stepped attempt over ledges up to kStepUpHeight.
  UnitBox box = playerBox(s.position, height);
  const UnitBox start = box;
  bool bx = false, bz = false;
  std::int32_t mx = sweepBox(reader, box, 0, s.velocity.x, bx);
  std::int32_t mz = sweepBox(reader, box, 2, s.velocity.z, bz);
  if ((bx || bz) && (in.onGround || s.swimming)) {
    UnitBox stepped = start;
    bool bu = false, sx = false, sz = false, bd = false;
    std::int32_t up = sweepBox(reader, stepped, 1, kStepUpHeight, bu);
    std::int32_t smx = sweepBox(reader, stepped, 0, s.velocity.x, sx);
    std::int32_t smz = sweepBox(reader, stepped, 2, s.velocity.z, sz);
    sweepBox(reader, stepped, 1, -up, bd);
    std::int64_t plain = std::int64_t{mx} * mx + std::int64_t{mz} * mz;
    std::int64_t step = std::int64_t{smx} * smx + std::int64_t{smz} * smz;
    if (step > plain) {
      box = stepped;
      mx = smx;
      mz = smz;
      bx = sx;
      bz = sz;
    }
  }
  if (bx) s.velocity.x = 0;
  if (bz) s.velocity.z = 0;

  // Vertical move.
  bool by = false;
  const std::int32_t vyBefore = s.velocity.y;
  sweepBox(reader, box, 1, s.velocity.y, by);
  bool grounded = false;
  if (by) {
    if (s.velocity.y < 0) grounded = true;
    s.velocity.y = 0;
  } else if (in.onGround && !jumped && !s.swimming && s.velocity.y <= 0) {
    // Walking down a slope: follow the ground down ledges up to the step height.
    UnitBox probe = box;
    bool bd = false;
    sweepBox(reader, probe, 1, -kStepUpHeight, bd);
    if (bd) {
      box = probe;
      grounded = true;
      s.velocity.y = 0;
    }
  }
  s.onGround = grounded;
  s.position = feetOfBox(box, kPlayerHalfWidth);

  // Events.
  if (grounded) s.surface = surfaceUnder(reader, lut, box);
  if (grounded && !in.onGround && -vyBefore >= kLandedMinSpeed) {
    s.motionEvents |= kMotionLanded;
    s.impactSpeed = -vyBefore;
  }
  if (s.swimming && !wasSwimming && (vyBefore < -kSplashMinSpeed || mag > 0)) {
    s.motionEvents |= kMotionSplash;
    s.impactSpeed = vyBefore < 0 ? -vyBefore : 0;
  }
  if (grounded) {
    std::int64_t moved2 = std::int64_t{mx} * mx + std::int64_t{mz} * mz;
    s.stride += static_cast<std::int32_t>(isqrt64(static_cast<std::uint64_t>(moved2)));
    const std::int32_t stride = s.running ? kRunStride : kWalkStride;
    if (s.stride >= stride) {
      s.stride -= stride;
      if (s.stride >= stride) s.stride = 0;
      s.motionEvents |= kMotionFootstep;
    }
  } else if (s.swimming) {
    s.stride = 0;
  }
  return s;
}

PlayerState motionStep(const PlayerState& state, const PlayerInput& input, const BrickStore& world,
                       const MaterialTable& materials) noexcept {
  const MaterialLut lut = makeMaterialLut(materials);
  return motionStep(state, input, world, lut);
}

}  // namespace loam::sim
