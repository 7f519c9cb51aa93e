#include "client/input.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace loam::client {

void ToolState::selectMaterial(int index) noexcept {
  if (index >= 0 && index < static_cast<int>(palette.size())) material = index;
}

void ToolState::cycleMaterial(int delta) noexcept {
  const int n = static_cast<int>(palette.size());
  if (n == 0) return;
  material = ((material + delta) % n + n) % n;
}

void ToolState::cycleSize(int delta) noexcept {
  size = std::clamp(size + delta, 0, static_cast<int>(kToolSizes.size()) - 1);
}

sim::MaterialId ToolState::materialId() const noexcept {
  if (palette.empty()) return sim::kAir;
  return palette[static_cast<std::size_t>(material)];
}

const std::string& ToolState::materialName() const noexcept {
  static const std::string kNone = "none";
  if (names.empty()) return kNone;
  return names[static_cast<std::size_t>(material)];
}

ToolState makeToolState(const sim::MaterialTable& table, const sim::MaterialLut& lut) {
  static constexpr const char* kPreferred[] = {"grass", "soil", "sand",  "gravel", "stone", "rock",
                                               "wood",  "planks", "glass", "cobble", "clay", "brick"};
  ToolState t;
  auto add = [&](sim::MaterialId id) {
    if (!lut.placeable[id]) return;
    if (std::find(t.palette.begin(), t.palette.end(), id) != t.palette.end()) return;
    t.palette.push_back(id);
    t.names.push_back(table[id].name);
  };
  for (const char* name : kPreferred)
    if (auto id = table.find(name)) add(*id);
  for (std::size_t i = 1; i < table.size(); ++i) add(static_cast<sim::MaterialId>(i));
  return t;
}

void LookState::turn(double dyaw, double dpitch) noexcept {
  constexpr double kTwoPi = 2 * std::numbers::pi;
  yaw = std::fmod(yaw + dyaw, kTwoPi);
  if (yaw < 0) yaw += kTwoPi;
  constexpr double kLimit = 89.9 * std::numbers::pi / 180.0;
  pitch = std::clamp(pitch - dpitch, -kLimit, kLimit);
}

std::uint16_t yawToBinary(double radians) noexcept {
  double turns = radians / (2 * std::numbers::pi);
  turns -= std::floor(turns);
  return static_cast<std::uint16_t>(static_cast<std::int64_t>(std::llround(turns * 65536.0)) & 0xffff);
}

std::int16_t pitchToBinary(double radians) noexcept {
  const double b = std::clamp(radians / (2 * std::numbers::pi) * 65536.0, -16384.0, 16384.0);
  return static_cast<std::int16_t>(std::lround(b));
}

double binaryToRadians(double binary) noexcept { return binary * (2 * std::numbers::pi) / 65536.0; }

sim::PlayerInput makePlayerInput(const MoveState& move, const LookState& look) noexcept {
  auto axis = [](bool plus, bool minus, float stick) {
    const double v = std::clamp((plus ? 1.0 : 0.0) - (minus ? 1.0 : 0.0) + static_cast<double>(stick), -1.0, 1.0);
    return static_cast<std::int8_t>(std::lround(v * 127.0));
  };
  sim::PlayerInput in;
  in.moveForward = axis(move.forward, move.back, move.stickY);
  in.moveRight = axis(move.right, move.left, move.stickX);
  in.yaw = yawToBinary(look.yaw);
  in.pitch = pitchToBinary(look.pitch);
  in.buttons = static_cast<std::uint8_t>((move.jump ? sim::kButtonJump : 0) | (move.run ? sim::kButtonRun : 0) |
                                         (move.crouch ? sim::kButtonCrouch : 0));
  return in;
}

sim::CommandBody makeToolCommand(ToolAction action, const RayHit& hit, const ToolState& tool) noexcept {
  switch (action) {
    case ToolAction::Dig: return sim::DigCommand{hit.voxel, tool.toolSize()};
    case ToolAction::Place: return sim::PlaceCommand{hit.voxel, hit.face, tool.toolSize(), tool.materialId()};
    case ToolAction::Pour: return sim::PourCommand{hit.before, kPourAmount};
    case ToolAction::Ignite: return sim::IgniteCommand{hit.voxel};
  }
  return sim::IgniteCommand{hit.voxel};
}

bool RepeatTimer::update(bool down, double nowMs) noexcept {
  if (!down) {
    held_ = false;
    return false;
  }
  if (!held_) {
    held_ = true;
    nextMs_ = nowMs + firstDelayMs_;
    return true;
  }
  if (nowMs >= nextMs_) {
    nextMs_ = nowMs + periodMs_;
    return true;
  }
  return false;
}

}  // namespace loam::client
