// sim/trace: scripted runs and their hashes. Scripts of timed commands (script.h),
// the trace hash that folds world and state after every step (trace_hash.h) and
// runTrace (trace_run.h), which the determinism goldens and `loam-tool sim` use.
//
// May use: sim/step and below. Library: loam_sim.
#pragma once
#include "sim/trace/script.h"
#include "sim/trace/trace_hash.h"
#include "sim/trace/trace_run.h"
