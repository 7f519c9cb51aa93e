// WorkerPool (see worker_pool.h).
#include "audio/worker_pool.h"

namespace loam::audio {

WorkerPool::WorkerPool(int threads) {
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::drain() {
  int done = 0;
  for (int i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1)) {
    (*task_)(i);
    ++done;
  }
  if (done > 0) {
    std::lock_guard lock(mutex_);
    finished_ += done;
    if (finished_ == count_) done_.notify_all();
  }
}

void WorkerPool::work() {
  std::uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return quit_ || generation_ != seen; });
      if (quit_) return;
      seen = generation_;
    }
    drain();
  }
}

void WorkerPool::run(int count, const std::function<void(int)>& task) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1) {
    for (int i = 0; i < count; ++i) task(i);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    task_ = &task;
    count_ = count;
    finished_ = 0;
    next_.store(0);
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_ == count_; });
  task_ = nullptr;
}

}  // namespace loam::audio
