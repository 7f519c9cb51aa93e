#include "sim/systems/motion.h"

#include <array>
#include <new>

namespace loam::sim {

namespace {

// ---- constants (units, units per tick, units per tick^2) ---------------------------

constexpr std::int32_t kMaxFallSpeed = unitsPerTickFromMps(50.0);
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
constexpr std::int32_t kV = kUnitsPerVoxel;

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

// ---- boxes ---------------------------------------------------------------------------

struct Box {
  std::int32_t lo[3];
  std::int32_t hi[3];  // exclusive
};

Box boxAt(Vec3i feet, std::int32_t height) {
  return {{feet.x - kPlayerHalfWidth, feet.y, feet.z - kPlayerHalfWidth},
          {feet.x + kPlayerHalfWidth, feet.y + height, feet.z + kPlayerHalfWidth}};
}

constexpr std::int32_t floorVoxel(std::int32_t u) { return u >> kUnitShift; }
constexpr std::int32_t ceilVoxel(std::int32_t u) { return (u + kV - 1) >> kUnitShift; }

// The bricks around one motion step, each fetched from the store at most once per
// call (sweeps, step-up retries and probes revisit the same bricks). Bricks outside
// the window are fetched directly. Lives on the stack; no allocation.
class BrickCache {
 public:
  static constexpr int kNx = 4, kNy = 10, kNz = 4;

  BrickCache(const BrickStore& world, const MaterialLut& lut, CollisionCache* masks, BrickCoord origin) noexcept
      : world_(world), lut_(lut), masks_(masks), origin_(origin) {
    for (auto& h : have_) h = 0;
  }
  const BrickStore& world() const noexcept { return world_; }

  BrickView get(std::int32_t bx, std::int32_t by, std::int32_t bz) noexcept {
    const int i = slot(bx, by, bz);
    if (i < 0) return world_.brick(BrickCoord{bx, by, bz});
    return view(i, bx, by, bz);
  }

  /// The cached collision mask of a palette brick, or null when the brick must be
  /// read voxel by voxel (no cache, outside the window, or modified since generation).
  const CollisionMask* mask(std::int32_t bx, std::int32_t by, std::int32_t bz) noexcept {
    if (!masks_) return nullptr;
    const int i = slot(bx, by, bz);
    if (i < 0) return nullptr;
    if (have_[i] < 2) {
      const BrickView v = view(i, bx, by, bz);
      const BrickCoord b{bx, by, bz};
      masksOf_[i] = world_.isModified(b) ? nullptr : &masks_->mask(world_, lut_, b, v);
      have_[i] = 2;
    }
    return masksOf_[i];
  }

 private:
  int slot(std::int32_t bx, std::int32_t by, std::int32_t bz) const noexcept {
    const unsigned ix = static_cast<unsigned>(bx - origin_.x), iy = static_cast<unsigned>(by - origin_.y),
                   iz = static_cast<unsigned>(bz - origin_.z);
    if (ix >= kNx || iy >= kNy || iz >= kNz) return -1;
    return static_cast<int>(ix + kNx * (iy + kNy * iz));
  }
  BrickView view(int i, std::int32_t bx, std::int32_t by, std::int32_t bz) noexcept {
    if (!have_[i]) {
      new (&views_[i]) BrickView(world_.brick(BrickCoord{bx, by, bz}));
      have_[i] = 1;
    }
    return *std::launder(reinterpret_cast<const BrickView*>(&views_[i]));
  }

  struct alignas(BrickView) Slot {
    unsigned char bytes[sizeof(BrickView)];
  };
  const BrickStore& world_;
  const MaterialLut& lut_;
  CollisionCache* masks_;
  BrickCoord origin_;
  std::uint8_t have_[kNx * kNy * kNz];  // 0 nothing, 1 view, 2 view and mask
  Slot views_[kNx * kNy * kNz];
  const CollisionMask* masksOf_[kNx * kNy * kNz];
};

// True when any voxel in [x0,x1) x [y0,y1) x [z0,z1) collides. Outside the world's
// sides and below its floor counts as solid; above its top is open sky. Reads each
// brick once: uniform bricks are one table load, mixed bricks only the sub-box.
bool regionCollides(BrickCache& cache, const MaterialLut& lut, std::int32_t x0, std::int32_t y0, std::int32_t z0,
                    std::int32_t x1, std::int32_t y1, std::int32_t z1) noexcept {
  if (x0 >= x1 || y0 >= y1 || z0 >= z1) return false;
  const WorldBounds& b = cache.world().bounds();
  if (x0 < b.minBrick.x * kBrickSize || z0 < b.minBrick.z * kBrickSize || y0 < b.minBrick.y * kBrickSize ||
      x1 > b.maxBrick.x * kBrickSize || z1 > b.maxBrick.z * kBrickSize) {
    return true;
  }
  std::int32_t topY = b.maxBrick.y * kBrickSize;
  if (y1 > topY) y1 = topY;
  if (y0 >= y1) return false;
  const std::int32_t bx0 = x0 >> kBrickShift, bx1 = (x1 - 1) >> kBrickShift;
  const std::int32_t by0 = y0 >> kBrickShift, by1 = (y1 - 1) >> kBrickShift;
  const std::int32_t bz0 = z0 >> kBrickShift, bz1 = (z1 - 1) >> kBrickShift;
  // Bottom-up: the ground is where hits are likely, so most blocked queries stop early.
  for (std::int32_t by = by0; by <= by1; ++by) {
    for (std::int32_t bz = bz0; bz <= bz1; ++bz) {
      for (std::int32_t bx = bx0; bx <= bx1; ++bx) {
        const BrickView v = cache.get(bx, by, bz);
        if (v.isUniform()) {
          if (lut.collides[v.uniformMaterial()]) return true;
          continue;
        }
        const std::int32_t ox = bx * kBrickSize, oy = by * kBrickSize, oz = bz * kBrickSize;
        const int lo[3] = {(x0 > ox ? x0 : ox) - ox, (y0 > oy ? y0 : oy) - oy, (z0 > oz ? z0 : oz) - oz};
        const int hi[3] = {(x1 < ox + kBrickSize ? x1 : ox + kBrickSize) - ox,
                           (y1 < oy + kBrickSize ? y1 : oy + kBrickSize) - oy,
                           (z1 < oz + kBrickSize ? z1 : oz + kBrickSize) - oz};
        if (const CollisionMask* m = cache.mask(bx, by, bz)) {
          // Rows x in [lo.x, hi.x) for every y in [lo.y, hi.y), then the z slices.
          const std::uint64_t xbits = ((1u << (hi[0] - lo[0])) - 1u) << lo[0];
          std::uint64_t rows = 0;
          for (int y = lo[1]; y < hi[1]; ++y) rows |= xbits << (8 * y);
          std::uint64_t any = 0;
          for (int z = lo[2]; z < hi[2]; ++z) any |= m->slice[z] & rows;
          if (any) return true;
          continue;
        }
        // Sweeps test one-voxel-thick layers: put the longest axis innermost so the
        // inner loop runs (and predicts) well, whichever axis the layer is across.
        static constexpr int kStride[3] = {1, kBrickSize, kBrickSize * kBrickSize};
        int inner = 0;
        for (int a = 1; a < 3; ++a) {
          if (hi[a] - lo[a] > hi[inner] - lo[inner]) inner = a;
        }
        const int o1 = inner == 0 ? 1 : 0, o2 = inner == 2 ? 1 : 2;
        const int innerStride = kStride[inner];
        const int innerCount = hi[inner] - lo[inner];
        for (int u = lo[o2]; u < hi[o2]; ++u) {
          for (int w = lo[o1]; w < hi[o1]; ++w) {
            int i = u * kStride[o2] + w * kStride[o1] + lo[inner] * innerStride;
            for (int n = 0; n < innerCount; ++n, i += innerStride) {
              if (lut.collides[v.at(i)]) return true;
            }
          }
        }
      }
    }
  }
  return false;
}

// Moves box along axis by delta, stopping at the first colliding voxel layer.
// Returns the distance actually moved; sets blocked when stopped short.
std::int32_t sweepAxis(BrickCache& cache, const MaterialLut& lut, Box& box, int axis, std::int32_t delta,
                       bool& blocked) noexcept {
  blocked = false;
  if (delta == 0) return 0;
  const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
  const std::int32_t c1lo = floorVoxel(box.lo[a1]), c1hi = ceilVoxel(box.hi[a1]);
  const std::int32_t c2lo = floorVoxel(box.lo[a2]), c2hi = ceilVoxel(box.hi[a2]);
  auto layerCollides = [&](std::int32_t c) {
    std::int32_t lo[3], hi[3];
    lo[axis] = c;
    hi[axis] = c + 1;
    lo[a1] = c1lo;
    hi[a1] = c1hi;
    lo[a2] = c2lo;
    hi[a2] = c2hi;
    return regionCollides(cache, lut, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
  };
  // The layers the leading face enters, nearest first: [first, last] moving up the
  // axis, [last, first] moving down. Test them as one slab first (the common, free
  // case reads each brick once), then layer by layer to find the first blocker.
  std::int32_t moved = delta;
  const std::int32_t lead = delta > 0 ? box.hi[axis] : box.lo[axis];
  const std::int32_t target = lead + delta;
  const std::int32_t first = delta > 0 ? ceilVoxel(lead) : floorVoxel(lead) - 1;
  const std::int32_t last = delta > 0 ? floorVoxel(target - 1) : floorVoxel(target);
  const std::int32_t layers = delta > 0 ? last - first + 1 : first - last + 1;
  if (layers <= 0) {
    // Still inside the current voxel layer: nothing new to test.
  } else {
    auto slabCollides = [&](std::int32_t a, std::int32_t b) {  // layers [a, b]
      std::int32_t lo[3], hi[3];
      lo[axis] = a;
      hi[axis] = b + 1;
      lo[a1] = c1lo;
      hi[a1] = c1hi;
      lo[a2] = c2lo;
      hi[a2] = c2hi;
      return regionCollides(cache, lut, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
    };
    const bool anyHit = layers == 1 ? layerCollides(first)
                                    : (delta > 0 ? slabCollides(first, last) : slabCollides(last, first));
    if (anyHit) {
      const int step = delta > 0 ? 1 : -1;
      for (std::int32_t c = first, n = 0; n < layers; c += step, ++n) {
        if (layers == 1 || layerCollides(c)) {
          moved = delta > 0 ? c * kV - lead : (c + 1) * kV - lead;
          blocked = true;
          break;
        }
      }
    }
  }
  box.lo[axis] += moved;
  box.hi[axis] += moved;
  return moved;
}

Vec3i feetOf(const Box& b) { return {b.lo[0] + kPlayerHalfWidth, b.lo[1], b.lo[2] + kPlayerHalfWidth}; }

MaterialId voxelAt(BrickCache& cache, std::int32_t x, std::int32_t y, std::int32_t z) noexcept {
  const BrickView v = cache.get(x >> kBrickShift, y >> kBrickShift, z >> kBrickShift);
  return v.isUniform() ? v.uniformMaterial() : v.get(x & 7, y & 7, z & 7);
}

// The colliding material under the feet: the voxel below the centre, else below
// the box's corners (standing on an edge).
MaterialId surfaceUnder(BrickCache& cache, const MaterialLut& lut, const Box& b) noexcept {
  const std::int32_t y = floorVoxel(b.lo[1]) - 1;
  const std::int32_t xs[3] = {floorVoxel((b.lo[0] + b.hi[0]) / 2), floorVoxel(b.lo[0]), floorVoxel(b.hi[0] - 1)};
  const std::int32_t zs[3] = {floorVoxel((b.lo[2] + b.hi[2]) / 2), floorVoxel(b.lo[2]), floorVoxel(b.hi[2] - 1)};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      MaterialId m = voxelAt(cache, xs[i], y, zs[j]);
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
  Box b = boxAt(feet, height);
  BrickCache cache(world, lut, nullptr, brickOf(voxelOf(feet)));
  return regionCollides(cache, lut, floorVoxel(b.lo[0]), floorVoxel(b.lo[1]), floorVoxel(b.lo[2]), ceilVoxel(b.hi[0]),
                        ceilVoxel(b.hi[1]), ceilVoxel(b.hi[2]));
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
  BrickCache cache(world, lut, masks, BrickCoord{((s.position.x - kPlayerHalfWidth) >> (kUnitShift + kBrickShift)) - 1,
                                     (s.position.y >> (kUnitShift + kBrickShift)) - 2,
                                     ((s.position.z - kPlayerHalfWidth) >> (kUnitShift + kBrickShift)) - 1});

  // Crouch: standing up needs room for the full box.
  if (wantCrouch) {
    s.crouching = true;
  } else if (s.crouching) {
    const Box full = boxAt(s.position, kPlayerHeight);
    if (!regionCollides(cache, lut, floorVoxel(full.lo[0]), floorVoxel(full.lo[1]), floorVoxel(full.lo[2]),
                        ceilVoxel(full.hi[0]), ceilVoxel(full.hi[1]), ceilVoxel(full.hi[2]))) {
      s.crouching = false;
    }
  }
  const std::int32_t height = s.crouching ? kPlayerCrouchHeight : kPlayerHeight;

  // Swimming: is the waist in a liquid?
  const bool wasSwimming = in.swimming;
  s.swimming = lut.liquid[voxelAt(cache, floorVoxel(s.position.x), floorVoxel(s.position.y + kWaistHeight),
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
  Box box = boxAt(s.position, height);
  const Box start = box;
  bool bx = false, bz = false;
  std::int32_t mx = sweepAxis(cache, lut, box, 0, s.velocity.x, bx);
  std::int32_t mz = sweepAxis(cache, lut, box, 2, s.velocity.z, bz);
  if ((bx || bz) && (in.onGround || s.swimming)) {
    Box stepped = start;
    bool bu = false, sx = false, sz = false, bd = false;
    std::int32_t up = sweepAxis(cache, lut, stepped, 1, kStepUpHeight, bu);
    std::int32_t smx = sweepAxis(cache, lut, stepped, 0, s.velocity.x, sx);
    std::int32_t smz = sweepAxis(cache, lut, stepped, 2, s.velocity.z, sz);
    sweepAxis(cache, lut, stepped, 1, -up, bd);
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
  sweepAxis(cache, lut, box, 1, s.velocity.y, by);
  bool grounded = false;
  if (by) {
    if (s.velocity.y < 0) grounded = true;
    s.velocity.y = 0;
  } else if (in.onGround && !jumped && !s.swimming && s.velocity.y <= 0) {
    // Walking down a slope: follow the ground down ledges up to the step height.
    Box probe = box;
    bool bd = false;
    sweepAxis(cache, lut, probe, 1, -kStepUpHeight, bd);
    if (bd) {
      box = probe;
      grounded = true;
      s.velocity.y = 0;
    }
  }
  s.onGround = grounded;
  s.position = feetOf(box);

  // Events.
  if (grounded) s.surface = surfaceUnder(cache, lut, box);
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
