// sim/systems: what changes the world each step. Player motion (motion.h), water,
// fire, weather and animals (water.h, fire.h, weather.h, animals.h), the state they
// share (sim_state.h), the one door through which they change the world and emit
// (sim_context.h), and the records they emit (streams.h, events.h, player.h).
//
// The system contract: a system keeps its state in one struct inside SimState,
// changes the world only through SimContext::setVoxel / fillBrick (which write the
// edit log in the same call), draws randomness only from SimContext::random (keyed by
// tick and stable id), appends its changes to its list in StepOutput and folds its
// state into the state hash in a canonical order. The step calls the systems in the
// order written in sim/step/step.h; that order is part of the determinism contract.
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
