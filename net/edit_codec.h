// Edit log on the wire: a step's follower edit log (sim::followerEdits: voxel
// edits, brick fills and fire sweep visits), grouped by brick in order of first
// appearance, then zstd-compressed when that makes it smaller. Only what a mirror
// needs travels: the new material (`before` is not sent).
//
// Format (little-endian; varint = LEB128, 7 bits a byte, low first, at most 5
// bytes; zigzag maps 0, -1, 1, -2 .. to 0, 1, 2, 3 ..), before the optional
// compression:
//   u8 flags (bit0: the rest is zstd), then per group:
//   u8 kind (0 voxels, 1 brick fill, 2 sweep)
//   3 x varint zigzag(brick x, y, z minus the previous group's; the first group's
//     minus 0), in 32-bit wrapping arithmetic
//   fill:   u8 material
//   voxels: varint count (1..512); count x (u16 voxelIndexInBrick, u8 material)
//   sweep:  varint from (0..511); varint length (1..512 - from): positions
//           [from, from + length) of the brick's keyed fire order (sim::expandSweep)
// Applying the decoded list in order gives the same world as applying the original
// edit log: a brick's voxel edits keep their relative order, and a group never
// spans another group's edits to the same brick (a brick seen again after other
// bricks starts a new group only if a fill or sweep sits between, or when its group
// is full at 512 entries; see encodeEdits). A sweep also reads the voxels under
// the ones it burns, so it closes the open group of the brick below as well.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/result.h"
#include "sim/systems/streams.h"

namespace loam::net {

/// Encodes edits (appending to out; clears it first). Allocates in out.
void encodeEdits(std::span<const sim::EditRecord> edits, std::vector<std::uint8_t>& out);

/// Decodes into out (cleared first): records with kind, coordinates, `after` (and
/// a sweep's from and to) set, `before` = kAir. Errors on any truncation, bad kind,
/// count, index, position or brick coordinate, above maxRecords voxel edits (a
/// sweep counts the positions it visits: that bounds the work of applying it), or
/// a decompressed size above 20 bytes a record (bounds memory on hostile input).
/// Never reads outside bytes.
sim::Result<void> decodeEdits(std::span<const std::uint8_t> bytes, std::vector<sim::EditRecord>& out,
                              std::size_t maxRecords = 1u << 22);

}  // namespace loam::net
