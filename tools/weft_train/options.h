// weft-train's command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/weft_train/model.h"

namespace weft_train {

struct Options {
  std::string text = "/usr/share/common-licenses/GPL-3";  // Debian's base-files ships it
  // The modes to run, one after another: every --zero with every --precision.
  std::vector<int> zeros{0};
  std::vector<std::string> precisions{"fp32"};
  std::string plot;  // where rank 0 draws the modes' loss curves
  // The mode of one run.
  int zero = 0;  // 0: plain data parallelism; 1-3: ZeRO stage
  int steps = 200;
  int batch = 96;  // global: the ranks split it
  uint64_t seed = 1;
  size_t bucketBytes = 1 << 20;
  float lr = 3e-3f;
  std::string precision = "fp32";       // fp32, bf16 or fp16
  float clip = 0;                       // the gradients' global norm at most; 0 does not clip
  float lossScale = 65536;              // fp16's initial loss scale
  ModelShape shape{0, 16, 16, 512, 2};  // vocab comes from the text
  std::string dump;                     // where rank 0 writes the final parameters
  int paramServers = 0;                 // 0: none; K: ranks 0..K-1 serve the parameters
  bool offload = false;  // the optimizer's state in the host pool, its step on threads
  int overlap = 0;       // steps timed for the overlap report
  bool quiet = false;    // of the step lines, the last one only
};

// Parses argv; on --help or an error, prints and returns false with *exitCode set.
bool parseOptions(int argc, char** argv, Options* out, int* exitCode);

}  // namespace weft_train
