// The grid walk (Amanatides & Woo): the cubes of a grid that a ray crosses, in
// order, each entered at some t along the ray through one face. Every voxel ray in
// Loam walks with it: the client's targeted voxel (client/voxel_ray.cpp), the audio
// segment walk (audio/internal/voxel_walk.h) and the room probe's rays
// (audio/room_probe.cpp); the last two nest walks (chunks, bricks, voxels) to cross
// uniform space whole.
//
// Those callers pin their results bit for bit (goldens, tests) and were written with
// different float details, so two template parameters keep each one's arithmetic:
// GridTies (which axis steps when boundaries coincide) and GridBoundaries (how the t
// of a boundary is computed). In exact arithmetic all choices visit the same cubes.
//
// Header-only, no allocation, no state beyond the walk itself: any thread.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

namespace loam::sim {

/// Which axis the walk steps along when the ray meets two or three cube boundaries
/// at the same t.
enum class GridTies : std::uint8_t {
  LowAxis,   ///< x before y before z (the client's voxel ray)
  HighAxis,  ///< z before y before x (the audio walks)
};

/// How the walk computes the t of the next boundary on each axis, for a boundary at
/// coordinate b (voxel units), ray origin o and direction d.
enum class GridBoundaries : std::uint8_t {
  /// The first boundary at (b - o) / d, then + size / |d| per cube crossed (the room probe).
  Stepped,
  /// As Stepped, but going down the first is (o - b) / -d, so a start on a boundary
  /// gives t = +0 rather than -0 (the client's voxel ray).
  SteppedFromBelow,
  /// Every boundary (b - o) * (1 / d) from its cube, never accumulated, so nested walks
  /// agree exactly on the t of a boundary they share (the audio segment walk).
  FromCell,
};

/// A cube boundary the walk crossed.
template <class Real>
struct GridCrossing {
  int axis = 0;  ///< 0 x, 1 y, 2 z
  int step = 0;  ///< +1 or -1: the ray moves along +axis or -axis (so it entered the new cube through its -step face)
  Real t = 0;    ///< the new cube is entered at o + d t
};

/// A walk through a grid of cubes, `size` voxels on a side, along o + d t (o
/// and d in voxel units; t in units of |d|). Real is float or double.
template <class Real, GridTies kTies, GridBoundaries kBoundaries>
class GridWalk {
 public:
  /// Starts in the cube holding o + d t0. size must be a power of two (the start cube
  /// is then the same whether the point is divided by size or multiplied by 1 / size).
  GridWalk(const Real (&o)[3], const Real (&d)[3], Real t0, int size) noexcept
      : GridWalk(o, d, t0, size, kNoLimit[0], kNoLimit[1]) {}

  /// The same, with the start cube clamped into [lo, hi] (cube coordinates,
  /// inclusive; for a start on the far edge of a clipped range). inside() then says
  /// whether the walk is still within that range.
  GridWalk(const Real (&o)[3], const Real (&d)[3], Real t0, int size, const int (&lo)[3], const int (&hi)[3]) noexcept
      : size_(size) {
    for (int a = 0; a < 3; ++a) {
      lo_[a] = lo[a];
      hi_[a] = hi[a];
      const Real p = (o[a] + d[a] * t0) / static_cast<Real>(size);
      cube_[a] = std::clamp(static_cast<int>(std::floor(p)), lo[a], hi[a]);
      step_[a] = d[a] > 0 ? 1 : (d[a] < 0 ? -1 : 0);
      if constexpr (kBoundaries == GridBoundaries::FromCell) {
        o_[a] = o[a];
        invD_[a] = d[a] != 0 ? Real(1) / d[a] : Real(0);
        tNext_[a] = fromCell(a);
      } else if (step_[a] == 0) {
        tNext_[a] = kInf;
        tDelta_[a] = kInf;
      } else {
        tDelta_[a] = step_[a] > 0 ? static_cast<Real>(size) / d[a] : -static_cast<Real>(size) / d[a];
        const int b = step_[a] > 0 ? (cube_[a] + 1) * size : cube_[a] * size;
        if (kBoundaries == GridBoundaries::SteppedFromBelow && step_[a] < 0) {
          tNext_[a] = (o[a] - static_cast<Real>(b)) / -d[a];
        } else {
          tNext_[a] = (static_cast<Real>(b) - o[a]) / d[a];
        }
      }
    }
  }

  /// The cube the walk is in (cube coordinates: voxels / size).
  const std::array<int, 3>& cube() const noexcept { return cube_; }
  /// The walk's direction on each axis: +1, -1 or 0.
  const std::array<int, 3>& steps() const noexcept { return step_; }
  /// The t at which the ray leaves the current cube (infinity for a ray that never does).
  Real exitT() const noexcept { return std::min(tNext_[0], std::min(tNext_[1], tNext_[2])); }
  /// False once advance() has left the range given at the start.
  bool inside() const noexcept {
    return cube_[0] >= lo_[0] && cube_[0] <= hi_[0] && cube_[1] >= lo_[1] && cube_[1] <= hi_[1] &&
           cube_[2] >= lo_[2] && cube_[2] <= hi_[2];
  }

  /// Steps into the next cube, across the nearest boundary.
  GridCrossing<Real> advance() noexcept {
    const int a = nearestAxis();
    const GridCrossing<Real> crossing{a, step_[a], tNext_[a]};
    cube_[a] += step_[a];
    if constexpr (kBoundaries == GridBoundaries::FromCell) {
      tNext_[a] = fromCell(a);
    } else {
      tNext_[a] += tDelta_[a];
    }
    return crossing;
  }

 private:
  static constexpr int kNoLimit[2][3] = {{INT_MIN, INT_MIN, INT_MIN}, {INT_MAX, INT_MAX, INT_MAX}};
  static constexpr Real kInf = std::numeric_limits<Real>::infinity();

  int nearestAxis() const noexcept {
    if constexpr (kTies == GridTies::LowAxis) {
      int a = 0;
      if (tNext_[1] < tNext_[a]) a = 1;
      if (tNext_[2] < tNext_[a]) a = 2;
      return a;
    } else {
      return tNext_[0] < tNext_[1] ? (tNext_[0] < tNext_[2] ? 0 : 2) : (tNext_[1] < tNext_[2] ? 1 : 2);
    }
  }
  /// The t of the boundary ahead on axis a, from the cube.
  Real fromCell(int a) const noexcept {
    if (step_[a] == 0) return kInf;
    const int b = step_[a] > 0 ? cube_[a] + 1 : cube_[a];
    return (static_cast<Real>(b) * static_cast<Real>(size_) - o_[a]) * invD_[a];
  }

  std::array<int, 3> cube_{};
  std::array<int, 3> step_{};
  std::array<int, 3> lo_{}, hi_{};
  Real tNext_[3]{};   // t of the next boundary on each axis
  Real tDelta_[3]{};  // t between boundaries on each axis (the Stepped kinds)
  Real o_[3]{};       // origin and 1 / d (FromCell)
  Real invD_[3]{};
  int size_;
};

}  // namespace loam::sim
