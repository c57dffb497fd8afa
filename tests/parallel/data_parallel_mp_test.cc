// DataParallel across real processes: gradient buckets averaged over the ranks whatever order
// each rank readies its gradients in, checked against averages computed here, step after step;
// the buckets' layout; and the clear errors for misuse and for ranks that disagree.
#include "weft/parallel/data_parallel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/api/process_ranks.h"

namespace weft::test {
namespace {

using parallel::DataParallel;
using parallel::MemoryKind;
using parallel::MemoryLedger;

// Rank r's gradient element i of parameter p at step s.
float gradValue(int rank, size_t p, size_t i, int step) {
  return static_cast<float>(
             (rank * 7 + static_cast<int>(p) * 3 + static_cast<int>(i % 11) + step * 5) % 23) -
         11.0f;
}

const std::vector<size_t> kCounts{1000, 7, 300000, 50000, 3, 65536};
constexpr size_t kCap = 256 << 10;

TEST(DataParallel, BucketsHoldConsecutiveParametersLastFirstWithinTheCap) {
  expectAllOk(runProcesses(2, {{"WEFT_TIMEOUT", "60"}}, [&](int) {
    Comm comm = Comm::fromEnv();
    MemoryLedger ledger;
    DataParallel dp(comm, weftFloat32, kCounts, kCap, ledger);
    std::vector<size_t> seen;
    const parallel::BucketLayout& layout = dp.layout();
    for (size_t b = 0; b < layout.buckets.size(); ++b) {
      std::vector<size_t> params;
      for (size_t p = 0; p < kCounts.size(); ++p) {
        if (layout.bucketOf[p] == b) params.push_back(p);
      }
      ASSERT_FALSE(params.empty());
      size_t bytes = 0;
      for (size_t p : params)
        bytes += kCounts[p] * sizeof(float);
      EXPECT_TRUE(params.size() == 1 || bytes <= kCap) << "bucket " << b << ": " << bytes;
      seen.insert(seen.end(), params.rbegin(), params.rend());
    }
    // Taken together, last parameter first: 5, 4, ..., 0.
    std::vector<size_t> want(kCounts.size());
    std::iota(want.rbegin(), want.rend(), 0);
    EXPECT_EQ(seen, want);
    // Each bucket is one range of the flat buffer: parameter spans follow each other.
    auto flat = dp.flatGrads<float>();
    EXPECT_EQ(flat.size(), std::accumulate(kCounts.begin(), kCounts.end(), size_t{0}));
    EXPECT_EQ(dp.grad<float>(5).data(), flat.data());
    EXPECT_EQ(dp.grad<float>(0).data() + kCounts[0], flat.data() + flat.size());
    EXPECT_EQ(ledger.current(MemoryKind::kGradients), flat.size() * sizeof(float));
  }));
}

TEST(DataParallel, GradientsAreAveragedWhateverOrderEachRankReadiesThem) {
  const int nranks = 3;
  expectAllOk(runProcesses(nranks, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm comm = Comm::fromEnv();
    MemoryLedger ledger;
    DataParallel dp(comm, weftFloat32, kCounts, kCap, ledger);
    std::mt19937 rng(static_cast<unsigned>(rank));
    for (int step = 0; step < 3; ++step) {
      std::vector<size_t> order(kCounts.size());
      std::iota(order.begin(), order.end(), 0);
      if (rank == 0) std::reverse(order.begin(), order.end());
      if (rank == 2) std::shuffle(order.begin(), order.end(), rng);
      for (size_t p : order) {
        auto g = dp.grad<float>(p);
        for (size_t i = 0; i < g.size(); ++i)
          g[i] = gradValue(rank, p, i, step);
        dp.markReady(p);
      }
      dp.finish();
      for (size_t p = 0; p < kCounts.size(); ++p) {
        auto g = dp.grad<float>(p);
        for (size_t i = 0; i < g.size(); ++i) {
          float sum = 0;
          for (int r = 0; r < nranks; ++r)
            sum += gradValue(r, p, i, step);
          ASSERT_NEAR(g[i], sum / nranks, 1e-5f)
              << "step " << step << " param " << p << " [" << i << "]";
        }
      }
    }
  }));
}

// The error each rank gets, or "no error".
template <typename F>
std::string errorOf(F&& f, weftResult_t want) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), want) << e.what();
    return e.what();
  }
  return "no error";
}

TEST(DataParallel, MisuseAndDisagreeingRanksAreClearErrors) {
  expectAllOk(runProcesses(2, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm comm = Comm::fromEnv();
    MemoryLedger ledger;
    auto make = [&](std::vector<size_t> counts, size_t cap) {
      DataParallel dp(comm, weftFloat32, std::move(counts), cap, ledger);
    };
    EXPECT_NE(errorOf([&] { make({10}, 0); }, weftInvalidArgument).find("bucket cap must be > 0"),
              std::string::npos);
    EXPECT_NE(errorOf([&] { make({}, 64); }, weftInvalidArgument).find("no parameters"),
              std::string::npos);
    EXPECT_NE(errorOf(
                  [&] {
                    make({4, 0}, 64);
                  },
                  weftInvalidArgument)
                  .find("parameter 1 is empty"),
              std::string::npos);
    // Rank 1 splits the same 30 elements differently: both ranks hear of it.
    const std::string differ = errorOf(
        [&] {
          make(rank == 0 ? std::vector<size_t>{10, 20} : std::vector<size_t>{20, 10}, 64);
        },
        weftInvalidUsage);
    EXPECT_NE(differ.find("parameter layouts differ"), std::string::npos) << differ;
    EXPECT_NE(differ.find("the split or other settings differ"), std::string::npos) << differ;
    // One rank's invalid arguments fail the other rank too, instead of leaving it waiting.
    const std::string oneBad = errorOf(
        [&] {
          make(rank == 0 ? std::vector<size_t>{10, 0} : std::vector<size_t>{10, 20}, 64);
        },
        weftInvalidUsage);
    EXPECT_NE(oneBad.find("parameter layouts differ"), std::string::npos) << oneBad;
    const std::string more = errorOf(
        [&] {
          make(rank == 0 ? std::vector<size_t>{10, 20} : std::vector<size_t>{10, 20, 5}, 64);
        },
        weftInvalidUsage);
    EXPECT_NE(more.find("rank 1 has 3 parameters of 35 elements"), std::string::npos) << more;

    // Buckets of one parameter each (cap 40 bytes), so that a missing gradient holds back its
    // bucket and those after it alike on both ranks, and nobody waits.
    DataParallel dp(comm, weftFloat32, {10, 10, 10}, 40, ledger);
    EXPECT_NE(errorOf([&] { dp.grad<double>(0); }, weftInvalidArgument).find("of type 7, not 8"),
              std::string::npos);
    EXPECT_NE(errorOf([&] { dp.markReady(3); }, weftInvalidArgument).find("no parameter 3"),
              std::string::npos);
    dp.markReady(2);
    EXPECT_NE(errorOf([&] { dp.markReady(2); }, weftInvalidUsage).find("marked ready twice"),
              std::string::npos);
    dp.markReady(0);
    EXPECT_NE(errorOf([&] { dp.finish(); }, weftInvalidUsage)
                  .find("finish() before the gradients of parameters 1 were marked ready"),
              std::string::npos);
    // The next step is whole again.
    for (size_t p = 0; p < 3; ++p) {
      std::fill(dp.grad<float>(p).begin(), dp.grad<float>(p).end(), static_cast<float>(rank));
      dp.markReady(p);
    }
    dp.finish();
    EXPECT_EQ(dp.grad<float>(1)[4], 0.5f);
  }));
}

}  // namespace
}  // namespace weft::test
