// CornerSearch (see corner_search.h).
#include "audio/corner_search.h"

#include <algorithm>
#include <cmath>

#include "audio/internal/probe_trace.h"

namespace loam::audio {
namespace {

constexpr float kBrickMetres = static_cast<float>(sim::kBrickSize) / static_cast<float>(sim::kVoxelsPerMetre);

std::uint64_t pack(std::int32_t x, std::int32_t y, std::int32_t z) {
  constexpr std::int64_t kBias = 1 << 20;
  return (static_cast<std::uint64_t>(x + kBias) << 42) | (static_cast<std::uint64_t>(y + kBias) << 21) |
         static_cast<std::uint64_t>(z + kBias);
}

Vec3f centreOf(std::int32_t x, std::int32_t y, std::int32_t z) {
  return {(static_cast<float>(x) + 0.5f) * kBrickMetres, (static_cast<float>(y) + 0.5f) * kBrickMetres,
          (static_cast<float>(z) + 0.5f) * kBrickMetres};
}

float distance(Vec3f a, Vec3f b) {
  const float dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

enum class Step { Blocked, Air, Mouth };

/// Can sound step from brick a (at point `from`: its centre, or the ears) into its
/// neighbour b, and what is b? Uniform bricks are open or closed whole; into or out of
/// a mixed brick, the line from `from` to b's centre must meet no voxel that stops
/// sound (a 5 cm lid inside a brick closes it).
/// b under the sky, or outside the world's sides or top (air open to the sky), is a
/// mouth.
Step step(const sim::BrickStore& store, const AcousticTable& table, sim::BrickCoord a, Vec3f from, sim::BrickCoord b) {
  const sim::WorldBounds& wb = store.bounds();
  if (b.y < wb.minBrick.y) return Step::Blocked;
  if (!wb.containsBrick(b)) return Step::Mouth;
  const sim::BrickView vb = store.brick(b);
  if (vb.isUniform() && table.stops[vb.uniformMaterial()]) return Step::Blocked;
  const sim::BrickView va = store.brick(a);
  if ((!va.isUniform() || !vb.isUniform()) &&
      !internal::clearLine(store, table, from, centreOf(b.x, b.y, b.z)))
    return Step::Blocked;
  const internal::SkyColumn sky =
      internal::skyAbove(store, table, b.x * sim::kBrickSize + 4, b.y * sim::kBrickSize + 4, b.z * sim::kBrickSize + 4);
  return sky.roofed ? Step::Air : Step::Mouth;
}

}  // namespace

CornerSearch::CornerSearch(CornerSearchConfig config) : config_(config) {
  config_.maxBricks = std::max(config_.maxBricks, 16);
  nodes_.reserve(static_cast<std::size_t>(config_.maxBricks) + 8);
  std::size_t cap = 16;
  while (cap < static_cast<std::size_t>(config_.maxBricks) * 2) cap *= 2;  // load <= 1/2
  seen_.assign(cap, 0);
  chain_.reserve(static_cast<std::size_t>(config_.maxPath / kBrickMetres) + 8);
}

std::size_t CornerSearch::slot(std::int32_t x, std::int32_t y, std::int32_t z) const {
  const std::uint64_t key = pack(x, y, z);
  const std::size_t mask = seen_.size() - 1;
  std::size_t i = (key * 0x9E3779B97F4A7C15ull) >> 40 & mask;
  while (seen_[i] != 0 && seen_[i] != key) i = (i + 1) & mask;
  return i;
}

bool CornerSearch::contains(std::int32_t x, std::int32_t y, std::int32_t z) const {
  return seen_[slot(x, y, z)] != 0;
}

void CornerSearch::insert(std::int32_t x, std::int32_t y, std::int32_t z) { seen_[slot(x, y, z)] = pack(x, y, z); }

int CornerSearch::find(const sim::BrickStore& store, const AcousticTable& table, Vec3f listener,
                       std::span<Opening> out) {
  nodes_.clear();
  std::fill(seen_.begin(), seen_.end(), 0);
  constexpr float kVpm = static_cast<float>(sim::kVoxelsPerMetre);
  const sim::VoxelCoord ear{static_cast<int>(std::floor(listener.x * kVpm)),
                            static_cast<int>(std::floor(listener.y * kVpm)),
                            static_cast<int>(std::floor(listener.z * kVpm))};
  if (out.empty() || !internal::skyAbove(store, table, ear.x, ear.y, ear.z).roofed) return 0;

  // Breadth first from the listener's brick (even when it is mostly solid: the ears
  // are in its air). Mouths end their branch: the search stays under the roof.
  const sim::BrickCoord start = sim::brickOf(ear);
  const int maxSteps = static_cast<int>(config_.maxPath / kBrickMetres);
  const float cosMin = std::cos(config_.minAngleDeg * kPi / 180.0f);
  insert(start.x, start.y, start.z);
  nodes_.push_back({start.x, start.y, start.z, -1, 0, false});

  int found = 0, mouthsTried = 0;
  static constexpr int kStep[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 0, 1}, {0, 0, -1}, {0, 1, 0}, {0, -1, 0}};
  for (std::size_t head = 0; head < nodes_.size(); ++head) {
    const Node n = nodes_[head];
    if (n.mouth || n.steps >= maxSteps) continue;
    for (const auto& s : kStep) {
      if (static_cast<int>(nodes_.size()) >= config_.maxBricks) return found;
      const std::int32_t x = n.x + s[0], y = n.y + s[1], z = n.z + s[2];
      if (contains(x, y, z)) continue;
      // A brick closed from one side may be open from another: only entered ones are kept.
      const Vec3f from = n.parent < 0 ? listener : centreOf(n.x, n.y, n.z);  // the ears, not their brick's centre
      const Step c = step(store, table, sim::BrickCoord{n.x, n.y, n.z}, from, sim::BrickCoord{x, y, z});
      if (c == Step::Blocked) continue;
      insert(x, y, z);
      nodes_.push_back({x, y, z, static_cast<std::int32_t>(head), n.steps + 1, c == Step::Mouth});
      if (c != Step::Mouth) continue;
      Opening o;
      if (!pull(store, table, listener, static_cast<int>(nodes_.size()) - 1, o)) continue;
      bool distinct = true;
      for (int k = 0; k < found; ++k) {
        const Vec3f& d = out[static_cast<std::size_t>(k)].direction;
        if (d.x * o.direction.x + d.y * o.direction.y + d.z * o.direction.z > cosMin) distinct = false;
      }
      if (distinct) out[static_cast<std::size_t>(found++)] = o;
      if (found == static_cast<int>(out.size()) || ++mouthsTried >= config_.maxMouths) return found;
    }
  }
  return found;
}

bool CornerSearch::pull(const sim::BrickStore& store, const AcousticTable& table, Vec3f listener, int mouth,
                        Opening& out) {
  // The chain from the mouth back to the start, then listener -> ... -> mouth order.
  chain_.clear();
  for (int i = mouth; i >= 0; i = nodes_[static_cast<std::size_t>(i)].parent) chain_.push_back(i);
  std::reverse(chain_.begin(), chain_.end());
  const int last = static_cast<int>(chain_.size()) - 1;
  auto point = [&](int k) {
    const Node& n = nodes_[static_cast<std::size_t>(chain_[static_cast<std::size_t>(k)])];
    return centreOf(n.x, n.y, n.z);
  };
  // String pulling: from the current point, the farthest chain point in sight (found
  // by halving: a tunnel's chain leaves sight once and stays out), until the mouth.
  Vec3f cur = listener;
  int at = 0, count = 0;
  float along = 0;
  out = Opening{};
  while (at < last) {
    int next = last;
    if (count == Opening::kMaxWaypoints - 1) {
      // One waypoint left: the mouth, the rest of the way counted in brick steps.
      along += static_cast<float>(last - at) * kBrickMetres;
    } else {
      if (!internal::clearLine(store, table, cur, point(last))) {
        int lo = at, hi = last;  // lo: in sight (or the current point), hi: not
        while (hi - lo > 1) {
          const int mid = (lo + hi) / 2;
          if (internal::clearLine(store, table, cur, point(mid))) lo = mid;
          else hi = mid;
        }
        next = std::max(lo, at + 1);  // no chain point in sight (a voxel's edge): step on
      }
      along += distance(cur, point(next));
    }
    const Vec3f p = point(next);
    const Vec3f w{p.x - listener.x, p.y - listener.y, p.z - listener.z};
    if (count == 0) {  // the first: the opening's direction and distance
      const float d = std::sqrt(w.x * w.x + w.y * w.y + w.z * w.z);
      if (!(d > 0)) return false;
      out.direction = {w.x / d, w.y / d, w.z / d};
      out.distance = d;
    } else {
      out.beyond[static_cast<std::size_t>(count - 1)] = w;
      out.beyondAlong[static_cast<std::size_t>(count - 1)] = along;
      out.beyondCount = count;
    }
    ++count;
    cur = p;
    at = next;
  }
  return along <= config_.maxPath;
}

}  // namespace loam::audio
