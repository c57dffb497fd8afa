#include "collectives/core_probe.h"

#include "collectives/direct.h"

namespace weft {

void CoreProbe::begin(const DirectGroup& group, uint64_t sequence) {
  const int me = group.rank();
  const size_t parity = sequence % 2;
  mine_ = &group.area(me).control->probe[parity].value;
  theirs_ = &group.area(1 - me).control->probe[parity].value;
  leads_ = me == 0;
  base_ = sequence * kRoundTrips;
  round_ = 0;
  nanos_ = 0;
  if (leads_) {
    started_ = std::chrono::steady_clock::now();
    round_ = 1;
    mine_->store(valueOf(1), std::memory_order_release);
  }
}

bool CoreProbe::poll() {
  // A peer that runs answers within a microsecond or so; one that does not leaves the waiting
  // to the caller's loop, which yields. No pause between loads: it would be timed too.
  constexpr int kSpins = 4000;
  for (int spin = 0; spin < kSpins; ++spin) {
    // The leader waits for its own value back; the other rank for the leader's next one.
    const int awaited = leads_ ? round_ : round_ + 1;
    if (theirs_->load(std::memory_order_acquire) != valueOf(awaited)) continue;
    if (leads_ && round_ == kRoundTrips) {
      nanos_ = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - started_)
                   .count() /
               kRoundTrips;
      return true;
    }
    ++round_;
    if (!leads_ && round_ == 1) started_ = std::chrono::steady_clock::now();
    mine_->store(valueOf(round_), std::memory_order_release);
    if (!leads_ && round_ == kRoundTrips) {
      // From the leader's first value to its last: one round trip fewer.
      nanos_ = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - started_)
                   .count() /
               (kRoundTrips - 1);
      return true;
    }
  }
  return false;
}

}  // namespace weft
