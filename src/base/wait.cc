#include "src/base/wait.h"

#include <sched.h>
#include <time.h>

#include <algorithm>

namespace weft {

Deadline Deadline::after(int64_t timeoutMs) {
  Deadline d;
  if (timeoutMs > 0) {
    d.finite_ = true;
    d.at_ = Clock::now() + std::chrono::milliseconds(timeoutMs);
  }
  return d;
}

int Deadline::remainingMs(int cap) const {
  if (!finite_) return cap;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, cap));
}

const char* idleWaitName(IdleWait how) {
  switch (how) {
    case IdleWait::kSpin:
      return "spin";
    case IdleWait::kYield:
      return "yield";
    case IdleWait::kBlock:
      return "block";
  }
  return "?";
}

void Backoff::pause() {
  if (rounds_ < spinRounds_) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  } else if (rounds_ < spinRounds_ + yieldRounds_) {
    sched_yield();
  } else {
    // 20 us growing to 1 ms: latency stays low when the peer is only briefly descheduled, and an
    // idle wait costs almost no CPU.
    uint32_t extra = std::min<uint32_t>(rounds_ - spinRounds_ - yieldRounds_, 50);
    struct timespec ts = {0, static_cast<long>(20'000 * (1 + extra))};
    nanosleep(&ts, nullptr);
  }
  if (rounds_ < UINT32_MAX) ++rounds_;
}

}  // namespace weft
