// Propagation: how one emitter's sound reaches the listener through the voxel world.
// One model for every emitter (leaf clusters, grass, rain surfaces, the waterfall,
// fires, impacts, animals, the far sky ring of the beds), in up to three ways:
//
//  - straight through: a voxel DDA along the segment emitter -> listener. Every run of
//    consecutive stopping voxels (solid or liquid) is one wall: it loses the mass law
//    20 log10(m f) - 47 dB (m: the run's surface mass in kg/m^2 from the materials'
//    densities, f: the band's centre; never below 0) plus the materials' own
//    transmissionLossDbPerM times the run's length beyond its first voxel (the mass
//    law is the loss of a thin panel). Foliage only loses its dB per metre (leaves
//    0.5 / 1.5 / 4 dB/m: most gets through, highs least). So one 5 cm stone block
//    costs 43 / 55 / 67 dB and a metre of rock well over 100 dB. An end point inside
//    a wall voxel with an open face towards the other end is moved out of that face
//    (a source on a surface is not walled in by its own voxel), and the first and
//    last 7.5 cm of the segment are ignored.
//  - through openings: for each of the listener's openings (RoomEstimate::openings)
//    and each of its waypoints w (a straight opening has one, its mouth; one round
//    corners has its corners and then its mouth, Opening::along(k) metres of air path
//    from the ears): emitter -> w (its own straight-through loss) -> along the path ->
//    listener (free: the listener sees its first waypoint, and each the next),
//    diffracted by a Maekawa-like loss: energy x 1 / (1 + 20 N_b) with the Fresnel
//    number N_b = 2 delta f_b / c and delta = |e - w| + along - |e - l| the detour. A
//    straight-on path costs nothing, a sharp turn a lot, highs much more than lows;
//    the longer path also spreads more (free-field ratio |e - l|^2 / (|e - w| + along)^2).
//    The waypoint that carries the most (mid band) is the opening's path: an outdoor
//    sound enters at the mouth, one in the tunnel's far leg at the corner.
//    Opening paths only fill what the straight path lacks, per band:
//    E_b = E_direct_b + (1 - E_direct_b) * min(1, sum of opening energies).
//  - into the reverb: reverbSend is the amplitude of the energy arriving (mid band).
//
// The apparent direction is the energy-weighted (mid band) mean of the arrival
// directions: the emitter itself for the straight path, the opening's direction (its
// centre, or its first corner) for each opening path.
//
// Threads: propagate() is a pure function over a const BrickStore (no writes to it
// meanwhile); any number of threads may call it at once. Plain float maths (audio is
// not simulation state): same binary, same inputs, same outputs.
#pragma once

#include <array>
#include <span>

#include "audio/engine.h"
#include "audio/room_probe.h"
#include "sim/world/brick_store.h"
#include "sim/world/material.h"

namespace loam::audio {

/// Per-material transmission properties, indexed by MaterialId.
struct TransmissionTable {
  std::array<std::uint8_t, 256> wall{};                  ///< 1: solid or liquid (a mass-law wall)
  std::array<float, 256> density{};                      ///< kg/m^3
  std::array<std::array<float, 3>, 256> lossDbPerMetre{};  ///< low/mid/high (material table)
};

/// From the material table; ids past the table behave like stone (2600 kg/m^3, 45/60/75 dB/m).
TransmissionTable makeTransmissionTable(const sim::MaterialTable& materials) noexcept;

/// Loss in dB per band of the segment from a to b (metres), by the rules above.
/// Cost: one voxel DDA (about 0.1 us per voxel of mixed bricks; uniform bricks and air
/// chunks are crossed whole). No allocation. Thread: any, no writer.
std::array<float, 3> straightLossDb(const sim::BrickStore& store, const TransmissionTable& table, Vec3f a,
                                    Vec3f b) noexcept;

/// The listener's side of propagation: where the ears are and their openings.
struct ListenerPaths {
  Vec3f position;
  std::array<Opening, 4> openings{};
  int openingCount = 0;
};

/// Builds ListenerPaths from the listener position and its (smoothed) room estimate.
ListenerPaths listenerPaths(Vec3f listener, const RoomEstimate& room) noexcept;

/// How one emitter is heard.
struct PathResult {
  std::array<float, 3> gain{1, 1, 1};  ///< amplitude per band relative to free field over |e - l|
  Vec3f direction;                     ///< unit world vector from the listener towards the energy
  float reverbSend = 1.0f;             ///< amplitude into the reverb (sqrt of mid-band energy)
  std::array<float, 3> directLossDb{}; ///< the straight path's loss (diagnostics, tests)
  int openingPaths = 0;                ///< opening paths that carried energy (> -60 dB mid)
};

/// Propagates one emitter at e to the listener. Cost: 1 + (waypoints of all openings)
/// DDAs (1 + openingCount for straight openings). No allocation. Thread: any, no writer.
PathResult propagate(const sim::BrickStore& store, const TransmissionTable& table, const ListenerPaths& listener,
                     Vec3f emitter) noexcept;

}  // namespace loam::audio
