#include "tools/weft_train/text_data.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "tools/weft_train/random.h"

namespace weft_train {
namespace {

// A random 64-bit value for (seed, step, example), counter-based: any example of any step can
// be drawn without drawing the ones before it.
uint64_t exampleRandom(uint64_t seed, uint64_t step, uint64_t example) {
  return mix64(mix64(mix64(seed + kSplitMixGamma) + step * kSplitMixGamma) +
               example * kSplitMixGamma);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("weft-train: cannot open " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("weft-train: cannot read " + path);
  return text;
}

}  // namespace

TextData::TextData(const std::string& path, int context) : context_(context) {
  if (context < 1) throw std::invalid_argument("weft-train: context must be at least 1");
  const std::string text = readFile(path);
  if (text.size() < static_cast<size_t>(context) + 1) {
    throw std::runtime_error("weft-train: " + path + " has " + std::to_string(text.size()) +
                             " bytes, fewer than context+1 = " + std::to_string(context + 1));
  }
  std::array<size_t, 256> counts{};
  for (char c : text)
    ++counts[static_cast<unsigned char>(c)];
  std::array<int, 256> tokenOf{};
  for (size_t b = 0; b < counts.size(); ++b) {
    if (counts[b] == 0) continue;
    tokenOf[b] = static_cast<int>(alphabet_.size());
    alphabet_.push_back(static_cast<char>(b));
    const double p = static_cast<double>(counts[b]) / static_cast<double>(text.size());
    unigramEntropy_ -= p * std::log(p);
  }
  tokens_.reserve(text.size());
  for (char c : text)
    tokens_.push_back(tokenOf[static_cast<unsigned char>(c)]);
}

void TextData::batch(uint64_t seed, uint64_t step, int batch, int first, int count,
                     std::vector<int>* contexts, std::vector<int>* targets) const {
  if (first < 0 || count < 0 || batch < 0 || first > batch - count) {
    throw std::invalid_argument("weft-train: examples [" + std::to_string(first) + ", " +
                                std::to_string(first) + "+" + std::to_string(count) +
                                ") are not within a batch of " + std::to_string(batch));
  }
  const auto ctx = static_cast<size_t>(context_);
  // Starts 0..size-context-1: each leaves room for its context and the target after it. The
  // modulo's bias is below starts/2^64, negligible for any text that fits in memory.
  const uint64_t starts = tokens_.size() - ctx;
  contexts->resize(static_cast<size_t>(count) * ctx);
  targets->resize(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const uint64_t example = static_cast<uint64_t>(first) + static_cast<uint64_t>(i);
    const size_t start = exampleRandom(seed, step, example) % starts;
    const auto out = static_cast<size_t>(i);
    std::copy_n(tokens_.begin() + static_cast<std::ptrdiff_t>(start), ctx,
                contexts->begin() + static_cast<std::ptrdiff_t>(out * ctx));
    (*targets)[out] = tokens_[start + ctx];
  }
}

}  // namespace weft_train
