// weft-membw: what this machine's memory can do, and the bound it puts on each collective.
//
// Two kernels at each size, on 1 and 2 threads (each thread on its own buffers, so t threads
// stand for t ranks): copy (memcpy) and reduce (float32 dst = a + b), each timed with ordinary
// and with non-temporal stores and the faster kept, as Weft picks its stores. GB/s counts the bytes
// read plus written (copy 2 per byte of size, reduce 3), summed over the threads; each figure is
// the median of a few timed trials. Like weft-perf, successive kernels move through buffers as
// large as the largest size (-e), so a size is measured from cache or from memory just as a sweep
// with that -e measures it.
//
// The bound. Through shared memory with single copy (a rank may read and write every rank's
// buffers), the least traffic a collective of size S (weft-perf's size column) at n ranks
// causes, summed over the ranks, is every input byte read once and every output byte written
// once (R: through a reduction, C: through a copy; bytes read plus written; per rank: / n):
//   all_reduce      R = 2n S     n inputs of S read, n outputs of S written: each slice is
//                                reduced once from the n inputs and written to all n outputs
//   reduce_scatter  R = (n+1) S  (S: the input) n inputs read, n blocks of S/n written
//   reduce          R = (n+1) S  n inputs read, the root's output written (any rank may reduce
//                                a slice of it)
//   all_gather      C = (n+1) S  (S: the output) n blocks of S/n read, n outputs written
//   broadcast       C = (n+1) S  the root's input read, n outputs written (the root's too: out
//                                of place)
//   all_to_all      C = 2n S     every block read once and written once
// With the machine's aggregate bandwidths at t = min(n, most threads probed) threads, no run
// can be faster than  T = R / reduceGBs(S, t) + C / copyGBs(S, t); the bound busbw is weft-perf's
// busbw for time T, and weft's busbw divided by it is how close weft gets (T / weft's time).
// Kernels that read k streams and write m are assumed to move bytes at the rate measured for
// their kind (reduce: 2 in, 1 out; copy: 1 in, 1 out).
//
// Also the round trip of a cache line between two threads: where the two cores sit (sharing a
// cache or not) moves a VM's figures from minute to minute, the bound's and the libraries' alike.
//
// Output, machine readable after '#' lines:
//   rtt NANOSECONDS   (0: fewer than 2 CPUs allowed, or no pinning, or no meeting in time)
//   bw SIZE THREADS COPY_GBps REDUCE_GBps
//   bound COLLECTIVE RANKS SIZE TIME_us BUSBW_GBps
// With --watch MS, only this, about every MS ms until killed (steady_clock at the trials' end):
//   watch MONOTONIC_NS RTT_NS
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "perf/weft_perf/coll.h"
#include "perf/weft_perf/options.h"

namespace {

using weft::perf::Coll;
constexpr size_t kAlign = 4096;
constexpr size_t kTrials = 5;

// The middle value of a few trials' (the upper one of an even count).
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

float* allocate(size_t bytes) {
  size_t rounded = (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 1, rounded);  // touched by the thread that will use it
  return static_cast<float*>(p);
}

// Keeps the compiler from dropping or merging repeated kernels.
inline void clobber() {
  asm volatile("" ::: "memory");
}

__attribute__((target_clones("avx2", "default"))) void reduceKernel(float* __restrict dst,
                                                                    const float* __restrict a,
                                                                    const float* __restrict b,
                                                                    size_t n) {
  for (size_t i = 0; i < n; ++i)
    dst[i] = a[i] + b[i];
}

// The same two kernels writing past the cache (non-temporal stores), as Weft writes large
// outputs: at sizes beyond the cache they save reading the destination's lines in first, so a
// bound timed with ordinary stores alone would be too low there. Elsewhere the ordinary ones.
#if defined(__SSE2__)
void reduceStreamed(float* __restrict dst, const float* __restrict a, const float* __restrict b,
                    size_t n) {
  size_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(dst + i) % 16 != 0; ++i)
    dst[i] = a[i] + b[i];
  for (; i + 4 <= n; i += 4)
    _mm_stream_ps(dst + i, _mm_add_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
  for (; i < n; ++i)
    dst[i] = a[i] + b[i];
  _mm_sfence();
}

void copyStreamed(void* __restrict dstBytes, const void* __restrict srcBytes, size_t bytes) {
  auto* dst = static_cast<char*>(dstBytes);
  const auto* src = static_cast<const char*>(srcBytes);
  const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();
}
constexpr bool kStreamedStores = true;
#else
void reduceStreamed(float* dst, const float* a, const float* b, size_t n) {
  reduceKernel(dst, a, b, n);
}
void copyStreamed(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}
constexpr bool kStreamedStores = false;
#endif

struct Bandwidth {
  double copy = 0;
  double reduce = 0;
};

// Runs `reps` of a kernel on each of `threads` threads (the caller is thread 0) on their own
// buffers, started together; the median over trials of the aggregate GB/s. Successive reps move
// through buffers of `walkBytes`, as weft-perf and the baselines move through theirs (sized by
// their largest size), so data comes from where a benchmark's would: cache at small sizes and
// small sweeps, memory otherwise.
class Probe {
 public:
  Probe(size_t bytes, size_t walkBytes, int threads)
      : bytes_(bytes), walkBytes_(std::max(bytes, walkBytes)), threads_(threads), sync_(threads) {}

  Bandwidth run() {
    std::vector<std::thread> workers;
    for (int t = 1; t < threads_; ++t)
      workers.emplace_back([this] { work(false); });
    Bandwidth bw = work(true);
    for (auto& w : workers)
      w.join();
    return bw;
  }

 private:
  Bandwidth work(bool timer) {
    float* a = allocate(walkBytes_);
    float* b = allocate(walkBytes_);
    float* dst = allocate(walkBytes_);
    size_t n = bytes_ / sizeof(float);
    // Enough repetitions that a trial moves about 64 MiB per thread.
    size_t reps = std::max<size_t>(1, (64u << 20) / std::max<size_t>(bytes_, 1));
    const size_t steps = std::max<size_t>(1, walkBytes_ / std::max<size_t>(bytes_, 1));
    size_t rep = 0;
    auto offset = [&] { return rep++ % steps * n; };
    auto copy = [&] {
      const size_t o = offset();
      std::memcpy(dst + o, a + o, bytes_);
      clobber();
    };
    auto copyPastCache = [&] {
      const size_t o = offset();
      copyStreamed(dst + o, a + o, bytes_);
      clobber();
    };
    auto reduce = [&] {
      const size_t o = offset();
      reduceKernel(dst + o, a + o, b + o, n);
      clobber();
    };
    auto reducePastCache = [&] {
      const size_t o = offset();
      reduceStreamed(dst + o, a + o, b + o, n);
      clobber();
    };
    // Each kernel with the faster of its two kinds of store at this size.
    Bandwidth bw;
    bw.copy = timed(copy, reps, 2.0 * bytes_, timer);
    bw.reduce = timed(reduce, reps, 3.0 * n * sizeof(float), timer);
    if (kStreamedStores) {
      bw.copy = std::max(bw.copy, timed(copyPastCache, reps, 2.0 * bytes_, timer));
      bw.reduce = std::max(bw.reduce, timed(reducePastCache, reps, 3.0 * n * sizeof(float), timer));
    }
    std::free(a);
    std::free(b);
    std::free(dst);
    return bw;
  }

  double timed(const std::function<void()>& kernel, size_t reps, double bytesPerRep, bool timer) {
    kernel();  // warm: pages, caches
    std::vector<double> rates;
    for (size_t trial = 0; trial < kTrials; ++trial) {
      sync_.arrive_and_wait();
      auto t0 = std::chrono::steady_clock::now();
      for (size_t r = 0; r < reps; ++r)
        kernel();
      sync_.arrive_and_wait();
      std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
      if (timer) rates.push_back(bytesPerRep * reps * threads_ / s.count() / 1e9);
    }
    return timer ? median(std::move(rates)) : 0;
  }

  size_t bytes_;
  size_t walkBytes_;
  int threads_;
  std::barrier<> sync_;
};

// This thread's turns at a counter that two threads pass back and forth: waits for the counter
// to reach first, first + 2, ... (below end) and adds one each time. After 4096 spins a wait
// yields, so that two threads on one CPU still get on; false once the deadline has passed (for
// either thread).
bool takeTurns(std::atomic<uint64_t>& ball, uint64_t first, uint64_t end, std::atomic<bool>& late,
               std::chrono::steady_clock::time_point deadline) {
  for (uint64_t mine = first; mine < end; mine += 2) {
    for (uint32_t spins = 0; ball.load(std::memory_order_acquire) != mine; ++spins) {
      if (late.load(std::memory_order_relaxed)) return false;
      if (spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();  // as weft's own waits: a sibling hyperthread keeps its share
#endif
        continue;
      }
      std::this_thread::yield();
      if (std::chrono::steady_clock::now() > deadline) {
        late.store(true);
        return false;
      }
    }
    ball.store(mine + 1, std::memory_order_release);
  }
  return true;
}

// The first two CPUs this process may run on, or fewer.
std::vector<int> twoAllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

bool pinTo(pthread_t thread, int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return pthread_setaffinity_np(thread, sizeof(one), &one) == 0;
}

// The round trip of the counter's cache line between two threads pinned to two CPUs, in ns, for
// each of `trials` trials of `roundTrips` trips; none with fewer than 2 CPUs, or when the trials
// ran out of time.
std::vector<double> roundTripTrials(uint64_t roundTrips, size_t trials) {
  const std::vector<int> cpus = twoAllowedCpus();
  if (cpus.size() < 2) return {};
  const uint64_t turns = 2 * roundTrips * trials;
  alignas(64) std::atomic<uint64_t> ball{0};
  std::atomic<bool> late{false};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::vector<double> ns;
  ns.reserve(trials);  // nothing below throws while the other thread runs
  cpu_set_t before;
  const bool restore = pthread_getaffinity_np(pthread_self(), sizeof(before), &before) == 0;
  std::thread other([&] { (void)takeTurns(ball, 1, turns, late, deadline); });
  const bool pinned = pinTo(other.native_handle(), cpus[1]) && pinTo(pthread_self(), cpus[0]);
  for (uint64_t trial = 0; pinned && trial < trials; ++trial) {
    auto t0 = std::chrono::steady_clock::now();
    const uint64_t first = 2 * roundTrips * trial;
    if (!takeTurns(ball, first, first + 2 * roundTrips, late, deadline)) break;
    std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - t0;
    ns.push_back(took.count() / static_cast<double>(roundTrips));
  }
  late.store(true);  // frees the other thread if this one gave up
  other.join();
  if (restore) pthread_setaffinity_np(pthread_self(), sizeof(before), &before);
  if (ns.size() < trials) ns.clear();
  return ns;
}

// The median over kTrials of 20000 round trips; 0 where they could not be measured.
double roundTripNs() {
  std::vector<double> ns = roundTripTrials(20000, kTrials);
  return ns.empty() ? 0 : median(std::move(ns));
}

// --watch: short round trips, then a pause of `periodMs`, until killed, for perf/compare to see
// when the cores' distance changes during a run. The fastest of three short trials, since a busy
// machine can only delay a trial (a thread not yet scheduled), never speed one up.
int watchRoundTrips(int periodMs) {
  std::printf("# watch MONOTONIC_NS RTT_NS  (0: not measured)\n");
  for (;;) {
    std::vector<double> ns = roundTripTrials(200, 3);
    double fastest = ns.empty() ? 0 : *std::min_element(ns.begin(), ns.end());
    auto now = std::chrono::steady_clock::now().time_since_epoch();
    std::printf("watch %lld %.0f\n", static_cast<long long>(std::chrono::nanoseconds(now).count()),
                fastest);
    // A reader that has gone usually ends us by SIGPIPE first.
    if (std::fflush(stdout) != 0) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(periodMs));
  }
}

// Machine-wide bytes through a reduction and through a copy, as the header explains.
void traffic(Coll coll, int nranks, double size, double* reduceBytes, double* copyBytes) {
  double n = nranks;
  *reduceBytes = 0;
  *copyBytes = 0;
  switch (coll) {
    case Coll::kAllReduce:
      *reduceBytes = 2 * n * size;
      break;
    case Coll::kReduceScatter:
    case Coll::kReduce:
      *reduceBytes = (n + 1) * size;
      break;
    case Coll::kAllToAll:
      *copyBytes = 2 * n * size;
      break;
    default:  // all_gather, broadcast
      *copyBytes = (n + 1) * size;
      break;
  }
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) items.push_back(item);
  return items;
}

int run(int argc, char** argv) {
  std::string minText = "8", maxText = "256M", threadsText = "1,2", ranksText, collsText;
  size_t factor = 2;
  CLI::App app(
      "weft-membw: copy and reduce bandwidth on 1 and 2 threads, and the bound it implies for "
      "each collective (see the source's header for the formulas)",
      "weft-membw");
  app.add_option("-b,--minbytes", minText, "Smallest size (default 8)");
  app.add_option("-e,--maxbytes", maxText, "Largest size (default 256M)");
  app.add_option("-f,--stepfactor", factor, "Size multiplier (default 2)")
      ->check(CLI::Range(2, 1 << 20));
  app.add_option("--threads", threadsText, "Thread counts to probe (default 1,2)");
  app.add_option("--ranks", ranksText, "Rank counts to print bounds for, e.g. 2,4");
  app.add_option("--colls", collsText, "Collectives to print bounds for (default all six)");
  int watchMs = 0;
  app.add_option("--watch", watchMs,
                 "Only print the round trip every this many ms, until killed (perf/compare)")
      ->check(CLI::Range(1, 60000));
  CLI11_PARSE(app, argc, argv);
  if (watchMs > 0) return watchRoundTrips(watchMs);

  weft::perf::Options sizes;
  auto lo = weft::perf::parseSize(minText), hi = weft::perf::parseSize(maxText);
  if (!lo || !hi || *lo > *hi) {
    std::fprintf(stderr, "weft-membw: bad -b/-e sizes\n");
    return 2;
  }
  sizes.minBytes = *lo;
  sizes.maxBytes = *hi;
  sizes.stepFactor = factor;
  std::vector<int> threads, ranks;
  std::vector<Coll> colls;
  for (const auto& t : splitList(threadsText))
    threads.push_back(std::max(1, std::atoi(t.c_str())));
  for (const auto& r : splitList(ranksText))
    ranks.push_back(std::max(1, std::atoi(r.c_str())));
  if (collsText.empty())
    collsText = "all_reduce,all_gather,reduce_scatter,broadcast,reduce,all_to_all";
  for (const auto& c : splitList(collsText)) {
    auto coll = weft::perf::collFromName(c);
    if (!coll || *coll == Coll::kSendRecv) {
      std::fprintf(stderr, "weft-membw: no bound for '%s'\n", c.c_str());
      return 2;
    }
    colls.push_back(*coll);
  }
  std::sort(threads.begin(), threads.end());

  std::printf("# rtt NANOSECONDS  (a cache line's round trip between two threads)\n");
  std::printf("rtt %.0f\n", roundTripNs());
  std::fflush(stdout);
  std::printf("# bw SIZE THREADS COPY_GBps REDUCE_GBps  (bytes read + written, all threads)\n");
  std::map<std::pair<size_t, int>, Bandwidth> measured;
  for (size_t bytes : weft::perf::sizeList(sizes)) {
    for (int t : threads) {
      Bandwidth bw = Probe(bytes, sizes.maxBytes, t).run();
      measured[{bytes, t}] = bw;
      std::printf("bw %zu %d %.3f %.3f\n", bytes, t, bw.copy, bw.reduce);
      std::fflush(stdout);
    }
  }
  if (ranks.empty()) return 0;

  std::printf(
      "# bound COLLECTIVE RANKS SIZE TIME_us BUSBW_GBps  (at the probed size, t threads)\n");
  for (Coll coll : colls) {
    for (int n : ranks) {
      // The most threads probed that the ranks can keep busy.
      int t = threads.front();
      for (int candidate : threads)
        if (candidate <= n) t = candidate;
      for (size_t bytes : weft::perf::sizeList(sizes)) {
        weft::perf::CollCounts counts = weft::perf::collCounts(coll, bytes / sizeof(float), n);
        size_t size = weft::perf::reportedBytes(counts, sizeof(float));
        if (size == 0) continue;
        const Bandwidth& bw = measured[{bytes, t}];
        double reduceBytes = 0, copyBytes = 0;
        traffic(coll, n, static_cast<double>(size), &reduceBytes, &copyBytes);
        double seconds = reduceBytes / (bw.reduce * 1e9) + copyBytes / (bw.copy * 1e9);
        double busBw =
            weft::perf::bandwidth(coll, counts.paramCount, sizeof(float), seconds, n).busBw;
        std::printf("bound %s %d %zu %.4f %.4f\n", weft::perf::collName(coll), n, size,
                    seconds * 1e6, busBw);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // e.g. a thread that could not start
    std::fprintf(stderr, "weft-membw: %s\n", e.what());
    return 1;
  }
}
