#include "bots/bot_script.h"

#include <cmath>
#include <numbers>

#include "sim/world/material.h"
#include "sim/systems/motion.h"
#include "sim/systems/sim_state.h"

namespace loam::bots {

namespace {

enum Ground { kSolid = 0, kAbove = 1, kBurnable = 2 };
constexpr int kStuckTicks = 20;  // no progress for this long while walking: jump (as ScriptRunner)
constexpr double kRandomWalkMetres = 8.0;

// Yaw convention of sim/systems/player.h: 0 faces -z, 16384 = +x. Bots may use doubles:
// the input is quantised before it reaches the simulation.
std::uint16_t yawToward(double dx, double dz) {
  if (dx == 0 && dz == 0) return 0;
  double a = std::atan2(dx, -dz) / (2 * std::numbers::pi) * 65536.0;
  if (a < 0) a += 65536.0;
  return static_cast<std::uint16_t>(static_cast<std::uint32_t>(a + 0.5) & 0xFFFFu);
}

bool due(const sim::ScriptLine& l, std::uint64_t t) {
  if (t < l.at) return false;
  if (l.every == 0) return t == l.at;
  return t <= l.until && (t - l.at) % l.every == 0;
}

}  // namespace

BotScript::BotScript(const sim::Script& script, std::uint32_t index, double arriveMetres)
    : arrive_(sim::unitsFromMetres(arriveMetres)), rng_(0x9E3779B9u ^ index) {
  bool walks = false;
  for (const sim::ScriptLine& l : script.lines) {
    if (l.action == sim::ScriptAction::Join || l.action == sim::ScriptAction::Leave) continue;
    if (!(l.all || (l.who != 0 && l.who == index))) continue;
    if (l.action == sim::ScriptAction::Weather || l.action == sim::ScriptAction::Time) continue;
    if (l.action == sim::ScriptAction::WalkTo) walks = true;
    lines_.push_back(l);
  }
  randomWalk_ = !walks;
}

sim::VoxelCoord BotScript::target(const sim::ScriptPos& p, int ground, const sim::PlayerState& own,
                                  const sim::SimState& world) const {
  std::int32_t x = p.x, z = p.z;
  std::int32_t fromY = INT32_MAX;
  if (p.relative) {
    const double a = own.yaw / 65536.0 * 2 * std::numbers::pi;
    x = own.position.x + static_cast<std::int32_t>(std::lround(p.x * std::sin(a)));
    z = own.position.z - static_cast<std::int32_t>(std::lround(p.x * std::cos(a)));
    fromY = (own.position.y + sim::kPlayerEyeHeight) >> sim::kUnitShift;
  }
  if (!p.onGround) return sim::voxelOf(sim::Vec3i{x, p.y, z});
  // The first colliding (or for ignite flammable) voxel at or below fromY.
  const sim::WorldBounds& b = world.world.bounds();
  const std::int32_t vx = x >> sim::kUnitShift, vz = z >> sim::kUnitShift;
  const std::int32_t top = b.maxBrick.y * sim::kBrickSize - 1;
  std::int32_t gy = b.minBrick.y * sim::kBrickSize - 1;
  for (std::int32_t y = fromY < top ? fromY : top; y >= b.minBrick.y * sim::kBrickSize; --y) {
    const sim::MaterialId m = world.world.get(vx, y, vz);
    if (world.lut.collides[m] || (ground == kBurnable && world.lut.flammable[m])) {
      gy = y;
      break;
    }
  }
  return sim::VoxelCoord{vx, ground == kAbove ? gy + 1 : gy, vz};
}

void BotScript::tick(std::uint64_t t, const sim::PlayerState& own, const sim::SimState* world, BotTick& out) {
  out.input = sim::PlayerInput{};
  out.actions.clear();
  if (!haveHome_) {
    home_ = own.position;
    haveHome_ = true;
  }
  for (const sim::ScriptLine& l : lines_) {
    if (!due(l, t)) continue;
    switch (l.action) {
      case sim::ScriptAction::WalkTo:
        walking_ = true;
        waypoints_ = l.waypoints;
        next_ = 0;
        run_ = l.run;
        crouch_ = l.crouch;
        stuckTicks_ = 0;
        break;
      case sim::ScriptAction::Stop:
        walking_ = false;
        break;
      case sim::ScriptAction::Jump:
        jump_ = true;
        break;
      case sim::ScriptAction::Say:
        out.actions.push_back(sim::ChatCommand{sim::ChatText::from(l.text)});
        break;
      case sim::ScriptAction::Dig:
        if (world) out.actions.push_back(sim::DigCommand{target(l.pos, kSolid, own, *world), static_cast<sim::ToolSize>(l.size)});
        break;
      case sim::ScriptAction::Place:
        if (world) {
          const auto m = world->materials ? world->materials->find(l.material) : std::nullopt;
          out.actions.push_back(sim::PlaceCommand{target(l.pos, kSolid, own, *world), l.face,
                                                  static_cast<sim::ToolSize>(l.size),
                                                  m ? *m : static_cast<sim::MaterialId>(255)});
        }
        break;
      case sim::ScriptAction::Pour:
        if (world) out.actions.push_back(sim::PourCommand{target(l.pos, kAbove, own, *world), static_cast<std::uint32_t>(l.size)});
        break;
      case sim::ScriptAction::Ignite:
        if (world) out.actions.push_back(sim::IgniteCommand{target(l.pos, kBurnable, own, *world)});
        break;
      case sim::ScriptAction::Join:
      case sim::ScriptAction::Leave:
      case sim::ScriptAction::Weather:
      case sim::ScriptAction::Time:
        break;
    }
  }
  if (randomWalk_ && !walking_) {
    // A new random goal within kRandomWalkMetres of home.
    std::uniform_real_distribution<double> d(-kRandomWalkMetres, kRandomWalkMetres);
    sim::ScriptPos p;
    p.x = home_.x + sim::unitsFromMetres(d(rng_));
    p.z = home_.z + sim::unitsFromMetres(d(rng_));
    p.onGround = true;
    waypoints_.assign(1, p);
    next_ = 0;
    walking_ = true;
    stuckTicks_ = 0;
  }
  out.input.yaw = own.yaw;
  if (walking_ && next_ < waypoints_.size()) {
    const sim::ScriptPos& goal = waypoints_[next_];
    const double dx = double(goal.x) - own.position.x, dz = double(goal.z) - own.position.z;
    if (dx * dx + dz * dz <= double(arrive_) * arrive_) {
      if (++next_ >= waypoints_.size()) walking_ = false;
    } else {
      out.input.yaw = yawToward(dx, dz);
      out.input.moveForward = 127;
      if (run_) out.input.buttons |= sim::kButtonRun;
      if (crouch_) out.input.buttons |= sim::kButtonCrouch;
      const double mx = double(own.position.x) - lastPos_.x, mz = double(own.position.z) - lastPos_.z;
      const double still = sim::unitsFromMetres(0.01);
      if (mx * mx + mz * mz < still * still) {
        if (++stuckTicks_ >= kStuckTicks) {
          jump_ = true;
          stuckTicks_ = 0;
          // A random walker that cannot get somewhere picks another goal.
          if (randomWalk_) walking_ = false;
        }
      } else {
        stuckTicks_ = 0;
      }
    }
  }
  if (jump_) {
    out.input.buttons |= sim::kButtonJump;
    jump_ = false;
  }
  lastPos_ = own.position;
}

}  // namespace loam::bots
