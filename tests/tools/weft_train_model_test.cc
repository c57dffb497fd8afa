// weft-train's model and data: parameter layout, gradients against finite differences, the loss
// against a plain-loop reference, the ZeRO-style calling contract (parameters passed per call,
// at any address; split batches), real learning on a tiny text, and the text's batches.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tools/weft_train/model.h"
#include "tools/weft_train/text_data.h"

namespace weft_train {
namespace {

template <typename S>
using Params = std::vector<std::vector<S>>;

// A small shape with every kind of tensor and two blocks.
const ModelShape kSmall{.vocab = 7, .context = 3, .embed = 4, .hidden = 10, .blocks = 2};

Params<double> toDouble(const Params<float>& p) {
  Params<double> out;
  for (const auto& t : p)
    out.emplace_back(t.begin(), t.end());
  return out;
}

// Initial parameters with every entry perturbed, so that LayerNorm gains and all biases are
// generic (not 1 and 0) when gradients are checked.
Params<double> perturbedParams(const ModelShape& shape, uint64_t seed) {
  Params<double> p = toDouble(initialParameters(shape, seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> noise(-0.3, 0.3);
  for (auto& t : p) {
    for (double& v : t)
      v += noise(rng);
  }
  return p;
}

struct Batch {
  std::vector<int> contexts;
  std::vector<int> targets;
};

Batch randomBatch(const ModelShape& shape, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> token(0, shape.vocab - 1);
  Batch b;
  for (int i = 0; i < n * shape.context; ++i)
    b.contexts.push_back(token(rng));
  for (int i = 0; i < n; ++i)
    b.targets.push_back(token(rng));
  return b;
}

// The spans of unit u's tensors.
template <typename S>
std::vector<std::span<const S>> unitParams(const ModelShape& shape, const Params<S>& p, size_t u) {
  const std::vector<size_t> units = parameterUnits(shape);
  std::vector<std::span<const S>> spans;
  for (size_t i = 0; i < p.size(); ++i) {
    if (units[i] == u) spans.emplace_back(p[i]);
  }
  return spans;
}

template <typename S>
std::vector<std::span<S>> unitGrads(const ModelShape& shape, Params<S>& g, size_t u) {
  const std::vector<size_t> units = parameterUnits(shape);
  std::vector<std::span<S>> spans;
  for (size_t i = 0; i < g.size(); ++i) {
    if (units[i] == u) spans.emplace_back(g[i]);
  }
  return spans;
}

template <typename S>
S forwardLoss(Model<S>& model, const Params<S>& p, const Batch& b) {
  model.setBatch(b.contexts, b.targets);
  for (size_t u = 0; u < model.units(); ++u)
    model.forward(u, unitParams(model.shape(), p, u));
  return model.loss();
}

// Backward after a forward, with `p` (same values as the forward's, any address). Gradient
// buffers start as NaN to show that backward overwrites them.
template <typename S>
Params<S> backwardGrads(Model<S>& model, const Params<S>& p, S scale = 1) {
  Params<S> g;
  for (const auto& t : p)
    g.emplace_back(t.size(), std::numeric_limits<S>::quiet_NaN());
  for (size_t u = model.units(); u-- > 0;) {
    model.backward(u, unitParams(model.shape(), p, u), unitGrads(model.shape(), g, u), scale);
  }
  return g;
}

// ---- Layout and initialisation --------------------------------------------------------------

TEST(WeftTrainModel, ParameterLayout) {
  const int d = 12;
  const std::vector<size_t> expected{7 * 4, d, d,      10 * d, 10,     d * 10,
                                     d,                                    // embedding, block 0
                                     d,     d, 10 * d, 10,     d * 10, d,  // block 1
                                     d,     d, 7 * d,  7};                 // final LN, head
  EXPECT_EQ(parameterCounts(kSmall), expected);
  const std::vector<size_t> units{0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3};
  EXPECT_EQ(parameterUnits(kSmall), units);
  EXPECT_EQ(Model<float>(kSmall).units(), 4U);
  EXPECT_THROW(parameterCounts(ModelShape{.vocab = 0, .context = 1, .embed = 1, .hidden = 1}),
               std::invalid_argument);
}

TEST(WeftTrainModel, InitialParametersAreDeterministic) {
  const ModelShape shape{.vocab = 50, .context = 8, .embed = 16, .hidden = 64, .blocks = 1};
  const Params<float> a = initialParameters(shape, 42);
  EXPECT_EQ(a, initialParameters(shape, 42));
  EXPECT_NE(a, initialParameters(shape, 43));
  auto stddev = [](const std::vector<float>& t) {
    double sum = 0;
    double sq = 0;
    for (float v : t) {
      sum += v;
      sq += static_cast<double>(v) * v;
    }
    const double mean = sum / static_cast<double>(t.size());
    return std::sqrt(sq / static_cast<double>(t.size()) - mean * mean);
  };
  const double d = 8 * 16;
  EXPECT_NEAR(stddev(a[0]), 0.1, 0.01);                  // embedding
  EXPECT_NEAR(stddev(a[3]), 1 / std::sqrt(d), 0.01);     // W1
  EXPECT_NEAR(stddev(a[5]), 1 / std::sqrt(64.0), 0.01);  // W2
  EXPECT_NEAR(stddev(a[9]), 1 / std::sqrt(d), 0.01);     // head W
  for (size_t i : {1, 7})
    EXPECT_EQ(a[i], std::vector<float>(a[i].size(), 1.0F));  // LN gains
  for (size_t i : {2, 4, 6, 8, 10})
    EXPECT_EQ(a[i], std::vector<float>(a[i].size(), 0.0F));
}

// ---- Gradients and loss -------------------------------------------------------------------

// Every entry of every tensor against central differences, with a scale != 1.
TEST(WeftTrainModel, GradientsMatchFiniteDifferences) {
  Model<double> model(kSmall);
  Params<double> p = perturbedParams(kSmall, 1);
  const Batch batch = randomBatch(kSmall, 5, 2);
  const double scale = 0.37;
  forwardLoss(model, p, batch);
  const Params<double> grads = backwardGrads(model, p, scale);

  const double h = 1e-5;
  for (size_t t = 0; t < p.size(); ++t) {
    for (size_t i = 0; i < p[t].size(); ++i) {
      const double saved = p[t][i];
      p[t][i] = saved + h;
      const double up = forwardLoss(model, p, batch);
      p[t][i] = saved - h;
      const double down = forwardLoss(model, p, batch);
      p[t][i] = saved;
      const double numeric = scale * (up - down) / (2 * h);
      const double analytic = grads[t][i];
      const double err = std::abs(analytic - numeric);
      const double rel = err / std::max(std::abs(analytic), std::abs(numeric));
      EXPECT_TRUE(err < 1e-9 || rel < 1e-6) << "tensor " << t << " entry " << i << ": analytic "
                                            << analytic << ", numeric " << numeric;
    }
  }
}

// An independent forward: plain loops over one example at a time, no Eigen.
double referenceGelu(double x) {
  const double pi = std::acos(-1.0);
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
}

std::vector<double> referenceLayerNorm(const std::vector<double>& x, const std::vector<double>& g,
                                       const std::vector<double>& b) {
  double mean = 0;
  for (double v : x)
    mean += v;
  mean /= static_cast<double>(x.size());
  double var = 0;
  for (double v : x)
    var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = (x[i] - mean) / std::sqrt(var + 1e-5) * g[i] + b[i];
  return y;
}

double referenceLoss(const ModelShape& s, const Params<double>& p, const Batch& batch) {
  const auto C = static_cast<size_t>(s.context);
  const auto E = static_cast<size_t>(s.embed);
  const auto H = static_cast<size_t>(s.hidden);
  const auto V = static_cast<size_t>(s.vocab);
  const size_t d = C * E;
  double total = 0;
  for (size_t n = 0; n < batch.targets.size(); ++n) {
    std::vector<double> x(d);
    for (size_t j = 0; j < C; ++j) {
      for (size_t e = 0; e < E; ++e)
        x[j * E + e] = p[0][batch.contexts[n * C + j] * E + e];
    }
    size_t t = 1;
    for (int k = 0; k < s.blocks; ++k, t += 6) {
      const std::vector<double> y = referenceLayerNorm(x, p[t], p[t + 1]);
      std::vector<double> a(H);
      for (size_t r = 0; r < H; ++r) {
        double sum = p[t + 3][r];
        for (size_t c = 0; c < d; ++c)
          sum += p[t + 2][r * d + c] * y[c];
        a[r] = referenceGelu(sum);
      }
      for (size_t c = 0; c < d; ++c) {
        double sum = p[t + 5][c];
        for (size_t r = 0; r < H; ++r)
          sum += p[t + 4][c * H + r] * a[r];
        x[c] += sum;
      }
    }
    const std::vector<double> y = referenceLayerNorm(x, p[t], p[t + 1]);
    std::vector<double> logits(V);
    double sumExp = 0;
    for (size_t v = 0; v < V; ++v) {
      logits[v] = p[t + 3][v];
      for (size_t c = 0; c < d; ++c)
        logits[v] += p[t + 2][v * d + c] * y[c];
      sumExp += std::exp(logits[v]);
    }
    total += std::log(sumExp) - logits[batch.targets[n]];
  }
  return total / static_cast<double>(batch.targets.size());
}

TEST(WeftTrainModel, LossMatchesPlainLoopReference) {
  const ModelShape shape{.vocab = 5, .context = 2, .embed = 3, .hidden = 4, .blocks = 2};
  const Params<double> p = perturbedParams(shape, 3);
  const Batch batch = randomBatch(shape, 4, 4);
  Model<double> model(shape);
  const double loss = forwardLoss(model, p, batch);
  EXPECT_NEAR(loss, referenceLoss(shape, p, batch), 1e-10);
  // The same in float, to float's precision.
  Params<float> pf;
  for (const auto& t : p)
    pf.emplace_back(t.begin(), t.end());
  Model<float> modelf(shape);
  EXPECT_NEAR(forwardLoss(modelf, pf, batch), loss, 1e-5);
}

// Under ZeRO-3 a unit is gathered again for the backward, into another buffer: the model must
// read only the parameters passed to each call.
TEST(WeftTrainModel, BackwardUsesTheParametersPassedNotTheForwards) {
  const Params<double> p = perturbedParams(kSmall, 5);
  const Batch batch = randomBatch(kSmall, 6, 6);
  Model<double> same(kSmall);
  forwardLoss(same, p, batch);
  const Params<double> expected = backwardGrads(same, p);

  // Forward with a copy, spoil the copy, backward with the original: same values, other buffers.
  Model<double> moved(kSmall);
  Params<double> forwardCopy = p;
  forwardLoss(moved, forwardCopy, batch);
  for (auto& t : forwardCopy)
    std::fill(t.begin(), t.end(), std::nan(""));
  EXPECT_EQ(backwardGrads(moved, p), expected);
}

// A global batch split over two ranks, each scaling by its share, sums to the full gradient.
TEST(WeftTrainModel, SplitBatchGradientsSumToTheFullBatch) {
  const Params<double> p = perturbedParams(kSmall, 7);
  const Batch full = randomBatch(kSmall, 6, 8);
  const int firstPart = 2;  // uneven on purpose: scales 2/6 and 4/6
  const auto C = static_cast<size_t>(kSmall.context);
  Batch a{{full.contexts.begin(), full.contexts.begin() + firstPart * C},
          {full.targets.begin(), full.targets.begin() + firstPart}};
  Batch b{{full.contexts.begin() + firstPart * C, full.contexts.end()},
          {full.targets.begin() + firstPart, full.targets.end()}};

  Model<double> model(kSmall);
  const double fullLoss = forwardLoss(model, p, full);
  const Params<double> whole = backwardGrads(model, p);
  const double lossA = forwardLoss(model, p, a);
  const Params<double> ga = backwardGrads(model, p, 2.0 / 6);
  const double lossB = forwardLoss(model, p, b);
  const Params<double> gb = backwardGrads(model, p, 4.0 / 6);
  EXPECT_NEAR(fullLoss, (2 * lossA + 4 * lossB) / 6, 1e-12);
  for (size_t t = 0; t < p.size(); ++t) {
    for (size_t i = 0; i < p[t].size(); ++i) {
      EXPECT_NEAR(ga[t][i] + gb[t][i], whole[t][i], 1e-12) << "tensor " << t << " entry " << i;
    }
  }
}

TEST(WeftTrainModel, RejectsCallsOutOfOrderAndWrongSizes) {
  const Params<double> p = perturbedParams(kSmall, 9);
  const Batch batch = randomBatch(kSmall, 2, 10);
  Model<double> model(kSmall);
  EXPECT_THROW(model.forward(0, unitParams(kSmall, p, 0)), std::logic_error);  // no batch
  model.setBatch(batch.contexts, batch.targets);
  EXPECT_THROW(model.forward(1, unitParams(kSmall, p, 1)), std::logic_error);
  EXPECT_THROW(model.forward(0, unitParams(kSmall, p, 1)), std::invalid_argument);
  model.forward(0, unitParams(kSmall, p, 0));
  EXPECT_THROW(model.loss(), std::logic_error);
  Params<double> g = p;
  EXPECT_THROW(model.backward(0, unitParams(kSmall, p, 0), unitGrads(kSmall, g, 0)),
               std::logic_error);
  const std::vector<int> badTargets{0, kSmall.vocab};
  EXPECT_THROW(model.setBatch(batch.contexts, badTargets), std::invalid_argument);
  EXPECT_THROW(model.setBatch(batch.contexts, std::span<const int>(batch.targets).first(1)),
               std::invalid_argument);
}

// ---- Text data ------------------------------------------------------------------------------

// A file under the test temp directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& text)
      : path_(::testing::TempDir() + "weft_train_" + std::to_string(getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt") {
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string repeat(const std::string& unit, size_t bytes) {
  std::string text;
  while (text.size() < bytes)
    text += unit;
  return text;
}

// Plain gradient descent on "abacad..." with a context of 3: after 'a' the next byte depends
// on the bytes before it, so a model must use the context to get below the bigram loss
// (ln 3 / 2 = 0.55 nats), let alone the unigram entropy (1.24 nats); the text is deterministic
// given 3 bytes, so the loss can approach 0.
TEST(WeftTrainModel, GradientDescentLearnsARepeatedText) {
  const TempFile file(repeat("abacad", 600));
  const TextData data(file.path(), 3);
  ASSERT_EQ(data.vocab(), 4);
  const ModelShape shape{
      .vocab = data.vocab(), .context = 3, .embed = 8, .hidden = 32, .blocks = 1};
  Params<float> p = initialParameters(shape, 11);
  Model<float> model(shape);
  Batch batch;
  const int batchSize = 32;
  const float rate = 0.2F;
  const int steps = 150;
  for (int step = 0; step < steps; ++step) {
    data.batch(1, step, batchSize, 0, batchSize, &batch.contexts, &batch.targets);
    forwardLoss(model, p, batch);
    const Params<float> g = backwardGrads(model, p);
    for (size_t t = 0; t < p.size(); ++t) {
      for (size_t i = 0; i < p[t].size(); ++i)
        p[t][i] -= rate * g[t][i];
    }
  }
  data.batch(2, 0, 256, 0, 256, &batch.contexts, &batch.targets);  // unseen (seed, step)
  const float loss = forwardLoss(model, p, batch);
  EXPECT_LT(loss, 0.1 * data.unigramEntropy()) << "unigram entropy " << data.unigramEntropy();
}

TEST(WeftTrainTextData, VocabularyAndUnigramEntropy) {
  const TempFile file("hello world");
  const TextData data(file.path(), 2);
  EXPECT_EQ(data.vocab(), 8);
  EXPECT_EQ(data.alphabet(), " dehlorw");
  EXPECT_EQ(data.size(), 11U);
  // l: 3, o: 2, the six others once, of 11 bytes.
  auto term = [](double count) { return -count / 11 * std::log(count / 11); };
  EXPECT_NEAR(data.unigramEntropy(), term(3) + term(2) + 6 * term(1), 1e-12);
}

TEST(WeftTrainTextData, BatchesAreDeterministicAndSplittable) {
  const std::string text = "the quick brown fox jumps over the lazy dog, twice: " +
                           std::string("the quick brown fox jumps over the lazy dog");
  const TempFile file(text);
  const int context = 5;
  const TextData data(file.path(), context);
  std::vector<int> ctx;
  std::vector<int> tgt;
  data.batch(7, 3, 10, 0, 10, &ctx, &tgt);
  ASSERT_EQ(ctx.size(), 50U);
  ASSERT_EQ(tgt.size(), 10U);
  // Each example is context+1 consecutive bytes of the text.
  for (size_t i = 0; i < tgt.size(); ++i) {
    std::string example;
    for (int j = 0; j < context; ++j)
      example += data.alphabet()[ctx[i * context + j]];
    example += data.alphabet()[tgt[i]];
    EXPECT_NE(text.find(example), std::string::npos) << example;
  }
  std::vector<int> ctx2;
  std::vector<int> tgt2;
  data.batch(7, 3, 10, 0, 10, &ctx2, &tgt2);
  EXPECT_EQ(ctx2, ctx);
  EXPECT_EQ(tgt2, tgt);
  // Two ranks' shares, 4 and 6 examples, concatenate to the whole.
  std::vector<int> ctxA;
  std::vector<int> tgtA;
  data.batch(7, 3, 10, 0, 4, &ctxA, &tgtA);
  data.batch(7, 3, 10, 4, 6, &ctx2, &tgt2);
  ctxA.insert(ctxA.end(), ctx2.begin(), ctx2.end());
  tgtA.insert(tgtA.end(), tgt2.begin(), tgt2.end());
  EXPECT_EQ(ctxA, ctx);
  EXPECT_EQ(tgtA, tgt);
  // Another step or seed draws other examples.
  data.batch(7, 4, 10, 0, 10, &ctx2, &tgt2);
  EXPECT_NE(ctx2, ctx);
  data.batch(8, 3, 10, 0, 10, &ctx2, &tgt2);
  EXPECT_NE(ctx2, ctx);
  EXPECT_THROW(data.batch(7, 3, 10, 8, 3, &ctx2, &tgt2), std::invalid_argument);
}

TEST(WeftTrainTextData, UnreadableOrShortFilesThrowWithThePath) {
  const std::string missing = ::testing::TempDir() + "weft_train_no_such_dir/missing.txt";
  try {
    TextData data(missing, 4);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const TempFile file("abcd");
  try {
    TextData data(file.path(), 4);  // 4 bytes: no room for a target after 4 context bytes
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.path()), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(TextData(file.path(), 3));
}

// The intended training text, shipped by Debian's base-files.
TEST(WeftTrainTextData, ReadsTheGpl) {
  const std::string path = "/usr/share/common-licenses/GPL-3";
  if (access(path.c_str(), R_OK) != 0) GTEST_SKIP() << path << " not present";
  const TextData data(path, 32);
  EXPECT_GT(data.vocab(), 60);
  EXPECT_LT(data.vocab(), 100);
  // English prose with capitals, punctuation and layout: about 4.6 bits (3.2 nats) a byte.
  EXPECT_GT(data.unigramEntropy(), 2.5);
  EXPECT_LT(data.unigramEntropy(), 3.5);
}

}  // namespace
}  // namespace weft_train
