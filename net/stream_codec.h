// The ordered stream on the wire (protocol 18): a raw datagram on kChannelUnreliable
// (the only thing a server sends there) instead of a FlatBuffers Stream table. An
// idle player gets about 17 Stream datagrams a second, most with one small item; the
// table's vtables, offsets, the union envelope and the 8-byte alignment of each
// item's message cost about 80 bytes a datagram, more than the items themselves.
//
// Format (varint = LEB128; docs/PROTOCOL.md, The ordered stream), one or more items,
// ascending by sequence, each:
//   varint sequence: the first item's own (>= 1); each later one's gap to the item
//          before (>= 1; the sum stays within 32 bits)
//   varint full_state: 0 = a message follows; N = the mark of the client's N-th full
//          CellState (which travels reliably), nothing follows
//   if full_state is 0: varint byte count (>= 1), then one whole ServerMessage
// Nothing may follow the last item.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/result.h"

namespace loam::net {

/// One item of a Stream datagram (views of the sender's message or of the datagram).
struct StreamItemView {
  std::uint32_t sequence = 0;
  std::uint32_t fullState = 0;             ///< not 0: a mark, and message is empty
  std::span<const std::uint8_t> message;  ///< a whole ServerMessage when not a mark
};

/// The most an item adds beside its message: three 5-byte varints.
inline constexpr std::size_t kMaxStreamItemHeaderBytes = 15;

/// Appends one item to a datagram being built; `previous` is the sequence of the item
/// appended before it to the same datagram, 0 for the first. item.sequence > previous,
/// and a message item's message is not empty.
void appendStreamItem(std::vector<std::uint8_t>& out, std::uint32_t previous, const StreamItemView& item);

/// Decodes one datagram into `items` (cleared; the views are of `bytes`). Errors name
/// what is wrong: no item, truncation, an over-long varint, sequence 0 or a gap of 0,
/// a sequence past 32 bits, a message item of 0 bytes. Allocates only `items`' growth,
/// at most one item per three bytes.
sim::Result<void> decodeStream(std::span<const std::uint8_t> bytes, std::vector<StreamItemView>& items);

}  // namespace loam::net
