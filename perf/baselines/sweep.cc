#include "perf/baselines/sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "perf/weft_perf/call_times.h"
#include "perf/weft_perf/check.h"
#include "perf/weft_perf/compute_load.h"

namespace weft::perf {
namespace {

constexpr size_t kAlign = 4096;

struct Free {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, Free>;

// As weft-perf: page aligned, every page touched before any timing.
Buffer allocate(size_t bytes) {
  size_t rounded = (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return Buffer(static_cast<float*>(p));
}

class Sweep {
 public:
  Sweep(const Options& o, Backend& b)
      : o_(o),
        b_(b),
        send_(allocate(o.maxBytes)),
        recv_(allocate(o.maxBytes)),
        expected_(o.check > 0 ? allocate(o.maxBytes) : nullptr) {}

  int run(const char* library) {
    if (b_.rank() == 0) {
      std::printf("# library %s collective %s ranks %d type float32 op sum iters %d warmup %d\n",
                  library, collName(o_.coll), b_.nranks(), o_.iters, o_.warmupIters);
      if (o_.busy > 0) std::printf("# busy %d compute threads per rank\n", o_.busy);
      std::printf("# size_bytes count time_us algbw_GBps busbw_GBps wrong%s\n",
                  o_.percentiles ? " p50_us p99_us max_us" : "");
    }
    std::optional<ComputeLoad> load;
    if (o_.busy > 0) load.emplace(o_.busy);
    b_.barrier();
    warmUp(o_.maxBytes);
    warmUp(o_.minBytes);
    int failed = 0;
    for (size_t bytes : sizeList(o_)) {
      counts_ = collCounts(o_.coll, bytes / sizeof(float), b_.nranks());
      double seconds = measure();
      Bandwidth bw = bandwidth(o_.coll, counts_.paramCount, sizeof(float), seconds, b_.nranks());
      int64_t wrong = o_.check > 0 ? validate() : -1;
      if (wrong > 0) ++failed;
      const CallTimes tail = callTimes(perCall_);
      if (b_.rank() == 0) {
        std::printf("%zu %zu %.3f %.4f %.4f %lld", reportedBytes(counts_, sizeof(float)),
                    counts_.paramCount, seconds * 1e6, bw.algBw, bw.busBw,
                    static_cast<long long>(wrong));
        if (o_.percentiles) {
          std::printf(" %.3f %.3f %.3f", tail.p50 * 1e6, tail.p99 * 1e6, tail.max * 1e6);
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
    if (load && b_.rank() == 0) {
      std::printf("# compute left to the busy threads: %.4g G rounds/s on rank 0\n",
                  load->roundsPerSecond() / 1e9);
    }
    return failed;
  }

 private:
  // Successive iterations move through the buffer, as in weft-perf and nccl-tests.
  void call(int iter) {
    size_t total = reportedBytes(counts_, sizeof(float));
    size_t steps = total ? std::max<size_t>(o_.maxBytes / total, 1) : 1;
    size_t shift = total * (static_cast<size_t>(iter) % steps) / sizeof(float);
    b_.run(o_.coll, send_.get() + shift, recv_.get() + shift, counts_.paramCount, o_.root);
  }

  void warmUp(size_t bytes) {
    counts_ = collCounts(o_.coll, bytes / sizeof(float), b_.nranks());
    for (int i = 0; i < o_.warmupIters; ++i)
      call(i);
  }

  // A first call outside the timing, then all ranks start together; the slowest rank's mean.
  // With --percentiles, perCall_ gets each call's time on its slowest rank.
  double measure() {
    using Clock = std::chrono::steady_clock;
    call(0);
    b_.barrier();
    perCall_.clear();
    perCall_.reserve(static_cast<size_t>(o_.iters));
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < o_.iters; ++i) {
      const Clock::time_point began = o_.percentiles ? Clock::now() : t0;
      call(i);
      if (o_.percentiles) {
        perCall_.push_back(std::chrono::duration<double>(Clock::now() - began).count());
      }
    }
    std::vector<double> mean = {std::chrono::duration<double>(Clock::now() - t0).count() /
                                o_.iters};
    acrossRanks(mean);
    if (o_.percentiles) b_.maxOverRanks(perCall_);
    return mean[0];
  }

  // A rank's times combined over the ranks by -a, as weft-perf's.
  void acrossRanks(std::vector<double>& values) {
    switch (o_.timeAcrossRanks) {
      case TimeAcrossRanks::kMax:
        b_.maxOverRanks(values);
        return;
      case TimeAcrossRanks::kMin:
        for (double& v : values)
          v = -v;
        b_.maxOverRanks(values);
        for (double& v : values)
          v = -v;
        return;
      case TimeAcrossRanks::kRank0:
        if (b_.rank() != 0) std::fill(values.begin(), values.end(), 0.0);
        b_.sumOverRanks(values);
        return;
      case TimeAcrossRanks::kAverage:
        b_.sumOverRanks(values);
        for (double& v : values)
          v /= b_.nranks();
        return;
    }
  }

  // One more call on weft-perf's generated inputs; the wrong elements summed over all ranks.
  int64_t validate() {
    CheckSpec spec{o_.coll, weftFloat32, weftSum, b_.nranks(), o_.root, ++seed_};
    fillPoison(weftFloat32, recv_.get(), counts_.recvCount * sizeof(float));
    fillInput(spec, b_.rank(), send_.get(), counts_.sendCount);
    size_t n = expectedCount(spec, b_.rank(), counts_);
    fillExpected(spec, b_.rank(), counts_, expected_.get());
    b_.run(o_.coll, send_.get(), recv_.get(), counts_.paramCount, o_.root);
    // Exact as a double: no buffer holds 2^53 elements.
    std::vector<double> wrong = {
        static_cast<double>(countWrong(spec, recv_.get(), expected_.get(), n))};
    b_.sumOverRanks(wrong);
    return static_cast<int64_t>(wrong[0]);
  }

  const Options& o_;
  Backend& b_;
  Buffer send_, recv_, expected_;
  CollCounts counts_;
  uint64_t seed_ = 0;
  std::vector<double> perCall_;
};

}  // namespace

const char* unsupportedOption(const Options& o) {
  if (o.coll == Coll::kSendRecv || o.coll == Coll::kSend)
    return "send and sendrecv are not measured by the baselines";
  if (o.types.size() != 1 || o.types[0].type != weftFloat32) return "only -d float is measured";
  if (o.ops.size() != 1 || o.ops[0].op != weftSum) return "only -o sum is measured";
  if (o.root < 0) return "-r -1 (every root in turn) is not supported: give one root";
  if (o.aggIters != 1) return "-m (grouped calls) is not supported";
  return "";
}

int runSweep(const Options& options, Backend& backend, const char* library) {
  return Sweep(options, backend).run(library);
}

}  // namespace weft::perf
