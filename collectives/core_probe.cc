#include "collectives/core_probe.h"

#include <algorithm>
#include <limits>

#include "collectives/direct.h"

namespace weft {

void CoreProbe::begin(const DirectGroup& group, uint64_t sequence) {
  const int me = group.rank();
  const size_t parity = sequence % 2;
  mine_ = &group.area(me).control->probe[parity].value;
  theirs_ = &group.area(1 - me).control->probe[parity].value;
  leads_ = me == 0;
  base_ = sequence * kRounds;
  round_ = 0;
  nanos_ = std::numeric_limits<double>::infinity();
  if (leads_) {
    round_ = 1;
    mine_->store(valueOf(1), std::memory_order_release);
    roundStarted_ = Clock::now();
  }
}

bool CoreProbe::poll(bool* wrote) {
  *wrote = false;
  // A peer that runs answers within a microsecond or so; one that does not leaves the waiting
  // to the caller's loop, which yields. No pause between loads: it would be timed too.
  constexpr int kSpins = 4000;
  for (int spin = 0; spin < kSpins; ++spin) {
    // The leader waits for its own value back; the other rank for the leader's next one.
    const int awaited = leads_ ? round_ : round_ + 1;
    if (theirs_->load(std::memory_order_acquire) != valueOf(awaited)) continue;
    // Round 1 only finds both ranks there; each later one is a round trip.
    const Clock::time_point now = Clock::now();
    if (awaited >= 2) {
      nanos_ =
          std::min(nanos_, std::chrono::duration<double, std::nano>(now - roundStarted_).count());
    }
    if (leads_ && round_ == kRounds) return true;
    ++round_;
    mine_->store(valueOf(round_), std::memory_order_release);
    *wrote = true;
    roundStarted_ = leads_ ? Clock::now() : now;
    if (!leads_ && round_ == kRounds) return true;
  }
  return false;
}

}  // namespace weft
