// The replicated state as bytes: players, water, fire, animals and weather, each as
// a self-contained little-endian record list. Used for the join snapshot (inside a
// sim save's blobs, sim/save/save.h) and for server saves, so a loaded world resumes
// with its water, fires, animals and weather. Decoders check every length and value
// range and return an error, never read outside the input, and bound allocation by
// the input's size.
//
// Blob names in a save: "players", "water", "fire", "animals", "weather".
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/result.h"
#include "sim/save/save.h"
#include "sim/systems/sim_state.h"

namespace loam::sim {

// The decoders (decodePlayers, decodeWater, decodeFire / restoreFire, decodeAnimals,
// decodeWeather, next to their encoders) replace the replicated part of the target
// with the blob's content. On a mirror that is all there is. On a server
// (restoreState) the working data is rebuilt: water wakes every cell it restores
// (and refreshes its masks from the world), fire rebuilds its work from the world
// plus the ignition data its blob carries (start, peak, uniform result, exposure: a
// few bytes per burning cell), animals get the brains their blob carries (else
// fresh ones at a den of their species) and nextId past the largest id, players
// keep their budgets as saved.
//
// Lockstep: a server restored by restoreState steps identically to the one that
// was saved (tested for 300 steps of forest-fires with pours). Limits: water's
// active set is rebuilt by waking every wet cell, which matches as long as waking
// a settled cell changes nothing, and source routes are recomputed; a fire cell
// whose attempt schedule was shifted by the per-tick ignition bound, or whose brick
// someone else edited while it burned, gets the undisturbed schedule / fuel; an
// animal nextId beyond the largest living id (animals removed) is not saved.

/// The five blobs of state, in the order of the blob names above (for captureSave).
std::vector<SaveBlob> stateBlobs(const SimState& state);

/// What stateBlobs reads, copied without the world or any working data the blobs do
/// not need, so a server can take it on the step thread (about 1 ms for glade, whose
/// water blob alone takes 9 ms to encode) and encode the blobs on its save thread.
struct StateCopy {
  std::vector<Player> players;
  WaterState water;  ///< only `cells` is copied
  FireState fire;
  AnimalState animals;
  WeatherState weather;
};
/// withCells false leaves water and fire empty (a join state).
StateCopy copyState(const SimState& state, bool withCells = true);
/// The same blobs as stateBlobs(state) for the state the copy was taken from.
std::vector<SaveBlob> stateBlobs(const StateCopy& copy);
/// The blobs a mirror joins from (the join state): "players" and "weather". A mirror
/// follows animals in snapshots, and their brains name dens and perches that a mirror
/// never sets up (createMirrorState). It keeps its generated water and fire and gets
/// the interest cells changed since in full as it comes near (net CellSync), instead
/// of the whole world's water at once.
std::vector<SaveBlob> mirrorBlobs(const StateCopy& copy);

/// Applies a decoded save to a freshly generated state: bricks (applySave), every
/// state blob present, and the tick from the header. Errors name the blob.
Result<void> restoreState(const SaveData& save, SimState& state);

}  // namespace loam::sim
