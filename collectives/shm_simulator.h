// The shared-memory paths' simulator: one direct or staged operation per virtual rank, all in
// this thread, over windows in this process's memory laid out as the shm transport's are
// (collectives/slot_area.h), as simulate() runs schedules over loopback links. The calls of one
// simulator follow each other on the same ranks, so operation numbers, slot parities and chunk
// counters carry over from call to call, as on a communicator. Each call runs the path it names,
// as WEFT_ALGO naming that path alone would: mapped where every rank's buffers are weftMemAlloc
// memory (else it stages), single copy with the ranks reading each other's inputs in place.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "collectives/algo_override.h"
#include "collectives/reduce.h"
#include "collectives/schedule.h"
#include "src/base/status.h"

namespace weft {

class ShmSimulator {
 public:
  struct Options {
    size_t slotBytes = size_t{128} << 10;  // each of a rank's two slots
    // A rank's staging area; 0: the least that holds a line per rank in each chunk
    // (StagedOp::leastStagingBytes), so that a staged call goes round the chunks most often.
    size_t stagingBytes = 0;
    bool readsPeers = true;  // whether the ranks may read each other's memory (single copy)
  };

  ShmSimulator(int nranks, const Options& options);
  ~ShmSimulator();
  ShmSimulator(const ShmSimulator&) = delete;
  ShmSimulator& operator=(const ShmSimulator&) = delete;

  int nranks() const { return static_cast<int>(ranks_.size()); }

  // Runs one call on every rank r: args[r] (whose rank and nranks must say r and nranks()),
  // send[r], recv[r]. weftInvalidArgument where the path does not fit a rank's call; a rank's
  // error as it is; weftInternalError naming what rank 0 waits for where the ranks stop moving.
  Status run(ShmPath path, const std::vector<CollArgs>& args, const std::vector<const void*>& send,
             const std::vector<void*>& recv, size_t elemSize, ReduceFn reduce);
  // Whether the last staged call went mapped, or single copy, on every rank.
  bool wentMapped() const;
  bool wentSingleCopy() const;

 private:
  struct Rank;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace weft
