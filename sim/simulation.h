// sim/step: state(t+1) = step(state(t), commands(t)) at 60 Hz. Commands (commands.h),
// the step and its order of operations (step.h), the mirror that follows a world
// through the three streams alone (mirror.h) and the world and cell hashes kept up
// to date from the edit log (world_hash_tracker.h). The server, every client and the
// mirror test run this one follow path.
//
// May use: sim/systems, sim/gen, sim/world. Library: loam_sim.
#pragma once
#include "sim/step/commands.h"
#include "sim/step/mirror.h"
#include "sim/step/step.h"
#include "sim/step/world_hash_tracker.h"
