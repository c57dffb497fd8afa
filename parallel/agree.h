// Agreement: settings every rank must have given alike are hashed and all-gathered before the
// layer issues any other collective, so that ranks that differ all fail at once with an error
// instead of some of them waiting in calls the others never make.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "weft/parallel/buckets.hpp"
#include "weft/weft.hpp"

namespace weft::parallel {

// FNV-1a over what is mixed in.
class SettingsHash {
 public:
  void mix(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      mixByte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void mix(std::string_view s) {
    mix(s.size());
    for (char c : s)
      mixByte(static_cast<uint8_t>(c));
  }
  uint64_t value() const { return value_; }

 private:
  void mixByte(uint8_t b) {
    value_ ^= b;
    value_ *= 1099511628211ull;
  }
  uint64_t value_ = 1469598103934665603ull;
};

// Collective over `comm`: every rank's `words` (the same number on each), rank by rank.
inline std::vector<uint64_t> allGatherWords(const Comm& comm, const std::vector<uint64_t>& words) {
  std::vector<uint64_t> all(words.size() * static_cast<size_t>(comm.size()));
  check(weftAllGather(words.data(), all.data(), words.size(), weftUint64, comm.get(), nullptr),
        comm.get());
  return all;
}

// The BucketLayout of counts, type's size, capBytes, multiple and unitOf, once the ranks agree
// on those and on `settings` (a caller's further choices, such as ZeRO's stage): when they
// differ, every rank throws weft::Error (weftInvalidUsage) naming two ranks' layouts. Checks
// of the arguments come after, so every rank fails alike.
BucketLayout agreedLayout(const Comm& comm, const std::vector<size_t>& counts, weftDataType_t type,
                          size_t capBytes, size_t multiple, const std::vector<size_t>& unitOf,
                          const std::vector<size_t>& settings);

}  // namespace weft::parallel
