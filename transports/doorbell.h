// Doorbell: a futex word in shared memory. A rank with nothing to do sleeps on its own doorbell;
// a peer that gives it something to do (data in a ring it reads, room in a ring it writes)
// rings it. Ringing costs one fence and one load while nobody sleeps.
//
// Waiting follows the eventcount pattern: arm(), check for work once more, then wait(); a ring
// between the check and the wait changes the sequence, so the wait returns at once.
#pragma once

#include <atomic>
#include <cstdint>

namespace weft {

struct Doorbell {
  alignas(64) std::atomic<uint32_t> sequence{0};
  std::atomic<uint32_t> sleepers{0};
  // The CPU the owner was on when it last waited long (-1: not yet), so that a peer waiting on
  // the same CPU yields to it at once instead of spinning through the time it needs to run.
  std::atomic<int32_t> cpu{-1};

  void ring() {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // the work before, the load after
    if (sleepers.load(std::memory_order_relaxed) != 0) wake();
  }
  uint32_t arm() {
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    return sequence.load(std::memory_order_seq_cst);
  }
  // Sleeps until rung (or timeoutUs passes) unless it was rung since arm() returned `armed`.
  void wait(uint32_t armed, int64_t timeoutUs);
  void disarm() { sleepers.fetch_sub(1, std::memory_order_relaxed); }
  // Wakes every sleeper unconditionally.
  void wake();
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

}  // namespace weft
