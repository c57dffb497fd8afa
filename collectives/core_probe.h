// CoreProbe: whether the cores two ranks run on at the moment share a cache, timed by a cache
// line's round trip between them at the start of a 2-rank staged call (collectives/staged.h).
//
// Staged chunks are read fastest from the stager's cache while both cores share an L3, and
// from memory (non-temporal stores) while they do not. On the 2-vCPU VM this was built on, the
// cores moved between the two within seconds (weft-membw's round trip 28-90 ns or 310-350),
// and the faster stores with them: ordinary ones 1.2-1.5x faster for 2-rank copies in the
// first case and 2-3.5x slower in the second. Timing whole calls and trying the other stores
// now and then (collectives/timed_choice.h, still used at 3 ranks and more) paid for each try
// with a slow call and lagged behind the moves; a probe costs about 0.5 us near and 2 us far.
// Measured with it, 2-rank all_reduce, 20 calls a size, cores far apart: 2M in 227-247 us
// against 304-307 under the timings, 32M in 6.0 ms against 10.5.
//
// The two ranks bump a counter each in turn (SlotControl::probe, one per slot parity, as two
// operations may overlap): the first rank writes round j's value and the second echoes it.
// After the last round the first rank writes its verdict, near or far, and the second takes it
// as its own: both then choose alike where the choice changes how they share the work.
// The first round only finds both ranks there, so a rank late to the call does not look far;
// of the others each rank keeps the shortest, as an interrupt or a burst of memory traffic
// lengthens one round but says nothing of where the cores sit (with the mean of 4, large
// all-reduces took a far spell's stores in 25-53 of 120 calls while the cores were near). The
// values grow with the operation's sequence number, so a value left by an earlier probe is
// never taken for this one's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

namespace weft {

class DirectGroup;

class CoreProbe {
 public:
  // Rounds of a probe: the first waits for both ranks to be there; the others are timed.
  static constexpr int kRounds = 5;
  // Round trips at least this long say the cores share no cache. Measured (weft-perf, 2-rank
  // all_reduce, the shortest of 4; this one counts the loop around each line transfer too),
  // 10th-90th percentile: on the first VM, 120-170 ns while the cores were near, 461-580 while
  // weft-membw's round trip was 334 ns and non-temporal stores 2-3.5x faster; on a second
  // (Xeon model 207, a 300M L3), 325-416 ns (256K-64M calls) while weft-membw's was 125-235
  // and ordinary stores were the faster: 2-rank all_reduce 1.1-1.4x at 1M-32M (32M 8.5 ms
  // against 11.0), all_gather 1.1-1.4x, where a bound of 280 ns had staged them non-temporal.
  static constexpr double kFarNanos = 440;
  // What probe `sequence` writes, from sequence * kValuesPerProbe on: its rounds 1..kRounds, then
  // the first rank's verdict.
  static constexpr int kNearVerdict = kRounds + 1;
  static constexpr int kFarVerdict = kRounds + 2;
  static constexpr uint64_t kValuesPerProbe = kFarVerdict;

  // Probes between the two ranks of `group` for operation `sequence`.
  void begin(const DirectGroup& group, uint64_t sequence);
  // Moves the ping-pong on as far as it goes without waiting long; true once it is done.
  // *wrote: whether this rank wrote a value the peer waits for, so the caller rings the peer,
  // which may sleep if it shares this rank's core. The caller rings once the loop is over, so
  // that a ring's fence never lands inside a timed round trip.
  bool poll(bool* wrote);
  // Once done: this rank's shortest round trip, and whether the cores are far apart as the first
  // rank's shortest says (the same on both ranks).
  double nanos() const { return nanos_; }
  bool far() const { return far_; }

 private:
  using Clock = std::chrono::steady_clock;
  uint64_t valueOf(int round) const { return base_ + static_cast<uint64_t>(round); }

  std::atomic<uint64_t>* mine_ = nullptr;
  const std::atomic<uint64_t>* theirs_ = nullptr;
  bool leads_ = false;
  uint64_t base_ = 0;
  int round_ = 0;                   // the last round this rank has written
  Clock::time_point roundStarted_;  // when this rank's side of the current round began
  double nanos_ = 0;
  bool far_ = false;
  std::optional<bool> verdict_;  // DirectGroup::probeVerdict
};

}  // namespace weft
