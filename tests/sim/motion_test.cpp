// Player motion: gravity, landing, walking, stepping up, jumping, crouching,
// swimming, and the integer trigonometry it rests on.
#include <doctest/doctest.h>

#include "sim/systems/motion.h"
#include "tests/sim/sim_fixture.h"

using namespace loam::sim;
using loam::test::flatWorld;
using loam::test::mat;

namespace {

struct Runner {
  BrickStore world = flatWorld();
  MaterialLut lut = makeMaterialLut(*loam::test::testMaterials());
  PlayerState s;
  std::uint32_t seq = 0;
  int footsteps = 0, landings = 0, splashes = 0;
  std::int32_t maxY = INT32_MIN;

  void run(int ticks, PlayerInput in) {
    for (int i = 0; i < ticks; ++i) {
      in.sequence = ++seq;
      s = motionStep(s, in, world, lut);
      footsteps += (s.motionEvents & kMotionFootstep) ? 1 : 0;
      landings += (s.motionEvents & kMotionLanded) ? 1 : 0;
      splashes += (s.motionEvents & kMotionSplash) ? 1 : 0;
      if (s.position.y > maxY) maxY = s.position.y;
    }
  }
  void fill(int x0, int y0, int z0, int x1, int y1, int z1, MaterialId m) {
    for (int z = z0; z < z1; ++z)
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) world.set(x, y, z, m);
  }
};

PlayerInput forward(std::uint8_t buttons = 0) {
  PlayerInput in;
  in.moveForward = 127;
  in.buttons = buttons;
  return in;
}

}  // namespace

TEST_CASE("integer sine table and square root are exact") {
  CHECK(sinQ14(0) == 0);
  CHECK(sinQ14(16384) == 16384);
  CHECK(sinQ14(32768) == 0);
  CHECK(sinQ14(49152) == -16384);
  CHECK(cosQ14(0) == 16384);
  CHECK(sinQ14(8192) == 11585);  // 16384 / sqrt(2) = 11585.2
  CHECK(cosQ14(8192) == 11585);
  CHECK(sinQ14(2731) == 4249);  // rounds to step 171 of 4096: 16384 * sin(15.029 deg) = 4248.9
  for (std::uint64_t v : {0ull, 1ull, 2ull, 3ull, 4ull, 99ull, 100ull, 101ull, 1ull << 40, (1ull << 62) + 12345})
  {
    std::uint64_t r = isqrt64(v);
    CHECK(r * r <= v);
    CHECK((r + 1) * (r + 1) > v);
  }
}

TEST_CASE("a falling player lands on the floor once") {
  Runner r;
  r.s.position = {0, unitsFromMetres(2.0), 0};
  r.run(120, PlayerInput{});
  CHECK(r.s.onGround);
  CHECK(r.s.position.y == 0);
  CHECK(r.s.velocity.y == 0);
  CHECK(r.landings == 1);
  CHECK(r.s.surface == mat("stone"));
}

TEST_CASE("walking north covers about 4 m per second with footsteps") {
  Runner r;
  r.run(10, PlayerInput{});  // settle
  const Vec3i start = r.s.position;
  r.run(60, forward());
  const std::int32_t moved = start.z - r.s.position.z;
  CHECK(moved > unitsFromMetres(3.6));
  CHECK(moved <= unitsFromMetres(4.0));
  CHECK(r.s.position.x == start.x);
  CHECK(r.footsteps >= 4);
  CHECK(r.footsteps <= 6);
  Runner run;
  run.run(10, PlayerInput{});
  run.run(60, forward(kButtonRun));
  CHECK(-run.s.position.z > unitsFromMetres(6.0));
}

TEST_CASE("yaw turns the move direction: east is +x") {
  Runner r;
  r.run(5, PlayerInput{});
  PlayerInput in = forward();
  in.yaw = 16384;
  r.run(30, in);
  CHECK(r.s.position.x > unitsFromMetres(1.5));
  CHECK(std::abs(r.s.position.z) < unitsFromMetres(0.01));
}

TEST_CASE("steps up ledges of 25 cm but not 30 cm") {
  Runner low;
  low.fill(-20, 0, -250, 20, 5, -20, mat("stone"));  // 25 cm ledge from z = -1 m northward
  low.run(5, PlayerInput{});
  low.run(90, forward());
  CHECK(low.s.position.z < unitsFromMetres(-2.0));
  CHECK(low.s.position.y == 5 * kUnitsPerVoxel);

  Runner high;
  high.fill(-20, 0, -250, 20, 6, -20, mat("stone"));  // 30 cm
  high.run(5, PlayerInput{});
  high.run(90, forward());
  CHECK(high.s.position.z == -20 * kUnitsPerVoxel + kPlayerHalfWidth);
  CHECK(high.s.position.y == 0);
}

TEST_CASE("walks down slopes without leaving the ground") {
  Runner r;
  // Stairs going down northward: 1 voxel per 4 voxels of run, starting 1 m up.
  for (int i = 0; i < 20; ++i) r.fill(-20, 0, -4 * (i + 1), 20, 20 - i, -4 * i, mat("stone"));
  r.fill(-20, 0, 0, 20, 20, 20, mat("stone"));
  r.s.position = {0, 20 * kUnitsPerVoxel, 10 * kUnitsPerVoxel};
  r.run(5, PlayerInput{});
  REQUIRE(r.s.onGround);
  int airborne = 0;
  for (int i = 0; i < 40; ++i) {
    r.run(1, forward());
    airborne += r.s.onGround ? 0 : 1;
  }
  CHECK(airborne == 0);
  CHECK(r.landings == 0);
  CHECK(r.s.position.y < 15 * kUnitsPerVoxel);
}

TEST_CASE("jumping rises about 1.2 m and lands") {
  Runner r;
  r.run(5, PlayerInput{});
  r.run(1, PlayerInput{.buttons = kButtonJump});
  r.run(90, PlayerInput{});
  CHECK(r.maxY > unitsFromMetres(1.1));
  CHECK(r.maxY < unitsFromMetres(1.35));
  CHECK(r.s.onGround);
  CHECK(r.landings == 1);
}

TEST_CASE("walls block, crouching fits under a 1.6 m ceiling") {
  Runner r;
  r.fill(-20, 32, -80, 20, 40, -20, mat("stone"));  // ceiling at 1.6 m from z = -1 m
  r.run(5, PlayerInput{});
  r.run(60, forward());
  CHECK(r.s.position.z == -20 * kUnitsPerVoxel + kPlayerHalfWidth);  // head blocked
  r.run(60, forward(kButtonCrouch));
  CHECK(r.s.crouching);
  CHECK(r.s.position.z < unitsFromMetres(-2.0));
  r.run(10, PlayerInput{});  // no room to stand
  CHECK(r.s.crouching);
}

TEST_CASE("swimming: buoyant, slower, jump swims up") {
  Runner r;
  r.fill(-60, -60, -60, 60, 0, 60, kAir);
  r.fill(-60, -60, -60, 60, 0, 60, mat("water"));  // 3 m deep pool over the floor
  r.s.position = {0, unitsFromMetres(1.0), 0};
  r.run(40, PlayerInput{});
  CHECK(r.splashes == 1);
  CHECK(r.s.swimming);
  r.run(60, PlayerInput{});
  const std::int32_t sunk = r.s.position.y;
  CHECK(sunk > unitsFromMetres(-3.0));  // sinks slowly, not at free fall
  r.run(90, PlayerInput{.buttons = kButtonJump});
  CHECK(r.s.position.y > sunk);
  const Vec3i before = r.s.position;
  r.run(60, forward());
  CHECK(before.z - r.s.position.z < unitsFromMetres(2.4));
  CHECK(before.z - r.s.position.z > unitsFromMetres(1.0));
}

TEST_CASE("the world's sides and floor are solid") {
  Runner r;
  r.fill(-300, -128, -300, 300, 0, 300, kAir);
  r.s.position = {0, 0, 0};
  r.run(400, PlayerInput{});
  CHECK(r.s.onGround);
  CHECK(r.s.position.y == -128 * kUnitsPerVoxel);
  PlayerInput west = forward(kButtonRun);
  west.yaw = 49152;
  r.run(600, west);
  CHECK(r.s.position.x == -256 * kUnitsPerVoxel + kPlayerHalfWidth);
}

TEST_CASE("motion is a pure function of its inputs") {
  Runner a, b;
  PlayerInput in = forward();
  in.yaw = 12345;
  in.moveRight = -60;
  a.run(200, in);
  b.run(200, in);
  CHECK(a.s == b.s);
}

TEST_CASE("the collision cache never changes a result, also across edits") {
  Runner r;
  // Uneven ground: columns of varying height, so bricks are palette bricks.
  for (int z = -120; z < 120; ++z)
    for (int x = -120; x < 120; ++x) {
      const int h = ((x * 7 + z * 13) & 7) == 0 ? 3 : (((x / 9 + z / 11) & 3));
      for (int y = 0; y < h; ++y) r.world.set(x, y, z, mat(y + 1 == h ? "grass" : "soil"));
    }
  r.world.markGenerated();  // what follows are edits; the cache may hold the rest
  CollisionCache cache;
  PlayerState cached, plain;
  cached.position = plain.position = {0, unitsFromMetres(1.0), 0};
  std::uint32_t seq = 0;
  for (int t = 0; t < 4000; ++t) {
    PlayerInput in = forward(t % 300 < 150 ? kButtonRun : 0);
    in.sequence = ++seq;
    in.yaw = static_cast<std::uint16_t>(t * 97);
    if (t % 40 == 0) in.buttons |= kButtonJump;
    cached = motionStep(cached, in, r.world, r.lut, &cache);
    plain = motionStep(plain, in, r.world, r.lut);
    REQUIRE(cached == plain);
    if (t % 25 == 0) {
      // Edit right in front of the player: bumps appear and vanish under the cache.
      const VoxelCoord v = voxelOf(plain.position);
      for (int i = 0; i < 4; ++i) r.world.set(v.x + i - 2, v.y + (t / 25) % 3, v.z - 3, t % 50 ? mat("stone") : kAir);
    }
    if (std::abs(plain.position.x) > unitsFromMetres(5) || std::abs(plain.position.z) > unitsFromMetres(5)) {
      cached.position = plain.position = {0, unitsFromMetres(1.0), 0};
    }
  }
  CHECK(cache.hits() > 1000);
}
