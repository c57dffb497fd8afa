// ThreadPool: a few threads that run the tasks given to them, for the optimizer's step when it is
// offloaded (Zero with offload): each task's future says when it is done.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace weft::parallel {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  // Runs the tasks already given, then stops.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues f; the future is ready once it ran (and holds what it threw).
  std::future<void> submit(std::function<void()> f);

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace weft::parallel
