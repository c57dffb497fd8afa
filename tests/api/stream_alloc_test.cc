// Calls queued on a stream reuse the batches that earlier calls left behind: a deep queue that
// allocated per call would grow and shrink the heap by its own size on every burst, paying a
// page fault per page (weft-perf's default stream mode measured 1.5-2 us per 8-byte all-reduce
// that way, against 0.5 us blocking). Counted with a replaced operator new: once each stream has
// held a full burst, another burst allocates nothing, however far a worker falls behind and
// however long it waits.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include "weft/weft.h"

namespace {
std::atomic<long> gAllocations{0};
}  // namespace

// Every form of new and delete that pairs with malloc and free is replaced, so that memory from
// one never meets the other's allocator (AddressSanitizer checks the pairs). The aligned forms
// stay the library's own on both sides.
void* operator new(size_t bytes) {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t bytes) {
  return operator new(bytes);
}
void* operator new(size_t bytes, const std::nothrow_t&) noexcept {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  return malloc(bytes == 0 ? 1 : bytes);
}
void* operator new[](size_t bytes, const std::nothrow_t& tag) noexcept {
  return operator new(bytes, tag);
}
// GCC cannot see that the replaced operator new above hands out malloc's memory.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  free(p);
}
void operator delete[](void* p) noexcept {
  free(p);
}
void operator delete(void* p, size_t) noexcept {
  free(p);
}
void operator delete[](void* p, size_t) noexcept {
  free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  free(p);
}
#pragma GCC diagnostic pop

namespace {

constexpr int kRanks = 2;
constexpr int kCalls = 256;

// Every rank's thread waits here until all have arrived, `round` being the number of earlier
// arrivals per rank.
void meet(std::atomic<int>& arrived, int round) {
  arrived.fetch_add(1);
  while (arrived.load() < kRanks * (round + 1))
    std::this_thread::yield();
}

TEST(StreamBatches, QueuedCallsAllocateNothingOnceWarm) {
  std::vector<weftComm_t> comms(kRanks, nullptr);
  ASSERT_EQ(weftCommInitAll(comms.data(), kRanks, nullptr), weftSuccess)
      << weftGetLastError(nullptr);
  std::atomic<int> arrived{0};
  long before = 0;
  long after = 0;
  std::vector<std::thread> threads;
  threads.reserve(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      weftStream_t stream = nullptr;
      ASSERT_EQ(weftStreamCreate(&stream), weftSuccess);
      const std::vector<float> one(2, 1.0f);
      std::vector<float> sum(2, 0.0f);
      auto enqueueAll = [&] {
        for (int i = 0; i < kCalls; ++i) {
          ASSERT_EQ(weftAllReduce(one.data(), sum.data(), sum.size(), weftFloat32, weftSum,
                                  comms[r], stream),
                    weftSuccess);
        }
      };
      auto finish = [&] {
        ASSERT_EQ(weftStreamSynchronize(stream), weftSuccess) << weftGetLastError(comms[r]);
      };
      // Warming: each rank in turn queues a whole burst while its worker is stuck on the first
      // call, whose peer has not called yet, so that each stream has once held as many calls as
      // a burst can queue, however far its worker later falls behind.
      int round = 0;
      for (int deep = 0; deep < kRanks; ++deep) {
        if (r == deep) enqueueAll();
        meet(arrived, round++);
        if (r != deep) enqueueAll();
        finish();
        meet(arrived, round++);
      }
      if (r == 0) before = gAllocations.load();
      sum.assign(2, 0.0f);
      meet(arrived, round++);
      enqueueAll();
      finish();
      meet(arrived, round++);
      if (r == 0) after = gAllocations.load();
      meet(arrived, round++);
      EXPECT_EQ(sum, std::vector<float>(2, 2.0f));
      ASSERT_EQ(weftStreamDestroy(stream), weftSuccess);
    });
  }
  for (auto& t : threads)
    t.join();
  for (weftComm_t c : comms)
    EXPECT_EQ(weftCommDestroy(c), weftSuccess);
  EXPECT_EQ(after - before, 0) << after - before << " allocations for " << kRanks * kCalls
                               << " queued calls";
}

}  // namespace
