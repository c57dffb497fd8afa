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
  base_ = sequence * kValuesPerProbe;
  round_ = 0;
  nanos_ = std::numeric_limits<double>::infinity();
  far_ = false;
  verdict_ = group.probeVerdict();
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
    const uint64_t seen = theirs_->load(std::memory_order_acquire);
    if (!leads_ && round_ == kRounds) {
      // The second rank has echoed every round: it takes the first rank's verdict.
      if (seen != valueOf(kNearVerdict) && seen != valueOf(kFarVerdict)) continue;
      far_ = seen == valueOf(kFarVerdict);
      return true;
    }
    // The first rank waits for its own value back; the second for the first's next one.
    const int awaited = leads_ ? round_ : round_ + 1;
    if (seen != valueOf(awaited)) continue;
    // Round 1 only finds both ranks there; each later one is a round trip.
    const Clock::time_point now = Clock::now();
    if (awaited >= 2) {
      nanos_ =
          std::min(nanos_, std::chrono::duration<double, std::nano>(now - roundStarted_).count());
    }
    *wrote = true;
    if (leads_ && round_ == kRounds) {
      far_ = verdict_.value_or(nanos_ >= kFarNanos);
      mine_->store(valueOf(far_ ? kFarVerdict : kNearVerdict), std::memory_order_release);
      return true;
    }
    ++round_;
    mine_->store(valueOf(round_), std::memory_order_release);
    roundStarted_ = leads_ ? Clock::now() : now;
  }
  return false;
}

}  // namespace weft
