// A Weft CPU stream: work queued on it runs in order on its own worker thread, so a caller can
// overlap computation with communication as NCCL users do with CUDA streams.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "src/base/ring_queue.h"
#include "src/base/status.h"
#include "src/enqueue/runner.h"

struct weftStream {
 public:
  using Batch = std::vector<weft::CommWork>;

  weftStream();
  ~weftStream();  // waits for queued work, then stops the worker

  // A batch to refill and enqueue: one the worker has run (its old works still in it), with its
  // vectors' room kept, so that once warm a call allocates nothing and the heap does not grow
  // and shrink with the queue.
  Batch takeBatch();
  void enqueue(Batch batch);
  // Waits until everything queued so far has run; returns the first error since the last call.
  weft::Status synchronize();
  bool idle();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable changed_;
  weft::RingQueue<Batch> queue_;  // keeps its room, as spare_ keeps the batches
  std::vector<Batch> spare_;      // run batches, for takeBatch()
  size_t pending_ = 0;            // queued plus running
  bool stopping_ = false;
  weft::Status firstError_;
  std::thread worker_;
};
