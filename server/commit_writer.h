// Commits to the world database (sim/save/world_db.h) on a writer thread, so the 60 Hz
// step pays only for recapturing the bricks its edits touched and copying the state
// the blobs are made of (sim::copyState). The thread encodes the state blobs, writes
// the commit in one SQLite transaction and logs one line. A commit that fails is
// carried into the next one (its bricks and deletions, where the next does not touch
// them again), so no touched brick is lost to a transient failure.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "sim/save/state_codec.h"
#include "sim/save/world_db.h"

namespace loam::server {

/// What CommitWriter has done since it started.
struct CommitStats {
  std::uint64_t commits = 0;    ///< commits written
  std::uint64_t failures = 0;   ///< commits that failed (carried into the next)
  double lastSeconds = 0;       ///< capture + encode + commit of the last commit
  std::uint64_t lastBytes = 0;  ///< brick and blob bytes the last commit wrote
};

/// Owns the database while it runs. Thread: submit/busy/waitIdle from one owner thread.
class CommitWriter {
 public:
  explicit CommitWriter(std::unique_ptr<sim::WorldDb> db);
  /// Waits for the current commit, then stops the thread.
  ~CommitWriter();
  CommitWriter(const CommitWriter&) = delete;
  CommitWriter& operator=(const CommitWriter&) = delete;

  /// True while a commit is pending or being written.
  bool busy() const;
  /// Hands a commit (bricks and deletions; its blobs are made here from state) to the
  /// thread. Returns false if busy (the caller keeps its touched bricks for later).
  /// captureMs is logged with the commit.
  bool submit(sim::WorldDbCommit commit, sim::StateCopy state, double captureMs);
  /// Blocks until no commit is pending. Returns false if any commit since the last
  /// call failed.
  bool waitIdle();
  /// Counters for metrics. Any thread; lock-free, so the step may call it.
  CommitStats stats() const noexcept;

 private:
  void run();

  std::unique_ptr<sim::WorldDb> db_;  ///< writer thread only (after construction)
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<sim::WorldDbCommit> pending_;
  std::optional<sim::StateCopy> pendingState_;
  double pendingCaptureMs_ = 0;
  bool working_ = false;
  bool stop_ = false;
  bool failed_ = false;
  sim::WorldDbCommit carried_;  ///< writer thread: the bricks of failed commits
  std::atomic<std::uint64_t> commits_{0}, failures_{0}, lastBytes_{0}, lastMicros_{0};
  std::thread thread_;
};

}  // namespace loam::server
