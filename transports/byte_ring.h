// ByteRing: a single-producer, single-consumer byte stream in a fixed region of memory. The shm
// transport puts its rings in shared memory, the loopback transport on the heap. Positions are
// byte counts that only grow, so full and empty never look alike.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transports/link.h"

namespace weft {

struct RingControl {
  alignas(64) std::atomic<uint64_t> head;    // bytes written, by the producer
  alignas(64) std::atomic<uint64_t> tail;    // bytes consumed, by the consumer
  alignas(64) std::atomic<uint32_t> closed;  // either side may set it
  // The producer's farewell (transports/link.h): its text first, then its origin (-1: none).
  std::atomic<int32_t> farewellOrigin;
  uint32_t farewellBytes;
  char farewell[kFarewellBytes];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "rings in shared memory need lock-free 64-bit atomics");

class ByteRing {
 public:
  ByteRing() = default;
  // data holds capacity bytes, a power of two. publishBytes bounds how much is copied before the
  // consumer is shown it, so big writes pipeline.
  ByteRing(RingControl* control, char* data, size_t capacity, size_t publishBytes);

  static void initialize(RingControl* control);

  // Producer side.
  size_t write(const void* data, size_t bytes);
  // Consumer side.
  void peek(const void** data, size_t* bytes);
  // As peek, but false once the producer has closed the ring and nothing it wrote is left.
  bool peekUnlessEnded(const void** data, size_t* bytes);
  void consume(size_t bytes);

  void close() { control_->closed.store(1, std::memory_order_release); }
  bool closed() const { return control_->closed.load(std::memory_order_acquire) != 0; }
  // Producer side, once, before close(): the farewell the consumer finds after it.
  void leaveFarewell(const Farewell& why);
  // Consumer side: the producer's farewell once it closed with one.
  Farewell farewell() const;
  size_t capacity() const { return capacity_; }

 private:
  RingControl* control_ = nullptr;
  char* data_ = nullptr;
  size_t capacity_ = 0;
  size_t publishBytes_ = 0;
  // Each side's cached view of the other side's counter, refreshed only when it seems to block.
  uint64_t cachedTail_ = 0;
  uint64_t cachedHead_ = 0;
};

}  // namespace weft
