#include "agree.h"

#include <cstdint>
#include <string>

namespace weft::parallel {
namespace {

// What every rank must agree on: the words the ranks all-gather.
struct Layout {
  uint64_t hash = 0;  // of everything agreedLayout takes
  uint64_t params = 0;
  uint64_t elements = 0;
  uint64_t capBytes = 0;
  uint64_t type = 0;
};

std::string describe(size_t rank, const Layout& l) {
  return "rank " + std::to_string(rank) + " has " + std::to_string(l.params) + " parameters of " +
         std::to_string(l.elements) + " elements in all, type " + std::to_string(l.type) +
         ", buckets of " + std::to_string(l.capBytes) + " bytes";
}

}  // namespace

BucketLayout agreedLayout(const Comm& comm, const std::vector<size_t>& counts, weftDataType_t type,
                          size_t capBytes, size_t multiple, const std::vector<size_t>& unitOf,
                          const std::vector<size_t>& settings) {
  SettingsHash hash;
  Layout mine;
  mine.params = counts.size();
  for (size_t c : counts) {
    mine.elements += c;
    hash.mix(c);
  }
  mine.capBytes = capBytes;
  mine.type = static_cast<uint64_t>(type);
  hash.mix(mine.capBytes);
  hash.mix(mine.type);
  hash.mix(multiple);
  for (size_t v : unitOf)
    hash.mix(v);
  for (size_t v : settings)
    hash.mix(v);
  mine.hash = hash.value();
  const std::vector<uint64_t> all =
      allGatherWords(comm, {mine.hash, mine.params, mine.elements, mine.capBytes, mine.type});
  for (size_t r = 0; r < static_cast<size_t>(comm.size()); ++r) {
    const uint64_t* w = all.data() + 5 * r;
    const Layout other{w[0], w[1], w[2], w[3], w[4]};
    if (other.hash == mine.hash) continue;
    const bool sameTotals = other.params == mine.params && other.elements == mine.elements;
    throw Error(weftInvalidUsage,
                "the ranks' parameter layouts differ: " +
                    describe(static_cast<size_t>(comm.rank()), mine) + "; " + describe(r, other) +
                    (sameTotals ? " (the same totals: the split or other settings differ)" : ""));
  }
  if (sizeOf(type) == 0) throw Error(weftInvalidArgument, "unknown data type");
  return BucketLayout(counts, sizeOf(type), capBytes, multiple, unitOf);
}

}  // namespace weft::parallel
