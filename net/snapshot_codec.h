// The Snapshot on the wire (protocol 17): a raw datagram on its own ENet channel,
// kChannelSnapshot, instead of a FlatBuffers message. An idle player's snapshot
// carries a few bytes of news at 30 Hz; as a FlatBuffers table (vtables, offsets,
// the union envelope) it cost about 60 bytes more than that, the larger part of an
// idle player's snapshot bytes.
//
// Format (varint = LEB128; docs/PROTOCOL.md, Snapshot):
//   u8     flags: bit i set = list i follows (0 own, 1 players, 2 players_gone,
//          3 animals, 4 animals_gone, 5 sounds); no other bits
//   varint sequence (>= 1)
//   varint sequence - baseline (0 = no baseline; at most sequence - 1)
//   varint tick (64-bit)
//   varint own_input
//   per list present, in bit order:
//     own, players, animals, sounds: varint byte count (>= 1), then the bytes
//       (field changes, net/entity_codec.h)
//     players_gone, animals_gone: varint count (1..kMaxEntitiesInView), then each id
//       as a varint
// Nothing may follow the last list.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/result.h"

namespace loam::net {

/// One Snapshot: its header and its lists (views: of the server's vectors when
/// encoding, of the datagram and the decoder's storage when decoding).
struct SnapshotMessage {
  std::uint32_t sequence = 0;  ///< per client, from 1
  std::uint32_t baseline = 0;  ///< the acknowledged snapshot it is relative to (0 = none)
  std::uint64_t tick = 0;      ///< server tick of the values
  std::uint32_t ownInput = 0;  ///< the input acknowledged: the own player's last_input
  std::span<const std::uint8_t> own;      ///< PlayerStateRec changes; empty when none changed
  std::span<const std::uint8_t> players;  ///< PlayerPoseRec changes
  std::span<const std::uint32_t> playersGone;  ///< left the client's view since the baseline
  std::span<const std::uint8_t> animals;  ///< AnimalRec changes
  std::span<const std::uint32_t> animalsGone;  ///< animals that left the view
  std::span<const std::uint8_t> sounds;   ///< EventRec changes, the nearest kMaxSoundsPerSnapshot
};

/// Appends m's encoding to out. m.sequence is >= 1 and m.baseline < m.sequence.
void appendSnapshot(std::vector<std::uint8_t>& out, const SnapshotMessage& m);

/// Decodes one datagram. The lists view `bytes` and `gone` (which holds both gone
/// lists; it is overwritten, and must not change while the result is used). Errors
/// name what is wrong: truncation, an over-long varint, unknown flag bits, a present
/// list that is empty, a gone list over kMaxEntitiesInView, sequence 0, a baseline at
/// or past the sequence, trailing bytes. Allocates only `gone`'s growth.
sim::Result<SnapshotMessage> decodeSnapshot(std::span<const std::uint8_t> bytes, std::vector<std::uint32_t>& gone);

}  // namespace loam::net
