// sim/world: the voxel world as data. Units and coordinates (voxel.h), the sparse
// store (brick_store.h, brick_view.h), materials (material.h, material_lut.h), the
// coarse copy that rays and wind read (coarse_grid.h), collision (collision_cache.h,
// voxel_collision.h), the one grid walk every ray uses (grid_walk.h) and world
// hashes (world_hash.h). sim/core/ holds the small vocabulary every part of sim
// uses (asserts, Result, fixed point and units, keyed randomness, short text, field
// tables, state bytes and the state hasher).
//
// May use: detmath and sim/core only. Knows nothing of scenes, generation, systems
// or the step. Library: loam_world (mesh/ links this alone).
#pragma once
#include "sim/world/brick_store.h"
#include "sim/world/brick_view.h"
#include "sim/world/coarse_grid.h"
#include "sim/world/grid_walk.h"
#include "sim/world/collision_cache.h"
#include "sim/world/material.h"
#include "sim/world/material_lut.h"
#include "sim/world/voxel.h"
#include "sim/world/voxel_collision.h"
#include "sim/world/world_hash.h"
