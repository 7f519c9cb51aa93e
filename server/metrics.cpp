#include "server/metrics.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>

namespace loam::server {

void StepHistogram::add(double seconds) noexcept {
  std::size_t i = 0;
  while (i < kStepBucketsSeconds.size() && seconds > kStepBucketsSeconds[i]) ++i;
  ++counts[i];
  sumSeconds += seconds;
  ++count;
}

OpsBoard::OpsBoard(OpsIdentity identity) : identity_(std::move(identity)), start_(Clock::now()), lastBeatNs_(0) {}

void OpsBoard::beat() noexcept {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
  lastBeatNs_.store(static_cast<std::int64_t>(ns), std::memory_order_relaxed);
}

void OpsBoard::setPhase(OpsPhase phase) noexcept { phase_.store(phase, std::memory_order_release); }

void OpsBoard::setKeepingUp(bool keepingUp) noexcept { keepingUp_.store(keepingUp, std::memory_order_relaxed); }

bool OpsBoard::tryPublish(const OpsSnapshot& s) {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  published_ = s;  // map copy-assignment reuses the existing nodes
  return true;
}

void OpsBoard::publish(const OpsSnapshot& s) {
  std::lock_guard lock(mutex_);
  published_ = s;
}

OpsSnapshot OpsBoard::read() const {
  std::lock_guard lock(mutex_);
  return published_;
}

OpsPhase OpsBoard::phase() const noexcept { return phase_.load(std::memory_order_acquire); }

bool OpsBoard::keepingUp() const noexcept { return keepingUp_.load(std::memory_order_relaxed); }

double OpsBoard::secondsSinceBeat(Clock::time_point now) const noexcept {
  auto beatAt = start_ + std::chrono::nanoseconds(lastBeatNs_.load(std::memory_order_relaxed));
  return std::chrono::duration<double>(now - beatAt).count();
}

double OpsBoard::uptimeSeconds(Clock::time_point now) const noexcept {
  return std::chrono::duration<double>(now - start_).count();
}

HttpAnswer healthAnswer(OpsPhase phase, double secondsSinceBeat) {
  switch (phase) {
    case OpsPhase::Starting:
      return secondsSinceBeat <= kStallSeconds ? HttpAnswer{200, "starting\n"} : HttpAnswer{503, "stalled\n"};
    case OpsPhase::Ready:
      return secondsSinceBeat <= kStallSeconds ? HttpAnswer{200, "ok\n"} : HttpAnswer{503, "stalled\n"};
    case OpsPhase::Stopping:
      return {200, "stopping\n"};
  }
  return {503, "unknown\n"};
}

HttpAnswer readyAnswer(OpsPhase phase) {
  switch (phase) {
    case OpsPhase::Starting:
      return {503, "starting\n"};
    case OpsPhase::Ready:
      return {200, "ready\n"};
    case OpsPhase::Stopping:
      return {503, "stopping\n"};
  }
  return {503, "unknown\n"};
}

std::optional<std::uint64_t> residentMemoryBytes() {
  // statm: size resident shared text lib data dt, in pages.
  std::ifstream in("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return std::nullopt;
  long page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0) return std::nullopt;
  return resident * static_cast<std::uint64_t>(page);
}

std::string jsonEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

namespace {

/// A Prometheus label value: backslash, quote and newline escaped.
std::string labelValue(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

/// Appends Prometheus families to one string.
struct Writer {
  std::string out;

  void family(const char* name, const char* type, const char* help) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
  }
  void sample(const char* name, const std::string& labels, std::uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%" PRIu64, v);
    line(name, labels, buf);
  }
  void sample(const char* name, const std::string& labels, double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    line(name, labels, buf);
  }
  void line(const char* name, const std::string& labels, const char* value) {
    out += name;
    if (!labels.empty()) {
      out += '{';
      out += labels;
      out += '}';
    }
    out += ' ';
    out += value;
    out += '\n';
  }
  void counter(const char* name, const char* help, std::uint64_t v) {
    family(name, "counter", help);
    sample(name, "", v);
  }
  void gauge(const char* name, const char* help, double v) {
    family(name, "gauge", help);
    sample(name, "", v);
  }
  void gauge(const char* name, const char* help, std::uint64_t v) {
    family(name, "gauge", help);
    sample(name, "", v);
  }
  /// One counter family labelled by message type.
  void byType(const char* name, const char* help, const std::map<std::string, net::TrafficCounters>& m,
              bool bytes) {
    family(name, "counter", help);
    for (const auto& [type, c] : m) sample(name, "type=\"" + labelValue(type) + "\"", bytes ? c.bytes : c.messages);
  }
};

}  // namespace

std::string formatPrometheus(const OpsIdentity& id, const OpsSnapshot& s, const ProcessSample& p) {
  Writer w;
  w.out.reserve(6000);
  w.family("loam_info", "gauge", "Server identity (always 1).");
  w.sample("loam_info",
           "name=\"" + labelValue(id.name) + "\",scene=\"" + labelValue(id.scene) + "\",seed=\"" +
               std::to_string(id.seed) + "\",version=\"" + labelValue(id.version) + "\"",
           std::uint64_t{1});
  w.gauge("loam_ready", "1 when the world is built and players are accepted.",
          std::uint64_t{p.phase == OpsPhase::Ready ? 1u : 0u});
  w.gauge("loam_uptime_seconds", "Seconds since the process started.", p.uptimeSeconds);
  w.gauge("loam_tick", "Current simulation tick (60 per second; continues from a loaded save).", s.tick);
  w.gauge("loam_players", "Players in the game.", std::uint64_t{s.host.players});
  w.gauge("loam_peers", "Connected network peers (players, joining clients, bots).", std::uint64_t{s.host.peers});
  w.gauge("loam_max_players", "Player cap (--max-players).", std::uint64_t{id.maxPlayers});

  w.family("loam_step_seconds", "histogram", "Duration of one server tick (receive, step, send).");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kStepBucketsSeconds.size(); ++i) {
    cumulative += s.step.counts[i];
    char le[32];
    std::snprintf(le, sizeof le, "le=\"%g\"", kStepBucketsSeconds[i]);
    w.sample("loam_step_seconds_bucket", le, cumulative);
  }
  w.sample("loam_step_seconds_bucket", "le=\"+Inf\"", s.step.count);
  w.sample("loam_step_seconds_sum", "", s.step.sumSeconds);
  w.sample("loam_step_seconds_count", "", s.step.count);

  w.counter("loam_tick_overruns_total", "Catch-up bursts that ended still behind, so ticks were dropped.",
            s.overruns);
  w.counter("loam_ticks_dropped_total", "Ticks skipped to catch up after overruns.", s.ticksDropped);
  w.counter("loam_received_bytes_total", "UDP payload bytes received, ENet headers included.", s.host.bytesIn);
  w.counter("loam_sent_bytes_total", "UDP payload bytes sent, ENet headers included.", s.host.bytesOut);
  w.byType("loam_sent_messages_total", "Messages sent, by message type.", s.host.sent, false);
  w.byType("loam_sent_message_bytes_total", "Message bytes sent (before ENet), by message type.", s.host.sent, true);
  w.byType("loam_received_messages_total", "Messages received, by message type.", s.host.received, false);
  w.byType("loam_received_message_bytes_total", "Message bytes received, by message type.", s.host.received, true);
  w.counter("loam_joins_total", "Players that joined.", s.host.joins);
  w.family("loam_join_seconds", "histogram", "Join time: ENet connect to playing (client world building included).");
  std::uint64_t joinCumulative = 0;
  for (std::size_t i = 0; i < net::kJoinBucketsSeconds.size(); ++i) {
    joinCumulative += s.host.joinSecondsBuckets[i];
    char le[32];
    std::snprintf(le, sizeof le, "le=\"%g\"", net::kJoinBucketsSeconds[i]);
    w.sample("loam_join_seconds_bucket", le, joinCumulative);
  }
  w.sample("loam_join_seconds_bucket", "le=\"+Inf\"", s.host.joinSecondsCount);
  w.sample("loam_join_seconds_sum", "", s.host.joinSecondsSum);
  w.sample("loam_join_seconds_count", "", s.host.joinSecondsCount);
  w.counter("loam_leaves_total", "Players that left.", s.host.leaves);
  w.counter("loam_rejected_sessions_total", "Sessions ended with a Reject.", s.host.rejected);
  w.counter("loam_address_refused_total", "Connects refused: the address already held its peer limit.",
            s.host.addressRefused);
  w.counter("loam_join_rate_refused_total", "Connects refused: the address connected too often.",
            s.host.joinRateRefused);
  w.counter("loam_auth_failures_total", "Account proofs that failed: a wrong key or a bad signature.",
            s.host.authFailures);
  w.counter("loam_join_timeouts_total", "Sessions dropped for no Hello or no join progress in time.",
            s.host.joinTimeouts);
  w.counter("loam_malformed_packets_total", "Inbound messages dropped as malformed.", s.host.malformed);
  w.counter("loam_flooded_packets_total", "Inbound messages dropped for rate.", s.host.flooded);
  w.counter("loam_inputs_dropped_total", "Player inputs dropped on queue overflow.", s.host.inputsDropped);
  w.counter("loam_inputs_over_rate_total", "Player inputs dropped for arriving faster than the tick rate.",
            s.host.inputsOverRate);
  w.counter("loam_budget_deferred_total", "Records held back by per-client byte budgets.", s.host.budgetDeferred);
  w.counter("loam_water_records_left_out_total", "Water records not sent: the amount was the previous flush's.",
            s.host.waterRecordsLeftOut);
  w.counter("loam_stream_resent_bytes_total", "Ordered-stream item bytes sent again: copies by loss and resends.",
            s.host.streamResentBytes);
  w.counter("loam_illegal_transitions_total", "Session phase changes the state machine refused (server bugs).",
            s.host.illegalTransitions);
  w.counter("loam_columns_checked_total", "Generated columns clients reported that equal the server's.",
            s.host.columnsChecked);
  w.counter("loam_columns_unchecked_total",
            "Generated columns clients reported that the server did not hold unmodified, or dropped unread.",
            s.host.columnsUnchecked);
  w.counter("loam_column_mismatches_total", "Generated columns that differed from the server's (client rejected).",
            s.host.columnMismatches);
  w.counter("loam_saves_total", "Commits written to the world database.", s.saves);
  w.counter("loam_save_failures_total", "Commits that failed (their bricks go into the next commit).", s.saveFailures);
  w.gauge("loam_save_duration_seconds", "Capture, encode and commit time of the last commit.",
          s.lastSaveSeconds);
  w.gauge("loam_save_size_bytes", "Bytes (brick rows and compressed blobs) the last commit wrote.", s.lastSaveBytes);
  w.gauge("loam_world_bytes", "Heap bytes of the voxel store (tables, bricks, change sets).", s.worldBytes);
  w.gauge("loam_world_modified_bricks", "Bricks changed since the world was generated.", s.modifiedBricks);
  w.gauge("loam_fire_cells", "Cells burning.", s.fireCells);
  w.counter("loam_db_columns_loaded_total", "Columns whose edits were read from the world database.",
            s.dbColumnsLoaded);
  w.counter("loam_db_columns_paged_out_total", "Columns holding edits that left memory once committed.",
            s.dbColumnsPagedOut);
  w.counter("loam_db_read_problems_total", "World database rows or columns that could not be read.",
            s.dbReadProblems);
  if (p.residentBytes) w.gauge("loam_resident_memory_bytes", "Resident memory of the process.", *p.residentBytes);
  return w.out;
}

std::string formatStatusJson(const OpsIdentity& id, const OpsSnapshot& s, const ProcessSample& p) {
  char num[160];
  std::snprintf(num, sizeof num,
                "\"seed\":%" PRIu64 ",\"players\":%u,\"max_players\":%u,\"uptime_seconds\":%.3f,\"tick\":%" PRIu64,
                id.seed, s.host.players, id.maxPlayers, p.uptimeSeconds, s.tick);
  std::string out = "{\"name\":\"" + jsonEscape(id.name) + "\",\"scene\":\"" + jsonEscape(id.scene) + "\"," + num +
                    ",\"version\":\"" + jsonEscape(id.version) + "\",\"ready\":" +
                    (p.phase == OpsPhase::Ready ? "true" : "false") + "}\n";
  return out;
}

}  // namespace loam::server
