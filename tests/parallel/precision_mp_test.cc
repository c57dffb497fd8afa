// Mixed precision in the training layer: the loss scaler, the gradient check and clipping, Adam
// on master weights, and Zero across real processes: an overflow on one rank skips the step on
// every rank, and clipping by the global norm gives the update computed here.
#include "weft/parallel/precision.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/api/process_ranks.h"
#include "weft/float16.hpp"
#include "weft/parallel/adam.hpp"
#include "weft/parallel/zero.hpp"

namespace weft::test {
namespace {

using parallel::AdamConfig;
using parallel::GradientCheck;
using parallel::LossScaler;
using parallel::MemoryLedger;
using parallel::PrecisionConfig;
using parallel::Zero;

TEST(Precision, LossScalerHalvesOnOverflowAndDoublesAfterTheInterval) {
  PrecisionConfig c;
  c.type = weftFloat16;
  c.initialLossScale = 1024;
  c.growthInterval = 3;
  LossScaler s(c);
  EXPECT_EQ(s.scale(), 1024.0f);
  s.update(true);
  EXPECT_EQ(s.scale(), 512.0f);
  s.update(false);
  s.update(false);
  EXPECT_EQ(s.scale(), 512.0f);
  s.update(false);
  EXPECT_EQ(s.scale(), 1024.0f);
  s.update(false);
  s.update(true);  // an overflow restarts the count
  s.update(false);
  s.update(false);
  EXPECT_EQ(s.scale(), 512.0f);
  // A step's factor unscales by the scale the gradients were computed with, though the step
  // doubles it; an overflow gives 0 (skip) and halves it.
  c.growthInterval = 1;
  LossScaler g(c);
  EXPECT_EQ(g.stepFactor(GradientCheck{0, 1.0}, 0.0f), 1.0f / 1024);
  EXPECT_EQ(g.scale(), 2048.0f);
  EXPECT_FLOAT_EQ(g.stepFactor(GradientCheck{0, 100.0}, 5.0f), 1.0f / 2048 * 0.5f);  // 10 to 5
  EXPECT_EQ(g.stepFactor(GradientCheck{3, 1.0}, 0.0f), 0.0f);
  EXPECT_EQ(g.scale(), 2048.0f);
  c.type = weftBfloat16;  // bfloat16 and float32 are not scaled
  LossScaler flat(c);
  EXPECT_EQ(flat.scale(), 1.0f);
  flat.update(true);
  EXPECT_EQ(flat.scale(), 1.0f);
}

TEST(Precision, GradientCheckCountsNonFiniteAndSumsSquares) {
  // float16 bits: 1.0, -2.0, inf, NaN, 0.5
  const uint16_t half[] = {0x3c00, 0xc000, 0x7c00, 0x7e00, 0x3800};
  GradientCheck c;
  parallel::checkGradients(half, weftFloat16, 5, 0.5f, &c);
  EXPECT_EQ(c.nonFinite, 2.0);
  EXPECT_DOUBLE_EQ(c.sumSquares, 0.25 + 1.0 + 0.0625);
  const float f[] = {3.0f, 4.0f};
  parallel::checkGradients(f, weftFloat32, 2, 1.0f, &c);
  EXPECT_DOUBLE_EQ(c.sumSquares, 1.3125 + 25.0);
  GradientCheck g{0, 25.0};
  EXPECT_FLOAT_EQ(parallel::clipFactor(g, 1.0f), 0.2f);
  EXPECT_EQ(parallel::clipFactor(g, 10.0f), 1.0f);
  EXPECT_EQ(parallel::clipFactor(g, 0.0f), 1.0f);
}

TEST(Precision, ConfigsAreChecked) {
  PrecisionConfig c;
  c.type = weftInt32;
  EXPECT_THROW(parallel::checkPrecision(c), Error);
  c = PrecisionConfig{};
  c.initialLossScale = 0;
  EXPECT_THROW(parallel::checkPrecision(c), Error);
  c = PrecisionConfig{};
  c.maxGradNorm = -1;
  EXPECT_THROW(parallel::checkPrecision(c), Error);
  c = PrecisionConfig{};
  c.growthInterval = 0;
  EXPECT_THROW(parallel::checkPrecision(c), Error);
}

// Float32 through the mixed step, with a factor on the gradients, against Adam written out in
// double; bfloat16 keeps the master weights in float32 and stores them rounded, so updates below
// the 16-bit step accumulate.
TEST(Precision, AdamOnMasterWeights) {
  const AdamConfig adam{1e-2f, 0.9f, 0.999f, 1e-3f, 0.1f};
  const std::vector<float> g = {0.3f, -0.2f, 1e-3f};
  std::vector<float> b = {1.0f, -0.5f, 0.25f}, out(3), mb(3), vb(3);
  std::vector<double> x = {1.0, -0.5, 0.25}, xm(3), xv(3);
  for (int step = 1; step <= 5; ++step) {
    parallel::adamStepMixed(adam, step, b, g.data(), weftFloat32, 0.5f, mb, vb, out.data());
    for (size_t i = 0; i < 3; ++i) {
      const double gi = 0.5 * g[i] + 0.1 * x[i];
      xm[i] = 0.9 * xm[i] + 0.1 * gi;
      xv[i] = 0.999 * xv[i] + 0.001 * gi * gi;
      const double mhat = xm[i] / (1 - std::pow(0.9, step));
      const double vhat = xv[i] / (1 - std::pow(0.999, step));
      x[i] -= 1e-2 * mhat / (std::sqrt(vhat) + 1e-3);
    }
  }
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(b[i], x[i], 1e-6) << i;
    EXPECT_EQ(out[i], b[i]) << i;  // copied out to the parameters, which are apart
  }

  const AdamConfig small{1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f};
  std::vector<float> master = {1.0f, 1.0f};
  std::vector<uint16_t> grads = {floatToBf16(0.5f), floatToBf16(-0.5f)};
  std::vector<uint16_t> params(2);
  std::vector<float> m(2), v(2);
  for (int step = 1; step <= 5; ++step)
    parallel::adamStepMixed(small, step, master, grads.data(), weftBfloat16, 1.0f, m, v,
                            params.data());
  // Each step moves a weight by about lr: 5e-3 in all, below bfloat16's step at 1 (2^-7), so
  // the stored 16-bit weights are the master weights rounded, not 1 left unchanged.
  EXPECT_NEAR(master[0], 1.0f - 5e-3f, 1e-5f);
  EXPECT_NEAR(master[1], 1.0f + 5e-3f, 1e-5f);
  EXPECT_EQ(params[0], floatToBf16(master[0]));
  EXPECT_EQ(params[1], floatToBf16(master[1]));
  EXPECT_EQ(bf16ToFloat(params[1]), 1.0f + 1.0f / 128);  // 1.005 rounds up to 1 + 2^-7
}

TEST(Precision, ElementConversions) {
  uint16_t h = 0;
  storeFloat(1.0f, weftFloat16, &h);
  EXPECT_EQ(h, 0x3c00);
  storeFloat(1e5f, weftFloat16, &h);  // past float16's largest, 65504
  EXPECT_EQ(h, 0x7c00);
  storeFloat(-2.0f, weftBfloat16, &h);
  EXPECT_EQ(h, 0xc000);
  EXPECT_EQ(loadFloat(weftBfloat16, &h), -2.0f);
  const float f = 0.1f;
  EXPECT_EQ(loadFloat(weftFloat32, &f), 0.1f);
}

// Two ranks, ZeRO-2 and 3 in float16: rank 1's gradients hold an inf in the first step. Both
// ranks skip it (parameters unchanged, scale halved); the second step is taken.
TEST(ZeroPrecision, AnOverflowOnOneRankSkipsTheStepOnEvery) {
  for (int stage : {2, 3}) {
    auto results = runProcesses(2, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
      Comm comm = Comm::fromEnv();
      MemoryLedger ledger;
      PrecisionConfig precision;
      precision.type = weftFloat16;
      precision.initialLossScale = 256;
      const std::vector<size_t> counts = {300, 20};
      Zero zero(comm, stage, counts, 1 << 10, AdamConfig{}, ledger, {0, 1}, {precision});
      zero.setParam(0, std::vector<float>(300, 0.5f));
      zero.setParam(1, std::vector<float>(20, -0.25f));
      for (int step = 0; step < 2; ++step) {
        for (size_t p : {1, 0}) {
          std::span<Float16> g = zero.grad<Float16>(p);
          for (Float16& x : g)
            x.bits = floatToHalf(0.01f * 256);
          if (step == 0 && rank == 1 && p == 0) g[17].bits = 0x7c00;  // inf
          zero.markReady(p);
        }
        const bool taken = zero.step();
        EXPECT_EQ(taken, step == 1);
        EXPECT_EQ(zero.lossScale(), 128.0f);
        EXPECT_EQ(zero.skippedSteps(), 1);
        if (stage == 3) zero.gather(0);
        const float first = halfToFloat(zero.param<Float16>(0)[0].bits);
        if (step == 0) {
          EXPECT_EQ(first, 0.5f);
        } else {
          EXPECT_LT(first, 0.5f);  // a positive gradient lowers it
        }
        if (stage == 3) zero.release(0);
      }
    });
    expectAllOk(results);
  }
}

// Two ranks, ZeRO-1 in float32 with clipping: the gradients' global norm is over both ranks'
// averaged gradients (each rank holds half), and Adam's first step gets them scaled to the norm.
// eps is large so that the first step depends on the gradients' size, not only their signs.
TEST(ZeroPrecision, ClippingUsesTheGlobalNorm) {
  const size_t n = 1000;
  const AdamConfig adam{0.1f, 0.9f, 0.999f, 1.0f, 0.0f};
  auto gradOf = [](int rank, size_t i) {
    return 0.01f * static_cast<float>((i * 7 + static_cast<size_t>(rank) * 3) % 11) - 0.05f;
  };
  // The reference: average, global norm, clip to 0.1, Adam's first step.
  std::vector<float> avg(n);
  double squares = 0;
  for (size_t i = 0; i < n; ++i) {
    avg[i] = (gradOf(0, i) + gradOf(1, i)) / 2;
    squares += static_cast<double>(avg[i]) * avg[i];
  }
  const double norm = std::sqrt(squares);
  ASSERT_GT(norm, 0.5);
  const float clip = static_cast<float>(0.1 / (norm + 1e-6));
  auto results = runProcesses(2, {{"WEFT_TIMEOUT", "60"}}, [&](int rank) {
    Comm comm = Comm::fromEnv();
    MemoryLedger ledger;
    PrecisionConfig precision;
    precision.maxGradNorm = 0.1f;
    Zero zero(comm, 1, {n}, 1 << 12, adam, ledger, {}, {precision});
    zero.setParam(0, std::vector<float>(n, 0.0f));
    std::span<float> g = zero.grad(0);
    for (size_t i = 0; i < n; ++i)
      g[i] = gradOf(rank, i);
    zero.markReady(0);
    ASSERT_TRUE(zero.step());
    std::span<float> x = zero.param(0);
    for (size_t i = 0; i < n; ++i) {
      const double gi = static_cast<double>(avg[i]) * clip;
      // m-hat = g, v-hat = g^2 after one step.
      const double want = -0.1 * gi / (std::fabs(gi) + 1.0);
      ASSERT_NEAR(x[i], want, 1e-6) << "element " << i;
    }
  });
  expectAllOk(results);
}

}  // namespace
}  // namespace weft::test
