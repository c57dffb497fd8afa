#include "perf/baselines/sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "perf/weft_perf/check.h"

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
      std::printf("# size_bytes count time_us algbw_GBps busbw_GBps wrong\n");
    }
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
      if (b_.rank() == 0) {
        std::printf("%zu %zu %.3f %.4f %.4f %lld\n", reportedBytes(counts_, sizeof(float)),
                    counts_.paramCount, seconds * 1e6, bw.algBw, bw.busBw,
                    static_cast<long long>(wrong));
        std::fflush(stdout);
      }
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
  double measure() {
    call(0);
    b_.barrier();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o_.iters; ++i)
      call(i);
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
    return b_.maxOverRanks(elapsed.count() / o_.iters);
  }

  // One more call on weft-perf's generated inputs; the wrong elements summed over all ranks.
  int64_t validate() {
    CheckSpec spec{o_.coll, weftFloat32, weftSum, b_.nranks(), o_.root, ++seed_};
    fillPoison(weftFloat32, recv_.get(), counts_.recvCount * sizeof(float));
    fillInput(spec, b_.rank(), send_.get(), counts_.sendCount);
    size_t n = expectedCount(spec, b_.rank(), counts_);
    fillExpected(spec, b_.rank(), counts_, expected_.get());
    b_.run(o_.coll, send_.get(), recv_.get(), counts_.paramCount, o_.root);
    return b_.sumOverRanks(countWrong(spec, recv_.get(), expected_.get(), n));
  }

  const Options& o_;
  Backend& b_;
  Buffer send_, recv_, expected_;
  CollCounts counts_;
  uint64_t seed_ = 0;
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
