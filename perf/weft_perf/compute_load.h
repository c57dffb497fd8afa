// Compute threads that keep cores busy while collectives run, as a training process's backward
// pass does while its gradients are reduced (--busy). Each runs a fixed arithmetic loop in
// registers (no memory traffic), at the nice level of the process, until the load is destroyed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
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
  void loop();

  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> rounds_{0};
  std::atomic<double> sink_{0};  // the loops' results, so that they are computed
  std::chrono::steady_clock::time_point started_;
  std::vector<std::thread> threads_;
};

}  // namespace weft::perf
