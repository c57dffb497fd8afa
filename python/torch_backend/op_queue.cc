#include "python/torch_backend/op_queue.h"

#include <exception>
#include <utility>

namespace weft::torch_backend {

OpQueue::OpQueue(std::function<void()> startGroup, std::function<void()> endGroup)
    : startGroup_(std::move(startGroup)), endGroup_(std::move(endGroup)) {
  worker_ = std::thread([this] { loop(); });
}

OpQueue::~OpQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  ready_.notify_all();
  worker_.join();
}

void OpQueue::push(Op op) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(op));
  }
  ready_.notify_one();
}

void OpQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void OpQueue::loop() {
  for (;;) {
    {
      std::deque<Op> batch;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and nothing left
        busy_ = true;
        // One collective, or every point-to-point op queued back to back from the front.
        do {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        } while (batch.front().pointToPoint && !queue_.empty() && queue_.front().pointToPoint);
      }
      if (batch.front().pointToPoint) {
        runGroup(batch);
      } else {
        runOne(batch.front());
      }
    }  // the batch is let go of here
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
    }
    idle_.notify_all();
  }
}

void OpQueue::runOne(Op& op) {
  std::exception_ptr error;
  try {
    op.issue();
    if (op.done) op.done();
  } catch (...) {
    error = std::current_exception();
  }
  op.work->complete(error);
}

void OpQueue::runGroup(std::deque<Op>& ops) {
  std::exception_ptr error;
  try {
    startGroup_();
    try {
      for (Op& op : ops)
        op.issue();
    } catch (...) {
      error = std::current_exception();
    }
    endGroup_();  // ends the group even after a failed issue, and throws if the group failed
    if (!error) {
      for (Op& op : ops)
        if (op.done) op.done();
    }
  } catch (...) {
    if (!error) error = std::current_exception();
  }
  for (Op& op : ops)
    op.work->complete(error);
}

}  // namespace weft::torch_backend
