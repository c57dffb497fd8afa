#include "tools/weft_train/model.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "tools/weft_train/random.h"

namespace weft_train {
namespace {

using Eigen::Dynamic;
using Eigen::Index;
using Eigen::RowMajor;

template <typename S>
using Matrix = Eigen::Matrix<S, Dynamic, Dynamic, RowMajor>;
template <typename S>
using Vector = Eigen::Matrix<S, Dynamic, 1>;
template <typename S>
using Row = Eigen::Matrix<S, 1, Dynamic>;

// ---- Parameter layout and initialisation --------------------------------------------------

enum class Init { kZero, kOne, kNormal };

struct TensorSpec {
  size_t count;
  size_t unit;
  Init init;
  double stddev;  // for kNormal
};

// The single description of the parameter list: counts, units and initialisation all derive
// from it, so they cannot disagree.
std::vector<TensorSpec> tensorSpecs(const ModelShape& shape) {
  checkShape(shape);
  const auto vocab = static_cast<size_t>(shape.vocab);
  const auto embed = static_cast<size_t>(shape.embed);
  const auto hidden = static_cast<size_t>(shape.hidden);
  const auto d = static_cast<size_t>(shape.features());
  const auto blocks = static_cast<size_t>(shape.blocks);
  const double embedStd = 0.1;
  std::vector<TensorSpec> specs{{vocab * embed, 0, Init::kNormal, embedStd}};
  for (size_t k = 0; k < blocks; ++k) {
    const size_t unit = k + 1;
    specs.push_back({d, unit, Init::kOne, 0});                                        // LN gain
    specs.push_back({d, unit, Init::kZero, 0});                                       // LN bias
    specs.push_back({hidden * d, unit, Init::kNormal, 1 / std::sqrt(1.0 * d)});       // W1
    specs.push_back({hidden, unit, Init::kZero, 0});                                  // b1
    specs.push_back({d * hidden, unit, Init::kNormal, 1 / std::sqrt(1.0 * hidden)});  // W2
    specs.push_back({d, unit, Init::kZero, 0});                                       // b2
  }
  const size_t last = blocks + 1;
  specs.push_back({d, last, Init::kOne, 0});                                  // final LN gain
  specs.push_back({d, last, Init::kZero, 0});                                 // final LN bias
  specs.push_back({vocab * d, last, Init::kNormal, 1 / std::sqrt(1.0 * d)});  // head W
  specs.push_back({vocab, last, Init::kZero, 0});                             // head b
  return specs;
}

// splitmix64: advance the state by the golden-ratio increment, mix it.
uint64_t nextRandom(uint64_t* state) {
  *state += kSplitMixGamma;
  return mix64(*state);
}

// Uniform in [0, 1) with 53 random bits.
double uniform01(uint64_t* state) {
  return static_cast<double>(nextRandom(state) >> 11) * 0x1p-53;
}

// Approximately N(0, 1): the Irwin-Hall sum of 12 uniforms, minus 6 (mean 0, variance 1, tails
// cut at +-6). Exact IEEE additions only, so every machine gets the same bits, unlike
// Box-Muller's log and cos from whichever libm is installed.
double standardNormal(uint64_t* state) {
  double sum = 0;
  for (int i = 0; i < 12; ++i)
    sum += uniform01(state);
  return sum - 6;
}

// ---- Eigen views of the flat tensors ------------------------------------------------------

template <typename S>
Eigen::Map<const Matrix<S>> asMatrix(std::span<const S> s, Index rows, Index cols) {
  return Eigen::Map<const Matrix<S>>(s.data(), rows, cols);
}
template <typename S>
Eigen::Map<Matrix<S>> asMatrix(std::span<S> s, Index rows, Index cols) {
  return Eigen::Map<Matrix<S>>(s.data(), rows, cols);
}
template <typename S>
Eigen::Map<const Row<S>> asRow(std::span<const S> s) {
  return Eigen::Map<const Row<S>>(s.data(), static_cast<Index>(s.size()));
}
template <typename S>
Eigen::Map<Row<S>> asRow(std::span<S> s) {
  return Eigen::Map<Row<S>>(s.data(), static_cast<Index>(s.size()));
}

// ---- The layers, batch at once (rows are examples) ----------------------------------------

constexpr double kLayerNormEps = 1e-5;

// Per row: y = gain * (x - mean) / sqrt(var + eps) + bias, with the biased variance (as
// PyTorch's LayerNorm). Keeps xhat and 1/sqrt(var + eps) for the backward.
template <typename S>
Matrix<S> layerNormForward(const Matrix<S>& x, const Eigen::Map<const Row<S>>& gain,
                           const Eigen::Map<const Row<S>>& bias, detail::LayerNormCache<S>* cache) {
  const Vector<S> mean = x.rowwise().mean();
  const Matrix<S> centered = x.colwise() - mean;
  const Vector<S> var = centered.array().square().rowwise().mean();
  cache->rstd = (var.array() + static_cast<S>(kLayerNormEps)).rsqrt();
  cache->xhat = centered.array().colwise() * cache->rstd.array();
  return (cache->xhat.array().rowwise() * gain.array()).rowwise() + bias.array();
}

// Given dL/dy, writes dL/dgain and dL/dbias (summed over rows) and returns dL/dx:
// rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) per row, with dxhat = gain * dy.
template <typename S>
Matrix<S> layerNormBackward(const Matrix<S>& dy, const detail::LayerNormCache<S>& cache,
                            const Eigen::Map<const Row<S>>& gain, Eigen::Map<Row<S>> dgain,
                            Eigen::Map<Row<S>> dbias) {
  dgain = (dy.array() * cache.xhat.array()).colwise().sum().matrix();
  dbias = dy.colwise().sum();
  const Matrix<S> dxhat = dy.array().rowwise() * gain.array();
  const Vector<S> meanDxhat = dxhat.rowwise().mean();
  const Vector<S> meanDxhatXhat = (dxhat.array() * cache.xhat.array()).rowwise().mean();
  const Matrix<S> centered = dxhat.colwise() - meanDxhat;
  const Matrix<S> dxOverRstd =
      centered.array() - cache.xhat.array().colwise() * meanDxhatXhat.array();
  return dxOverRstd.array().colwise() * cache.rstd.array();
}

constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluA = 0.044715;

// GELU, tanh approximation: 0.5 x (1 + tanh(c (x + a x^3))).
template <typename S>
Matrix<S> gelu(const Matrix<S>& x) {
  return x.unaryExpr([](S v) {
    const S t = std::tanh(static_cast<S>(kGeluC) * (v + static_cast<S>(kGeluA) * v * v * v));
    return static_cast<S>(0.5) * v * (1 + t);
  });
}

// d gelu / dx: 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2), t as in gelu.
template <typename S>
Matrix<S> geluDerivative(const Matrix<S>& x) {
  return x.unaryExpr([](S v) {
    const S c = static_cast<S>(kGeluC);
    const S a = static_cast<S>(kGeluA);
    const S t = std::tanh(c * (v + a * v * v * v));
    return static_cast<S>(0.5) * (1 + t) +
           static_cast<S>(0.5) * v * (1 - t * t) * c * (1 + 3 * a * v * v);
  });
}

// Softmax of each row of the logits into *probs; returns the mean over rows of
// -log softmax(row)[target], computed as log-sum-exp minus the target's logit after
// subtracting the row's maximum (no overflow, no log of an underflowed probability).
template <typename S>
S softmaxCrossEntropy(const Matrix<S>& logits, const std::vector<int>& targets, Matrix<S>* probs) {
  const Vector<S> rowMax = logits.rowwise().maxCoeff();
  const Matrix<S> shifted = logits.colwise() - rowMax;
  *probs = shifted.array().exp();
  const Vector<S> sums = probs->rowwise().sum();
  probs->array().colwise() /= sums.array();
  double total = 0;  // in double: a float sum over a large batch would lose digits
  for (Index i = 0; i < logits.rows(); ++i) {
    total += std::log(static_cast<double>(sums(i))) - static_cast<double>(shifted(i, targets[i]));
  }
  return static_cast<S>(total / static_cast<double>(logits.rows()));
}

// Throws std::invalid_argument unless `spans` are unit u's tensors, by number and size.
template <typename Span>
void checkTensors(const char* what, size_t u, std::span<const Span> spans,
                  const std::vector<size_t>& counts, const std::vector<size_t>& unitFirst) {
  const size_t first = unitFirst[u];
  const size_t n = unitFirst[u + 1] - first;
  if (spans.size() != n) {
    throw std::invalid_argument("weft_train::Model: unit " + std::to_string(u) + " has " +
                                std::to_string(n) + " tensors, got " +
                                std::to_string(spans.size()) + " " + what);
  }
  for (size_t k = 0; k < n; ++k) {
    if (spans[k].size() != counts[first + k]) {
      throw std::invalid_argument("weft_train::Model: unit " + std::to_string(u) + " " + what +
                                  " " + std::to_string(k) + " has " +
                                  std::to_string(spans[k].size()) + " elements, expected " +
                                  std::to_string(counts[first + k]));
    }
  }
}

}  // namespace

// ---- Free functions -------------------------------------------------------------------------

void checkShape(const ModelShape& shape) {
  if (shape.vocab <= 0 || shape.context <= 0 || shape.embed <= 0 || shape.hidden <= 0 ||
      shape.blocks < 0) {
    throw std::invalid_argument(
        "weft_train::ModelShape: vocab, context, embed and hidden must be positive, blocks "
        "not negative");
  }
}

std::vector<size_t> parameterCounts(const ModelShape& shape) {
  std::vector<size_t> counts;
  for (const TensorSpec& spec : tensorSpecs(shape))
    counts.push_back(spec.count);
  return counts;
}

std::vector<size_t> parameterUnits(const ModelShape& shape) {
  std::vector<size_t> units;
  for (const TensorSpec& spec : tensorSpecs(shape))
    units.push_back(spec.unit);
  return units;
}

std::vector<std::vector<float>> initialParameters(const ModelShape& shape, uint64_t seed) {
  const std::vector<TensorSpec> specs = tensorSpecs(shape);
  std::vector<std::vector<float>> params(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& spec = specs[i];
    switch (spec.init) {
      case Init::kZero:
        params[i].assign(spec.count, 0.0F);
        break;
      case Init::kOne:
        params[i].assign(spec.count, 1.0F);
        break;
      case Init::kNormal: {
        // Each tensor its own stream, so one tensor's size does not shift another's values.
        uint64_t state = mix64(seed ^ mix64(i + 1));
        params[i].resize(spec.count);
        for (float& v : params[i])
          v = static_cast<float>(spec.stddev * standardNormal(&state));
        break;
      }
    }
  }
  return params;
}

// ---- Model ----------------------------------------------------------------------------------

template <typename Scalar>
Model<Scalar>::Model(const ModelShape& shape)
    : shape_(shape),
      counts_(parameterCounts(shape)),
      blockCache_(static_cast<size_t>(shape.blocks)) {
  const std::vector<size_t> unitOf = parameterUnits(shape);
  unitFirst_.assign(units() + 1, counts_.size());
  for (size_t i = counts_.size(); i-- > 0;)
    unitFirst_[unitOf[i]] = i;
  nextBackward_ = units();
}

template <typename Scalar>
void Model<Scalar>::setBatch(std::span<const int> contexts, std::span<const int> targets) {
  if (targets.empty() || contexts.size() != targets.size() * static_cast<size_t>(shape_.context)) {
    throw std::invalid_argument("weft_train::Model::setBatch: " + std::to_string(targets.size()) +
                                " targets (must be > 0) need " +
                                std::to_string(targets.size() * shape_.context) +
                                " context tokens, got " + std::to_string(contexts.size()));
  }
  auto checkTokens = [this](std::span<const int> tokens, const char* what) {
    for (int t : tokens) {
      if (t < 0 || t >= shape_.vocab) {
        throw std::invalid_argument("weft_train::Model::setBatch: " + std::string(what) +
                                    " token " + std::to_string(t) + " outside 0.." +
                                    std::to_string(shape_.vocab - 1));
      }
    }
  };
  checkTokens(contexts, "context");
  checkTokens(targets, "target");
  contexts_.assign(contexts.begin(), contexts.end());
  targets_.assign(targets.begin(), targets.end());
  batch_ = static_cast<Index>(targets.size());
  haveBatch_ = true;
  nextForward_ = 0;
  nextBackward_ = units();
}

template <typename Scalar>
void Model<Scalar>::forward(size_t u, std::span<const std::span<const Scalar>> params) {
  if (!haveBatch_) throw std::logic_error("weft_train::Model::forward before setBatch");
  if (u != 0 && u != nextForward_) {
    throw std::logic_error("weft_train::Model::forward(" + std::to_string(u) + "): expected unit " +
                           std::to_string(nextForward_) + " (or 0 to restart)");
  }
  checkTensors("parameter", u, params, counts_, unitFirst_);
  nextBackward_ = units();  // a new forward invalidates any backward in progress
  if (u == 0) {
    embedForward(params[0]);
  } else if (u + 1 < units()) {
    blockForward(u - 1, params);
  } else {
    headForward(params);
  }
  nextForward_ = u + 1;
  if (nextForward_ == units()) nextBackward_ = units() - 1;
}

template <typename Scalar>
Scalar Model<Scalar>::loss() const {
  if (!haveBatch_ || nextForward_ != units()) {
    throw std::logic_error("weft_train::Model::loss before the last unit's forward");
  }
  return loss_;
}

template <typename Scalar>
void Model<Scalar>::backward(size_t u, std::span<const std::span<const Scalar>> params,
                             std::span<const std::span<Scalar>> grads, Scalar scale) {
  if (nextBackward_ == units() || u != nextBackward_) {
    throw std::logic_error("weft_train::Model::backward(" + std::to_string(u) + "): " +
                           (nextBackward_ == units()
                                ? std::string("no complete forward to go back through")
                                : "expected unit " + std::to_string(nextBackward_)));
  }
  checkTensors("parameter", u, params, counts_, unitFirst_);
  checkTensors("gradient", u, grads, counts_, unitFirst_);
  if (u == 0) {
    embedBackward(grads[0]);
  } else if (u + 1 < units()) {
    blockBackward(u - 1, params, grads);
  } else {
    headBackward(params, grads, scale);
  }
  nextBackward_ = u == 0 ? units() : u - 1;
}

// x = concat(E[t_0], ..., E[t_{C-1}]): a gather, one row slice per token.
template <typename Scalar>
void Model<Scalar>::embedForward(std::span<const Scalar> embedding) {
  const auto table = asMatrix(embedding, shape_.vocab, shape_.embed);
  x_.resize(batch_, shape_.features());
  for (Index i = 0; i < batch_; ++i) {
    for (Index j = 0; j < shape_.context; ++j) {
      x_.row(i).segment(j * shape_.embed, shape_.embed) =
          table.row(contexts_[static_cast<size_t>(i * shape_.context + j)]);
    }
  }
}

// x = x + W2 gelu(W1 LN(x) + b1) + b2; params are gain, bias, W1, b1, W2, b2.
template <typename Scalar>
void Model<Scalar>::blockForward(size_t block, std::span<const std::span<const Scalar>> params) {
  const Index d = shape_.features();
  const Index hidden = shape_.hidden;
  const auto w1 = asMatrix(params[2], hidden, d);
  const auto w2 = asMatrix(params[4], d, hidden);
  BlockCache& c = blockCache_[block];
  c.normed = layerNormForward<Scalar>(x_, asRow(params[0]), asRow(params[1]), &c.norm);
  c.pre.noalias() = c.normed * w1.transpose();
  c.pre.rowwise() += asRow(params[3]);
  c.act = gelu(c.pre);
  x_.noalias() += c.act * w2.transpose();
  x_.rowwise() += asRow(params[5]);
}

// logits = Wh LN(x) + bh, then the loss; params are gain, bias, Wh, bh.
template <typename Scalar>
void Model<Scalar>::headForward(std::span<const std::span<const Scalar>> params) {
  const auto wh = asMatrix(params[2], shape_.vocab, shape_.features());
  finalNormed_ = layerNormForward<Scalar>(x_, asRow(params[0]), asRow(params[1]), &finalNorm_);
  Matrix logits = finalNormed_ * wh.transpose();
  logits.rowwise() += asRow(params[3]);
  loss_ = softmaxCrossEntropy(logits, targets_, &probs_);
}

// d(mean loss)/d logits = (softmax - onehot(target)) / batch; scale enters here once and so
// reaches every gradient below.
template <typename Scalar>
void Model<Scalar>::headBackward(std::span<const std::span<const Scalar>> params,
                                 std::span<const std::span<Scalar>> grads, Scalar scale) {
  const auto wh = asMatrix(params[2], shape_.vocab, shape_.features());
  Matrix dlogits = probs_;
  for (Index i = 0; i < batch_; ++i)
    dlogits(i, targets_[static_cast<size_t>(i)]) -= 1;
  dlogits *= scale / static_cast<Scalar>(batch_);
  asMatrix(grads[2], shape_.vocab, shape_.features()).noalias() =
      dlogits.transpose() * finalNormed_;
  asRow(grads[3]) = dlogits.colwise().sum();
  const Matrix dnormed = dlogits * wh;
  dx_ = layerNormBackward<Scalar>(dnormed, finalNorm_, asRow(params[0]), asRow(grads[0]),
                                  asRow(grads[1]));
}

template <typename Scalar>
void Model<Scalar>::blockBackward(size_t block, std::span<const std::span<const Scalar>> params,
                                  std::span<const std::span<Scalar>> grads) {
  const Index d = shape_.features();
  const Index hidden = shape_.hidden;
  const auto w1 = asMatrix(params[2], hidden, d);
  const auto w2 = asMatrix(params[4], d, hidden);
  const BlockCache& c = blockCache_[block];
  // The residual passes dx_ through unchanged; the MLP branch adds its own part below.
  asMatrix(grads[4], d, hidden).noalias() = dx_.transpose() * c.act;
  asRow(grads[5]) = dx_.colwise().sum();
  const Matrix dpre = (dx_ * w2).cwiseProduct(geluDerivative(c.pre));
  asMatrix(grads[2], hidden, d).noalias() = dpre.transpose() * c.normed;
  asRow(grads[3]) = dpre.colwise().sum();
  const Matrix dnormed = dpre * w1;
  dx_ += layerNormBackward<Scalar>(dnormed, c.norm, asRow(params[0]), asRow(grads[0]),
                                   asRow(grads[1]));
}

// The embedding's gradient: each context slot's share of dx added to its token's row (a
// token may occur in several slots and examples; rows of absent tokens are zero).
template <typename Scalar>
void Model<Scalar>::embedBackward(std::span<Scalar> grad) {
  auto table = asMatrix(grad, shape_.vocab, shape_.embed);
  table.setZero();
  for (Index i = 0; i < batch_; ++i) {
    for (Index j = 0; j < shape_.context; ++j) {
      table.row(contexts_[static_cast<size_t>(i * shape_.context + j)]) +=
          dx_.row(i).segment(j * shape_.embed, shape_.embed);
    }
  }
}

template class Model<float>;
template class Model<double>;

}  // namespace weft_train
