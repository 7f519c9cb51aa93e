#include "sim/world/material_lut.h"

#include "sim/world/material.h"

namespace loam::sim {

MaterialLut makeMaterialLut(const MaterialTable& materials) noexcept {
  MaterialLut lut;
  const std::size_t n = materials.size() < 256 ? materials.size() : 256;
  lut.count = static_cast<std::uint16_t>(n);
  for (std::size_t i = 1; i < n; ++i) {
    const Material& m = materials[static_cast<MaterialId>(i)];
    lut.collides[i] = m.solid && !m.liquid;
    lut.liquid[i] = m.liquid;
    lut.diggable[i] = (m.solid || m.foliage) && !m.liquid && m.hardness > 0.0f;
    lut.placeable[i] = m.solid && !m.liquid;
    lut.flammable[i] = m.burnTicks > 0 && m.flammability > 0.0f;
  }
  if (auto w = materials.find("water")) lut.water = *w;
  return lut;
}

}  // namespace loam::sim
