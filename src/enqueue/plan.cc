#include "src/enqueue/plan.h"

#include <algorithm>
#include <cstring>

#include "collectives/call_stamp.h"
#include "collectives/cost_model.h"
#include "collectives/datatype.h"
#include "collectives/executor_cache.h"
#include "collectives/placement.h"
#include "src/base/log.h"
#include "src/comm/communicator.h"
#include "src/enqueue/recv_any.h"

namespace weft {
namespace {

char* bytesOf(const void* p) {
  return static_cast<char*>(const_cast<void*>(p));
}

// The size the cost model prices: NCCL's count in bytes; for all-to-allv the average block.
size_t messageBytes(const CollArgs& a, size_t elemSize) {
  if (a.kind == CollKind::kAllToAllv) {
    return sendBufferCount(a) / static_cast<size_t>(a.nranks) * elemSize;
  }
  return a.count * elemSize;
}

CallSpec specOf(const Op& op) {
  return CallSpec{op.args.kind, op.args.count, op.type, op.redop, op.args.root};
}

// Whether a collective across hosts runs in tiers (reduce inside hosts, then among host
// leaders, then broadcast inside hosts), priced tier by tier with the links each tier uses
// against the flat algorithm's price in *predictedUs (updated when tiers win).
bool chooseTiers(Communicator& comm, const CollArgs& a, size_t es, TierAlgos* tiers,
                 double* predictedUs) {
  const HostGroups& g = comm.hostGroups();
  const std::string& mode = comm.config().hierarchy;
  if (g.hosts.size() < 2 || mode == "off") return false;
  if (a.kind != CollKind::kAllReduce && a.kind != CollKind::kBroadcast) return false;
  size_t largestHost = 0;
  for (const auto& h : g.hosts)
    largestHost = std::max(largestHost, h.size());
  if (largestHost < 2 && mode != "on") return false;  // one rank per host: nothing to gain
  const size_t bytes = a.count * es;
  const int local = static_cast<int>(largestHost);
  const int hosts = static_cast<int>(g.hosts.size());
  const AlgoOverride& allowed = comm.algoOverride();
  AlgoChoice inter = chooseAlgo(a.kind, bytes, es, hosts, comm.interHostModel(), allowed);
  AlgoChoice down =
      chooseAlgo(CollKind::kBroadcast, bytes, es, local, comm.intraHostModel(), allowed);
  double us = inter.predictedUs + down.predictedUs;
  tiers->inter = inter.algo;
  tiers->intraBroadcast = down.algo;
  if (a.kind == CollKind::kAllReduce) {
    AlgoChoice up = chooseAlgo(CollKind::kReduce, bytes, es, local, comm.intraHostModel(), allowed);
    us += up.predictedUs;
    tiers->intraReduce = up.algo;
  }
  if (mode != "on" && us >= *predictedUs) return false;
  *predictedUs = us;
  return true;
}

ExecutorKey keyOf(const Op& op) {
  ExecutorKey k;
  k.kind = op.args.kind;
  k.count = op.args.count;
  k.type = op.type;
  k.op = op.redop;
  k.root = op.args.root;
  // checkOp allowed only disjoint buffers or the in-place layout, so overlap means in place.
  k.layout =
      static_cast<uint8_t>((op.sendbuff != nullptr && op.sendbuff == op.recvbuff ? 1 : 0) |
                           (op.sendbuff == nullptr ? 2 : 0) | (op.recvbuff == nullptr ? 4 : 0));
  if (op.sendbuff != nullptr && op.recvbuff != nullptr && op.sendbuff != op.recvbuff) {
    // All-gather and reduce-scatter run in place with the buffers offset by one block.
    const size_t es = typeSize(op.type);
    const auto s = reinterpret_cast<uintptr_t>(op.sendbuff);
    const auto r = reinterpret_cast<uintptr_t>(op.recvbuff);
    const size_t total = op.args.count * es * static_cast<size_t>(op.args.nranks);
    if ((s > r && s < r + total) || (r > s && r < s + total)) k.layout |= 1;
  }
  return k;
}

std::vector<BufferView> collectiveBuffers(Communicator& comm, const Op& op, const CollArgs& a,
                                          size_t scratchCount) {
  const size_t es = typeSize(op.type);
  // A buffer this rank may leave NULL (a non-root's) gets no room, so a stray step is caught.
  auto view = [es](const void* p, size_t count) {
    return BufferView{bytesOf(p), p == nullptr ? 0 : count, es};
  };
  return {view(op.sendbuff, sendBufferCount(a)), view(op.recvbuff, recvBufferCount(a)),
          BufferView{comm.scratch(scratchCount * es), scratchCount, es}};
}

}  // namespace

std::string PhaseLabel::describe() const {
  if (pointToPoint) {
    return strprintf("send/recv group #%llu (%zu calls)", static_cast<unsigned long long>(sequence),
                     count);
  }
  return strprintf("%s #%llu (%zu x %s%s%s, %s)", collName(kind),
                   static_cast<unsigned long long>(sequence), count, typeName(type),
                   reduces ? " " : "", reduces ? opName(op) : "", how().c_str());
}

std::string PhaseLabel::how() const {
  if (pointToPoint) return "send/recv";
  if (tiered) {
    return strprintf("tiered %s/%s/%s",
                     kind == CollKind::kAllReduce ? algoName(tiers.intraReduce) : "-",
                     algoName(tiers.inter), algoName(tiers.intraBroadcast));
  }
  std::string how = path == Path::kDirect               ? shmPathName(ShmPath::kDirect)
                    : path == Path::kStaged             ? shmPathName(ShmPath::kStaged)
                    : path == Path::kStagedOrSingleCopy ? "staged or single copy"
                                                        : algoName(algo);
  if (streamed) how += ", streamed";
  return how;
}

// Bit 0 marks a label, 1 point-to-point, 2 streamed, 3 tiered; the path in bits 4-7, the
// collective in 8-15, then the algorithms a byte each.
uint64_t PhaseLabel::packHow() const {
  return 1u | (pointToPoint ? 2u : 0u) | (streamed ? 4u : 0u) | (tiered ? 8u : 0u) |
         static_cast<uint64_t>(path) << 4 | static_cast<uint64_t>(kind) << 8 |
         static_cast<uint64_t>(algo) << 16 | static_cast<uint64_t>(tiers.intraReduce) << 24 |
         static_cast<uint64_t>(tiers.inter) << 32 |
         static_cast<uint64_t>(tiers.intraBroadcast) << 40;
}

PhaseLabel PhaseLabel::unpackHow(uint64_t word) {
  PhaseLabel l;
  l.pointToPoint = (word & 2) != 0;
  l.streamed = (word & 4) != 0;
  l.tiered = (word & 8) != 0;
  l.path = static_cast<Path>((word >> 4) & 0xf);
  l.kind = static_cast<CollKind>((word >> 8) & 0xff);
  l.algo = static_cast<Algo>((word >> 16) & 0xff);
  l.tiers.intraReduce = static_cast<Algo>((word >> 24) & 0xff);
  l.tiers.inter = static_cast<Algo>((word >> 32) & 0xff);
  l.tiers.intraBroadcast = static_cast<Algo>((word >> 40) & 0xff);
  return l;
}

void Phase::finish() const {
  if (staged != nullptr && staged->wentMapped()) {
    WEFT_TRACE(kColl, "%s went mapped: every rank's buffers are weftMemAlloc memory",
               label.describe().c_str());
  } else if (staged != nullptr && staged->wentSingleCopy()) {
    WEFT_TRACE(kColl, "%s went single copy", label.describe().c_str());
  }
  if (averageBuffer != nullptr && averageCount > 0) {
    finishAverage(averageBuffer, averageCount, type, averageDivisor);
  }
}

PhaseLabel collectiveLabel(const Op& op, uint64_t sequence) {
  PhaseLabel l;
  l.kind = op.args.kind;
  l.count = op.args.count;
  l.type = op.type;
  l.op = op.redop;
  l.reduces = isReduction(op.args.kind);
  l.sequence = sequence;
  return l;
}

// The most per rank an all-reduce sends direct where it may stage instead. A direct all-reduce
// posts the whole of each rank's data before anyone combines, and every rank then combines all
// of it; staging overlaps the two chunk by chunk and, from 3 ranks, shares the combining out.
// Measured on the 2-core VM (weft-perf all_reduce, float32 sum, medians of 3-4 interleaved
// rounds, us, direct / staged): 2 ranks 16K 5.4/3.7, 64K 18.2/10.4; 4 ranks 16K 15.6/17.3,
// 64K 48.4/31.3; 8 ranks 16K 49.5/37.3, 64K 158/69; even at 8K. Posted with ordinary stores
// instead of non-temporal ones, direct still took 12.6, 37.3 and 120 us at 64K.
constexpr size_t kDirectAllReduceMaxBytes = 8u << 10;

bool mayStage(const Communicator& comm, const DirectGroup& group, const CollArgs& a) {
  return comm.algoOverride().allowsStagedCall(a.kind) && StagedOp::fits(group, a);
}

// The ways a staged call may go besides staging: mapped unless WEFT_ALGO leaves it out; single
// copy in its band where the ranks may read each other's memory, or, where WEFT_ALGO names
// singlecopy but not staged, for every call of the kinds it runs, whatever the band's settings
// (WEFT_SHM_SINGLE_COPY=never still forbids it).
StagedWays stagedWays(const Communicator& comm, const DirectGroup& group, const CollArgs& a,
                      size_t es) {
  const AlgoOverride& allowed = comm.algoOverride();
  StagedWays ways;
  ways.mapped = allowed.allows(a.kind, ShmPath::kMapped);
  if (allowed.allows(a.kind, ShmPath::kSingleCopy) && group.singleCopy() &&
      comm.config().shmSingleCopy != "never") {
    ways.singleCopyOnly = !allowed.allows(a.kind, ShmPath::kStaged);
    ways.singleCopyBand = ways.singleCopyOnly || comm.singleCopyLimits().covers(group, a, es);
  }
  return ways;
}

// The most a rank may post for a direct call; 0 where direct is off (WEFT_ALGO, or
// WEFT_DIRECT_BYTES=0), even for a barrier, which posts nothing.
size_t directLimit(const Communicator& comm, const DirectGroup& group, const CollArgs& a) {
  if (!comm.algoOverride().allows(a.kind, ShmPath::kDirect)) return 0;
  size_t maxBytes = std::min(comm.config().directBytes, group.slotBytes());
  if (a.kind == CollKind::kAllReduce && mayStage(comm, group, a)) {
    maxBytes = std::min(maxBytes, kDirectAllReduceMaxBytes);
  }
  return maxBytes;
}

bool startDirect(Communicator& comm, const Op& op) {
  DirectGroup* group = comm.direct();
  const CollArgs a = argsOf(op);
  const size_t es = typeSize(op.type);
  if (group == nullptr) return false;
  const size_t limit = directLimit(comm, *group, a);
  if (limit == 0 || !group->fits(a, es, limit)) return false;
  const ReduceFn reduce = isReduction(a.kind) ? reduceFunction(op.type, op.redop) : nullptr;
  comm.directOp().start(group, a, op.sendbuff, op.recvbuff, es, reduce,
                        slotSignature(specOf(op), SlotPath::kDirect));
  return true;
}

void logPath(Communicator& comm, const Op& op, const PhaseLabel& label) {
  if (!logEnabled(LogLevel::kInfo, kColl)) return;
  ExecutorKey shape = keyOf(op);
  shape.layout = 0;  // in place or not, the path is the same
  if (!comm.firstOfShape(shape, label.packHow())) return;
  const CollArgs a = argsOf(op);
  const size_t es = typeSize(op.type);
  const DirectGroup& group = *comm.direct();
  const size_t limit = directLimit(comm, group, a);
  const bool direct = label.path == PhaseLabel::Path::kDirect;
  std::string why;
  if (direct) {
    why = strprintf("a rank's part fits the slots (direct takes up to %zu bytes)", limit);
  } else if (limit > 0) {
    why = strprintf("a rank's part is more than direct's %zu bytes", limit);
  } else {
    why = comm.algoOverride().allows(a.kind, ShmPath::kDirect)
              ? "WEFT_DIRECT_BYTES=0 turns direct off"
              : "WEFT_ALGO leaves direct out";
  }
  const std::string others = otherAlgos(a.kind, messageBytes(a, es), es, a.nranks, comm.linkModel(),
                                        comm.algoOverride(), std::nullopt);
  setLogRank(comm.rank());
  WEFT_INFO(kColl, "%s: %s; over %s%s", label.describe().c_str(), why.c_str(),
            direct && mayStage(comm, group, a) ? "staged, " : "",
            others.empty() ? "no schedule" : others.c_str());
}

const Op& stageInPlace(Communicator& comm, const Op& op, Op* staged) {
  if (op.args.kind != CollKind::kAllToAll || op.sendbuff != op.recvbuff) return op;
  const size_t bytes = sendBufferCount(argsOf(op)) * typeSize(op.type);
  *staged = op;
  staged->sendbuff = std::memcpy(comm.inPlaceStage(bytes), op.recvbuff, bytes);
  return *staged;
}

Status planCollective(Communicator& comm, const Op& op, Phase* out) {
  const CollArgs a = argsOf(op);
  const size_t es = typeSize(op.type);
  *out = Phase();
  const uint64_t call = comm.nextCollective();
  out->label = collectiveLabel(op, call);
  out->type = op.type;
  if (out->label.reduces && op.redop == weftAvg &&
      (a.kind != CollKind::kReduce || a.rank == a.root)) {
    out->averageBuffer = op.recvbuff;
    out->averageCount = recvBufferCount(a);
    out->averageDivisor = a.nranks;
  }
  if (startDirect(comm, op)) {
    out->runnable = &comm.directOp();
    out->label.path = PhaseLabel::Path::kDirect;
    logPath(comm, op, out->label);
    return okStatus();
  }
  const ReduceFn reduce = out->label.reduces ? reduceFunction(op.type, op.redop) : nullptr;
  if (DirectGroup* group = comm.direct()) {
    if (mayStage(comm, *group, a)) {
      const StagedWays ways = stagedWays(comm, *group, a, es);
      const bool band = ways.singleCopyBand;
      comm.stagedOp().start(
          group, a, op.sendbuff, op.recvbuff, es, reduce,
          slotSignature(specOf(op), band ? SlotPath::kStagedOrSingleCopy : SlotPath::kStaged),
          comm.streamBytes(), ways);
      out->runnable = &comm.stagedOp();
      out->staged = &comm.stagedOp();
      out->label.path = band ? PhaseLabel::Path::kStagedOrSingleCopy : PhaseLabel::Path::kStaged;
      out->label.streamed = comm.stagedOp().streamsOutput();
      logPath(comm, op, out->label);
      return okStatus();
    }
  }
  // All-to-allv's counts change from call to call; it is planned afresh each time.
  const bool cacheable = a.kind != CollKind::kAllToAllv;
  const ExecutorKey key = keyOf(op);
  if (cacheable) {
    if (CachedExecutor* hit = comm.executors().find(key)) {
      out->label.algo = hit->algo;
      out->label.tiered = hit->tiered;
      out->label.tiers = hit->tiers;
      hit->executor->rebind(collectiveBuffers(comm, op, a, hit->scratchCount));
      hit->executor->setCall(stampOf(specOf(op), call));
      out->runnable = hit->executor.get();
      return okStatus();
    }
  }
  const AlgoChoice choice =
      chooseAlgo(a.kind, messageBytes(a, es), es, a.nranks, comm.linkModel(), comm.algoOverride());
  out->label.algo = choice.algo;
  double predictedUs = choice.predictedUs;
  out->label.tiered = chooseTiers(comm, a, es, &out->label.tiers, &predictedUs);
  Schedule schedule;
  if (out->label.tiered) {
    WEFT_RETURN_IF_ERROR(buildTieredSchedule(a, comm.algoParams(es), comm.hostGroups(),
                                             out->label.tiers, &schedule));
  } else {
    WEFT_RETURN_IF_ERROR(
        buildPlacedSchedule(choice.algo, a, comm.algoParams(es), comm.ringOrder(), &schedule));
  }
  addCallCheck(a, comm.ringOrder(), &schedule);
  auto executor = std::make_unique<Executor>();
  WEFT_RETURN_IF_ERROR(executor->start(schedule,
                                       collectiveBuffers(comm, op, a, schedule.scratchCount),
                                       reduce, comm.channels(), comm.nranks()));
  executor->setCall(stampOf(specOf(op), call));
  if (logEnabled(LogLevel::kInfo, kColl)) {
    const std::string others = otherAlgos(a.kind, messageBytes(a, es), es, a.nranks,
                                          comm.linkModel(), comm.algoOverride(), choice.algo);
    WEFT_INFO(kColl, "%s: %zu steps, predicted %.1f us%s%s", out->label.describe().c_str(),
              schedule.steps.size(), predictedUs, others.empty() ? "" : "; over ", others.c_str());
  }
  if (cacheable) {
    CachedExecutor* entry = comm.executors().insert(
        key, CachedExecutor{choice.algo, out->label.tiered, out->label.tiers, schedule.scratchCount,
                            std::move(executor)});
    out->runnable = entry->executor.get();
  } else {
    out->owned = std::move(executor);
    out->runnable = out->owned.get();
  }
  return okStatus();
}

Status planPointToPoint(Communicator& comm, const std::vector<Op>& ops, Phase* out) {
  *out = Phase();
  out->label.pointToPoint = true;
  out->label.count = ops.size();
  out->label.sequence = comm.nextPointToPointGroup();
  if (ops.size() == 1 && ops[0].anySource) {  // never grouped (src/enqueue/check.cc)
    out->owned = std::make_unique<RecvAnySource>(comm, ops[0]);
    out->runnable = out->owned.get();
    return okStatus();
  }
  Schedule schedule;
  schedule.pointToPoint = true;
  std::vector<BufferView> buffers(3);  // send and recv unused here; scratch in bytes below
  std::vector<size_t> selfSends;
  std::vector<size_t> selfRecvs;
  // A receive into memory that a send of the group reads lands in scratch first and is copied
  // out after the sends (MPI_Sendrecv_replace semantics): receiving in place would have to wait
  // for the send, and the peer's send for our receive.
  auto overlapsASend = [&](const char* p, size_t bytes) {
    for (const Op& o : ops) {
      if (o.kind != OpKind::kSend) continue;
      const char* s = static_cast<const char*>(o.sendbuff);
      if (bytes > 0 && p < s + o.count * typeSize(o.type) && s < p + bytes) return true;
    }
    return false;
  };
  std::vector<std::pair<BufId, size_t>> staged;  // (receive buffer, scratch byte offset)
  size_t scratchBytes = 0;
  for (const Op& op : ops) {
    const size_t es = typeSize(op.type);
    const void* p = op.kind == OpKind::kSend ? op.sendbuff : op.recvbuff;
    const auto id = static_cast<BufId>(buffers.size());
    buffers.push_back(BufferView{bytesOf(p), op.count, es});
    if (op.peer == comm.rank()) {
      (op.kind == OpKind::kSend ? selfSends : selfRecvs).push_back(id);
    } else if (op.kind == OpKind::kSend) {
      schedule.send(op.peer, Ref{id, 0}, op.count);
    } else if (overlapsASend(bytesOf(p), op.count * es)) {
      schedule.recv(op.peer, Ref{kScratchBuf, scratchBytes}, op.count * es);
      staged.emplace_back(id, scratchBytes);
      scratchBytes += (op.count * es + 63) / 64 * 64;
    } else {
      schedule.recv(op.peer, Ref{id, 0}, op.count);
    }
  }
  buffers[kScratchBuf] = BufferView{comm.scratch(scratchBytes), scratchBytes, 1};
  for (const auto& [id, offset] : staged) {
    schedule.copy(Ref{kScratchBuf, offset}, Ref{id, 0}, buffers[id].count * buffers[id].elemSize);
  }
  // Sends to oneself pair with receives from oneself in posting order (checkSelfPairs saw to
  // it before the group ran).
  for (size_t i = 0; i < selfSends.size(); ++i) {
    const BufferView& from = buffers[selfSends[i]];
    schedule.copy(Ref{static_cast<BufId>(selfSends[i]), 0},
                  Ref{static_cast<BufId>(selfRecvs[i]), 0}, from.count);
  }
  auto executor = std::make_unique<Executor>();
  Status s = executor->start(schedule, std::move(buffers), nullptr, comm.channels(), comm.nranks());
  out->owned = std::move(executor);
  out->runnable = out->owned.get();
  return s;
}

}  // namespace weft
