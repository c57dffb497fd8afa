// OpQueue: the process group's worker. Calls run on it one at a time, in the order they were
// made, which is the order every rank must make them in; the caller's thread goes on at once
// (async_op=True overlaps with compute), as gloo's worker threads do. Sends and receives queued
// back to back run as one Weft group, so that pairs of them complete whatever their order on
// the two ranks.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "python/torch_backend/work.h"

namespace weft::torch_backend {

struct Op {
  c10::intrusive_ptr<WeftWork> work;
  // Makes the Weft call(s); for a point-to-point op, inside a group that ends after it.
  std::function<void()> issue;
  // After the call (or group) is done: copies results where they belong. May be empty.
  std::function<void()> done;
  bool pointToPoint = false;
};

class OpQueue {
 public:
  // `endGroup` ends a group of point-to-point ops (weftGroupEnd, throwing on failure).
  explicit OpQueue(std::function<void()> startGroup, std::function<void()> endGroup);
  // Runs what is queued, then stops the worker.
  ~OpQueue();

  void push(Op op);
  // Waits until everything queued so far has run and been let go of (the futures' callbacks
  // included, which may hold Python objects).
  void drain();

 private:
  void loop();
  void runOne(Op& op);
  void runGroup(std::deque<Op>& ops);

  std::function<void()> startGroup_;
  std::function<void()> endGroup_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable idle_;
  std::deque<Op> queue_;
  bool busy_ = false;  // the worker holds ops taken from the queue
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace weft::torch_backend
