#include "collectives/algorithms.h"

#include <algorithm>
#include <cctype>

#include "src/base/text.h"

namespace weft {
namespace {

constexpr const char* kAlgoNames[kNumAlgos] = {"ring", "tree", "rd", "pairwise", "dissemination"};

Status checkArgs(Algo algo, const CollArgs& a) {
  if (!algoSupports(algo, a.kind)) {
    return errorf(weftInvalidArgument, "algorithm %s does not implement %s", algoName(algo),
                  collName(a.kind));
  }
  if (a.nranks < 1 || a.rank < 0 || a.rank >= a.nranks) {
    return errorf(weftInvalidArgument, "rank %d of %d ranks", a.rank, a.nranks);
  }
  bool rooted = a.kind == CollKind::kBroadcast || a.kind == CollKind::kReduce;
  if (rooted && (a.root < 0 || a.root >= a.nranks)) {
    return errorf(weftInvalidArgument, "root %d of %d ranks", a.root, a.nranks);
  }
  if (a.kind == CollKind::kAllToAllv) {
    if (!a.sendCounts || !a.sendDispls || !a.recvCounts || !a.recvDispls) {
      return errorf(weftInvalidArgument, "all_to_allv needs counts and displacements");
    }
    if (a.sendCounts[a.rank] != a.recvCounts[a.rank]) {
      return errorf(weftInvalidArgument,
                    "all_to_allv: rank %d sends itself %zu elements but expects %zu", a.rank,
                    a.sendCounts[a.rank], a.recvCounts[a.rank]);
    }
  }
  return okStatus();
}

// One rank: every collective is a local copy (or nothing).
void buildSingleRank(const CollArgs& a, Schedule* out) {
  switch (a.kind) {
    case CollKind::kBarrier:
      return;
    case CollKind::kAllToAllv:
      out->copy({kSendBuf, a.sendDispls[0]}, {kRecvBuf, a.recvDispls[0]}, a.sendCounts[0]);
      return;
    default:
      out->copy({kSendBuf, 0}, {kRecvBuf, 0}, a.count);
  }
}

}  // namespace

const char* algoName(Algo algo) {
  auto i = static_cast<size_t>(algo);
  return i < kNumAlgos ? kAlgoNames[i] : "?";
}

std::optional<Algo> parseAlgo(std::string_view name) {
  for (int i = 0; i < kNumAlgos; ++i) {
    if (equalsIgnoreCase(name, kAlgoNames[i])) return static_cast<Algo>(i);
  }
  if (equalsIgnoreCase(name, "recursive_doubling")) return Algo::kRecursiveDoubling;
  return std::nullopt;
}

bool algoSupports(Algo algo, CollKind kind) {
  switch (algo) {
    case Algo::kRing:
      return kind == CollKind::kBroadcast || kind == CollKind::kReduce ||
             kind == CollKind::kAllReduce || kind == CollKind::kReduceScatter ||
             kind == CollKind::kAllGather;
    case Algo::kTree:
      return kind == CollKind::kBroadcast || kind == CollKind::kReduce ||
             kind == CollKind::kAllReduce;
    case Algo::kRecursiveDoubling:
      return kind == CollKind::kAllReduce;
    case Algo::kPairwise:
      return kind == CollKind::kAllToAll || kind == CollKind::kAllToAllv;
    case Algo::kDissemination:
      return kind == CollKind::kBarrier;
  }
  return false;
}

Status buildSchedule(Algo algo, const CollArgs& args, const AlgoParams& params, Schedule* out) {
  *out = Schedule{};
  WEFT_RETURN_IF_ERROR(checkArgs(algo, args));
  if (args.nranks == 1) {
    buildSingleRank(args, out);
    return okStatus();
  }
  const size_t chunk = std::max<size_t>(params.chunkCount, 1);
  switch (algo) {
    case Algo::kRing:
      buildRing(args, chunk, out);
      break;
    case Algo::kTree:
      buildTree(args, chunk, out);
      break;
    case Algo::kRecursiveDoubling:
      buildRecursiveDoubling(args, out);
      break;
    case Algo::kPairwise:
      buildPairwise(args, out);
      break;
    case Algo::kDissemination:
      buildDissemination(args, out);
      break;
  }
  return okStatus();
}

Span balancedBlock(size_t count, int parts, int index) {
  const auto p = static_cast<size_t>(parts);
  const auto i = static_cast<size_t>(index);
  size_t base = count / p, extra = count % p;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

Span chunkOf(Span span, size_t chunk, size_t i) {
  size_t begin = std::min(span.count, i * chunk);
  size_t end = std::min(span.count, begin + chunk);
  return {span.offset + begin, end - begin};
}

}  // namespace weft
