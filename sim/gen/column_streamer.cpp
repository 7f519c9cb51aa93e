#include "sim/gen/column_streamer.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/gen/scene.h"

namespace loam::sim {

namespace {

std::uint64_t keyOf(ChunkColumn c) noexcept {
  return (std::uint64_t{static_cast<std::uint32_t>(c.x)} << 32) | static_cast<std::uint32_t>(c.z);
}

ChunkColumn columnOf(StreamCentre c) noexcept {
  return {c.x >> (kBrickShift + kChunkShift), c.z >> (kBrickShift + kChunkShift)};
}

std::int64_t nearest2(ChunkColumn c, std::span<const StreamCentre> centres) noexcept {
  std::int64_t best = INT64_MAX;
  for (const StreamCentre& s : centres) best = std::min(best, distance2(c, s));
  return best;
}

}  // namespace

std::int64_t distance2(ChunkColumn c, StreamCentre centre) noexcept {
  constexpr std::int32_t kColumnVoxels = kChunkBricks * kBrickSize;
  auto axis = [](std::int32_t lo, std::int32_t v) -> std::int64_t {
    const std::int64_t hi = std::int64_t{lo} + kColumnVoxels - 1;
    return v < lo ? std::int64_t{lo} - v : v > hi ? v - hi : 0;
  };
  const std::int64_t dx = axis(c.x * kColumnVoxels, centre.x), dz = axis(c.z * kColumnVoxels, centre.z);
  return dx * dx + dz * dz;
}

struct ColumnStreamer::Impl {
  explicit Impl(ChunkGenerator g, const StreamOptions& o) : gen(std::move(g)), options(o) {}

  ChunkGenerator gen;
  StreamOptions options;
  StreamStats stats;
  std::uint64_t epoch = 1;                                    // updates so far, plus one
  std::unordered_map<std::uint64_t, std::uint64_t> faultedAt;  // column -> epoch of its last fault
  // Columns holding edits at the last release scan: they stay whatever the budget,
  // and the budget counts the others (a world's edits only grow between scans).
  std::size_t modifiedSeen = 0;
  // The step thread's plan, remade only when a centre moves to another column.
  std::vector<ChunkColumn> planCentres;                    // the centres' columns it was made for
  std::vector<std::pair<std::int64_t, ChunkColumn>> plan;  // missing columns, nearest last
  std::vector<std::pair<ChunkColumn, BrickStore>> arrived;  // reused: what workers finished
  std::vector<ChunkColumn> extra;  // prefetch()'s columns not yet seen present, canonical order
  bool extraQueued = true;         // extra is in the workers' queue (update queues it)

  // Shared with the workers, under mutex.
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::vector<ChunkColumn> queue;              // nearest last (workers pop the back)
  std::unordered_set<std::uint64_t> inFlight;  // queued or being generated
  std::vector<std::pair<ChunkColumn, BrickStore>> done;
  std::vector<GeneratedColumnHash> hashes;  // options.hashColumns: since the last takeColumnHashes
  std::vector<std::thread> workers;

  // Any thread; takes the mutex only to record the hash (the caller must not hold it).
  BrickStore generate(ChunkColumn c) {
    BrickStore out(gen.bounds());
    gen.generateColumn(c, out);
    if (options.hashColumns) {
      const std::uint64_t h = hashColumns(out, std::span(&c, 1)).world;
      std::lock_guard lock(mutex);
      hashes.push_back({c, h});
    }
    return out;
  }

  void work() {
    std::unique_lock lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return stopping || !queue.empty(); });
      if (stopping) return;
      const ChunkColumn c = queue.back();
      queue.pop_back();
      lock.unlock();
      BrickStore made = generate(c);
      lock.lock();
      inFlight.erase(keyOf(c));
      done.emplace_back(c, std::move(made));
    }
  }
};

ColumnStreamer::ColumnStreamer() = default;

ColumnStreamer::~ColumnStreamer() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  for (std::thread& t : impl_->workers) t.join();
}

Result<std::unique_ptr<ColumnStreamer>> ColumnStreamer::create(const Scene& scene, std::uint64_t seed,
                                                               const StreamOptions& options) {
  auto gen = ChunkGenerator::create(scene, seed);
  if (!gen) return gen.error();
  std::unique_ptr<ColumnStreamer> s(new ColumnStreamer());
  s->impl_ = std::make_unique<Impl>(std::move(gen).value(), options);
  for (int t = 1; t < options.threads; ++t) s->impl_->workers.emplace_back([impl = s->impl_.get()] { impl->work(); });
  return s;
}

void ColumnStreamer::takeColumnHashes(std::vector<GeneratedColumnHash>& out) {
  std::lock_guard lock(impl_->mutex);
  out.insert(out.end(), impl_->hashes.begin(), impl_->hashes.end());
  impl_->hashes.clear();
}

const ChunkGenerator& ColumnStreamer::generator() const noexcept { return impl_->gen; }

StreamStats ColumnStreamer::stats() const noexcept { return impl_->stats; }

void ColumnStreamer::fault(ChunkColumn column, BrickStore& store) {
  Impl& m = *impl_;
  {
    std::lock_guard lock(m.mutex);
    for (auto it = m.done.begin(); it != m.done.end(); ++it) {
      if (it->first == column) {
        store.adoptColumn(column, it->second);
        m.done.erase(it);
        ++m.stats.prefetched;
        return;
      }
    }
  }
  // Not finished ahead: generate it here (a worker doing it too only wastes its copy).
  BrickStore made = m.generate(column);
  store.adoptColumn(column, made);
  ++m.stats.faults;
  m.faultedAt[keyOf(column)] = m.epoch;
}

void ColumnStreamer::faultAll(std::span<const ChunkColumn> columns, BrickStore& store) {
  Impl& m = *impl_;
  std::vector<ChunkColumn> missing;
  for (ChunkColumn c : columns)
    if (!store.columnPresent(c)) missing.push_back(c);
  std::sort(missing.begin(), missing.end(), [](ChunkColumn a, ChunkColumn b) { return canonicalBefore(a, b); });
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  if (missing.empty()) return;  // the usual case for the client's held disc and CellStates: no threads started
  std::vector<std::optional<BrickStore>> made(missing.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < missing.size(); i = next.fetch_add(1)) made[i] = m.generate(missing[i]);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, m.options.threads); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (std::size_t i = 0; i < missing.size(); ++i) store.adoptColumn(missing[i], *made[i]);
  m.stats.faults += missing.size();
}

void ColumnStreamer::prefetch(std::span<const ChunkColumn> columns) {
  Impl& m = *impl_;
  for (ChunkColumn c : columns)
    if (m.gen.contains(c)) m.extra.push_back(c);
  std::sort(m.extra.begin(), m.extra.end(), [](ChunkColumn a, ChunkColumn b) { return canonicalBefore(a, b); });
  m.extra.erase(std::unique(m.extra.begin(), m.extra.end()), m.extra.end());
  // The next update queues them: asked for during a start (createStreamedSimState),
  // they wait until the owner's loop runs instead of competing with the rest of it.
  m.extraQueued = false;
}

void ColumnStreamer::update(BrickStore& store, std::span<const StreamCentre> centres) {
  Impl& m = *impl_;
  // 1. Adopt what is finished.
  {
    std::lock_guard lock(m.mutex);
    m.arrived.swap(m.done);
  }
  for (auto& [column, made] : m.arrived) {
    if (store.columnPresent(column)) {
      ++m.stats.wasted;
    } else {
      store.adoptColumn(column, made);
      ++m.stats.prefetched;
    }
  }
  m.arrived.clear();
  if (!m.extra.empty())
    std::erase_if(m.extra, [&](ChunkColumn c) { return store.columnPresent(c); });

  // 2. Ask for the missing columns near the centres, nearest first. Most steps no
  // centre changes column, and the plan (and the workers' queue) stands.
  bool moved = m.planCentres.size() != centres.size();
  for (std::size_t i = 0; i < centres.size() && !moved; ++i)
    moved = !(m.planCentres[i] == columnOf(centres[i]));
  if (moved) {
    m.planCentres.clear();
    for (const StreamCentre& c : centres) m.planCentres.push_back(columnOf(c));
    std::unordered_map<std::uint64_t, std::pair<std::int64_t, ChunkColumn>> wanted;
    for (const StreamCentre& c : centres) {
      for (ChunkColumn col : columnsAround(m.gen.bounds(), c.x, c.z, m.options.prefetchRadiusVoxels)) {
        if (store.columnPresent(col)) continue;
        const std::int64_t d = distance2(col, c);
        auto [it, fresh] = wanted.try_emplace(keyOf(col), d, col);
        if (!fresh && d < it->second.first) it->second.first = d;
      }
    }
    m.plan.clear();
    for (auto& [key, v] : wanted) m.plan.push_back(v);
    // Farthest first, so the nearest is at the back; ties in canonical order.
    std::sort(m.plan.begin(), m.plan.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first > b.first;
      return canonicalBefore(b.second, a.second);
    });
    if (!m.workers.empty()) {
      {
        std::lock_guard lock(m.mutex);
        for (ChunkColumn col : m.queue) m.inFlight.erase(keyOf(col));
        m.queue.clear();
        // prefetch()'s columns still missing first in the queue, so last to be taken.
        for (auto it = m.extra.rbegin(); it != m.extra.rend(); ++it)
          if (m.inFlight.insert(keyOf(*it)).second) m.queue.push_back(*it);
        for (const auto& [d, col] : m.plan)
          if (m.inFlight.insert(keyOf(col)).second) m.queue.push_back(col);
      }
      m.wake.notify_all();
    }
  }
  if (!m.extraQueued && !moved && !m.workers.empty()) {
    {
      std::lock_guard lock(m.mutex);
      // Behind (before) what is queued: the centres' columns go first.
      std::vector<ChunkColumn> front;
      for (ChunkColumn c : m.extra)
        if (!store.columnPresent(c) && m.inFlight.insert(keyOf(c)).second) front.push_back(c);
      m.queue.insert(m.queue.begin(), front.rbegin(), front.rend());
    }
    m.wake.notify_all();
  }
  m.extraQueued = true;
  if (m.workers.empty()) {
    for (int i = 0; i < m.options.prefetchPerUpdate && (!m.plan.empty() || !m.extra.empty());) {
      // The plan first, then prefetch()'s columns.
      ChunkColumn col;
      if (!m.plan.empty()) {
        col = m.plan.back().second;
        m.plan.pop_back();
      } else {
        col = m.extra.back();
        m.extra.pop_back();
      }
      if (store.columnPresent(col)) continue;  // faulted in since the plan was made
      BrickStore made = m.generate(col);
      store.adoptColumn(col, made);
      ++m.stats.prefetched;
      ++i;
    }
  }

  // 3. Release beyond the budget: the columns least recently faulted in first (the
  // systems' working set away from the players is what faults), then the farthest
  // from every centre. The budget counts unmodified columns only: those holding edits
  // cannot go, and counting them let a world's edits crowd out the disc around the
  // players (released as it arrived, faulted in again: holes for a client's mirror).
  const std::span<const ChunkColumn> present = store.presentColumns();
  if (present.size() > m.options.maxResidentColumns + m.modifiedSeen) {
    struct Candidate {
      std::uint64_t faulted;
      std::int64_t distance2;
      ChunkColumn column;
    };
    std::vector<Candidate> order;
    order.reserve(present.size());
    for (ChunkColumn col : present) {
      if (store.columnModified(col)) continue;  // stays: it holds edits
      const auto it = m.faultedAt.find(keyOf(col));
      order.push_back({it == m.faultedAt.end() ? 0 : it->second, nearest2(col, centres), col});
    }
    std::sort(order.begin(), order.end(), [](const Candidate& a, const Candidate& b) {
      if (a.faulted != b.faulted) return a.faulted < b.faulted;
      if (a.distance2 != b.distance2) return a.distance2 > b.distance2;
      return canonicalBefore(a.column, b.column);
    });
    // Down to 7/8 of the budget, so the sort runs once per many columns, not every step.
    std::vector<ChunkColumn> release;
    m.modifiedSeen = present.size() - order.size();
    const std::size_t target = m.options.maxResidentColumns - m.options.maxResidentColumns / 8;
    const std::size_t excess = order.size() > target ? order.size() - target : 0;
    for (std::size_t i = 0; i < excess; ++i) release.push_back(order[i].column);
    m.stats.released += static_cast<std::uint64_t>(store.releaseColumns(release));
    for (ChunkColumn col : release)
      if (!store.columnPresent(col)) m.faultedAt.erase(keyOf(col));
  }
  m.stats.peakResident = std::max(m.stats.peakResident, store.presentColumns().size());
  ++m.epoch;
}

}  // namespace loam::sim
