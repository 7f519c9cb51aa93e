// runTrace: build a scene's world, run a script for a number of steps and fold the
// trace hash (sim/trace/trace_hash.h). One implementation behind `loam-tool sim --hash`
// and the in-process determinism test, so both compute the golden the same way.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "sim/core/result.h"
#include "sim/gen/column_streamer.h"
#include "sim/systems/events.h"

namespace loam::sim {

/// Totals of one run (for --stats and benches).
struct TraceRunStats {
  std::uint64_t steps = 0;
  std::uint64_t edits = 0;                 ///< edit records
  std::uint64_t stateRecords = 0;          ///< player, water, fire and animal records
  std::array<std::uint64_t, std::variant_size_v<Event>> events{};  ///< by Event alternative
  std::array<std::uint64_t, 16> rejections{};                      ///< by RejectReason
  std::size_t players = 0, animals = 0;    ///< at the end
  StreamStats stream;                      ///< a streamed run's residency (zero otherwise)
};

/// How to run a trace (none of it changes the hash).
struct TraceOptions {
  /// Stream the world (createStreamedSimState and a ColumnStreamer updated around
  /// the players before every step) instead of generating it whole.
  std::optional<StreamOptions> stream;
};

/// The result of a run.
struct TraceRun {
  std::uint64_t hash = 0;  ///< the trace hash
  TraceRunStats stats;
};

/// Loads scenePath and (if not empty) scriptPath, builds the world with `seed` (the
/// scene's default when nullopt), runs `steps` steps feeding the script's commands,
/// and returns the trace hash. Errors: unreadable or invalid scene / script, or a
/// world that cannot be built. Allocates; single-threaded except inside generation.
Result<TraceRun> runTrace(const std::string& scenePath, std::optional<std::uint64_t> seed,
                          const std::string& scriptPath, std::uint64_t steps, const TraceOptions& options = {});

}  // namespace loam::sim
