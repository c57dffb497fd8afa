// Loss curves of weft-train's modes, drawn by gnuplot into a PNG.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace weft_train {

struct LossCurve {
  std::string label;                         // "ZeRO-3, bf16"
  std::vector<std::pair<int, double>> loss;  // (step, loss)
};

// Draws the curves, and the text's unigram entropy as a line, into `path` with gnuplot. Throws
// std::runtime_error when gnuplot is missing (Debian: gnuplot-nox) or fails.
void plotLossCurves(const std::vector<LossCurve>& curves, double unigramEntropy,
                    const std::string& path);

}  // namespace weft_train
