// Protocol constants shared by server, client and bots: version, ENet channels,
// size limits, client and command kinds, reject codes. docs/PROTOCOL.md is the prose
// version of this file and net/schema/loam.fbs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sim/core/fixed_point.h"

namespace loam::net {

/// Bumped on any change to net/schema/loam.fbs or to a rule in docs/PROTOCOL.md.
inline constexpr std::uint32_t kProtocolVersion = 19;  // 6: edits by interest (StepBatch.cells, full
                                                      // CellStates carry bricks; Hello.reach_metres)
                                                      // 7: ColumnHashes (generation checks)
                                                      // 8: Action.sequence, ActionResults (predicted edits)
                                                      // 9: the ordered stream (Stream, Inputs.stream_ack)
                                                      // 10: 16 actions per Inputs; stream copies by loss;
                                                      // far animals at 5 Hz; empty snapshot lists absent
                                                      // 11: CellState.water as bytes (net/water_codec.h)
                                                      // 12: edit groups with varint brick deltas; fire
                                                      // sweeps as records (net/edit_codec.h)
                                                      // 13: SurfaceChanges (far edits, a Stream item)
                                                      // 14: clients burn their fire cells themselves:
                                                      // fire records with the step's edits, no sweeps;
                                                      // FireRec carries ignition data, full only
                                                      // 15: Snapshot own, players, animals and
                                                      // sounds as field changes
                                                      // (net/entity_codec.h); the nearest 12 sounds
                                                      // 16: full clients join at Welcome, beside
                                                      // their generation; WorldReady ends it
                                                      // 17: Snapshot raw on kChannelSnapshot
                                                      // (net/snapshot_codec.h)
                                                      // 18: the Stream raw on kChannelUnreliable
                                                      // (net/stream_codec.h)
                                                      // 19: water items in the Stream instead of
                                                      // incremental CellStates

/// ENet channels.
inline constexpr std::uint8_t kChannelReliable = 0;    ///< ordered, reliable: join, full cell states, actions
/// Unreliable: the client's Inputs (FlatBuffers); the server's Stream datagrams, raw
/// (net/stream_codec.h) and unsequenced.
inline constexpr std::uint8_t kChannelUnreliable = 1;
/// Sequenced, unreliable: Snapshots, raw (net/snapshot_codec.h).
inline constexpr std::uint8_t kChannelSnapshot = 2;
inline constexpr std::size_t kChannelCount = 3;

/// Largest server message a client accepts and the server sends (both ENet hosts are
/// set to it: net/enet_support.h). The join state travels in JoinChunks, so the big
/// ones are a step's edits and full CellStates.
inline constexpr std::size_t kMaxServerMessageBytes = std::size_t{32} << 20;
/// Largest join state (JoinChunk.total) a client accepts and the server streams.
/// Largest decompressed save a full CellState's bricks may hold (a client refuses more).
inline constexpr std::uint64_t kMaxCellBricksBytes = std::uint64_t{64} << 20;
inline constexpr std::size_t kMaxJoinStateBytes = std::size_t{512} << 20;
/// Snapshots each side keeps for delta baselines (server: sent; client: received).
inline constexpr std::uint32_t kSnapshotRing = 32;

/// Players, and animals, a client's snapshot view holds at most (the nearest): bounds
/// the ring's memory on both sides.
inline constexpr std::size_t kMaxEntitiesInView = 256;

/// Movement sounds in one snapshot, at most: 360 a second, the nearest; a crowd's
/// footsteps beyond that would overflow the client's mixer anyway (64 real voices).
inline constexpr std::size_t kMaxSoundsPerSnapshot = 12;

/// Server messages larger than this are sent as Compressed when zstd makes them smaller.
inline constexpr std::size_t kCompressAboveBytes = 256;

/// The ordered stream (docs/PROTOCOL.md, The ordered stream): steps, incremental cell
/// states and action results, sent unreliably and resent by the server until the
/// client acknowledges them (Inputs.stream_ack), so a lost datagram costs a tick, not
/// a retransmission timeout that holds every later message.
inline constexpr std::size_t kStreamDatagramBytes = 1200;  ///< a Stream holds items up to this (one bigger item alone)
/// Items unacknowledged beyond this many are never sent (the client holds at most
/// this many ahead of what it applied; the server calls such a client too slow).
inline constexpr std::uint32_t kMaxStreamAhead = 16384;
/// A client is sent a StepBatch at least this often (ticks), even when its steps hold
/// nothing for it: its mirror's tick (time of day) follows the server's.
inline constexpr std::uint64_t kStepHeartbeatTicks = 30;
/// Records in one SurfaceChanges at most (the server sends 64; a client refuses more).
inline constexpr std::size_t kMaxSurfaceChanges = 1024;
/// Distinct patches a client keeps from SurfaceChanges (16 MB of them); a hostile
/// server's further ones are refused and counted.
inline constexpr std::size_t kMaxSurfacePatches = std::size_t{1} << 20;

/// Limits the server enforces on what clients send.
inline constexpr std::size_t kMaxClientPacketBytes = 2048;   ///< larger packets are dropped and counted
inline constexpr std::size_t kMaxInputsPerMessage = 16;      ///< Inputs.inputs longer than this is malformed
inline constexpr std::size_t kMaxActionsPerInputs = 16;      ///< Inputs.actions longer than this is malformed
inline constexpr std::size_t kMaxCellsDropped = 128;         ///< CellsDropped.cells longer than this is malformed
inline constexpr std::size_t kMaxColumnHashes = 64;          ///< ColumnHashes.columns longer than this is malformed
inline constexpr std::size_t kMaxQueuedInputs = 120;         ///< per player; older ones are dropped beyond this
inline constexpr std::size_t kMaxQueuedActions = 32;         ///< per player; more are refused (RateLimited)
/// ActionResultRec.outcome.
inline constexpr std::uint8_t kActionApplied = 0;
inline constexpr std::uint8_t kActionRejected = 1;
inline constexpr std::uint32_t kMaxBadMessages = 20;          ///< malformed messages before a disconnect
inline constexpr std::uint32_t kMaxMessagesPerSecond = 400;  ///< per peer; beyond is flooding (dropped, counted)
/// Generation on the client must finish within 2 minutes of Welcome...
inline constexpr std::uint32_t kWorldReadyTimeoutTicks = 120 * sim::kTicksPerSecond;
/// ...a generating client that sends no JoinProgress for this long, or a join stream
/// not acknowledged further for this long, is dropped (docs/PROTOCOL.md, Joining)...
/// (20 s: a lossy link's retransmissions of a reliable JoinProgress back off; 8 s
/// dropped a bot on a 300 ms / 20 % loss link in net_loopback_test.)
inline constexpr std::uint32_t kJoinStallTicks = 20 * sim::kTicksPerSecond;
/// ...and so is a client whose generated_permille does not grow for this long
/// (coarse generators, a bot waiting for a shared world, hashing at the end).
inline constexpr std::uint32_t kJoinNoGrowthTicks = 30 * sim::kTicksPerSecond;
/// A connected peer must say Hello within this.
inline constexpr std::uint32_t kHelloTimeoutTicks = 5 * sim::kTicksPerSecond;
/// Clients send JoinProgress about this often while generating.
inline constexpr double kJoinProgressEveryMs = 1000;

/// Hello.kind: what kind of program connects (the server refuses unknown values).
enum class ClientKind : std::uint8_t {
  Player = 0,    ///< loam-client
  FullBot = 1,   ///< a loam-bots full bot (a ClientConnection with a world)
  SwarmBot = 2,  ///< a loam-bots swarm bot (no world, Hello.wants_world = false)
};
inline constexpr std::uint8_t kClientKindCount = 3;

/// The command kind a CommandRejected event names (EventRec.small): the index of the
/// rejected command in sim::CommandBody (net/wire.cpp checks the two agree).
enum class CommandKind : std::uint8_t {
  Join = 0,
  Leave = 1,
  Input = 2,
  Dig = 3,
  Place = 4,
  Pour = 5,
  Ignite = 6,
  SetTime = 7,
  SetWeather = 8,
  Chat = 9,
  Teleport = 10,
};
inline constexpr std::uint8_t kCommandKindCount = 11;

/// Reject.code values (also the ENet disconnect data).
enum class RejectCode : std::uint16_t {
  None = 0,
  ProtocolMismatch = 1,  ///< Hello.protocol differs
  ServerFull = 2,        ///< max players reached
  BadHello = 3,          ///< missing or invalid name, or a second Hello
  WorldMismatch = 4,     ///< WorldReady hash differs from the server's generated world
  Malformed = 5,         ///< too many malformed messages
  Flooding = 6,          ///< too many messages per second for too long
  Timeout = 7,           ///< no WorldReady in time
  TooSlow = 8,           ///< reliable backlog beyond the cap (the link cannot keep up)
  ShuttingDown = 9,      ///< server is stopping
  Kicked = 10,           ///< an administrator removed the player (text: the reason)
  Banned = 11,           ///< the name or address is banned (text: the reason)
  BadName = 12,          ///< the name breaks the name rules (net/player_name.h; text: which)
  NameTaken = 13,        ///< a connected player has the name (ASCII case folded)
  NameReserved = 14,     ///< a reserved word, only digits, or starts with '#'
  AuthRequired = 15,     ///< the name is claimed, or the server needs an account key: none sent
  AuthFailed = 16,       ///< the key is not the name's, or the AuthProof does not verify
  AuthRateLimited = 17,  ///< too many failed proofs from this address lately: try later
  AddressLimit = 18,     ///< too many peers from this address (ENet disconnect data only)
  JoinRate = 19,         ///< this address connects too often: try later (ENet disconnect data only)
  // 20 is retired (protocol 3 refused full clients on streamed worlds); not reused.
};

/// Human-readable name of a reject code ("protocol mismatch").
const char* rejectCodeName(RejectCode code) noexcept;

}  // namespace loam::net
