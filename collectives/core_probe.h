// CoreProbe: whether the cores two ranks run on at the moment share a cache, timed by a cache
// line's round trip between them at the start of a staged copy (collectives/staged.h).
//
// A 2-rank staged all_gather, all_to_all or broadcast is fastest with ordinary stores into the
// staging area while both cores share an L3, and with non-temporal ones while they do not: the
// peer then reads from memory instead of from a far cache. On the 2-vCPU VM this was built on,
// the round trip moved between 28-90 ns (shared L3) and 310-350 ns within seconds, and the
// faster stores with it (1M-256M: ordinary ones 1.2-1.5x faster in the first case, 2-3.5x
// slower in the second). Timing whole calls and trying the other stores now and then
// (collectives/timed_choice.h) paid for every try with a slow call; this costs a few round
// trips per call instead, 0.3 us near and 1.3 us far.
//
// The two ranks bump a counter each in turn (SlotControl::probe, one per slot parity, as two
// operations may overlap): the first rank writes round j's value, the second echoes it, and
// each times the rounds it saw. The values grow with the operation's sequence number, so a
// value left by an earlier probe is never taken for this one's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace weft {

class DirectGroup;

class CoreProbe {
 public:
  static constexpr int kRoundTrips = 4;
  // Round trips at least this long say the cores share no cache. Measured here (weft-perf, 2
  // ranks, 1M-4M): 130-155 ns while weft-membw's round trip was 62-65 ns, 410-530 while it was
  // 337-352. (This one counts two line transfers and the loop around each.)
  static constexpr double kFarNanos = 280;

  // Probes between the two ranks of `group` for operation `sequence`.
  void begin(const DirectGroup& group, uint64_t sequence);
  // Moves the ping-pong on as far as it goes without waiting long; true once it is done.
  bool poll();
  // Once done: the time of one round trip, and whether it says the cores are far apart.
  double nanos() const { return nanos_; }
  bool far() const { return nanos_ >= kFarNanos; }

 private:
  uint64_t valueOf(int round) const { return base_ + static_cast<uint64_t>(round); }

  std::atomic<uint64_t>* mine_ = nullptr;
  const std::atomic<uint64_t>* theirs_ = nullptr;
  bool leads_ = false;
  uint64_t base_ = 0;
  int round_ = 0;  // the last round this rank has written
  std::chrono::steady_clock::time_point started_;
  double nanos_ = 0;
};

}  // namespace weft
