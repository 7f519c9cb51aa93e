#include "net/host/column_checks.h"

#include <cinttypes>
#include <cstdio>

#include "sim/world/brick_store.h"
#include "sim/world/world_hash.h"

namespace loam::net::host {

void ColumnChecks::run() {
  const std::size_t n = core_.sessions.size();
  if (n == 0) return;
  std::size_t budget = kColumnChecksPerTick;
  // Round robin: one column from each session with some waiting, until the budget
  // is spent or nobody has any left.
  for (std::size_t idle = 0; budget > 0 && idle < n; next_ = (next_ + 1) % n) {
    Session& s = core_.sessions[next_];
    if (s.columnChecks.empty() || !inGame(s.phase)) {
      ++idle;
      continue;
    }
    idle = 0;
    const sim::GeneratedColumnHash reported = s.columnChecks.front();
    s.columnChecks.pop_front();
    check(s, reported);
    --budget;
  }
}

void ColumnChecks::check(Session& s, const sim::GeneratedColumnHash& reported) {
  const sim::BrickStore& world = core_.state.world;
  const sim::ChunkColumn c = reported.column;
  if (!world.bounds().containsColumn(c.x, c.z) || !world.columnPresent(c) || world.columnModified(c)) {
    ++core_.stats.columnsUnchecked;
    return;
  }
  const std::uint64_t ours = sim::hashColumns(world, std::span(&c, 1)).world;
  if (ours == reported.hash) {
    ++core_.stats.columnsChecked;
    return;
  }
  ++core_.stats.columnMismatches;
  const sim::CellCoord cell = sim::cellOfColumn(c);
  char text[200];
  std::snprintf(text, sizeof text,
                "generated column (%d, %d) in cell (%d, %d) differs at tick %" PRIu64
                ": client hash %016" PRIx64 ", server %016" PRIx64,
                c.x, c.z, cell.x, cell.z, core_.state.tick, reported.hash, ours);
  core_.reject(s, RejectCode::WorldMismatch, text);
}

}  // namespace loam::net::host
