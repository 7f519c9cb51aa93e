#include "sim/gen/cell_buckets.h"

#include <algorithm>


namespace loam::sim {

CellBuckets::CellBuckets(std::span<const Box> boxes, Vec2 origin, double cell, int nx, int nz)
    : origin_(origin), cell_(cell), nx_(nx), nz_(nz) {
  const std::size_t cells = static_cast<std::size_t>(nx) * static_cast<std::size_t>(nz);
  auto visit = [&](const Box& b, auto&& f) {
    const auto i0 = static_cast<int>(floorToInt((b.x0 - origin.x) / cell));
    const auto i1 = static_cast<int>(floorToInt((b.x1 - origin.x) / cell));
    const auto j0 = static_cast<int>(floorToInt((b.z0 - origin.z) / cell));
    const auto j1 = static_cast<int>(floorToInt((b.z1 - origin.z) / cell));
    for (int j = std::max(0, j0); j <= std::min(nz - 1, j1); ++j)
      for (int i = std::max(0, i0); i <= std::min(nx - 1, i1); ++i)
        f(static_cast<std::size_t>(j) * static_cast<std::size_t>(nx) + static_cast<std::size_t>(i));
  };
  start_.assign(cells + 1, 0);
  for (const Box& b : boxes) visit(b, [&](std::size_t c) { ++start_[c + 1]; });
  for (std::size_t c = 0; c < cells; ++c) start_[c + 1] += start_[c];
  items_.resize(start_[cells]);
  std::vector<std::uint32_t> fill(start_.begin(), start_.end() - 1);
  for (std::size_t k = 0; k < boxes.size(); ++k)
    visit(boxes[k], [&](std::size_t c) { items_[fill[c]++] = static_cast<std::uint32_t>(k); });
}

}  // namespace loam::sim
