// The C++ wrappers: RAII handles, typed spans, exceptions.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <thread>
#include <vector>

#include "weft/weft.hpp"

namespace {

void onEachRank(std::vector<weft::Comm>& comms, const std::function<void(weft::Comm&)>& fn) {
  std::vector<std::thread> threads;
  for (auto& c : comms)
    threads.emplace_back([&fn, &c] { fn(c); });
  for (auto& t : threads)
    t.join();
}

TEST(CppApi, CollectivesOverSpans) {
  auto comms = weft::Comm::initAll(3);
  ASSERT_EQ(comms.size(), 3u);
  onEachRank(comms, [](weft::Comm& comm) {
    const int r = comm.rank();
    EXPECT_EQ(comm.size(), 3);
    std::vector<int64_t> v(10, r + 1);
    comm.allReduce(std::span(v));
    EXPECT_EQ(v[9], 6);

    std::vector<double> mine(4, r * 1.5);
    std::vector<double> all(12);
    comm.allGather(std::span<const double>(mine), std::span(all));
    EXPECT_EQ(all[0], 0.0);
    EXPECT_EQ(all[11], 3.0);

    std::vector<float> blocks(6);
    std::iota(blocks.begin(), blocks.end(), 0.0f);
    std::vector<float> mineOut(2);
    comm.reduceScatter(std::span<const float>(blocks), std::span(mineOut), weftMax);
    EXPECT_EQ(mineOut[1], float(2 * r + 1));

    std::vector<uint8_t> b(5, r == 1 ? 7 : 0);
    comm.broadcast(std::span(b), 1);
    EXPECT_EQ(b[4], 7);

    weft::Stream stream;
    std::vector<int32_t> s(3, r);
    comm.allReduce(std::span(s), weftSum, stream);
    stream.synchronize();
    EXPECT_TRUE(stream.done());
    EXPECT_EQ(s[0], 3);
    const weftCommStats_t stats = comm.stats();
    EXPECT_EQ(stats.byKind[weftStatsAllReduce].calls, 2u);
    EXPECT_EQ(stats.byKind[weftStatsAllReduce].bytes, 10 * 8u + 3 * 4u);
    comm.resetStats();
    EXPECT_EQ(comm.stats().total.calls, 0u);

    weft::Comm sub = comm.split(r == 2 ? WEFT_SPLIT_NOCOLOR : 0, r);
    EXPECT_EQ(static_cast<bool>(sub), r != 2);
    if (sub) {
      EXPECT_EQ(sub.size(), 2);
    }
    comm.barrier();
  });
}

TEST(CppApi, ErrorsBecomeExceptions) {
  auto comms = weft::Comm::initAll(1);
  std::vector<float> a(4);
  std::vector<float> b(2);
  EXPECT_THROW(comms[0].allReduce(std::span<const float>(a), std::span(b)), weft::Error);
  try {
    comms[0].broadcast(std::span(a), 3);
    FAIL() << "no exception";
  } catch (const weft::Error& e) {
    EXPECT_EQ(e.code(), weftInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("root 3 is out of range"), std::string::npos);
  }
  EXPECT_THROW(weft::Comm::initRank(2, weft::UniqueId(), 0), weft::Error);
}

}  // namespace
