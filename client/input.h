// Player controls without SDL: the selected tool (material palette, size), the
// look angles, the movement keys turned into a PlayerInput, tool actions turned
// into commands, and a repeat timer for held buttons. client/window_input.cpp maps SDL
// keyboard, mouse and gamepad events onto these, so tests can drive them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/voxel_ray.h"
#include "sim/step/commands.h"
#include "sim/world/material.h"
#include "sim/world/material_lut.h"
#include "sim/systems/water.h"

namespace loam::client {

/// Tool sizes offered, smallest first (5, 10, 20, 40 cm).
inline constexpr std::array<sim::ToolSize, 4> kToolSizes{sim::ToolSize::Cm5, sim::ToolSize::Cm10,
                                                         sim::ToolSize::Cm20, sim::ToolSize::Cm40};

/// The selected material and tool size.
struct ToolState {
  std::vector<sim::MaterialId> palette;  ///< placeable materials, in the order keys 1..9 pick them
  std::vector<std::string> names;        ///< parallel to palette
  int material = 0;                      ///< index into palette
  int size = 1;                          ///< index into kToolSizes (10 cm)

  /// Palette slot index (0-based), ignored when out of range.
  void selectMaterial(int index) noexcept;
  /// Next / previous palette entry (wraps).
  void cycleMaterial(int delta) noexcept;
  /// Bigger / smaller tool (clamped).
  void cycleSize(int delta) noexcept;
  sim::MaterialId materialId() const noexcept;
  const std::string& materialName() const noexcept;
  sim::ToolSize toolSize() const noexcept { return kToolSizes[static_cast<std::size_t>(size)]; }
  /// Centimetres of the current tool size.
  int sizeCm() const noexcept { return static_cast<int>(toolSize()) * 5; }
};

/// The palette: grass, soil, sand, gravel, stone, rock, wood, planks, glass, cobble,
/// clay, brick (those the table has and lut marks placeable), then any other
/// placeable material. Allocates.
ToolState makeToolState(const sim::MaterialTable& table, const sim::MaterialLut& lut);

/// Movement held this tick (keyboard, or gamepad buttons mapped onto it).
struct MoveState {
  bool forward = false, back = false, left = false, right = false;
  bool jump = false, run = false, crouch = false;
  float stickX = 0, stickY = 0;  ///< gamepad left stick, -1..1 (y + forward); added to the keys
};

/// Look angles in radians (the renderer's convention; yaw 0 north, clockwise).
struct LookState {
  double yaw = 0;
  double pitch = 0;
  /// Adds a mouse / stick motion in radians (right and down positive, as SDL's
  /// relative motion); pitch is clamped to +-89.9 degrees.
  void turn(double dyaw, double dpitch) noexcept;
};

/// One tick of input (sequence is assigned by ClientConnection::sendInput).
sim::PlayerInput makePlayerInput(const MoveState& move, const LookState& look) noexcept;

/// Binary angle from radians (wrapping) and back.
std::uint16_t yawToBinary(double radians) noexcept;
std::int16_t pitchToBinary(double radians) noexcept;
double binaryToRadians(double binary) noexcept;

enum class ToolAction : std::uint8_t { Dig, Place, Pour, Ignite };

/// The command an action at hit sends: dig at the voxel (radius = size), place on
/// its face (material and size), pour a litre-ish of water into the voxel in front
/// of the face, ignite the voxel. Allocation-free.
sim::CommandBody makeToolCommand(ToolAction action, const RayHit& hit, const ToolState& tool) noexcept;

/// Water units a pour adds (8 voxels' worth).
inline constexpr std::uint32_t kPourAmount = 8 * 256;

/// Auto-repeat for a held button: fires on the press, then every periodMs after a
/// first delay, so holding dig does not flood the server's rate limiter.
class RepeatTimer {
 public:
  explicit RepeatTimer(double firstDelayMs = 300, double periodMs = 180) noexcept
      : firstDelayMs_(firstDelayMs), periodMs_(periodMs) {}
  /// Feed the button state each frame; true when the action should fire now.
  bool update(bool down, double nowMs) noexcept;

 private:
  double firstDelayMs_, periodMs_;
  bool held_ = false;
  double nextMs_ = 0;
};

}  // namespace loam::client
