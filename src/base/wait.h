// Waiting that adapts to oversubscription: spin briefly, then yield, then sleep in growing steps,
// so that ranks may outnumber cores many times over. Every wait has a deadline.
#pragma once

#include <chrono>
#include <cstdint>

namespace weft {

using Clock = std::chrono::steady_clock;

class Deadline {
 public:
  // timeoutMs <= 0 never expires.
  static Deadline after(int64_t timeoutMs);
  static Deadline never() { return Deadline(); }

  bool expired() const { return finite_ && Clock::now() >= at_; }
  bool finite() const { return finite_; }
  // Milliseconds left, clamped to [0, cap]; cap when infinite.
  int remainingMs(int cap) const;

 private:
  bool finite_ = false;
  Clock::time_point at_{};
};

class Backoff {
 public:
  // One pause of a wait loop; each call waits a little longer than the one before.
  void pause();
  void reset() { rounds_ = 0; }
  // True once the spinning and yielding phases are over, so callers may block instead.
  bool sleeping() const { return rounds_ >= kSpinRounds + kYieldRounds; }

 private:
  static constexpr uint32_t kSpinRounds = 64;
  static constexpr uint32_t kYieldRounds = 256;
  uint32_t rounds_ = 0;
};

}  // namespace weft
