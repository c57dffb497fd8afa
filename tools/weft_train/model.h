// weft-train's model: a next-character predictor over a fixed context window. The context's
// token embeddings are concatenated (d = context * embed features), pass through `blocks`
// pre-LayerNorm residual MLP blocks and a final LayerNorm, and a linear head gives the logits;
// the loss is the batch's mean cross-entropy.
//
// The parameters are a fixed list of flat row-major tensors grouped into units (the embedding,
// each block, the final LayerNorm with the head), the granularity at which ZeRO-3 gathers them.
// The model owns no parameters: each forward and backward call receives the unit's tensors, so
// they need only exist (at any address) during the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <Eigen/Core>

namespace weft_train {

struct ModelShape {
  int vocab = 0;    // tokens are 0..vocab-1
  int context = 0;  // tokens seen per prediction
  int embed = 0;    // features per token
  int hidden = 0;   // width of each block's MLP
  int blocks = 0;   // residual blocks (0 allowed: LayerNorm and head alone)
  int features() const { return context * embed; }  // d, the width of the residual stream
};

// Throws std::invalid_argument unless vocab, context, embed, hidden > 0 and blocks >= 0.
void checkShape(const ModelShape& shape);

// Elements of each parameter tensor, in the fixed order:
//   [0] embedding (vocab x embed);
//   per block: LayerNorm gain (d), LayerNorm bias (d), W1 (hidden x d), b1 (hidden),
//              W2 (d x hidden), b2 (d);
//   final LayerNorm gain (d), final LayerNorm bias (d), head W (vocab x d), head b (vocab).
std::vector<size_t> parameterCounts(const ModelShape& shape);

// The unit of each tensor (same order): 0 for the embedding, 1..blocks for the blocks, blocks+1
// for the final LayerNorm and the head. A unit's tensors are consecutive.
std::vector<size_t> parameterUnits(const ModelShape& shape);

// Deterministic initial parameters, bit-identical on every machine for a seed: each tensor
// draws from its own splitmix64 stream (seed, tensor index), normals are Irwin-Hall sums of 12
// uniforms (only + and *, so no libm in the result). Embedding ~N(0, 0.1^2), W1, W2 and head W
// ~N(0, 1/fan_in), biases 0, LayerNorm gains 1.
std::vector<std::vector<float>> initialParameters(const ModelShape& shape, uint64_t seed);

namespace detail {
// What a LayerNorm's backward needs: the normalised input and 1/sqrt(var + eps) of each row.
template <typename Scalar>
struct LayerNormCache {
  Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> xhat;
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> rstd;
};
}  // namespace detail

// One step's forward and backward over a batch. Usage per step:
//   setBatch(...); forward(0..units()-1); loss(); backward(units()-1..0).
// forward(0) may restart at any time. Other calls out of this order throw std::logic_error;
// parameter or gradient spans of the wrong number or size throw std::invalid_argument. Not
// thread-safe; Scalar is float or double.
template <typename Scalar>
class Model {
 public:
  explicit Model(const ModelShape& shape);

  const ModelShape& shape() const { return shape_; }
  size_t units() const { return static_cast<size_t>(shape_.blocks) + 2; }

  // The examples of this step: contexts[i*context + j] is token j of example i, targets[i] its
  // next token. Copied; tokens outside 0..vocab-1 or inconsistent sizes throw
  // std::invalid_argument. An empty batch is invalid (the mean loss would be undefined).
  void setBatch(std::span<const int> contexts, std::span<const int> targets);

  // Forward through unit u (0, 1, ..., units()-1 in order) with that unit's tensors only
  // (params[k] is the unit's k-th tensor). Keeps the activations backward needs, never the
  // parameter addresses.
  void forward(size_t u, std::span<const std::span<const Scalar>> params);

  // The batch's mean cross-entropy in nats; valid after the last unit's forward.
  Scalar loss() const;

  // Backward through unit u (units()-1 down to 0) with the unit's parameters (same values as
  // in its forward; any address). Overwrites grads[k] with scale * d(mean loss)/d(params[k]).
  // `scale` lets a rank weight its share of a global batch (local/global examples), or scale
  // the loss.
  void backward(size_t u, std::span<const std::span<const Scalar>> params,
                std::span<const std::span<Scalar>> grads, Scalar scale = 1);

  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

 private:
  using LayerNormCache = detail::LayerNormCache<Scalar>;

  // Activations of one block, kept from its forward for its backward.
  struct BlockCache {
    LayerNormCache norm;
    Matrix normed;  // LayerNorm output, W1's input
    Matrix pre;     // W1 * normed + b1, gelu's input
    Matrix act;     // gelu(pre), W2's input
  };

  void embedForward(std::span<const Scalar> embedding);
  void blockForward(size_t block, std::span<const std::span<const Scalar>> params);
  void headForward(std::span<const std::span<const Scalar>> params);
  void embedBackward(std::span<Scalar> grad);
  void blockBackward(size_t block, std::span<const std::span<const Scalar>> params,
                     std::span<const std::span<Scalar>> grads);
  void headBackward(std::span<const std::span<const Scalar>> params,
                    std::span<const std::span<Scalar>> grads, Scalar scale);

  ModelShape shape_;
  std::vector<size_t> counts_;     // elements per tensor
  std::vector<size_t> unitFirst_;  // first tensor of each unit, plus the total at the end
  std::vector<int> contexts_;
  std::vector<int> targets_;
  Eigen::Index batch_ = 0;
  bool haveBatch_ = false;
  size_t nextForward_ = 0;   // the unit forward expects next (units(): forward complete)
  size_t nextBackward_ = 0;  // the unit backward expects next; units(): none allowed

  Matrix x_;  // residual stream (batch x d): forward's current value
  std::vector<BlockCache> blockCache_;
  LayerNormCache finalNorm_;
  Matrix finalNormed_;  // final LayerNorm output, the head's input
  Matrix probs_;        // softmax of the logits (batch x vocab)
  Scalar loss_ = 0;
  Matrix dx_;  // backward's gradient of the residual stream (batch x d), scale included
};

extern template class Model<float>;
extern template class Model<double>;

}  // namespace weft_train
