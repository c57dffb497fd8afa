#include "src/enqueue/stream.h"

weftStream::weftStream() : worker_([this] { work(); }) {}

weftStream::~weftStream() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return pending_ == 0; });
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void weftStream::enqueue(std::function<weft::Status()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
    ++pending_;
  }
  changed_.notify_all();
}

weft::Status weftStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return pending_ == 0; });
  weft::Status s = firstError_;
  firstError_ = weft::Status();
  return s;
}

bool weftStream::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_ == 0;
}

void weftStream::work() {
  for (;;) {
    std::function<weft::Status()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    weft::Status s = task();
    bool drained = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!s.ok() && firstError_.ok()) firstError_ = s;
      drained = --pending_ == 0;
    }
    // Only an empty queue interests the waiters; waking them per task costs a context switch.
    if (drained) changed_.notify_all();
  }
}
