// Edits on the wire. A StepBatch's `edits` (encodeStepEdits) holds, per interest
// cell the client follows, that cell's part of the step's follower edit log
// (sim::followerEdits: voxel edits and brick fills, without the fire's, which the
// client makes itself) grouped by brick, then the cell's fire records
// (sim::FireChange) (encodeEdits), with the cell's hash. Only what a mirror needs
// travels: the new material (`before` is not sent). Compression is the message's (a Compressed
// envelope around the whole StepBatch, net/wire.h): one zstd frame per step.
//
// Format (little-endian; varint = LEB128, 7 bits a byte, low first, at most 5
// bytes; zigzag maps 0, -1, 1, -2 .. to 0, 1, 2, 3 ..; deltas in 32-bit wrapping
// arithmetic).
// Step edits, per cell, strictly ascending (x, then z):
//   varint zigzag(cell x minus the previous cell's; the first cell's minus 0)
//   varint zigzag(cell z, likewise)
//   u64 the cell's hash after the step
//   varint length, then length bytes: the cell's edit groups and fire records (none
//   when only the fire the client makes itself changed the cell: the hash checks it)
// Edit groups, then fire records (encodeEdits), each:
//   u8 kind (0 voxels, 1 brick fill, 2 fire set, 3 fire out)
//   3 x varint zigzag(brick x, y, z minus the previous group's; the first minus 0)
//   fill:     u8 material
//   voxels:   varint count (1..512); count x (u16 voxelIndexInBrick, u8 material)
//   fire set: the burning brick's ignition data (a new cell, or a known one whose
//             burnt result stopped being one material): u8 peak (1..255), varint age
//             (the step's tick minus the ignition tick), varint duration (1..65535,
//             more than age; endTick = ignition tick + duration), u8 uniform (0 or
//             1), then with 1 u8 the material the whole brick becomes
//   fire out: nothing more (the brick stops burning after this step's sweep)
// Applying the decoded list in order gives the same world as applying the original
// edit log: a brick's voxel edits keep their relative order, and a group never
// spans another group's edits to the same brick (a brick seen again after other
// bricks starts a new group only if a fill sits between, or when its group
// is full at 512 entries; see encodeEdits). Fire records are in the step's order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/result.h"
#include "sim/systems/streams.h"

namespace loam::net {

/// Most voxel edits and fire records a client takes from one step; the server's
/// busiest steps stay below 4,000.
inline constexpr std::size_t kMaxStepEdits = std::size_t{1} << 20;

/// One cell's part of a step: its groups (encodeEdits) and its hash after the step.
struct CellEdits {
  sim::CellCoord cell;
  std::uint64_t hash = 0;
  std::span<const std::uint8_t> edits;
};

/// Encodes edits as groups, then the step's fire records (step `tick`), into out
/// (cleared first). Allocates in out.
void encodeEdits(std::span<const sim::EditRecord> edits, std::span<const sim::FireChange> fire, std::uint64_t tick,
                 std::vector<std::uint8_t>& out);

/// Decodes groups into out and fire records into fire (both cleared first): edit
/// records with kind, coordinates and `after` set, `before` = kAir; fire records as
/// of step `tick`. Errors on any truncation, bad kind, count, index, fire field or
/// brick coordinate, or above maxRecords voxel edits and fire records (that bounds
/// the work of applying them). Never reads outside bytes.
sim::Result<void> decodeEdits(std::span<const std::uint8_t> bytes, std::uint64_t tick,
                              std::vector<sim::EditRecord>& out, std::vector<sim::FireChange>& fire,
                              std::size_t maxRecords = kMaxStepEdits);

/// A step's records as the server sends them, by interest cell: each cell's follower
/// edits (sim::followerEdits) in step order (edits in different cells touch different
/// voxels, so only the order within a cell matters), then its fire records. A cell
/// only the fire's own edits changed (followers make them; a sweep reads only its own
/// voxel column) is a cell too, with neither: its hash checks them.
class StepCells {
 public:
  struct Cell {
    sim::CellCoord cell;
    std::span<const sim::EditRecord> edits;
    std::span<const sim::FireChange> fire;
  };
  /// Groups `out`'s records; the cells ascend. Valid until the next call.
  std::span<const Cell> group(const sim::StepOutput& out);

 private:
  std::vector<sim::EditRecord> edits_;
  std::vector<sim::FireChange> fire_;
  std::vector<sim::CellCoord> swept_;
  std::vector<Cell> cells_;
};

/// Encodes a step's cells (ascending, each with edits) into out (cleared first).
/// Allocates in out.
void encodeStepEdits(std::span<const CellEdits> cells, std::vector<std::uint8_t>& out);

/// Splits step edits into cells (cleared first; their spans point into bytes).
/// Errors on a truncated cell, or cells out of order. Never reads outside
/// bytes.
sim::Result<void> decodeStepEdits(std::span<const std::uint8_t> bytes, std::vector<CellEdits>& cells);

}  // namespace loam::net
