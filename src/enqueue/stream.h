// A Weft CPU stream: work queued on it runs in order on its own worker thread, so a caller can
// overlap computation with communication as NCCL users do with CUDA streams.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "src/base/status.h"

struct weftStream {
 public:
  weftStream();
  ~weftStream();  // waits for queued work, then stops the worker

  void enqueue(std::function<weft::Status()> task);
  // Waits until everything queued so far has run; returns the first error since the last call.
  weft::Status synchronize();
  bool idle();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<weft::Status()>> queue_;
  size_t pending_ = 0;  // queued plus running
  bool stopping_ = false;
  weft::Status firstError_;
  std::thread worker_;
};
