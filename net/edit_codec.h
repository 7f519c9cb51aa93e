// Edits on the wire. A StepBatch's `edits` (encodeStepEdits) holds, per interest
// cell the client follows, that cell's part of the step's follower edit log
// (sim::followerEdits: voxel edits, brick fills and fire sweep visits) grouped by
// brick (encodeEdits), with the cell's hash. Only what a mirror needs travels: the
// new material (`before` is not sent). Compression is the message's (a Compressed
// envelope around the whole StepBatch, net/wire.h): one zstd frame per step.
//
// Format (little-endian; varint = LEB128, 7 bits a byte, low first, at most 5
// bytes; zigzag maps 0, -1, 1, -2 .. to 0, 1, 2, 3 ..; deltas in 32-bit wrapping
// arithmetic).
// Step edits, per cell, strictly ascending (x, then z):
//   varint zigzag(cell x minus the previous cell's; the first cell's minus 0)
//   varint zigzag(cell z, likewise)
//   u64 the cell's hash after the step
//   varint length (at least 1), then length bytes: the cell's edit groups
// Edit groups (encodeEdits), per group:
//   u8 kind (0 voxels, 1 brick fill, 2 sweep)
//   3 x varint zigzag(brick x, y, z minus the previous group's; the first minus 0)
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

/// Most voxel edits a client applies from one step (a sweep counts its positions:
/// editWeight); the server's busiest steps stay below 4,000.
inline constexpr std::size_t kMaxStepEdits = std::size_t{1} << 20;

/// One cell's part of a step: its groups (encodeEdits) and its hash after the step.
struct CellEdits {
  sim::CellCoord cell;
  std::uint64_t hash = 0;
  std::span<const std::uint8_t> edits;
};

/// Encodes edits as groups into out (cleared first). Allocates in out.
void encodeEdits(std::span<const sim::EditRecord> edits, std::vector<std::uint8_t>& out);

/// Decodes groups into out (cleared first): records with kind, coordinates, `after`
/// (and a sweep's from and to) set, `before` = kAir. Errors on any truncation, bad
/// kind, count, index, position or brick coordinate, or above maxRecords voxel
/// edits (editWeight: that bounds the work of applying them). Never reads outside
/// bytes.
sim::Result<void> decodeEdits(std::span<const std::uint8_t> bytes, std::vector<sim::EditRecord>& out,
                              std::size_t maxRecords = kMaxStepEdits);

/// The voxel edits `edits` stand for: one per voxel edit and fill, a sweep's positions.
std::size_t editWeight(std::span<const sim::EditRecord> edits) noexcept;

/// Encodes a step's cells (ascending, each with edits) into out (cleared first).
/// Allocates in out.
void encodeStepEdits(std::span<const CellEdits> cells, std::vector<std::uint8_t>& out);

/// Splits step edits into cells (cleared first; their spans point into bytes).
/// Errors on a truncated or empty cell, or cells out of order. Never reads outside
/// bytes.
sim::Result<void> decodeStepEdits(std::span<const std::uint8_t> bytes, std::vector<CellEdits>& cells);

}  // namespace loam::net
