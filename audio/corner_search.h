// CornerSearch: openings round corners. The probe's rays only see straight escapes:
// past a bend in a tunnel, or two turns into a dug cellar, no ray leaves the roof, and
// without this the outdoors would reach the listener only through the rock (70 dB
// and more under). When a roofed listener has no straight opening, a breadth-first
// search through the air, brick by brick (0.4 m), finds the nearest bricks under open
// sky (mouths), and each path is pulled tight into straight legs between corners
// (line of sight checked voxel by voxel). Each mouth found a different way round
// becomes an Opening whose direction is its first corner and whose waypoints are the
// corners and the mouth; propagation (audio/propagation.h) routes sound along it,
// diffracted by the detour, so it comes round the corner duller and from the corner.
//
// Sound steps from a brick to a neighbour when the neighbour is not uniformly solid
// and, where either is mixed, the line between their centres meets no voxel that
// stops sound (so a 5 cm lid closes a pit, and a gap one voxel wide off that line is
// missed). Cost is bounded by CornerSearchConfig (bricks visited, path length, mouths
// tried; ~0.3 us per brick): a sealed room is searched up to the cap and finds none.
//
// Deterministic: the search order is fixed (six neighbours in a fixed order, FIFO), so
// the same world and listener give the same openings. Plain float maths for the legs.
// Thread: one caller per CornerSearch, while nobody writes the store.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "audio/room_probe.h"
#include "sim/world/brick_store.h"

namespace loam::audio {

struct CornerSearchConfig {
  int maxBricks = 4000;        ///< bricks visited at most (256 m^3 of air)
  float maxPath = 48.0f;       ///< metres of path (in brick steps) at most
  int maxMouths = 8;           ///< mouth bricks pulled tight at most (each a few line checks)
  float minAngleDeg = 30.0f;   ///< openings whose first legs are closer than this are one
};

class CornerSearch {
 public:
  /// Allocates the search's scratch (about 200 KB for the default limits).
  explicit CornerSearch(CornerSearchConfig config = {});

  /// Finds up to out.size() openings round corners from listener (metres); returns
  /// how many it wrote. 0 when the listener is not under a roof (the sky is its
  /// opening) or no mouth is within the limits. No allocation.
  int find(const sim::BrickStore& store, const AcousticTable& table, Vec3f listener, std::span<Opening> out);

  /// Bricks visited by the last find() (for benchmarks and tests).
  int visited() const noexcept { return static_cast<int>(nodes_.size()); }

 private:
  struct Node {
    std::int32_t x, y, z;   // brick coordinates
    std::int32_t parent;    // index into nodes_, -1 for the start
    std::int32_t steps;     // brick steps from the start
    bool mouth;             // under the sky: not expanded
  };
  std::size_t slot(std::int32_t x, std::int32_t y, std::int32_t z) const;  // its slot in seen_, or the empty one
  bool contains(std::int32_t x, std::int32_t y, std::int32_t z) const;
  void insert(std::int32_t x, std::int32_t y, std::int32_t z);
  bool pull(const sim::BrickStore& store, const AcousticTable& table, Vec3f listener, int mouth, Opening& out);

  CornerSearchConfig config_;
  std::vector<Node> nodes_;            // visit order (the BFS queue)
  std::vector<std::uint64_t> seen_;    // open-addressing set of packed coordinates (0 = empty)
  std::vector<int> chain_;             // scratch: one path, mouth to start
};

}  // namespace loam::audio
