// WorkerPool: a few persistent threads for fork-join work on the control thread
// (ray traces, propagation). run() hands out task indices from an atomic counter to
// the workers and the caller and returns when every task is done, so the caller may
// keep the world unchanged meanwhile and no task outlives the call. Results must not
// depend on which thread ran which task (each task writes its own outputs).
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace loam::audio {

class WorkerPool {
 public:
  /// Starts `threads` workers (0: run() does everything on the caller).
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Runs task(i) for every i in [0, count) and waits for all. One caller at a time.
  void run(int count, const std::function<void(int)>& task);
  int threads() const noexcept { return static_cast<int>(workers_.size()); }

 private:
  void work();
  void drain();
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* task_ = nullptr;
  int count_ = 0;
  std::atomic<int> next_{0};
  int finished_ = 0;          ///< tasks completed this generation (under mutex_)
  std::uint64_t generation_ = 0;
  bool quit_ = false;
};

}  // namespace loam::audio
