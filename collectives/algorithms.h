// The algorithms: pure functions from a collective call to one rank's schedule (DESIGN.md,
// decision 8). Each family lives in a file of its own (ring.cc, tree.cc, recursive_doubling.cc,
// pairwise.cc, dissemination.cc); this header dispatches and names them. Every algorithm works
// for any rank count, any count (zero included), any root, in place and out of place.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "collectives/schedule.h"
#include "src/base/status.h"

namespace weft {

enum class Algo : uint8_t { kRing, kTree, kRecursiveDoubling, kPairwise, kDissemination };
constexpr int kNumAlgos = 5;

const char* algoName(Algo algo);  // "ring", "tree", "rd", "pairwise", "dissemination"
std::optional<Algo> parseAlgo(std::string_view name);  // case-insensitive
bool algoSupports(Algo algo, CollKind kind);

// Builds the schedule of rank args.rank. Unsupported pairs and malformed arguments give
// weftInvalidArgument.
Status buildSchedule(Algo algo, const CollArgs& args, const AlgoParams& params, Schedule* out);

// The families, called by buildSchedule with checked arguments and nranks >= 2.
void buildRing(const CollArgs& args, size_t chunk, Schedule* out);
void buildTree(const CollArgs& args, size_t chunk, Schedule* out);
void buildRecursiveDoubling(const CollArgs& args, Schedule* out);
void buildPairwise(const CollArgs& args, Schedule* out);
void buildDissemination(const CollArgs& args, Schedule* out);

// Helpers the families share.

// [offset, offset + count) in elements.
struct Span {
  size_t offset = 0;
  size_t count = 0;
};

// Block `index` of `count` elements split into `parts` blocks whose sizes differ by at most one
// (the larger ones first).
Span balancedBlock(size_t count, int parts, int index);

// Calls fn(Span) for each pipelining chunk of `span`, in order.
template <typename Fn>
void forEachChunk(Span span, size_t chunk, Fn&& fn) {
  for (size_t done = 0; done < span.count; done += chunk) {
    size_t n = span.count - done < chunk ? span.count - done : chunk;
    fn(Span{span.offset + done, n});
  }
}
// Chunks in a span of `count` elements.
inline size_t chunksIn(size_t count, size_t chunk) {
  return (count + chunk - 1) / chunk;
}
// The i-th chunk of `span` (empty past the end).
Span chunkOf(Span span, size_t chunk, size_t i);

// a mod n in [0, n), for rank arithmetic.
inline int modRank(int a, int n) {
  return ((a % n) + n) % n;
}

}  // namespace weft
