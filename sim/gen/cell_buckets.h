// Items by grid cell, for queries by position: each cell of a regular grid lists the
// items whose box may reach it (compressed rows: one offset per cell, then the item
// indices cell after cell). The plan buckets its river and road segments and the
// generator its buildings' pads this way, on the plan's grid.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/gen/noise.h"
#include "sim/gen/scene.h"

namespace loam::sim {

class CellBuckets {
 public:
  /// An item's reach, metres (x0 <= x1, z0 <= z1).
  struct Box {
    double x0 = 0, z0 = 0, x1 = 0, z1 = 0;
  };

  CellBuckets() = default;
  /// A grid of nx x nz cells `cell` metres wide whose cell (0, 0) starts at origin;
  /// boxes[i] is item i's reach. Parts of boxes off the grid are dropped.
  CellBuckets(std::span<const Box> boxes, Vec2 origin, double cell, int nx, int nz);

  /// The items that may reach (x, z), in item order: empty off the grid. Inline: it
  /// runs several times for every generated column.
  std::span<const std::uint32_t> at(double x, double z) const noexcept {
    const auto i = static_cast<int>(floorToInt((x - origin_.x) / cell_));
    const auto j = static_cast<int>(floorToInt((z - origin_.z) / cell_));
    if (i < 0 || j < 0 || i >= nx_ || j >= nz_) return {};
    const std::size_t c = static_cast<std::size_t>(j) * static_cast<std::size_t>(nx_) + static_cast<std::size_t>(i);
    return {items_.data() + start_[c], items_.data() + start_[c + 1]};
  }

 private:
  Vec2 origin_;
  double cell_ = 1.0;
  int nx_ = 0, nz_ = 0;
  std::vector<std::uint32_t> start_;  // per cell, then one past the last: offsets into items_
  std::vector<std::uint32_t> items_;
};

}  // namespace loam::sim
