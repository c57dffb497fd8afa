#include "perf/weft_perf/coll.h"

#include <algorithm>
#include <string>

namespace weft::perf {
namespace {

struct CollName {
  Coll coll;
  const char* name;
  const char* perfName;  // the nccl-tests binary
};

constexpr CollName kNames[] = {
    {Coll::kAllReduce, "all_reduce", "all_reduce_perf"},
    {Coll::kAllGather, "all_gather", "all_gather_perf"},
    {Coll::kReduceScatter, "reduce_scatter", "reduce_scatter_perf"},
    {Coll::kBroadcast, "broadcast", "broadcast_perf"},
    {Coll::kReduce, "reduce", "reduce_perf"},
    {Coll::kAllToAll, "all_to_all", "alltoall_perf"},
    {Coll::kSendRecv, "sendrecv", "sendrecv_perf"},
    {Coll::kSend, "send", "send_perf"},  // not an nccl-tests binary
};

}  // namespace

std::optional<Coll> collFromName(std::string_view name) {
  if (name == "alltoall" || name == "all_to_all_perf") return Coll::kAllToAll;
  for (const CollName& c : kNames) {
    if (name == c.name || name == c.perfName) return c.coll;
  }
  return std::nullopt;
}

std::string collNames() {
  std::string names;
  for (const CollName& c : kNames) {
    names += std::string(names.empty() ? "" : " ") + c.name;
  }
  return names;
}

const char* collName(Coll coll) {
  for (const CollName& c : kNames) {
    if (c.coll == coll) return c.name;
  }
  return "?";
}

bool collHasOp(Coll coll) {
  return coll == Coll::kAllReduce || coll == Coll::kReduceScatter || coll == Coll::kReduce;
}

bool collHasRoot(Coll coll) {
  return coll == Coll::kBroadcast || coll == Coll::kReduce;
}

bool collChecksInPlace(Coll coll) {
  return coll != Coll::kSendRecv && coll != Coll::kSend;
}

CollCounts collCounts(Coll coll, size_t count, int nranks) {
  size_t n = static_cast<size_t>(nranks);
  size_t perRank = count / n;
  switch (coll) {
    case Coll::kAllGather:
      return {perRank, perRank * n, perRank, perRank, 0};
    case Coll::kReduceScatter:
      return {perRank * n, perRank, perRank, 0, perRank};
    case Coll::kAllToAll:
      return {perRank * n, perRank * n, perRank, 0, 0};
    default:
      return {count, count, count, 0, 0};
  }
}

SendRole sendRole(int rank, int nranks) {
  if (rank % 2 == 1) return SendRole::kReceiver;
  return rank + 1 < nranks ? SendRole::kSender : SendRole::kIdle;
}

size_t reportedBytes(const CollCounts& counts, size_t typeSize) {
  return std::max(counts.sendCount, counts.recvCount) * typeSize;
}

double busBwFactor(Coll coll, int nranks) {
  double n = nranks;
  switch (coll) {
    case Coll::kAllReduce:
      return 2 * (n - 1) / n;
    case Coll::kAllGather:
    case Coll::kReduceScatter:
    case Coll::kAllToAll:
      return (n - 1) / n;
    default:
      return 1;
  }
}

Bandwidth bandwidth(Coll coll, size_t paramCount, size_t typeSize, double seconds, int nranks) {
  // algbw counts the whole buffer: for the per-rank-count collectives that is nranks blocks.
  bool perRankCount =
      coll == Coll::kAllGather || coll == Coll::kReduceScatter || coll == Coll::kAllToAll;
  double bytes = static_cast<double>(paramCount * typeSize) * (perRankCount ? nranks : 1);
  Bandwidth bw;
  if (seconds > 0) bw.algBw = bytes / 1.0e9 / seconds;
  bw.busBw = bw.algBw * busBwFactor(coll, nranks);
  return bw;
}

}  // namespace weft::perf
