// Water records on the wire: a CellState's sim::WaterChange list, relative to its
// interest cell (256 x 256 voxels in plan). Only what a mirror needs travels: which
// voxel, and the amount it now holds.
//
// Format, records in ascending key order, key = (y + 32768) << 16 | z << 8 | x with x
// and z the voxel within the cell (0..255) and y the voxel's own (int16):
//   LEB128 key step: the first record's key itself, then key - previous key (>= 1)
//   amount: u8 a when a < 255, else 255 then u8 (a - 255), 0 or 1 (kWaterPerVoxel is 256)
// Ordered along x, then z, then y because the voxels a step changes lie in rows of a
// pool or a fall: at the glade's waterfall the step is one byte for most records, 2.2
// bytes a record in all against 6 as structs (docs/PROTOCOL.md, "CellState"). The
// message around it is compressed like any other (Compressed).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/result.h"
#include "sim/systems/water.h"
#include "sim/world/voxel.h"

namespace loam::net {

/// Encodes the records of `water` inside `cell` (clears out first); a voxel outside the
/// cell or with y outside int16 is left out, and of two records for one voxel the later
/// wins. Allocates in out and in per-thread scratch.
void encodeCellWater(sim::CellCoord cell, std::span<const sim::WaterChange> water, std::vector<std::uint8_t>& out);

/// Decodes into out (cleared first), in key order. Errors on a truncated or over-long
/// step, a step of 0 after the first record, a key past 2^32 - 1, an amount above
/// kWaterPerVoxel, or more than maxRecords records. A hostile cell far from every
/// world gives voxels clamped to int32, outside every world's bounds, never wrapped.
sim::Result<void> decodeCellWater(std::span<const std::uint8_t> bytes, sim::CellCoord cell,
                                  std::vector<sim::WaterChange>& out, std::size_t maxRecords = 1u << 22);

}  // namespace loam::net
