#include "transports/byte_ring.h"

#include <algorithm>
#include <cstring>

namespace weft {

ByteRing::ByteRing(RingControl* control, char* data, size_t capacity, size_t publishBytes)
    : control_(control), data_(data), capacity_(capacity), publishBytes_(publishBytes) {
  cachedTail_ = control_->tail.load(std::memory_order_acquire);
  cachedHead_ = control_->head.load(std::memory_order_acquire);
}

void ByteRing::initialize(RingControl* control) {
  control->head.store(0, std::memory_order_relaxed);
  control->tail.store(0, std::memory_order_relaxed);
  control->farewellOrigin.store(-1, std::memory_order_relaxed);
  control->farewellBytes = 0;
  control->closed.store(0, std::memory_order_release);
}

void ByteRing::leaveFarewell(const Farewell& why) {
  if (why.origin < 0 || control_->farewellOrigin.load(std::memory_order_relaxed) >= 0) return;
  const size_t n = std::min(why.message.size(), kFarewellBytes);
  memcpy(control_->farewell, why.message.data(), n);
  control_->farewellBytes = static_cast<uint32_t>(n);
  control_->farewellOrigin.store(why.origin, std::memory_order_release);
}

Farewell ByteRing::farewell() const {
  Farewell f;
  if (!closed()) return f;
  const int origin = control_->farewellOrigin.load(std::memory_order_acquire);
  if (origin < 0) return f;
  const size_t n = std::min<size_t>(control_->farewellBytes, kFarewellBytes);
  f.origin = origin;
  f.message.assign(control_->farewell, n);
  return f;
}

size_t ByteRing::write(const void* data, size_t bytes) {
  const char* src = static_cast<const char*>(data);
  uint64_t head = control_->head.load(std::memory_order_relaxed);
  size_t done = 0;
  while (done < bytes) {
    size_t space = capacity_ - static_cast<size_t>(head - cachedTail_);
    if (space == 0) {
      cachedTail_ = control_->tail.load(std::memory_order_acquire);
      space = capacity_ - static_cast<size_t>(head - cachedTail_);
      if (space == 0) break;
    }
    size_t offset = static_cast<size_t>(head & (capacity_ - 1));
    size_t n = std::min({bytes - done, space, capacity_ - offset, publishBytes_});
    memcpy(data_ + offset, src + done, n);
    head += n;
    done += n;
    control_->head.store(head, std::memory_order_release);
  }
  return done;
}

void ByteRing::peek(const void** data, size_t* bytes) {
  uint64_t tail = control_->tail.load(std::memory_order_relaxed);
  if (cachedHead_ == tail) cachedHead_ = control_->head.load(std::memory_order_acquire);
  size_t avail = static_cast<size_t>(cachedHead_ - tail);
  size_t offset = static_cast<size_t>(tail & (capacity_ - 1));
  *bytes = std::min(avail, capacity_ - offset);
  *data = *bytes > 0 ? data_ + offset : nullptr;
}

bool ByteRing::peekUnlessEnded(const void** data, size_t* bytes) {
  peek(data, bytes);
  if (*bytes > 0 || !closed()) return true;
  // The producer writes before it closes, but may have done both since the head was read.
  peek(data, bytes);
  return *bytes > 0;
}

void ByteRing::consume(size_t bytes) {
  uint64_t tail = control_->tail.load(std::memory_order_relaxed);
  control_->tail.store(tail + bytes, std::memory_order_release);
}

}  // namespace weft
