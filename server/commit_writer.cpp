#include "server/commit_writer.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <set>
#include <utility>

#include "server/log.h"

namespace loam::server {

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Adds to c the bricks and deletions of older that c does not touch again (c is newer).
void mergeOlder(sim::WorldDbCommit& c, sim::WorldDbCommit& older) {
  std::set<sim::BrickCoord> newer;
  for (const sim::SavedBrick& b : c.bricks) newer.insert(b.coord);
  for (sim::BrickCoord b : c.removed) newer.insert(b);
  for (sim::SavedBrick& b : older.bricks)
    if (!newer.contains(b.coord)) c.bricks.push_back(std::move(b));
  for (sim::BrickCoord b : older.removed)
    if (!newer.contains(b)) c.removed.push_back(b);
  older = {};
}

}  // namespace

CommitWriter::CommitWriter(std::unique_ptr<sim::WorldDb> db) : db_(std::move(db)), thread_([this] { run(); }) {}

CommitWriter::~CommitWriter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool CommitWriter::busy() const {
  std::lock_guard lock(mutex_);
  return working_ || pending_.has_value();
}

bool CommitWriter::submit(sim::WorldDbCommit commit, sim::StateCopy state, double captureMs) {
  {
    std::lock_guard lock(mutex_);
    if (working_ || pending_) return false;
    pending_ = std::move(commit);
    pendingState_ = std::move(state);
    pendingCaptureMs_ = captureMs;
  }
  cv_.notify_all();
  return true;
}

bool CommitWriter::waitIdle() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return !working_ && !pending_; });
  bool ok = !failed_;
  failed_ = false;
  return ok;
}

CommitStats CommitWriter::stats() const noexcept {
  CommitStats s;
  s.commits = commits_.load(std::memory_order_relaxed);
  s.failures = failures_.load(std::memory_order_relaxed);
  s.lastBytes = lastBytes_.load(std::memory_order_relaxed);
  s.lastSeconds = static_cast<double>(lastMicros_.load(std::memory_order_relaxed)) / 1e6;
  return s;
}

void CommitWriter::run() {
  for (;;) {
    sim::WorldDbCommit commit;
    sim::StateCopy state;
    double captureMs = 0;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stop_ || pending_; });
      if (!pending_) return;  // stop_ with nothing left to write
      commit = std::move(*pending_);
      pending_.reset();
      state = std::move(*pendingState_);
      pendingState_.reset();
      captureMs = pendingCaptureMs_;
      working_ = true;
    }
    mergeOlder(commit, carried_);
    auto t0 = std::chrono::steady_clock::now();
    commit.blobs = sim::stateBlobs(state);
    const double encodeMs = msSince(t0);
    auto t1 = std::chrono::steady_clock::now();
    auto written = db_->commit(commit);
    const double commitMs = msSince(t1);
    const bool ok = written.has_value();
    if (!ok) {
      logLine("commit of tick %" PRIu64 " failed (its bricks go into the next commit): %s", commit.tick,
              written.error().message.c_str());
      commit.blobs.clear();
      carried_ = std::move(commit);
      failures_.fetch_add(1, std::memory_order_relaxed);
    } else {
      lastBytes_.store(written->bytesWritten, std::memory_order_relaxed);
      lastMicros_.store(static_cast<std::uint64_t>((captureMs + encodeMs + commitMs) * 1000.0),
                        std::memory_order_relaxed);
      commits_.fetch_add(1, std::memory_order_relaxed);
      logLine("committed tick %" PRIu64 " to %s: %" PRIu64 " bricks written, %" PRIu64 " deleted, %" PRIu64
              " blobs changed, %.1f KB; capture %.2f ms on the step, encode %.1f ms, commit %.1f ms",
              commit.tick, db_->path().c_str(), written->bricksWritten, written->bricksDeleted, written->blobsWritten,
              static_cast<double>(written->bytesWritten) / 1024.0, captureMs, encodeMs, commitMs);
    }
    {
      std::lock_guard lock(mutex_);
      working_ = false;
      if (!ok) failed_ = true;
    }
    cv_.notify_all();
  }
}

}  // namespace loam::server
