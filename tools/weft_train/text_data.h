// weft-train's training text: a file read as bytes, its distinct bytes the vocabulary, and
// batches of (context, next byte) examples drawn deterministically from (seed, step).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft_train {

class TextData {
 public:
  // Reads the file at `path` whole. Throws std::runtime_error naming it when it cannot be read
  // or is shorter than context+1 bytes (no example would fit), std::invalid_argument when
  // context < 1. The vocabulary is the text's distinct bytes, sorted; tokens index into it.
  TextData(const std::string& path, int context);

  int vocab() const { return static_cast<int>(alphabet_.size()); }
  int context() const { return context_; }
  size_t size() const { return tokens_.size(); }  // bytes of text
  // The byte of each token, ascending.
  const std::string& alphabet() const { return alphabet_; }

  // Unigram entropy of the text in nats (-sum p log p over byte frequencies): the loss that a
  // model ignoring the context cannot beat.
  double unigramEntropy() const { return unigramEntropy_; }

  // Examples [first, first+count) of step `step`'s global batch of `batch` examples: a rank
  // takes its share of the same global batch. Example i starts at a position drawn from
  // (seed, step, i) alone (splitmix64, no std distributions), so a (seed, step) gives the same
  // examples on every rank, at every rank count and however the batch is split. Overwrites
  // *contexts (count*context tokens, example-major) and *targets (count tokens, each the token
  // after its context). Throws std::invalid_argument unless 0 <= first, 0 <= count and
  // first+count <= batch.
  void batch(uint64_t seed, uint64_t step, int batch, int first, int count,
             std::vector<int>* contexts, std::vector<int>* targets) const;

 private:
  int context_;
  std::string alphabet_;
  std::vector<int> tokens_;  // the text as tokens
  double unigramEntropy_ = 0;
};

}  // namespace weft_train
