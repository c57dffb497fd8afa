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

weftStream::Batch weftStream::takeBatch() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.empty()) return {};
  Batch b = std::move(spare_.back());
  spare_.pop_back();
  return b;
}

void weftStream::enqueue(Batch batch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push(std::move(batch));
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
  // Enough spare batches for a deep queue; past that, a burst's memory goes back to the heap.
  constexpr size_t kMaxSpare = 1024;
  for (;;) {
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      batch = queue_.pop();
    }
    weft::Status s = weft::runWorks(batch);
    bool drained = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!s.ok() && firstError_.ok()) firstError_ = s;
      drained = --pending_ == 0;
      if (spare_.size() < kMaxSpare) spare_.push_back(std::move(batch));
    }
    // Only an empty queue interests the waiters; waking them per task costs a context switch.
    if (drained) changed_.notify_all();
  }
}
