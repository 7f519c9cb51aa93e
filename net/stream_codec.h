// The ordered stream on the wire (protocol 18): a raw datagram on kChannelUnreliable
// (the only thing a server sends there) instead of a FlatBuffers Stream table. An
// idle player gets about 17 Stream datagrams a second, most with one small item; the
// table's vtables, offsets, the union envelope and the 8-byte alignment of each
// item's message cost about 80 bytes a datagram, more than the items themselves.
// The water of a cell, most of an idle player's items, travels as an item of its own
// (protocol 19): as a CellState message its table and envelope cost about 70 bytes.
//
// Format (varint = LEB128; docs/PROTOCOL.md, The ordered stream), one or more items,
// ascending by sequence, each:
//   varint sequence: the first item's own (>= 1); each later one's gap to the item
//          before (>= 1; the sum stays within 32 bits)
//   u8     kind, then by kind:
//     0 message:   varint byte count (>= 1), one whole ServerMessage
//     1 mark:      varint N (>= 1): the client's N-th full CellState, which travels
//                  reliably, is applied here
//     2 water:     zigzag varints cell x and z, varint raw size (0: the bytes are the
//                  records; else they are one zstd frame of that many bytes), varint
//                  byte count (>= 1), then the cell's water changes (net/water_codec.h)
// Nothing may follow the last item.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/result.h"
#include "sim/world/voxel.h"

namespace loam::net {

enum class StreamItemKind : std::uint8_t {
  Message = 0,  ///< a ServerMessage: StepBatch, ActionResults, SurfaceChanges (possibly Compressed)
  Mark = 1,     ///< stands for a full CellState that comes on the reliable channel
  Water = 2,    ///< a cell's water changes since its last ones
};

/// One item of a Stream datagram (views of the sender's bytes or of the datagram).
struct StreamItemView {
  std::uint32_t sequence = 0;
  StreamItemKind kind = StreamItemKind::Message;
  std::uint32_t fullState = 0;          ///< Mark: the full CellState's number (>= 1)
  sim::CellCoord cell;                  ///< Water: the cell
  std::uint32_t rawSize = 0;            ///< Water: 0, or the records' size when bytes are zstd
  std::span<const std::uint8_t> bytes;  ///< Message: the ServerMessage; Water: the records (packed); Mark: empty
};

/// The most an item adds beside its bytes: a water item's five varints and its kind.
inline constexpr std::size_t kMaxStreamItemHeaderBytes = 26;

/// A cell's water records as a water item carries them: zstd when they are over
/// kCompressAboveBytes and that saves at least 16 bytes (a flood's records shrink by
/// a quarter), else as they are. Writes the item's bytes to `out`; returns its rawSize.
std::uint32_t packWater(std::span<const std::uint8_t> records, std::vector<std::uint8_t>& out);
/// A water item's records: its bytes, or their decompression into `scratch`. Errors
/// on a frame that does not give exactly rawSize bytes, or a rawSize over
/// kMaxServerMessageBytes.
sim::Result<std::span<const std::uint8_t>> unpackWater(const StreamItemView& item, std::vector<std::uint8_t>& scratch);

/// Appends one item to a datagram being built; `previous` is the sequence of the item
/// appended before it to the same datagram, 0 for the first. item.sequence > previous;
/// a message's or water's bytes are not empty, a mark's number is not 0.
void appendStreamItem(std::vector<std::uint8_t>& out, std::uint32_t previous, const StreamItemView& item);

/// Decodes one datagram into `items` (cleared; the views are of `bytes`). Errors name
/// what is wrong: no item, truncation, an over-long varint, sequence 0 or a gap of 0,
/// a sequence past 32 bits, an unknown kind, a mark of 0, a message or water of 0
/// bytes, trailing bytes. Allocates only `items`' growth, at most one item per three
/// bytes.
sim::Result<void> decodeStream(std::span<const std::uint8_t> bytes, std::vector<StreamItemView>& items);

}  // namespace loam::net
