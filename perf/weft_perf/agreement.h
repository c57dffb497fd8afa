// What the ranks agree on between measurements (start together, the time to report, wrong
// element counts, the rank lines) without a call on the measured communicators: the threads of
// a process meet in memory, then the processes meet over the World's control communicator,
// whose calls stay out of the COLL log. Every rank thread makes the same calls in the same order;
// a failed call throws on the thread that made it (weft-perf then ends the process).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "perf/weft_perf/world.h"

namespace weft::perf {

class Agreement {
 public:
  enum class Combine { kRank0, kSum, kMin, kMax };

  explicit Agreement(const World& world);

  void barrier(int thread);
  // Every rank's values combined element by element; all ranks get the result.
  std::vector<double> combine(int thread, const std::vector<double>& mine, Combine how);
  // Every rank's text (at most kTextBytes - 1 bytes of it), in rank order; all ranks get it.
  std::string gather(int thread, const std::string& mine);

  static constexpr size_t kTextBytes = 256;

 private:
  // Waits until every thread of the process has arrived; the last one runs `leader` (which
  // meets the other processes), then all go on.
  void meet(const std::function<void()>& leader);

  const int threads_;
  weftComm_t control_;  // NULL with a single process
  std::mutex mutex_;
  std::condition_variable arrived_;
  int waiting_ = 0;
  uint64_t meeting_ = 0;                     // meetings held so far
  std::vector<std::vector<double>> values_;  // by thread
  std::vector<std::string> texts_;           // by thread
  std::vector<double> combined_;
  std::string gathered_;
};

}  // namespace weft::perf
