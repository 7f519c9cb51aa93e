// RoomProbe: what the room around the listener is like, from rays cast through the
// voxel world. A fixed Fibonacci-sphere ray set (rotated between updates by a keyed
// rotation, so successive updates sample different directions) is traced from the
// listener through the BrickStore: a DDA over bricks that skips uniform bricks whole
// and walks voxels only inside mixed bricks, stopping at the first voxel that stops
// sound (solid or liquid) or at the maximum distance. Foliage does not stop a ray; it
// scatters a share of it (from its acoustic opacity) and lets the rest through. Mixed
// bricks without a solid voxel (canopies, thin water) are crossed at brick
// resolution: the coarse copy's opacity becomes optical depth, like foliage (so rays
// through a forest's canopies stay cheap; a pond's full water bricks still stop).
//
// Each hit also looks straight up: is it under a roof, under leaves, or under the
// sky? A listener under a roof learns where each ray left it (a cave mouth, a door).
//
// From the hits: enclosure, openness to the sky, mean free path, per-band mean
// absorption, escape directions grouped into up to four openings with the distance
// to their mouths, and per-band reverb time by Eyring (estimateRoom() documents the
// estimator).
//
// Threads: tracing is a pure function over a const BrickStore (no writes to that
// store's chunks meanwhile). traceRays() fills a caller-chosen index range, so the
// rays can be split over any number of workers; estimateRoom() then reduces the
// whole array in index order, so the result is bit-identical for any split.
// Plain float maths (audio is not simulation state); the same binary gives the same
// results for the same inputs.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "audio/engine.h"  // Vec3f
#include "sim/world/brick_store.h"
#include "sim/world/material.h"

namespace loam::audio {

/// Per-material acoustic properties the probe uses, indexed by MaterialId.
struct AcousticTable {
  std::array<std::uint8_t, 256> stops{};                ///< 1: ends a ray (solid or liquid)
  std::array<std::uint8_t, 256> foliage{};              ///< 1: scatters part, passes the rest
  std::array<float, 256> scatterPerMetre{};             ///< foliage optical depth per metre
  std::array<std::array<float, 3>, 256> absorption{};   ///< low (250 Hz), mid (1 kHz), high (4 kHz)
  /// Optical depth per metre of a brick by its coarse opacity (0..255): -ln(1 - o) / 0.4 m.
  std::array<float, 256> coarseDepthPerMetre{};
};

/// Absorption coefficients (0..1, low/mid/high) of a sound class: stone 0.02/0.03/0.05,
/// wood 0.15/0.1/0.1, soil and grass 0.3/0.5/0.6, foliage 0.4/0.6/0.7, water 0.01...
std::array<float, 3> soundClassAbsorption(sim::SoundClass c) noexcept;
/// The table for a material table: stops = solid or liquid; foliage scatters with
/// -ln(1 - acousticOpacity) per brick (0.4 m). Ids past the table stop like stone.
AcousticTable makeAcousticTable(const sim::MaterialTable& materials) noexcept;
/// Without materials: every non-air id stops and absorbs like stone.
AcousticTable defaultAcousticTable() noexcept;

struct ProbeConfig {
  int rays = 512;               ///< directions per update
  float maxDistance = 64.0f;    ///< metres; rays going further escape
  /// metres; for the reverb estimate, surfaces further away count as open: their
  /// reflections come back over 140 ms later as echoes, not as reverberation
  float roomRadius = 24.0f;
  std::uint64_t key = 0x61636f75u;  ///< keys the rotation sequence
  /// With no straight opening under a roof, look for openings round corners
  /// (CornerSearch, audio/corner_search.h).
  bool cornerSearch = true;
};

/// What one ray found.
struct RayHit {
  float distance = 0;        ///< metres to the stopping voxel's face (0 inside solid)
  float foliageStart = 0;    ///< metres to the first foliage voxel (when foliageDepth > 0)
  float foliageDepth = 0;    ///< optical depth of foliage crossed before the end
  sim::MaterialId material = sim::kAir;  ///< stopping material, kAir when it escaped
  std::int8_t normalAxis = -1;  ///< 0 x, 1 y, 2 z of the face entered; -1 none
  std::int8_t normalSign = 0;   ///< +1 / -1: the face normal points along +/- that axis
  /// Hits: transmission straight up to the sky from the air in front of the hit face
  /// (0 under a roof, 1 under open sky, between under foliage). 0 for escapes.
  float sky = 0;
  /// Metres along the ray to where it first passed under open sky, when it started
  /// under a roof (the listener's column holds something that stops sound) and left
  /// it before its end: a cave mouth, a doorway. -1 otherwise.
  float leftRoofAt = -1;
  bool hit() const noexcept { return material != sim::kAir; }
};

/// One opening: a way out of the listener's room. Either a group of escaping rays (a
/// straight opening: one waypoint, its mouth) or a path through the air round corners
/// to a mouth that no ray sees (found by CornerSearch: the corners, then the mouth).
struct Opening {
  static constexpr int kMaxWaypoints = 4;
  Vec3f direction;    ///< unit world vector from the listener: the centre of the rays, or the first corner
  float share = 0;    ///< share of all rays escaping through it (0..1; 0 round corners)
  /// metres from the listener along direction to the first waypoint: the mouth of a
  /// straight opening (where its rays leave the enclosure: a cave mouth, a doorway;
  /// for an open sky, a few metres up), or the first corner.
  float distance = 0;
  /// Round corners: the waypoints after the first, relative to the listener (metres;
  /// the last one is the mouth), and the air path's length from the ears to each.
  std::array<Vec3f, kMaxWaypoints - 1> beyond{};
  std::array<float, kMaxWaypoints - 1> beyondAlong{};
  int beyondCount = 0;

  bool aroundCorners() const noexcept { return beyondCount > 0; }
  int waypointCount() const noexcept { return 1 + beyondCount; }
  /// Waypoint k relative to the listener; 0 is at distance along direction.
  Vec3f waypoint(int k) const noexcept {
    if (k > 0) return beyond[static_cast<std::size_t>(k - 1)];
    const float l = std::sqrt(direction.x * direction.x + direction.y * direction.y + direction.z * direction.z);
    return l > 0 ? Vec3f{direction.x / l * distance, direction.y / l * distance, direction.z / l * distance} : Vec3f{};
  }
  /// Metres of air path from the ears to waypoint k.
  float along(int k) const noexcept { return k > 0 ? beyondAlong[static_cast<std::size_t>(k - 1)] : distance; }
};

/// The room, as the rays see it.
struct RoomEstimate {
  float enclosure = 0;        ///< share of upward rays (dir.y >= 0) that hit (foliage: its scattered share)
  float hitShare = 0;         ///< share of all rays that hit
  float openness = 0;         ///< share of sky rays (dir.y >= 0.5, 60 degrees round the zenith) escaping
  float meanHitDistance = 0;  ///< metres, over rays that hit within the room radius (0 when none)
  float volume = 0;           ///< m^3 estimate (see estimateRoom)
  float surface = 0;          ///< m^2 estimate, escape area included
  float meanFreePath = 0;     ///< 4 V / S, metres
  std::array<float, 3> absorption{};  ///< area-weighted mean absorption per band, escapes = 1
  std::array<float, 3> rt60{};        ///< Eyring reverb time per band, seconds
  std::array<Opening, 4> openings{};  ///< largest first
  int openingCount = 0;
};

/// Centre frequencies of the three bands (Hz) and the air's intensity absorption
/// per metre there (20 C, 50% RH), used in the Eyring estimate.
inline constexpr std::array<float, 3> kBandHz{250.0f, 1000.0f, 4000.0f};
inline constexpr std::array<float, 3> kAirAbsorptionPerMetre{0.0003f, 0.001f, 0.0068f};

/// One bit per brick of the store's expanded chunks: set unless the brick is uniform
/// air. Rays then cross the air of expanded chunks without touching the store's slot
/// tables (8 KB per chunk; the bits are 512 B), so a listener's neighbourhood stays in
/// cache. Owned next to the store: build once, refresh() every brick the world changes
/// (e.g. those of a BrickStore change subscriber) and followSlots() (after the store
/// renumbered its slots: markGenerated, a streamed store's releaseColumns) before the
/// next trace. The bits are kept by slot for speed and remember each slot's chunk
/// coordinate, so following a renumbering is O(chunks), never a rebuild.
class BrickOccupancy {
 public:
  /// Builds the bits of every expanded chunk. O(bricks of expanded chunks); allocates
  /// 512 bytes per expanded chunk.
  explicit BrickOccupancy(const sim::BrickStore& store);
  /// Brings brick b up to date with the store (builds its chunk's bits when the chunk
  /// was collapsed before; may allocate then). Follows the store's slots first
  /// (followSlots). Single-threaded, not while tracing.
  void refresh(const sim::BrickStore& store, sim::BrickCoord b);
  /// When the store renumbered its slots since the bits were last keyed
  /// (BrickStore::slotEpoch), moves each chunk's bits to the chunk's new slot by its
  /// coordinate, dropping those of chunks no longer resident and compacting the rest;
  /// otherwise does nothing (one compare). A chunk that left and came back (a column
  /// released and generated again) keeps its bits: a released column held only
  /// generated content, and the store reports it changed when it returns. O(chunks
  /// with bits + store.chunkCount()); allocates only when the store has more slots than
  /// were ever known. Single-threaded, not while tracing.
  void followSlots(const sim::BrickStore& store);
  /// The store's slotEpoch() the bits are keyed to.
  std::uint64_t slotEpoch() const noexcept { return epoch_; }
  /// False when brick localIndex of chunk index i is known to be uniform air; true
  /// when it may hold something (or the chunk has no bits: ask the store). A chunk made
  /// resident after the last refresh (a slot past the known ones) has no bits.
  bool mayHoldMatter(int chunkIndex, int localIndex) const noexcept {
    if (static_cast<std::size_t>(chunkIndex) >= maskOf_.size()) return true;
    std::int32_t m = maskOf_[static_cast<std::size_t>(chunkIndex)];
    if (m < 0) return true;
    return (masks_[static_cast<std::size_t>(m) + static_cast<std::size_t>(localIndex >> 6)] >> (localIndex & 63)) & 1u;
  }

 private:
  void buildChunk(const sim::BrickStore& store, int chunkIndex);
  std::vector<std::int32_t> maskOf_;   // per chunk index: word offset into masks_, or -1
  std::vector<std::uint64_t> masks_;   // 64 words per expanded chunk
  std::vector<sim::ChunkCoord> maskCoord_;  // per 64 words of masks_: whose bits they are
  std::uint64_t epoch_ = 0;            // the store's slotEpoch() maskOf_ is keyed to
};

/// Writes config.rays unit directions for update number `update`: the Fibonacci sphere
/// rotated by a rotation keyed by (config.key, update). No allocation; out.size() must
/// be config.rays.
void makeRayDirections(const ProbeConfig& config, std::uint64_t update, std::span<Vec3f> out) noexcept;

/// Traces rays [begin, end) of dirs from origin (metres) and writes out[begin, end).
/// Each hit also looks straight up for the sky (RayHit::sky); when the listener's own
/// column is roofed, rays ending under the sky march back out in 0.4 m steps to where
/// the roof ended (RayHit::leftRoofAt).
/// occupancy (optional, in step with the store) only makes it faster; the results are
/// identical. Pure over const data; cost about 0.5-4 us per ray (brick DDA; voxels in
/// mixed bricks only). No allocation. Thread: any, while nobody writes the store.
void traceRays(const sim::BrickStore& store, const AcousticTable& table, Vec3f origin,
               std::span<const Vec3f> dirs, int begin, int end, float maxDistance, std::span<RayHit> out,
               const BrickOccupancy* occupancy = nullptr) noexcept;

/// Reduces traced rays (in index order) to a room estimate.
///
/// Estimator: each ray stands for a solid angle w = 4 pi / N. A ray that hits within
/// config.roomRadius at distance r on a face with normal n seen at cos c = |dir . n|
/// contributes the visible volume w r^3 / 3 and the wall area w r^2 / max(c, 0.05)
/// (both exact integrals over the sphere for a room seen whole from the listener, e.g.
/// any convex room). A ray's foliage-scattered share contributes as a foliage surface
/// 0.5 m past where the foliage starts, facing the ray. An escaping ray contributes an
/// opening patch facing the listener at distance r_o = sqrt(mean r^2 of those hits)
/// (the room radius when nothing hit): volume w r_o^3 / 3, area w r_o^2, absorption 1;
/// so does a ray that hits beyond the room radius (an echo, not reverberation).
/// Mouths (session 4): a ray that left the listener's roof (RayHit::leftRoofAt within
/// the room radius) counts whole as a mouth patch there (volume w r^3 / 3, area w r^2,
/// absorption 1), whatever it hits or scatters in outside: before, the grass grazed
/// past a cave mouth swamped the cave's area and absorption, and its reverb time swung
/// +-35% between updates.
/// Sky loss (second bounce): p_i = f_i * l_i, the share of what hit i reflects that
/// leaves for the sky, with f_i by facing (floor 1; wall 0.75: half up, half down to
/// ground that sends half of that up; ceiling 0) and l_i from RayHit::sky (0 under a
/// roof; 1 - 0.2 (1 - sky) under leaves, which absorb or pass most of what they stop);
/// foliage scatter loses 0.75 of the upward escaping share; P = mean of p_i by solid
/// angle. (Session 3 followed each hit's specular reflection through the listener's
/// own escape bins instead: on stepped voxel ground most reflections stay sideways,
/// so outdoors kept 0.43-0.52 s.) Then mfp = 4 V / S, a_b = A_b + (1 - A_b) P with A_b
/// = (sum of patch areas x their absorption + wall area x the walls' mean absorption)
/// / S, the walls' mean weighted with grazing views clamped at cos 0.25 (a few grazing
/// hits on a distant absorbing floor would swing it between updates), and
///   T_b = 0.161 V / (-S ln(1 - a_b) + 4 m_b V)   (Eyring with air absorption m_b).
/// Openings: escaping rays (and those that left the roof) seeded from the fullest of
/// 96 cube-map bins, gathered within 50 degrees of the seed, centred on their mean; up
/// to 4 groups, leftovers join the nearest group. Opening::distance: the mean
/// leftRoofAt of the group's rays; without a roof, the canopy height (mean foliage
/// start within 50 degrees, when over a quarter of those rays met leaves) for a sky
/// opening (dir.y > 0.5), the nearest hit above the
/// horizon within 50 degrees for a sideways one, else 3 m; clamped to [0.5, maxDistance].
/// No allocation (fixed scratch on the stack for up to 4096 rays).
RoomEstimate estimateRoom(std::span<const Vec3f> dirs, std::span<const RayHit> hits, const AcousticTable& table,
                          const ProbeConfig& config) noexcept;

class CornerSearch;
class WorkerPool;

/// The probe: owns the ray set, the hit buffer and the corner search; one update =
/// directions, trace (split over a WorkerPool), estimate, and when no ray found a way
/// out from under a roof, the openings round corners (searched again when the ears
/// enter another brick or every 4th update; between searches the paths move with the
/// ears). Results depend only on the world, the positions and the update indices.
class RoomProbe {
 public:
  /// Allocates the direction and hit buffers (config.rays each, at most 4096) and the
  /// corner search's scratch.
  explicit RoomProbe(ProbeConfig config = {});
  ~RoomProbe();
  /// One update from origin (metres), the rays in 8 ranges on pool (the result is
  /// identical for any number of workers). No allocation. Thread: one caller at a time.
  const RoomEstimate& update(const sim::BrickStore& store, const AcousticTable& table, Vec3f origin,
                             std::uint64_t updateIndex, WorkerPool& pool, const BrickOccupancy* occupancy = nullptr);
  /// The same on a pool of threads - 1 workers started for this call (tests, tools).
  const RoomEstimate& update(const sim::BrickStore& store, const AcousticTable& table, Vec3f origin,
                             std::uint64_t updateIndex, int threads = 1, const BrickOccupancy* occupancy = nullptr);
  const RoomEstimate& estimate() const noexcept { return estimate_; }
  std::span<const Vec3f> directions() const noexcept { return dirs_; }
  std::span<const RayHit> hits() const noexcept { return hits_; }
  const ProbeConfig& config() const noexcept { return config_; }

 private:
  void cornerOpenings(const sim::BrickStore& store, const AcousticTable& table, Vec3f origin, std::uint64_t updateIndex);

  ProbeConfig config_;
  std::vector<Vec3f> dirs_;
  std::vector<RayHit> hits_;
  static constexpr std::uint64_t kCornerEvery = 4;  ///< updates a corner search's result is reused
  std::unique_ptr<CornerSearch> corners_;
  std::array<Opening, 4> cornerFound_{};  ///< the last search's openings, relative to cornerOrigin_
  int cornerCount_ = 0;
  bool cornerValid_ = false;
  sim::BrickCoord cornerBrick_{};
  std::uint64_t cornerUpdate_ = 0;
  Vec3f cornerOrigin_{};
  RoomEstimate estimate_;
};

/// Smooths estimates over updates (the room should not jump as rays rotate): an
/// exponential average of volume, surface, absorption and shares; the mean free path
/// and the reverb times are then computed from the averages (a ratio of means: one
/// update's few long rays move volume and surface together). Openings: the latest
/// set, each gliding (direction, share, distance) from the previous opening within 30
/// degrees of it; new ones are taken as they are.
class RoomSmoother {
 public:
  /// alpha: weight of each new update (0..1], e.g. 0.2 at 30 updates/s ~ 150 ms.
  explicit RoomSmoother(float alpha = 0.2f) : alpha_(alpha) {}
  /// Folds in one estimate (the first is taken as is) and returns the smoothed one.
  const RoomEstimate& add(const RoomEstimate& e) noexcept;
  const RoomEstimate& value() const noexcept { return value_; }

 private:
  float alpha_;
  bool primed_ = false;
  RoomEstimate value_;
};

}  // namespace loam::audio
