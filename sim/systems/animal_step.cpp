// The animal system's step (model in sim/systems/animals.h; contract in
// sim/systems/water.h): per animal, a walker (fox, dog) or a bird, each tick. The
// constants and helpers it shares with init are in sim/systems/internal/animal_support.h.
#include <algorithm>

#include "sim/systems/internal/animal_support.h"
#include "sim/systems/sim_context.h"

namespace loam::sim {

using namespace internal::animal;

namespace {

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

}  // namespace

void stepAnimals(AnimalState& state, SimContext& ctx) {
  if (state.brains.size() != state.animals.size()) return;  // a mirror's state never steps
  AnimalStepper(state, ctx).run();
}

}  // namespace loam::sim
