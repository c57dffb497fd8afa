// Zero (stages 1 and 2) across 1-4 real processes: after 20 Adam steps of a model whose gradients
// depend on the parameters, every rank's parameters equal a one-process run computed here with
// the same global batch, and plain data parallelism (DataParallel plus Adam on every element)
// lands on the same parameters; memory is held as each stage says.
#include "weft/parallel/zero.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/parallel/data_parallel.hpp"

namespace weft::test {
namespace {

using parallel::AdamConfig;
using parallel::DataParallel;
using parallel::MemoryKind;
using parallel::MemoryLedger;
using parallel::Zero;

const std::vector<size_t> kCounts{1000, 7, 3001, 64, 5};
constexpr size_t kCap = 8 << 10;
constexpr int kSteps = 20;
const AdamConfig kAdam{0.01f, 0.9f, 0.999f, 1e-8f, 0.01f};

float initial(size_t p, size_t i) {
  return std::cos(0.37f * static_cast<float>(i) + static_cast<float>(p));
}

// Rank r's part of the batch pulls element i of parameter p towards its own target: the
// gradient of 0.5 * a * (x - t)^2.
float gradient(int rank, size_t p, size_t i, float x) {
  const float a = 1.0f + 0.1f * static_cast<float>(rank) + 0.01f * static_cast<float>(i % 5);
  const float t = std::sin(static_cast<float>(i + p) + static_cast<float>(rank));
  return a * (x - t);
}

// The one-process run: the average of the ranks' gradients, then Adam, written out here.
std::vector<std::vector<float>> reference(int nranks) {
  std::vector<std::vector<float>> x(kCounts.size()), m(kCounts.size()), v(kCounts.size());
  for (size_t p = 0; p < kCounts.size(); ++p) {
    for (size_t i = 0; i < kCounts[p]; ++i)
      x[p].push_back(initial(p, i));
    m[p].assign(kCounts[p], 0.0f);
    v[p].assign(kCounts[p], 0.0f);
  }
  for (int step = 1; step <= kSteps; ++step) {
    for (size_t p = 0; p < kCounts.size(); ++p) {
      for (size_t i = 0; i < kCounts[p]; ++i) {
        float sum = 0;
        for (int r = 0; r < nranks; ++r)
          sum += gradient(r, p, i, x[p][i]);
        const float g = sum / static_cast<float>(nranks) + kAdam.weightDecay * x[p][i];
        m[p][i] = kAdam.beta1 * m[p][i] + (1 - kAdam.beta1) * g;
        v[p][i] = kAdam.beta2 * v[p][i] + (1 - kAdam.beta2) * g * g;
        const double mhat = m[p][i] / (1 - std::pow(double{kAdam.beta1}, step));
        const double vhat = v[p][i] / (1 - std::pow(double{kAdam.beta2}, step));
        x[p][i] -= static_cast<float>(kAdam.lr * mhat / (std::sqrt(vhat) + kAdam.eps));
      }
    }
  }
  return x;
}

void expectClose(float got, float want, const std::string& where) {
  ASSERT_LE(std::fabs(got - want), 1e-5f * std::max(1.0f, std::fabs(want)))
      << where << ": " << got << " against " << want;
}

class ZeroStages : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ZeroStages, MatchesOneProcessAndPlainDataParallelism) {
  const int stage = std::get<0>(GetParam()), nranks = std::get<1>(GetParam());
  const auto want = reference(nranks);
  expectAllOk(runProcesses(nranks, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm comm = Comm::fromEnv();
    MemoryLedger zeroMemory, dpMemory;
    Zero zero(comm, stage, kCounts, kCap, kAdam, zeroMemory);
    DataParallel dp(comm, weftFloat32, kCounts, kCap, dpMemory);
    // Plain data parallelism's own parameters and moments, on every element.
    std::vector<std::vector<float>> x(kCounts.size()), m(kCounts.size()), v(kCounts.size());
    for (size_t p = 0; p < kCounts.size(); ++p) {
      auto param = zero.param(p);
      for (size_t i = 0; i < kCounts[p]; ++i) {
        x[p].push_back(initial(p, i));
        param[i] = rank == 0 ? initial(p, i) : -99.0f;  // rank 0's reach the others below
      }
      m[p].assign(kCounts[p], 0.0f);
      v[p].assign(kCounts[p], 0.0f);
    }
    zero.broadcastParameters(0);
    for (int step = 1; step <= kSteps; ++step) {
      for (size_t p = kCounts.size(); p-- > 0;) {  // as a backward pass: last first
        auto g = zero.grad(p), dg = dp.grad<float>(p);
        auto param = zero.param(p);
        for (size_t i = 0; i < kCounts[p]; ++i) {
          g[i] = gradient(rank, p, i, param[i]);
          dg[i] = gradient(rank, p, i, x[p][i]);
        }
        zero.markReady(p);
        dp.markReady(p);
      }
      zero.step();
      dp.finish();
      for (size_t p = 0; p < kCounts.size(); ++p)
        parallel::adamStep(kAdam, step, x[p], dp.grad<float>(p), m[p], v[p]);
    }
    for (size_t p = 0; p < kCounts.size(); ++p) {
      auto param = zero.param(p);
      for (size_t i = 0; i < kCounts[p]; ++i) {
        const std::string where = "param " + std::to_string(p) + "[" + std::to_string(i) + "]";
        expectClose(param[i], want[p][i], "zero " + where);
        expectClose(x[p][i], want[p][i], "data parallel " + where);
      }
    }
    // Parameters whole; a 1/N slice of Adam's two moments; ZeRO-1 keeps all gradients (the
    // averaged slice lands in place), ZeRO-2 a 1/N slice of them and two bucket buffers.
    const size_t total = zero.layout().total, n = static_cast<size_t>(nranks);
    EXPECT_EQ(total % n, 0u);
    EXPECT_EQ(zeroMemory.current(MemoryKind::kParameters), 4 * total);
    EXPECT_EQ(zeroMemory.current(MemoryKind::kOptimizerState), 8 * total / n);
    size_t largest = 0;
    for (const auto& b : zero.layout().buckets)
      largest = std::max(largest, b.elements);
    if (stage == 1) {
      EXPECT_EQ(zeroMemory.current(MemoryKind::kGradients), 4 * total);
      EXPECT_EQ(zeroMemory.current(MemoryKind::kBuckets), 0u);
    } else {
      EXPECT_EQ(zeroMemory.current(MemoryKind::kGradients), 4 * total / n);
      EXPECT_EQ(zero.bucketBuffers(), 2u);
      EXPECT_EQ(zeroMemory.current(MemoryKind::kBuckets), 2 * 4 * largest);
    }
  }));
}

// Stage 3 over units {0, 1} {2} {3, 4}: each step gathers every unit for a forward pass (the next
// one prefetched), then again last first for the backward pass, which computes the gradients
// from the gathered parameters; the result equals the one-process run, and each rank holds
// 1/N of parameters, gradients and moments, plus at most two gathered units.
class ZeroStage3 : public ::testing::TestWithParam<int> {};

TEST_P(ZeroStage3, MatchesOneProcessWithParametersSharded) {
  const int nranks = GetParam();
  const auto want = reference(nranks);
  const std::vector<size_t> unitOf{0, 0, 1, 2, 2};
  expectAllOk(runProcesses(nranks, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm comm = Comm::fromEnv();
    MemoryLedger memory;
    Zero zero(comm, 3, kCounts, kCap, kAdam, memory, unitOf);
    for (size_t p = 0; p < kCounts.size(); ++p) {
      std::vector<float> values;
      for (size_t i = 0; i < kCounts[p]; ++i)
        values.push_back(initial(p, i));
      zero.setParam(p, values);
    }
    const size_t units = 3;
    for (int step = 1; step <= kSteps; ++step) {
      for (size_t u = 0; u < units; ++u) {  // forward
        zero.gather(u, u + 1);
        zero.release(u);
      }
      for (size_t u = units; u-- > 0;) {  // backward
        zero.gather(u, u > 0 ? u - 1 : SIZE_MAX);
        for (size_t p = kCounts.size(); p-- > 0;) {
          if (unitOf[p] != u) continue;
          auto param = zero.param(p);
          auto g = zero.grad(p);
          for (size_t i = 0; i < kCounts[p]; ++i)
            g[i] = gradient(rank, p, i, param[i]);
          zero.markReady(p);
        }
        zero.release(u);
      }
      if (step == kSteps) zero.gather(0);  // held across the step, which drops it
      zero.step();
    }
    EXPECT_THROW(zero.param(0), Error);  // no stale copy survives the step
    const size_t gatheredPeak = memory.peak(MemoryKind::kGathered);
    for (size_t u = 0; u < units; ++u)
      zero.gather(u);
    for (size_t p = 0; p < kCounts.size(); ++p) {
      auto param = zero.param(p);
      for (size_t i = 0; i < kCounts[p]; ++i) {
        expectClose(param[i], want[p][i],
                    "param " + std::to_string(p) + "[" + std::to_string(i) + "]");
      }
    }
    const size_t total = zero.layout().total, n = static_cast<size_t>(nranks);
    EXPECT_EQ(memory.current(MemoryKind::kParameters), 4 * total / n);
    EXPECT_EQ(memory.current(MemoryKind::kGradients), 4 * total / n);
    EXPECT_EQ(memory.current(MemoryKind::kOptimizerState), 8 * total / n);
    size_t unitElements[3] = {};
    for (const auto& b : zero.layout().buckets)
      unitElements[b.unit] += b.elements;
    std::sort(std::begin(unitElements), std::end(unitElements));
    EXPECT_GT(gatheredPeak, 4 * unitElements[2]);  // a prefetch overlapped a unit in use
    EXPECT_LE(gatheredPeak, 4 * (unitElements[1] + unitElements[2]));
    // A unit not gathered has no parameters to show.
    zero.release(1);
    EXPECT_THROW(zero.param(2), Error);
  }));
}

INSTANTIATE_TEST_SUITE_P(Ranks, ZeroStage3, ::testing::Values(1, 2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(Zero, MisuseIsAClearError) {
  expectAllOk(runProcesses(2, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm comm = Comm::fromEnv();
    MemoryLedger memory;
    try {
      Zero bad(comm, 2, rank == 0 ? std::vector<size_t>{4, 4} : std::vector<size_t>{8}, 64, kAdam,
               memory);
      ADD_FAILURE() << "differing layouts were accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("zero: the ranks' parameter layouts differ"),
                std::string::npos)
          << e.what();
    }
    try {
      Zero bad(comm, rank == 0 ? 2 : 3, {8, 8}, 64, kAdam, memory);
      ADD_FAILURE() << "differing stages were accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("other settings differ"), std::string::npos) << e.what();
    }
    // One parameter per bucket: the unready one holds back its bucket on both ranks alike.
    EXPECT_THROW(Zero(comm, 4, {16}, 64, kAdam, memory), Error);
    Zero zero(comm, 2, {16, 16}, 64, kAdam, memory);
    EXPECT_THROW(zero.param(2), Error);
    zero.markReady(1);
    try {
      zero.step();
      ADD_FAILURE() << "a step before every gradient was ready went through";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), weftInvalidUsage);
      EXPECT_NE(std::string(e.what()).find("step() before the gradients of parameters 0"),
                std::string::npos)
          << e.what();
    }
  }));
}

// Stage 2's bucket buffers: zeros at the start of each step (so gradients may be accumulated
// into them), and a third one when three buckets are open at once.
TEST(Zero, Stage2BucketBuffersStartZeroedAndGrowWhenBucketsOverlap) {
  expectAllOk(runProcesses(2, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm comm = Comm::fromEnv();
    MemoryLedger memory;
    const AdamConfig sgdLike{0.1f, 0.0f, 0.0f, 1.0f, 0.0f};  // x -= 0.1 * g / (|g| + 1)
    Zero zero(comm, 2, {16, 16, 16}, 64, sgdLike, memory);   // a bucket per parameter
    for (int step = 0; step < 2; ++step) {
      std::vector<std::span<float>> g;
      for (size_t p = 3; p-- > 0;)
        g.push_back(zero.grad(p));  // all three open before any is ready
      for (auto& span : g) {
        for (float& x : span) {
          EXPECT_EQ(x, 0.0f) << "step " << step;
          x += static_cast<float>(rank + 1);  // accumulates onto the zeros
        }
      }
      for (size_t p = 3; p-- > 0;)
        zero.markReady(p);
      zero.step();
    }
    EXPECT_EQ(zero.bucketBuffers(), 3u);
    // Two steps of x -= 0.1 * 1.5 / 2.5 from zero: both ranks averaged the same gradient.
    for (size_t p = 0; p < 3; ++p) {
      for (float x : zero.param(p))
        EXPECT_NEAR(x, -0.12f, 1e-6f);
    }
  }));
}

INSTANTIATE_TEST_SUITE_P(StagesAndRanks, ZeroStages,
                         ::testing::Combine(::testing::Values(1, 2), ::testing::Values(1, 2, 3, 4)),
                         [](const auto& info) {
                           return "stage" + std::to_string(std::get<0>(info.param)) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "ranks";
                         });

}  // namespace
}  // namespace weft::test
