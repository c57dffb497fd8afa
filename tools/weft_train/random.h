// weft-train's randomness: splitmix64 (Steele et al. 2014), so that parameters and batches are the
// same on every machine and with every standard library.
#pragma once

#include <cstdint>

namespace weft_train {

constexpr uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ULL;  // splitmix64's increment

// splitmix64's output function: a bijective mix of all 64 bits.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace weft_train
