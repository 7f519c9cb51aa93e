// sim/systems: what changes the world each step. Player motion (motion.h), water,
// fire, weather and animals (water.h, fire.h, weather.h, animals.h), the state they
// share (sim_state.h), the one door through which they change the world and emit
// (sim_context.h), and the records they emit (streams.h, events.h, player.h).
//
// The contract every system (water, fire, weather, animals) keeps:
// - init*(state, setup): builds the initial state from the scene and the generated
//   world. Run identically on the server and on every mirror; no randomness except
//   keyed draws with tick 0.
// - step*(state, ctx): one 1/60 s tick. Reads the world only through ctx.world(),
//   changes voxels only through ctx.setVoxel/fillBrick (which writes the edit log),
//   reports every replicated state change into ctx.output().<system>, events through
//   ctx.emit, randomness only through ctx.random. No clocks, no threads that change
//   results, no heap allocation in steady state (reserve in init, reuse scratch).
// - apply*Changes(state, changes): the mirror side: makes the replicated part of
//   state equal to the authoritative one from the change records alone.
// - hash*(state, hasher): folds the replicated part of state (canonical order).
// - diff*(expected, actual): the first difference in the replicated part as
//   "field: expected X, actual Y", or nullopt when equal. Allocates only on mismatch.
// - encode*/decode*(state, bytes): its replicated state as a blob, next to the
//   system (sim/systems/*_codec.cpp, player.cpp); sim/save/state_codec.cpp only
//   sequences them.
// The step calls the systems in the order written in sim/step/step.h; that order is
// part of the determinism contract.
//
// May use: sim/world, sim/gen (the scene's rules). Knows nothing of the step's
// commands, traces or saves. Library: loam_sim.
#pragma once
#include "sim/systems/animals.h"
#include "sim/systems/events.h"
#include "sim/systems/fire.h"
#include "sim/systems/motion.h"
#include "sim/systems/player.h"
#include "sim/systems/sim_context.h"
#include "sim/systems/sim_state.h"
#include "sim/systems/streams.h"
#include "sim/systems/water.h"
#include "sim/systems/weather.h"
