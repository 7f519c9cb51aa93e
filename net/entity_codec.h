// Entity records on the wire (protocol 15): a Snapshot's players and animals that
// changed since the client's baseline, each as the change of its fields against the
// record of the same id the baseline holds, or against a record of zeros when it holds
// none (an entity new to the client). Exact: the client rebuilds the record the
// server has, bit for bit.
//
// Format, records in ascending id order (varint = LEB128, at most 5 bytes):
//   varint id step: the first record's id itself, then id - previous id (>= 1)
//   varint mask: bit i set = field i changed and follows; no other bits
//   per field set, in field order: varint zigzag(now - base) in the field's width,
//     wrapping (a 32-bit field's change as an int32, a 16-bit's as an int16, an
//     8-bit's as an int8; a larger varint is malformed)
// Fields:
//   PlayerPoseRec: px, py, pz (32), yaw (16), pitch (16), flags (8)
//   AnimalRec:     px, py, pz, vx, vy, vz (32), yaw (16), mode (8), species (8)
// A player walking at 4 m/s seen at 30 Hz takes about 8 bytes instead of 24: the id
// step, the mask, two 2-byte position changes, and its yaw when it turns.
//
// A Snapshot's sounds (EventRecs) use the same field changes without ids, each against
// the list's previous record (the first against zeros):
//   EventRec: x, y, z, actor, value (32), material, kind, actor_kind, small (8)
// A footstep after another player's takes about 9 bytes instead of 24.
//
// A Snapshot's own player (PlayerStateRec) is one mask and its changes against the
// baseline's own (zeros without a baseline); last_input is not a field, own_input
// carries it:
//   PlayerStateRec: px, py, pz, vx, vy, vz, stride (32), yaw, pitch (16), flags,
//                   motion_events, surface (8), impact_speed (32)
// A player walking straight takes about 7 bytes instead of 44.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "loam_generated.h"  // flatc output of net/schema/loam.fbs (build tree)
#include "sim/core/result.h"

namespace loam::net {

/// Bytes a record takes after an id step of `idStep`, against `base` (nullptr: zeros).
template <class Rec>
std::size_t entityRecordBytes(std::uint32_t idStep, const Rec* base, const Rec& now) noexcept;

/// Appends `now` against `base` (nullptr: zeros). idStep is the record's id minus the
/// list's previous id, or its id for the first record.
template <class Rec>
void appendEntityRecord(std::vector<std::uint8_t>& out, std::uint32_t idStep, const Rec* base, const Rec& now);

/// Applies the records in `bytes` to `list` (sorted by id, as is the result): each
/// replaces the entry with its id, computed against it, or is inserted, computed
/// against zeros. Errors on a truncated or over-long varint, ids not ascending or past
/// 2^32 - 1, unknown mask bits, a change too large for its field, or `list` growing past
/// maxEntries; `list` is then left as it was.
template <class Rec>
sim::Result<void> applyEntityRecords(std::span<const std::uint8_t> bytes, std::vector<Rec>& list,
                                     std::size_t maxEntries);

/// Appends `now` against the list's previous record (nullptr for the first: zeros).
void appendEventRecord(std::vector<std::uint8_t>& out, const wire::EventRec* previous, const wire::EventRec& now);

/// Decodes a list of event records into out (cleared first). Errors as
/// applyEntityRecords does (ids apart), or on more than maxRecords records.
sim::Result<void> decodeEventRecords(std::span<const std::uint8_t> bytes, std::vector<wire::EventRec>& out,
                                     std::size_t maxRecords);

/// Appends the own record's changes against `base` (nullptr: zeros), last_input left
/// out. With a base and nothing changed it appends nothing and returns false.
bool appendOwnChanges(std::vector<std::uint8_t>& out, const wire::PlayerStateRec* base,
                      const wire::PlayerStateRec& now);

/// The own record from its changes against `base` (nullptr: zeros) with `lastInput`.
/// Errors as applyEntityRecords does, and on trailing bytes.
sim::Result<wire::PlayerStateRec> decodeOwnChanges(std::span<const std::uint8_t> bytes,
                                                   const wire::PlayerStateRec* base, std::uint32_t lastInput);

}  // namespace loam::net
