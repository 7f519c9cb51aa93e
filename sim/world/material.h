// Materials are data: a table loaded at start from TOML (sim/data/materials.toml),
// indexed by MaterialId. Air is always id 0. Ids follow the order of the file.
//
// File format: one [[material]] table per material, every field required:
//   [[material]]
//   name = "stone"                 # unique, lower case, [a-z0-9_-], 1..31 chars
//   colour = "#7d7d7d"             # sRGB hex
//   density = 2600.0               # kg/m^3
//   hardness = 6.0                 # 0..10 (dig effort scale; 0 = nothing to dig)
//   burn_ticks = 0                 # ticks one voxel burns (60 Hz); 0 = not fuel
//   flammability = 0.0             # 0..1, chance weight of catching fire
//   sound = "stone"                # sound class (SoundClass names, lower case)
//   acoustic_opacity = 1.0         # 0..1, share of sound a brick of it blocks
//   transmission_loss = [45.0, 60.0, 75.0]  # dB per metre at low, mid, high bands
//   solid = true                   # blocks movement
//   liquid = false
//   foliage = false
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/result.h"
#include "sim/world/voxel.h"

namespace loam::sim {

/// Which family of synthesised impact/step sounds a material uses.
enum class SoundClass : std::uint8_t {
  None,     ///< silent (air)
  Soil,     ///< soil, clay, ash
  Grass,    ///< grass cover
  Sand,     ///< sand
  Gravel,   ///< gravel, cobble rubble
  Stone,    ///< stone, rock, cobble
  Wood,     ///< wood, planks, charcoal
  Foliage,  ///< leaves
  Glass,    ///< glass
  Water,    ///< water and other liquids
  Metal,    ///< metal
  Count
};

/// Lower-case name of a sound class as written in material files ("stone").
std::string_view soundClassName(SoundClass c) noexcept;

/// An 8-bit sRGB colour.
struct Rgb8 {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb8&, const Rgb8&) = default;
};

/// Index of the low, mid and high frequency bands in per-band arrays.
enum Band : std::uint8_t { kBandLow = 0, kBandMid = 1, kBandHigh = 2, kBandCount = 3 };

/// One material's properties (plain data).
struct Material {
  std::string name;                 ///< unique name, e.g. "stone"
  Rgb8 colour;                      ///< sRGB
  float density = 0.0f;             ///< kg/m^3
  float hardness = 0.0f;            ///< 0..10 dig-effort scale
  std::uint32_t burnTicks = 0;      ///< ticks one voxel burns at 60 Hz; 0 = not fuel
  float flammability = 0.0f;        ///< 0..1
  SoundClass sound = SoundClass::None;
  float acousticOpacity = 0.0f;     ///< 0..1
  std::array<float, kBandCount> transmissionLossDbPerM{};  ///< dB per metre, low/mid/high
  bool solid = false;               ///< blocks movement
  bool liquid = false;
  bool foliage = false;
};

/// The material table. Immutable after loading; any thread may read it.
class MaterialTable {
 public:
  /// Most materials a table may hold (ids 0..255).
  static constexpr std::size_t kMaxMaterials = 256;

  /// Loads and validates a TOML material file. On failure the error reads
  /// "path:line:column: what is wrong" (or "path: ..." without a position). Allocates.
  static Result<MaterialTable> load(const std::string& path);
  /// As load(), from text; sourceName names it in errors.
  static Result<MaterialTable> loadFromString(std::string_view text, std::string_view sourceName);

  /// The material with id; id must be < size() (LOAM_ASSERT).
  const Material& operator[](MaterialId id) const noexcept;
  /// The id of the material called name, or nullopt. O(n), no allocation.
  std::optional<MaterialId> find(std::string_view name) const noexcept;
  /// Number of materials (>= 1: air is always there).
  std::size_t size() const noexcept { return materials_.size(); }
  /// All materials in id order.
  const std::vector<Material>& materials() const noexcept { return materials_; }

 private:
  std::vector<Material> materials_;
};

}  // namespace loam::sim
