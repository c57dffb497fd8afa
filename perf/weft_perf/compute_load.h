// Compute threads that keep cores busy while collectives run, as a training process's backward
// pass does while its gradients are reduced (--busy). Each runs a fixed arithmetic loop in
// registers, at the nice level of the process, until the load is destroyed; it touches memory
// only to count its rounds, in a cache line of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace weft::perf {

class ComputeLoad {
 public:
  explicit ComputeLoad(int threads);
  ~ComputeLoad();
  ComputeLoad(const ComputeLoad&) = delete;
  ComputeLoad& operator=(const ComputeLoad&) = delete;

  int threads() const { return static_cast<int>(threads_.size()); }
  // Loop rounds per second, summed over the threads, since the load started: what the
  // communication left to compute.
  double roundsPerSecond() const;

 private:
  struct alignas(64) Counter {
    std::atomic<uint64_t> rounds{0};
    std::atomic<double> sink{0};  // the loop's result, so that it is computed
  };
  void loop(Counter& counter);

  std::atomic<bool> stop_{false};
  std::chrono::steady_clock::time_point started_;
  std::unique_ptr<Counter[]> counters_;
  std::vector<std::thread> threads_;
};

}  // namespace weft::perf
