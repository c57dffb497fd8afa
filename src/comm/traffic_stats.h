// TrafficStats: a communicator's count of completed calls and the bytes they moved, by kind
// (weftCommGetStats). The thread running an operation adds its traffic as it goes (current())
// and files it when the operation ends; any thread may read or reset the totals meanwhile (each
// counter on its own: a read during a filing may see a call's count without its bytes). One
// thread files at a time (the thread whose turn it is: only successful operations file), so a
// filing is plain stores, not read-modify-writes; a reset moves a baseline the reads subtract
// instead of clearing what a filing may be adding to.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "transports/traffic.h"
#include "weft/weft.h"

namespace weft {

class TrafficStats {
 public:
  // What the running operation has moved so far: channels and shared-memory paths add to it.
  Traffic* current() { return &current_; }
  // Ends the running operation's count: `calls` calls of `bytes` in all under `kind`, with what
  // current() holds of `sent` and `received` traffic (a group's sends take what it sent, its
  // receives what it received). file() of both clears current().
  void file(weftStatsKind_t kind, uint64_t calls, uint64_t bytes, bool sent, bool received);
  // Drops what current() holds: traffic that belongs to no call (init's measurements).
  void discardCurrent() { current_ = Traffic{}; }
  void read(weftCommStats_t* out) const;
  void reset();

 private:
  struct Counters {
    std::atomic<uint64_t> calls{0};
    std::atomic<uint64_t> bytes{0};
    std::atomic<uint64_t> sent{0};
    std::atomic<uint64_t> received{0};
  };
  Traffic current_;
  std::array<Counters, weftNumStatsKinds> kinds_;     // since the communicator was created
  std::array<Counters, weftNumStatsKinds> baseline_;  // kinds_ at the last reset
};

}  // namespace weft
