// Wire helpers: verifying inbound buffers and converting between the FlatBuffers
// records of net/schema/loam.fbs and the simulation's types. Every inbound buffer
// goes through verifyClientMessage / verifyServerMessage before any field is read.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "loam_generated.h"  // flatc output of net/schema/loam.fbs (build tree)
#include "sim/step/commands.h"
#include "sim/systems/animals.h"
#include "sim/systems/events.h"
#include "sim/systems/fire.h"
#include "sim/systems/player.h"
#include "sim/systems/water.h"

namespace loam::net {

/// The verified root, or nullptr when bytes is larger than maxBytes, not a valid
/// ClientMessage (FlatBuffers verifier, depth and table limits) or has no body.
const wire::ClientMessage* verifyClientMessage(std::span<const std::uint8_t> bytes, std::size_t maxBytes);
/// As verifyClientMessage for server messages (clients and bots).
const wire::ServerMessage* verifyServerMessage(std::span<const std::uint8_t> bytes, std::size_t maxBytes);

/// verifyServerMessage, then, for a Compressed message, its decompression into scratch
/// (raw_size at most maxBytes, exactly raw_size produced) and the inner message's
/// verification; nested Compressed is refused. Returns the message to dispatch (never
/// Compressed) or nullptr. Allocates scratch growth only.
const wire::ServerMessage* openServerMessage(std::span<const std::uint8_t> bytes, std::size_t maxBytes,
                                             std::vector<std::uint8_t>& scratch);

/// zstd (level 1) of `data` into `out` when that is at least `margin` bytes smaller;
/// false otherwise (out's content is then unspecified).
bool compressIfSmaller(std::span<const std::uint8_t> data, std::size_t margin, std::vector<std::uint8_t>& out);
/// Decompresses one zstd frame into `out` when the frame declares exactly `rawSize`
/// bytes, rawSize is 1..maxBytes and exactly that many come out; false otherwise. A
/// few bytes claiming maxBytes cannot make it allocate more than the frame declares.
bool decompressExact(std::span<const std::uint8_t> frame, std::size_t rawSize, std::size_t maxBytes,
                     std::vector<std::uint8_t>& out);

/// Compresses a finished server message of `size` bytes into a Compressed message built
/// in `out` (cleared first) when that is smaller; returns false (out untouched) when not.
bool compressServerMessage(const std::uint8_t* data, std::size_t size, flatbuffers::FlatBufferBuilder& out,
                           std::vector<std::uint8_t>& scratch);

wire::InputRec toWire(const sim::PlayerInput& input) noexcept;
sim::PlayerInput fromWire(const wire::InputRec& rec) noexcept;
wire::PlayerStateRec toWire(const sim::PlayerState& state) noexcept;
sim::PlayerState fromWire(const wire::PlayerStateRec& rec) noexcept;
wire::PlayerPoseRec poseToWire(sim::PlayerId id, const sim::PlayerState& state) noexcept;
wire::AnimalRec toWire(const sim::Animal& animal) noexcept;
sim::Animal fromWire(const wire::AnimalRec& rec) noexcept;
/// A voxel coordinate of a record relative to a cell, computed in 64 bits: a hostile
/// CellState can name any int32 cell, and the clamp to int32 lies outside every world
/// (validBounds keeps voxels within +-2^29), so the receiver's bounds check drops it.
std::int32_t clampedVoxel(std::int64_t v) noexcept;
/// A full CellState's burning cells are relative to its interest cell (water's:
/// net/water_codec.h). toWire returns false when the cell lies outside `cell` or its
/// y does not fit (the record is not written then).
bool toWire(const sim::FireChange& burning, sim::CellCoord cell, wire::FireRec& out) noexcept;
sim::FireChange fromWire(const wire::FireRec& rec, sim::CellCoord cell) noexcept;

/// Events: chat events are not EventRecs (they travel as ChatLine); toWire returns
/// false for them. fromWire returns false for an unknown kind or out-of-range field.
bool toWire(const sim::Event& event, wire::EventRec& out) noexcept;
bool fromWire(const wire::EventRec& rec, sim::Event& out) noexcept;

/// True when s is 1..maxBytes bytes with no control bytes (0x00..0x1f, 0x7f): names
/// and chat end up in terminals and logs. False for a missing string.
bool validText(const flatbuffers::String* s, std::size_t maxBytes) noexcept;

/// Actions (edits and chat) are the commands a client sends besides inputs: dig,
/// place, pour, ignite and chat.
bool isAction(const sim::CommandBody& body) noexcept;
/// Builds
/// the Action table for body, the client's action `sequence`, to be applied after
/// input afterInput, into fbb (not finished). Returns a null offset (nothing built) for a command that is not an
/// action (join, leave, input, set time, set weather).
flatbuffers::Offset<wire::Action> encodeAction(flatbuffers::FlatBufferBuilder& fbb, std::uint32_t afterInput,
                                               std::uint32_t sequence, const sim::CommandBody& body);
/// The command of a verified Action. False (out untouched) when the body is missing
/// or a field is out of range: tool size, face, pour amount, chat text.
bool decodeAction(const wire::Action& action, sim::CommandBody& out) noexcept;

/// True when an ActionResultRec holds what a server sends: outcome applied (reason 0)
/// or rejected with a known reason, and a command kind that exists.
bool validActionResult(const wire::ActionResultRec& rec) noexcept;

/// Names of message types for per-type byte counters ("StepBatch", "Snapshot"...).
const char* messageName(wire::ServerBody type) noexcept;
const char* messageName(wire::ClientBody type) noexcept;

}  // namespace loam::net
