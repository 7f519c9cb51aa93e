// The simulation step: state(t+1) = step(state(t), commands(t)), 60 times a second.
//
// ORDER OF OPERATIONS (the determinism contract; changing it changes every golden
// trace hash and must say why in the commit):
//
//  0. tick <- tick + 1. Every keyed random draw in this step uses the new tick.
//     Nothing is refilled here: a player's edit and chat tokens are token buckets
//     computed from the tick of their last spend when a command needs them, and the
//     per-tick input count restarts at the player's first input of a tick.
//  1. The scene's ignition points due at the tick the step starts from
//     (FireState::schedule, server states only): an ignite by the server each, in
//     scene order, validated as the command below. Then the commands, sorted by
//     (player id, sequence number, position in the input span):
//     the order they arrive in, and the order of the span, never matter except as
//     the last tie-break between identical (player, sequence) pairs. Each command is
//     validated against the state as left by the commands before it, then either
//     applied completely or rejected (a CommandRejected event; nothing else changes):
//       join / leave      players list (kept sorted by id)
//       input             one motionStep for that player (footstep/landed/splash
//                         events come out of it); stale sequences are ignored
//       dig / place       voxels through SimContext::setVoxel (the edit log)
//       pour / ignite     handed to the water / fire system
//       set time/weather  handed to the weather system (server only)
//       teleport          the target's position and velocity (server only); the
//                         server is player 0, so its teleport comes before the
//                         target's own inputs of the same tick
//       chat              a Chat event
//  2. Systems, each once, in this fixed order:
//       weather  (time of day, wind, rain: what the others read this tick)
//       water    (flow; before fire so fresh water puts fires out this tick)
//       fire     (burn, spread with wind, rain/water extinguish)
//       animals  (move, flee players, call)
//  3. Player state records: one Updated record per player whose state changed
//     this tick, in id order (after Joined / Left records from step 1).
//
// Everything that changes the world goes through SimContext::setVoxel/fillBrick,
// which write the edit log in the same call. Systems never see the commands.
//
// WHAT THE STEP READS is the whole world, generated or not. A streamed world
// (BrickStore::setColumnSource, sim/gen/column_streamer.h) generates a chunk column
// the first time the step reads or writes it, and the step waits for it; the owner
// generates ahead around the players and releases unmodified columns between steps.
// A server's columns holding edits come from its world database the same way
// (BrickStore::setStoredColumns): loaded when first read, paged out once committed.
// Which columns are resident, which thread generated them, when, and whether they
// were released and generated or loaded again never changes a result: what the server
// simulates depends only on the simulation state (tests: the trace goldens with the
// world streamed on 1 and 2 threads with a tiny and a large residency budget,
// tests/determinism/sim_trace_test.cpp; a world opened lazily and paged out in
// lockstep with the one it was saved from, tests/sim/world_db_columns_test.cpp). The cost follows the activity, since each
// system reads only near what it simulates (players, wet and burning cells,
// animals), but nothing yet bounds the activity itself: a fire that spreads where
// nobody is keeps generating what it reaches.
#pragma once

#include <span>

#include "sim/step/commands.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/streams.h"

namespace loam::sim {

/// Advances state by one tick with commands, writing the three streams into out
/// (cleared first; its capacity is reused, so a caller that keeps one StepOutput
/// does not allocate in steady state). Pure: the result depends only on state and
/// commands. Never throws; bad commands become CommandRejected events.
/// Thread: the caller's; not reentrant on the same state.
void step(SimState& state, std::span<const Command> commands, StepOutput& out) noexcept;

/// Convenience form of the above returning a fresh StepOutput (allocates).
StepOutput step(SimState& state, std::span<const Command> commands);

}  // namespace loam::sim
