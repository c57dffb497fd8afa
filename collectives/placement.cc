#include "collectives/placement.h"

#include <algorithm>

namespace weft {
namespace {

bool isIdentity(const std::vector<int>& order) {
  for (size_t p = 0; p < order.size(); ++p) {
    if (order[p] != static_cast<int>(p)) return false;
  }
  return true;
}

bool rooted(CollKind kind) {
  return kind == CollKind::kBroadcast || kind == CollKind::kReduce;
}

// Moves a reference into a rank-owned block from position numbering to rank numbering.
Status placeBlock(Ref* ref, size_t stepCount, size_t blockCount, const std::vector<int>& order) {
  const size_t block = ref->offset / blockCount;
  const size_t within = ref->offset % blockCount;
  if (block >= order.size() || within + stepCount > blockCount) {
    return errorf(weftInternalError, "a step spans blocks of several ranks (offset %zu, %zu x %zu)",
                  ref->offset, stepCount, blockCount);
  }
  ref->offset = static_cast<size_t>(order[block]) * blockCount + within;
  return okStatus();
}

// Appends a tier's schedule: its peers are indexes into members, and buffers map through
// bufMap (a tier may read what an earlier tier left in the receive buffer).
void appendTier(const Schedule& tier, const std::vector<int>& members, const BufId bufMap[3],
                Schedule* out) {
  for (Step s : tier.steps) {
    if (s.peer >= 0) s.peer = members[s.peer];
    if (s.src.buf < 3) s.src.buf = bufMap[s.src.buf];
    if (s.dst.buf < 3) s.dst.buf = bufMap[s.dst.buf];
    out->steps.push_back(s);
  }
  out->scratchCount = std::max(out->scratchCount, tier.scratchCount);
}

Status buildTier(Algo algo, CollKind kind, const CollArgs& args, const AlgoParams& params,
                 const std::vector<int>& members, int root, Schedule* out) {
  CollArgs t = args;
  t.kind = kind;
  t.nranks = static_cast<int>(members.size());
  t.rank = static_cast<int>(std::find(members.begin(), members.end(), args.rank) - members.begin());
  t.root = root;
  if (!algoSupports(algo, kind) || t.nranks == 1) algo = Algo::kRing;
  return buildSchedule(algo, t, params, out);
}

int indexIn(const std::vector<int>& v, int x) {
  return static_cast<int>(std::find(v.begin(), v.end(), x) - v.begin());
}

}  // namespace

Status buildPlacedSchedule(Algo algo, const CollArgs& args, const AlgoParams& params,
                           const std::vector<int>& order, Schedule* out) {
  const bool rankOwnedBoth = args.kind == CollKind::kAllToAll || args.kind == CollKind::kAllToAllv;
  if (order.empty() || isIdentity(order) || rankOwnedBoth) {
    return buildSchedule(algo, args, params, out);
  }
  if (order.size() != static_cast<size_t>(args.nranks)) {
    return errorf(weftInternalError, "rank order of %zu for %d ranks", order.size(), args.nranks);
  }
  std::vector<int> position(order.size());
  for (size_t p = 0; p < order.size(); ++p)
    position[order[p]] = static_cast<int>(p);
  CollArgs placed = args;
  placed.rank = position[args.rank];
  if (rooted(args.kind)) placed.root = position[args.root];
  WEFT_RETURN_IF_ERROR(buildSchedule(algo, placed, params, out));
  // Which buffer holds one block per rank.
  const int owned = args.kind == CollKind::kAllGather       ? kRecvBuf
                    : args.kind == CollKind::kReduceScatter ? kSendBuf
                                                            : -1;
  for (Step& s : out->steps) {
    if (s.peer >= 0) s.peer = order[s.peer];
    if (owned < 0 || s.count == 0) continue;
    const bool readsSrc = s.kind != StepKind::kRecv;
    const bool writesDst = s.kind != StepKind::kSend;
    if (readsSrc && s.src.buf == owned) {
      WEFT_RETURN_IF_ERROR(placeBlock(&s.src, s.count, args.count, order));
    }
    if (writesDst && s.dst.buf == owned) {
      WEFT_RETURN_IF_ERROR(placeBlock(&s.dst, s.count, args.count, order));
    }
  }
  return okStatus();
}

Status buildTieredSchedule(const CollArgs& args, const AlgoParams& params, const HostGroups& groups,
                           const TierAlgos& algos, Schedule* out) {
  if (groups.hosts.size() < 2) {
    return Status(weftInternalError, "a tiered schedule needs two hosts");
  }
  if (args.kind != CollKind::kAllReduce && args.kind != CollKind::kBroadcast) {
    return errorf(weftInternalError, "no tiered %s", collName(args.kind));
  }
  const int nhosts = static_cast<int>(groups.hosts.size());
  int myHost = -1;
  int rootHost = -1;
  for (int h = 0; h < nhosts; ++h) {
    const auto& m = groups.hosts[h];
    if (std::find(m.begin(), m.end(), args.rank) != m.end()) myHost = h;
    if (std::find(m.begin(), m.end(), args.root) != m.end()) rootHost = h;
  }
  if (myHost < 0 || rootHost < 0) return Status(weftInternalError, "a rank is on no host");
  // Broadcast's root leads its own host, so its data needs no extra hop.
  const bool bcast = args.kind == CollKind::kBroadcast;
  std::vector<int> leaders(static_cast<size_t>(nhosts));
  for (int h = 0; h < nhosts; ++h) {
    leaders[h] = bcast && h == rootHost ? args.root : groups.hosts[h][0];
  }
  const std::vector<int>& host = groups.hosts[myHost];
  const int localLeader = indexIn(host, leaders[myHost]);
  const bool leader = args.rank == leaders[myHost];
  const BufId same[3] = {kSendBuf, kRecvBuf, kScratchBuf};
  const BufId fromRecv[3] = {kRecvBuf, kRecvBuf, kScratchBuf};  // input is in the receive buffer
  *out = Schedule();
  Schedule tier;
  if (!bcast) {
    WEFT_RETURN_IF_ERROR(
        buildTier(algos.intraReduce, CollKind::kReduce, args, params, host, localLeader, &tier));
    appendTier(tier, host, same, out);
  }
  if (leader) {
    tier = Schedule();
    CollKind kind = bcast ? CollKind::kBroadcast : CollKind::kAllReduce;
    WEFT_RETURN_IF_ERROR(buildTier(algos.inter, kind, args, params, leaders, rootHost, &tier));
    appendTier(tier, leaders, bcast ? same : fromRecv, out);
  }
  tier = Schedule();
  WEFT_RETURN_IF_ERROR(buildTier(algos.intraBroadcast, CollKind::kBroadcast, args, params, host,
                                 localLeader, &tier));
  appendTier(tier, host, fromRecv, out);
  return okStatus();
}

}  // namespace weft
