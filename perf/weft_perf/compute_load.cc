#include "perf/weft_perf/compute_load.h"

namespace weft::perf {
namespace {

// Rounds between looks at the stop flag and between counts: a few microseconds of work.
constexpr uint64_t kRoundsPerLook = 1024;

}  // namespace

ComputeLoad::ComputeLoad(int threads)
    : started_(std::chrono::steady_clock::now()),
      counters_(std::make_unique<Counter[]>(static_cast<size_t>(threads))) {
  for (int t = 0; t < threads; ++t)
    threads_.emplace_back([this, t] { loop(counters_[t]); });
}

ComputeLoad::~ComputeLoad() {
  stop_.store(true, std::memory_order_relaxed);
  for (std::thread& t : threads_)
    t.join();
}

double ComputeLoad::roundsPerSecond() const {
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started_;
  uint64_t rounds = 0;
  for (size_t t = 0; t < threads_.size(); ++t)
    rounds += counters_[t].rounds.load(std::memory_order_relaxed);
  return elapsed.count() > 0 ? static_cast<double>(rounds) / elapsed.count() : 0;
}

void ComputeLoad::loop(Counter& counter) {
  // Four independent multiply-add chains that stay bounded (x -> x * a + b with |a| < 1). Without
  // -ffast-math the compiler must compute every round, and the sink keeps the result.
  double x[4] = {0.1, 0.2, 0.3, 0.4};
  while (!stop_.load(std::memory_order_relaxed)) {
    for (uint64_t i = 0; i < kRoundsPerLook; ++i) {
      for (double& v : x) {
        v = v * 0.999999 + 0.5;
      }
    }
    counter.rounds.fetch_add(kRoundsPerLook, std::memory_order_relaxed);
  }
  counter.sink.store(x[0] + x[1] + x[2] + x[3], std::memory_order_relaxed);
}

}  // namespace weft::perf
