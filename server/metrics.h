// What the operations side (HTTP endpoints, Agones client) knows about the server,
// and how it is shown: Prometheus text and status JSON.
//
// The step thread owns the live counters. About every 100 ms it fills an OpsSnapshot
// and offers it to the OpsBoard with tryPublish, which gives up at once when a reader
// holds the lock, so the 60 Hz step never waits on an HTTP thread. Readers copy the
// last published snapshot under the lock and format outside it. The heartbeat, the
// phase and the keeping-up flag are atomics written without any lock.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "net/server_host.h"

namespace loam::server {

/// Upper bounds (seconds) of the step time histogram buckets; +Inf is implied.
/// 0.0167 is one tick at 60 Hz.
inline constexpr std::array<double, 9> kStepBucketsSeconds{0.0005, 0.001, 0.002, 0.004, 0.008,
                                                           0.0167, 0.025, 0.05,  0.1};

/// Without a heartbeat for this long the server counts as stalled (/healthz 503, no
/// Agones health pings).
inline constexpr double kStallSeconds = 5.0;

/// Step (whole tick) durations. Plain counters: filled by the step thread only.
struct StepHistogram {
  std::array<std::uint64_t, kStepBucketsSeconds.size() + 1> counts{};  ///< per bucket (not cumulative); last = +Inf
  double sumSeconds = 0;
  std::uint64_t count = 0;

  /// Adds one duration. No allocation.
  void add(double seconds) noexcept;
};

/// Fixed facts about the server, known before the world is generated.
struct OpsIdentity {
  std::string name;     ///< --name
  std::string scene;    ///< Scene::name
  std::uint64_t seed = 0;
  std::uint32_t maxPlayers = 0;
  std::string version;  ///< loam-server version ("0.1.0")
};

/// Counters the step thread publishes.
struct OpsSnapshot {
  std::uint64_t tick = 0;           ///< simulation tick
  net::ServerStats host;            ///< ServerHost::stats()
  StepHistogram step;
  std::uint64_t overruns = 0;       ///< bursts that still ended behind (ticks were dropped)
  std::uint64_t ticksDropped = 0;
  std::uint64_t saves = 0;          ///< world database commits since start
  std::uint64_t saveFailures = 0;
  double lastSaveSeconds = 0;       ///< capture + encode + commit of the last commit
  std::uint64_t lastSaveBytes = 0;  ///< bytes the last commit wrote (brick rows, compressed blobs)
  // What the world holds: memory that follows play, not a leak (the soak tells them apart).
  std::uint64_t worldBytes = 0;      ///< BrickStore::memoryBytes()
  std::uint64_t modifiedBricks = 0;  ///< bricks changed since generation (what a save stores)
  std::uint64_t fireCells = 0;       ///< cells burning
  // A streamed world's columns holding edits (sim/save/world_db_columns.h).
  std::uint64_t dbColumnsLoaded = 0;    ///< columns whose rows were read from the database
  std::uint64_t dbColumnsPagedOut = 0;  ///< columns holding edits that left memory
  std::uint64_t dbReadProblems = 0;     ///< rows or columns that could not be read (shown as generated)
};

/// Where the server is in its life.
enum class OpsPhase : int {
  Starting,  ///< loading the scene, generating the world, restoring the save
  Ready,     ///< the host is open and accepting players
  Stopping,  ///< the loop has ended: final save, shutdown
};

/// The one place the step thread leaves state for the ops threads. Thread-safe.
class OpsBoard {
 public:
  using Clock = std::chrono::steady_clock;

  /// The start time (for uptime) is now; the heartbeat starts now.
  explicit OpsBoard(OpsIdentity identity);

  const OpsIdentity& identity() const noexcept { return identity_; }

  /// Records that the server made progress now. Any thread; no lock, no allocation.
  void beat() noexcept;
  void setPhase(OpsPhase phase) noexcept;
  /// False while an overrun episode is in progress. Any thread; no lock.
  void setKeepingUp(bool keepingUp) noexcept;

  /// Publishes s unless a reader holds the lock (then returns false and changes
  /// nothing). Never waits: this is the step thread's call. Allocates only when
  /// s has more message types than the last published snapshot.
  bool tryPublish(const OpsSnapshot& s);
  /// Publishes s, waiting for the lock. Not for the step loop (start and stop only).
  void publish(const OpsSnapshot& s);

  /// A copy of the last published snapshot (zeros before the first). Allocates.
  OpsSnapshot read() const;
  OpsPhase phase() const noexcept;
  bool keepingUp() const noexcept;
  /// Seconds since the last beat() (or construction).
  double secondsSinceBeat(Clock::time_point now = Clock::now()) const noexcept;
  double uptimeSeconds(Clock::time_point now = Clock::now()) const noexcept;

 private:
  const OpsIdentity identity_;
  const Clock::time_point start_;
  std::atomic<std::int64_t> lastBeatNs_;  ///< since start_
  std::atomic<OpsPhase> phase_{OpsPhase::Starting};
  std::atomic<bool> keepingUp_{true};
  mutable std::mutex mutex_;
  OpsSnapshot published_;
};

/// An HTTP answer: status code and body.
struct HttpAnswer {
  int status = 200;
  std::string body;
};

/// /healthz: 200 while the server makes progress (a beat within kStallSeconds:
/// "starting" while the world is built, "ok" once running), 200 "stopping" during
/// the final save; 503 "stalled" otherwise. Pure.
HttpAnswer healthAnswer(OpsPhase phase, double secondsSinceBeat);
/// /readyz: 200 "ready" in Ready, 503 "starting" / "stopping" otherwise. Pure.
HttpAnswer readyAnswer(OpsPhase phase);

/// Resident set size of this process from /proc/self/statm; empty if unreadable.
std::optional<std::uint64_t> residentMemoryBytes();

/// What the formatters need besides the snapshot.
struct ProcessSample {
  OpsPhase phase = OpsPhase::Starting;
  double uptimeSeconds = 0;
  std::optional<std::uint64_t> residentBytes;  ///< omitted from /metrics when empty
};

/// Prometheus text exposition format 0.0.4 (every family with # HELP and # TYPE,
/// names prefixed loam_). Allocates.
std::string formatPrometheus(const OpsIdentity& id, const OpsSnapshot& s, const ProcessSample& p);

/// The content type of formatPrometheus's output.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

/// /status: {"name","scene","seed","players","uptime_seconds","tick","version","ready"}. Allocates.
std::string formatStatusJson(const OpsIdentity& id, const OpsSnapshot& s, const ProcessSample& p);

/// s as the inside of a JSON string (quotes, backslashes and control bytes escaped).
std::string jsonEscape(const std::string& s);

}  // namespace loam::server
