// sim/save: saves and the replicated state as bytes. Save files hold only what
// differs from the generated world, zstd-compressed and checksummed (save.h); the
// state codec turns players, water, fire, animals and weather into bytes for saves
// and join snapshots (state_codec.h); the world database keeps a server's changed
// bricks and blobs in SQLite, committed incrementally (world_db.h).
//
// May use: sim/step and below, zstd, SQLite. Outside the cross-compiled core. Library:
// loam_save.
#pragma once
#include "sim/save/save.h"
#include "sim/save/state_codec.h"
#include "sim/save/world_db.h"
