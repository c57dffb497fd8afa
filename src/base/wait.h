// Waiting that adapts to oversubscription: spin briefly, then yield, then sleep in growing steps,
// so that ranks may outnumber cores many times over. Every wait has a deadline.
#pragma once

#include <algorithm>
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

// How a thread driving collectives spends its idle time before it blocks on its links.
enum class IdleWait {
  kSpin,   // every rank has a core and its peers share memory: spinning answers soonest
  kYield,  // some peers are behind sockets, whose bytes the kernel moves on our CPUs
  kBlock,  // ranks outnumber cores: spinning only delays the peer that holds ours
};
const char* idleWaitName(IdleWait how);

class Backoff {
 public:
  Backoff() = default;
  Backoff(uint32_t spinRounds, uint32_t yieldRounds)
      : spinRounds_(spinRounds), yieldRounds_(yieldRounds) {}
  // The idle waits of a thread driving collectives, which blocks on its links once sleeping().
  // kYield yields for long: a peer that shares our CPU gets it at once, while the CPU still
  // looks busy, so the scheduler does not move the ranks onto one CPU as it does for ranks
  // that block early.
  static Backoff forProgress(IdleWait how) {
    switch (how) {
      case IdleWait::kSpin:
        return Backoff(4000, 64);
      case IdleWait::kYield:
        return Backoff(16, 4000);
      case IdleWait::kBlock:
        break;
    }
    return Backoff(16, 4);
  }

  // One pause of a wait loop; each call waits a little longer than the one before.
  void pause();
  void reset() { rounds_ = 0; }
  // Goes on from the end of the spinning phase: for a wait that has just spun elsewhere.
  void skipSpin() { rounds_ = std::max(rounds_, spinRounds_); }
  bool spinning() const { return rounds_ < spinRounds_; }
  // True once, at the spin phase's kSpinCheckRound-th pause: where a wait asks whether to go on
  // spinning (not at all if the spin phase is shorter).
  bool atSpinCheck() const { return rounds_ == kSpinCheckRound && spinRounds_ > kSpinCheckRound; }
  static constexpr uint32_t kSpinCheckRound = 32;
  // True once the spinning and yielding phases are over, so callers may block instead.
  bool sleeping() const { return rounds_ >= spinRounds_ + yieldRounds_; }

 private:
  uint32_t spinRounds_ = 64;
  uint32_t yieldRounds_ = 256;
  uint32_t rounds_ = 0;
};

}  // namespace weft
