#include "collectives/shm_simulator.h"

#include <unistd.h>

#include <algorithm>
#include <new>

#include "collectives/call_stamp.h"
#include "collectives/direct.h"
#include "collectives/slot_area.h"
#include "collectives/staged.h"
#include "collectives/timed_choice.h"

namespace weft {
namespace {

constexpr size_t kPage = 4096;
// Rounds of progress over every rank before the ranks count as stuck: far more than any call
// needs, since each round moves every rank that can move.
constexpr int kMaxRounds = 1 << 22;

size_t wholePages(size_t bytes) {
  return (bytes + kPage - 1) / kPage * kPage;
}

// Page-aligned zeroed bytes, as a window's pages are.
struct Pages {
  explicit Pages(size_t bytes)
      : size(bytes), data(static_cast<char*>(::operator new(bytes, std::align_val_t(kPage)))) {
    std::fill(data, data + bytes, char{0});
  }
  ~Pages() { ::operator delete(data, std::align_val_t(kPage)); }
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  size_t size;
  char* data;
};

}  // namespace

struct ShmSimulator::Rank {
  Rank(size_t slotBytes, size_t stagingBytes, bool readsPeers)
      : control(kWindowControlBytes), slots(2 * slotBytes), staging(stagingBytes) {
    owner.pid = static_cast<int32_t>(getpid());
    owner.readsPeers.store(readsPeers ? 1 : 0);
    Window w;
    w.control = control.data;
    w.regions = {slots.data, slots.data + slotBytes, staging.data};
    w.regionBytes = {slotBytes, slotBytes, stagingBytes};
    w.owner = &owner;
    w.doorbell = &doorbell;
    formatSlotWindow(w);
    area = slotAreaOf(w);
  }

  Pages control;
  Pages slots;
  Pages staging;
  Doorbell doorbell;
  WindowOwner owner;
  SlotArea area;
  std::unique_ptr<DirectGroup> group;
  DirectOp direct;
  StagedOp staged;
};

ShmSimulator::ShmSimulator(int nranks, const Options& options) {
  const size_t slotBytes = wholePages(options.slotBytes);
  const size_t stagingBytes = wholePages(
      options.stagingBytes != 0 ? options.stagingBytes : StagedOp::leastStagingBytes(nranks));
  std::vector<const SlotArea*> areas;
  for (int r = 0; r < nranks; ++r) {
    ranks_.push_back(std::make_unique<Rank>(slotBytes, stagingBytes, options.readsPeers));
    areas.push_back(&ranks_.back()->area);
  }
  for (int r = 0; r < nranks; ++r)
    ranks_[r]->group = std::make_unique<DirectGroup>(r, areas);
}

ShmSimulator::~ShmSimulator() = default;

bool ShmSimulator::wentMapped() const {
  for (const auto& rank : ranks_) {
    if (!rank->staged.wentMapped()) return false;
  }
  return true;
}

bool ShmSimulator::wentSingleCopy() const {
  for (const auto& rank : ranks_) {
    if (!rank->staged.wentSingleCopy()) return false;
  }
  return true;
}

Status ShmSimulator::run(ShmPath path, const std::vector<CollArgs>& args,
                         const std::vector<const void*>& send, const std::vector<void*>& recv,
                         size_t elemSize, ReduceFn reduce) {
  const auto n = static_cast<size_t>(nranks());
  if (args.size() != n || send.size() != n || recv.size() != n) {
    return errorf(weftInvalidArgument, "shm simulator: %zu, %zu and %zu calls for %zu ranks",
                  args.size(), send.size(), recv.size(), n);
  }
  std::vector<GroupOp*> ops;
  for (size_t r = 0; r < n; ++r) {
    Rank& rank = *ranks_[r];
    const CollArgs& a = args[r];
    if (a.rank != static_cast<int>(r) || a.nranks != nranks()) {
      return errorf(weftInvalidArgument, "shm simulator: rank %zu's call says rank %d of %d", r,
                    a.rank, a.nranks);
    }
    const CallSpec spec{a.kind, a.count, weftInt8, weftSum, a.root};
    if (path == ShmPath::kDirect) {
      if (!rank.group->fits(a, elemSize, SIZE_MAX)) {
        return errorf(weftInvalidArgument, "shm simulator: rank %zu's %s does not fit the slots", r,
                      collName(a.kind));
      }
      rank.direct.start(rank.group.get(), a, send[r], recv[r], elemSize, reduce,
                        slotSignature(spec, SlotPath::kDirect));
      ops.push_back(&rank.direct);
    } else {
      if (!StagedOp::fits(*rank.group, a) || !shmPathSupports(path, a.kind)) {
        return errorf(weftInvalidArgument, "shm simulator: rank %zu's %s cannot go %s", r,
                      collName(a.kind), shmPathName(path));
      }
      // As WEFT_ALGO naming the path alone would have the planner start it.
      StagedWays ways;
      ways.mapped = path == ShmPath::kMapped;
      ways.singleCopyBand = ways.singleCopyOnly =
          path == ShmPath::kSingleCopy && rank.group->singleCopy();
      rank.staged.start(rank.group.get(), a, send[r], recv[r], elemSize, reduce,
                        slotSignature(spec, ways.singleCopyBand ? SlotPath::kStagedOrSingleCopy
                                                                : SlotPath::kStaged),
                        SIZE_MAX, ways);
      ops.push_back(&rank.staged);
    }
  }
  // From the last rank backwards, so that no rank is always the first to look.
  for (int round = 0; round < kMaxRounds; ++round) {
    bool all = true;
    for (auto op = ops.rbegin(); op != ops.rend(); ++op) {
      bool progressed = false;
      WEFT_RETURN_IF_ERROR((*op)->progress(&progressed));
      all = all && (*op)->done();
    }
    if (all) return okStatus();
  }
  return Status(weftInternalError, "shm simulator: stuck: " + ops[0]->describeWait());
}

}  // namespace weft
