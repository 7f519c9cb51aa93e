// Voxel collision for boxes of any size: the one implementation player motion
// (sim/systems/motion.cpp) and animals use. A box collides with every voxel whose
// material has MaterialLut::collides set; outside the world's sides and below its
// floor counts as solid, above its top is open sky. Moves are swept one axis at a
// time, voxel layer by voxel layer, and stop at the first colliding layer, so a mover
// that starts clear can never end inside a solid voxel.
//
// Reads whole bricks through a CollisionReader: a uniform brick is one table load, a
// mixed brick is read only in the sub-box a query needs (or through its cached
// collision mask); never BrickStore::get() per voxel. Integer maths only (bit-exact
// everywhere). No allocation; any thread (the world is only read).
#pragma once

#include <array>
#include <cstdint>
#include <new>

#include "sim/world/brick_store.h"
#include "sim/world/collision_cache.h"
#include "sim/core/fixed_point.h"
#include "sim/world/material_lut.h"

namespace loam::sim {

/// An axis-aligned box in units (sim/core/fixed_point.h): [lo, hi) on each axis.
struct UnitBox {
  Vec3i lo;  ///< minimum corner, inclusive
  Vec3i hi;  ///< maximum corner, exclusive
  friend bool operator==(const UnitBox&, const UnitBox&) = default;
};

/// The box of a mover standing at `feet` (x, z centre; y bottom) with the given
/// half width (x and z) and height, in units.
constexpr UnitBox boxAtFeet(Vec3i feet, std::int32_t halfWidth, std::int32_t height) noexcept {
  return {{feet.x - halfWidth, feet.y, feet.z - halfWidth}, {feet.x + halfWidth, feet.y + height, feet.z + halfWidth}};
}

/// The feet of a box made by boxAtFeet with the same half width.
constexpr Vec3i feetOfBox(const UnitBox& b, std::int32_t halfWidth) noexcept {
  return {b.lo.x + halfWidth, b.lo.y, b.lo.z + halfWidth};
}

/// The voxels a box overlaps (floor of lo, ceiling of hi).
VoxelBox voxelsOfBox(const UnitBox& box) noexcept;

/// Where collision queries read their bricks. Without a window every brick is
/// fetched from the store. With one (a few bricks around a mover's step), each brick
/// inside it is fetched at most once per reader (sweeps, step-up retries and probes
/// revisit the same bricks) and, given a CollisionCache, unmodified palette bricks
/// are tested through their cached masks; bricks outside the window are fetched
/// directly. Results never depend on the window or the cache, only the time taken.
/// Lives on the stack (a few KB); no allocation; one thread.
class CollisionReader {
 public:
  static constexpr int kWindowX = 4, kWindowY = 10, kWindowZ = 4;  ///< window size in bricks

  /// A reader without a window.
  CollisionReader(const BrickStore& world, const MaterialLut& lut) noexcept : world_(world), lut_(lut) {}
  /// A reader with the window whose lowest brick is `origin`; `masks` may be null.
  CollisionReader(const BrickStore& world, const MaterialLut& lut, CollisionCache* masks, BrickCoord origin) noexcept
      : world_(world), lut_(lut), masks_(masks), origin_(origin), windowed_(true) {
    for (auto& h : have_) h = 0;
  }
  CollisionReader(const CollisionReader&) = delete;
  CollisionReader& operator=(const CollisionReader&) = delete;

  const BrickStore& world() const noexcept { return world_; }
  const MaterialLut& lut() const noexcept { return lut_; }

  /// The brick at (bx, by, bz), from the window when it is inside it.
  BrickView brick(std::int32_t bx, std::int32_t by, std::int32_t bz) noexcept {
    const int i = slot(bx, by, bz);
    if (i < 0) return world_.brick(BrickCoord{bx, by, bz});
    return view(i, bx, by, bz);
  }

  /// The cached collision mask of a palette brick, or null when the brick must be
  /// read voxel by voxel (no cache, outside the window, or modified since generation).
  const CollisionMask* mask(std::int32_t bx, std::int32_t by, std::int32_t bz) noexcept {
    if (!masks_) return nullptr;
    const int i = slot(bx, by, bz);
    if (i < 0) return nullptr;
    if (have_[i] < 2) {
      const BrickView v = view(i, bx, by, bz);
      const BrickCoord b{bx, by, bz};
      masksOf_[i] = world_.isModified(b) ? nullptr : &masks_->mask(world_, lut_, b, v);
      have_[i] = 2;
    }
    return masksOf_[i];
  }

 private:
  static constexpr int kSlots = kWindowX * kWindowY * kWindowZ;

  int slot(std::int32_t bx, std::int32_t by, std::int32_t bz) const noexcept {
    if (!windowed_) return -1;
    const unsigned ix = static_cast<unsigned>(bx - origin_.x), iy = static_cast<unsigned>(by - origin_.y),
                   iz = static_cast<unsigned>(bz - origin_.z);
    if (ix >= kWindowX || iy >= kWindowY || iz >= kWindowZ) return -1;
    return static_cast<int>(ix + kWindowX * (iy + kWindowY * iz));
  }
  BrickView view(int i, std::int32_t bx, std::int32_t by, std::int32_t bz) noexcept {
    if (!have_[i]) {
      new (&views_[i]) BrickView(world_.brick(BrickCoord{bx, by, bz}));
      have_[i] = 1;
    }
    return *std::launder(reinterpret_cast<const BrickView*>(&views_[i]));
  }

  struct alignas(BrickView) Slot {
    unsigned char bytes[sizeof(BrickView)];
  };
  const BrickStore& world_;
  const MaterialLut& lut_;
  CollisionCache* masks_ = nullptr;
  BrickCoord origin_{};
  bool windowed_ = false;
  std::uint8_t have_[kSlots];  // 0 nothing, 1 view, 2 view and mask (window only)
  Slot views_[kSlots];
  const CollisionMask* masksOf_[kSlots];
};

/// True when any voxel of `region` collides (outside the world's sides and below its
/// floor count as solid; above its top is open). O(bricks touched).
bool regionCollides(CollisionReader& reader, const VoxelBox& region) noexcept;
/// The same through a reader without a window.
bool regionCollides(const BrickStore& world, const MaterialLut& lut, const VoxelBox& region) noexcept;

/// True when any voxel of `region` inside the world has flags[material] != 0
/// (voxels outside the world are air and never match). Use it for liquid or foliage
/// tests with MaterialLut::liquid and similar tables.
bool regionHasAny(const BrickStore& world, const std::array<std::uint8_t, 256>& flags, const VoxelBox& region) noexcept;

/// True when the box overlaps a colliding voxel.
bool boxCollides(const BrickStore& world, const MaterialLut& lut, const UnitBox& box) noexcept;

/// Moves box along axis (0 x, 1 y, 2 z) by delta units, stopping flush against the
/// first colliding voxel layer. Returns the distance moved and sets blocked when it
/// stopped short. O(layers crossed x bricks per layer); a move that hits nothing
/// tests its layers as one slab.
std::int32_t sweepBox(CollisionReader& reader, UnitBox& box, int axis, std::int32_t delta, bool& blocked) noexcept;
/// The same through a reader without a window.
std::int32_t sweepBox(const BrickStore& world, const MaterialLut& lut, UnitBox& box, int axis, std::int32_t delta,
                      bool& blocked) noexcept;

}  // namespace loam::sim
