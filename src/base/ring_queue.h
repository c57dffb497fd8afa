// RingQueue: a first-in, first-out queue on one growing array. Unlike std::deque, which frees a
// block as its front empties and allocates one as its back fills, it keeps its room: once it
// has held n items it allocates nothing while it holds n or fewer.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace weft {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  size_t capacity() const { return slots_.size(); }

  void push(T item) {
    if (count_ == slots_.size()) grow();
    slots_[(head_ + count_) % slots_.size()] = std::move(item);
    ++count_;
  }

  // The front item, moved out; the queue must not be empty.
  T pop() {
    T item = std::move(slots_[head_]);
    head_ = (head_ + 1) % slots_.size();
    --count_;
    return item;
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 16 : 2 * slots_.size());
    for (size_t i = 0; i < count_; ++i)
      bigger[i] = std::move(slots_[(head_ + i) % slots_.size()]);
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;
  size_t count_ = 0;
};

}  // namespace weft
