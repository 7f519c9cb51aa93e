// The small generated world the save and world-database tests save and load: 512 x 256
// x 512 voxels, stone at the bottom, a layer of low hills, marked generated; and the
// commands of the forest-fires server those tests save, restore and step in lockstep.
#pragma once

#include <vector>

#include "sim/save/save.h"
#include "sim/step/step.h"
#include "sim/systems/sim_state.h"
#include "sim/trace/script.h"
#include "sim/world/brick_store.h"

namespace loam::test {

inline const sim::WorldBounds kSaveBounds{{-32, 0, -32}, {32, 32, 32}};
inline const sim::SaveIdentity kSaveId{0x1234abcdULL, 7, 3};

/// The world: ground, a layer of hills, marked generated.
inline sim::BrickStore generateSaveWorld() {
  sim::BrickStore s(kSaveBounds);
  for (int cz = -2; cz < 2; ++cz)
    for (int cx = -2; cx < 2; ++cx) s.fillChunk({cx, 0, cz}, 5);
  sim::MaterialId buf[512];
  for (int bz = -32; bz < 32; ++bz)
    for (int bx = -32; bx < 32; ++bx) {
      for (int i = 0; i < 512; ++i) {
        int x = bx * 8 + (i & 7), y = 128 + ((i >> 3) & 7), z = bz * 8 + (i >> 6);
        int h = 128 + ((x * 3 + z * 5) & 7);
        buf[i] = y < h ? 2 : y == h ? 1 : sim::kAir;
      }
      s.writeBrick({bx, 16, bz}, buf);
    }
  s.markGenerated();
  return s;
}

/// One step's commands of the forest-fires server the state tests save and restore:
/// the script's, plus a server pour every 20 ticks over the clearing (into out, cleared).
inline void forestFiresCommands(const sim::SimState& s, sim::ScriptRunner& runner, std::vector<sim::Command>& out) {
  out.clear();
  runner.commandsFor(s, out);
  if (s.tick % 20 == 5) {
    const std::int32_t top = s.world.bounds().maxBrick.y * sim::kBrickSize - 16;
    const auto k = static_cast<std::int32_t>(s.tick / 20);
    out.push_back(sim::Command{sim::kServerPlayer, static_cast<std::uint32_t>(1000 + k),
                               sim::PourCommand{sim::VoxelCoord{(k % 5) * 12 - 24, top, (k % 3) * 12 + 60},
                                                8 * sim::kWaterPerVoxel}});
  }
}

}  // namespace loam::test
