// Edit log on the wire: a step's sim::EditRecord list, grouped by brick in order of
// first appearance, then zstd-compressed when that makes it smaller. Only what a
// mirror needs travels: the new material (`before` is not sent).
//
// Format (little-endian), before the optional compression:
//   u8 flags (bit0: the rest is zstd), then per group:
//   i32 brick x, y, z; u8 kind (0 voxels, 1 brick fill)
//   fill:   u8 material
//   voxels: u16 count (1..512); count x (u16 voxelIndexInBrick, u8 material)
// Applying the decoded list in order gives the same world as applying the original
// edit log: a brick's voxel edits keep their relative order, and a group never
// spans another group's edits to the same brick (a brick seen again after other
// bricks starts a new group only if a fill sits between, or when its group is full
// at 512 entries; see encodeEdits).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/result.h"
#include "sim/systems/streams.h"

namespace loam::net {

/// Encodes edits (appending to out; clears it first). Allocates in out.
void encodeEdits(std::span<const sim::EditRecord> edits, std::vector<std::uint8_t>& out);

/// Decodes into out (cleared first): records with kind, coordinates and `after`
/// set, `before` = kAir. Errors on any truncation, bad kind, count or index, or a
/// decompressed size above maxRecords * 3 + headers (bounds memory on hostile
/// input). Never reads outside bytes.
sim::Result<void> decodeEdits(std::span<const std::uint8_t> bytes, std::vector<sim::EditRecord>& out,
                              std::size_t maxRecords = 1u << 22);

}  // namespace loam::net
