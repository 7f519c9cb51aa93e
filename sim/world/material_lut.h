// MaterialLut: per-material flags as flat 256-entry tables, derived once from the
// material table, for the hot loops of motion, validation and the systems (one
// byte load instead of a table lookup through a struct).
#pragma once

#include <array>
#include <cstdint>

#include "sim/world/voxel.h"

namespace loam::sim {

class MaterialTable;

/// Flat per-material flags. Ids past the table's size are air-like (all false).
struct MaterialLut {
  std::array<std::uint8_t, 256> collides{};   ///< 1: blocks players and animals (solid, not liquid, not foliage)
  std::array<std::uint8_t, 256> liquid{};     ///< 1: swimmable
  std::array<std::uint8_t, 256> diggable{};   ///< 1: a dig removes it (solid or foliage, not liquid, not air)
  std::array<std::uint8_t, 256> placeable{};  ///< 1: a place command may put it (solid, not liquid)
  std::array<std::uint8_t, 256> flammable{};  ///< 1: has fuel and flammability > 0
  MaterialId water = kAir;                    ///< the "water" material (kAir if the table has none)
  std::uint16_t count = 1;                    ///< materials in the table
};

/// Builds the lookup for a table. No allocation.
MaterialLut makeMaterialLut(const MaterialTable& materials) noexcept;

}  // namespace loam::sim
